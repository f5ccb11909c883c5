"""An id is its bytes: two ids that differ in any byte are two subjects or
two areas, on every way in, and a file or value that is not UTF-8 is refused
rather than repaired into U+FFFD (which would make `b\\xff` and `b\\xfe` one
subject). Each case here once merged two ids, or crashed."""
import csv
import io
import subprocess

from conftest import CLI, gf, run, sql, square, write_collection

def dump(db):
    return run("sqlite3", db, ".dump").stdout


def spaced_catalog(tmp_path):
    """Areas `A`, ` A` and `A ` over the same ground (a GeoJSON import keeps ids as written)."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square(a, 0, 0, 0.02) for a in ["A", " A", "A "]]))
    return db


def test_a_conditions_file_naming_a_column_twice_is_refused_without_a_crash(tmp_path):
    db = spaced_catalog(tmp_path)
    before = dump(db)
    for header in ["condition_id,area_id,timing,timing", "condition_id,condition_id,area_id,timing"]:
        f = tmp_path / "c.csv"
        f.write_text(header + "\n10,A,IN,OUT\n")
        p = gf("conditions", "import", db, f, check=False)
        assert p.returncode == 1, p          # was: a Swift fatal error, exit 132
        assert "twice" in p.stderr and "header" in p.stderr, p.stderr
    assert dump(db) == before


def test_an_area_id_in_a_conditions_file_is_the_area_named_quoted_or_not(tmp_path):
    """` A` unquoted is the area ` A`, as Python's csv or pandas write it
    (it used to land on `A`); one with no such area names the one that exists."""
    db = spaced_catalog(tmp_path)
    f = tmp_path / "c.csv"
    f.write_text('condition_id,area_id,timing\n10," A",IN\n11,"A ",OUT\n12, A,IN\n')
    gf("conditions", "import", db, f)
    got = sql(db, "SELECT condition_id, '[' || area_id || ']' FROM gf_conditions ORDER BY 1;").stdout.splitlines()
    assert got == ["10|[ A]", "11|[A ]", "12|[ A]"], got
    f.write_text('condition_id,area_id,timing\n20, A ,IN\n')
    p = gf("conditions", "import", db, f, check=False)
    assert p.returncode == 1 and "unknown area ' A ' (area" in p.stderr and "exists: ids are compared as written, spaces at their ends and leading zeros included)" in p.stderr, p.stderr
    gf("conditions", "add", db, "--area", " A", "--timing", "OUT", "--id", "13")
    assert sql(db, "SELECT '[' || area_id || ']' FROM gf_conditions WHERE condition_id = 13;").stdout.strip() == "[ A]"


def test_an_ndjson_file_that_is_not_utf8_is_refused(catalog, tmp_path):
    f = tmp_path / "f.ndjson"
    f.write_bytes(b'{"subject_id":"b\xff","ts":"2026-11-20T09:00:00Z","lat":35.7,"lon":139.77,"accuracy_m":5}\n'
                  b'{"subject_id":"b\xfe","ts":"2026-11-20T09:01:00Z","lat":35.7,"lon":139.77,"accuracy_m":5}\n')
    before = dump(catalog)
    for command in (["judge", catalog, "--fixes", f], ["locate", catalog, "--fixes", f]):
        p = gf(*command, check=False)
        assert p.returncode == 1, p
        assert f"{f}, line 1: bytes that are not UTF-8" in p.stderr, p.stderr
    assert dump(catalog) == before


def test_ids_that_are_not_utf8_text_in_sql_are_refused(catalog):
    sql(catalog, "CREATE TABLE t (subject_id, ts, lat, lon, accuracy_m);"
                 "INSERT INTO t VALUES (CAST(x'62ff' AS TEXT), '2026-11-20T09:00:00Z', 35.7, 139.77, 5),"
                 "(CAST(x'62fe' AS TEXT), '2026-11-20T09:01:00Z', 35.7, 139.77, 5), ('ok', '2026-11-20T09:02:00Z', 35.7, 139.77, 5);")
    p = gf("judge", catalog, "--table", "t", "--explain")
    assert "1 judged" in p.stdout and "2 invalid" in p.stdout, p.stdout
    assert sql(catalog, "SELECT hex(subject_id) FROM gf_subjects;").stdout.split() == ["6F6B"]
    reasons = sql(catalog, "SELECT reason FROM gf_explain;").stdout
    assert reasons.count("subject_id is not UTF-8 text") == 2, reasons
    p = sql(catalog, "SELECT gf_check(CAST(x'62ff' AS TEXT), '2026-11-20T09:03:00Z', 35.7, 139.77, 5);", check=False)
    assert p.returncode != 0 and "argument 1 (subject_id) is not UTF-8 text (bytes 62FF)" in p.stderr, p.stderr
    assert sql(catalog, "SELECT count(*) FROM gf_subjects;").stdout.strip() == "1"


def test_ids_with_edge_spaces_come_back_from_the_tools_own_csv(tmp_path):
    """`judge --out` wrote ` u1` bare; read back, the spaces went and three subjects became one."""
    catalog = tmp_path / "c.db"
    gf("init", catalog)
    gf("import", catalog, write_collection(tmp_path / "a.geojson", [square("A", 0, 0, 0.02)]), "--with-default-conditions")
    fixes = tmp_path / "f.csv"
    rows = [[s, f"2026-11-20T09:0{k}:00Z", "0.01", "0.01", "5"] for s in [" u1", "u1 ", "u1"] for k in range(3)]
    with open(fixes, "w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(rows)
    out = tmp_path / "out.csv"
    gf("judge", catalog, "--fixes", fixes, "--out", out)
    subjects = {r["subject_id"] for r in csv.DictReader(io.StringIO(out.read_text(), newline=""))}
    assert subjects == {" u1", "u1 ", "u1"}, subjects
    # The file fed back to the tool as fixes (its extra columns are ignored): still three subjects.
    db2 = tmp_path / "d2.db"
    gf("init", db2)
    gf("judge", db2, "--fixes", out)
    assert sql(db2, "SELECT '[' || subject_id || ']' FROM gf_subjects ORDER BY 1;").stdout.splitlines() == ["[ u1]", "[u1 ]", "[u1]"]


def test_unix_seconds_with_leading_zeros(catalog):
    assert sql(catalog, "SELECT gf_time('0001795133100'), gf_time('-000');").stdout.strip() == \
        "2026-11-20T00:05:00.000000Z|1970-01-01T00:00:00.000000Z"


def test_ndjson_ids_and_times_of_other_json_types(catalog, tmp_path):
    """An array, object or boolean was judged under its JSON text (`["a"]`);
    a time with an exponent (`1.7e9`) was refused, though a REAL 1.7e9 is a time."""
    f = tmp_path / "f.ndjson"
    f.write_text('{"subject_id":["a"],"ts":"2026-11-20T09:00:00Z","lat":35.7,"lon":139.77,"accuracy_m":5}\n'
                 '{"subject_id":true,"ts":"2026-11-20T09:00:00Z","lat":35.7,"lon":139.77,"accuracy_m":5}\n'
                 '{"subject_id":"y","ts":{"t":1},"lat":35.7,"lon":139.77,"accuracy_m":5}\n'
                 '{"subject_id":"x","ts":1.7e9,"lat":35.7,"lon":139.77,"accuracy_m":5}\n'
                 '{"subject_id":7,"ts":1795133100.123456,"lat":35.7,"lon":139.77,"accuracy_m":5}\n')
    p = gf("judge", catalog, "--fixes", f, "--explain")
    assert "2 judged" in p.stdout and "3 invalid" in p.stdout, p.stdout
    reasons = sql(catalog, "SELECT reason FROM gf_explain ORDER BY rowid;").stdout.splitlines()
    assert [r.split(": ", 2)[2] for r in reasons] == ["subject_id is a JSON array, not a string or number",
                                                      "subject_id is a JSON boolean, not a string or number",
                                                      "ts is a JSON object, not a string or number"], reasons
    assert sql(catalog, "SELECT subject_id, last_ts FROM gf_subjects ORDER BY 1;").stdout.splitlines() == [
        "7|2026-11-20T00:05:00.123456Z", "x|2023-11-14T22:13:20.000000Z"]


def test_a_command_line_argument_that_is_not_utf8_is_refused(catalog, tmp_path):
    """It was repaired into U+FFFD: `check --subject b\\xff` and `b\\xfe` were
    one subject, and `init d\\xff.db` made a file of another name."""
    before = dump(catalog)
    for args in ([b"init", bytes(tmp_path) + b"/d\xff.db"],
                 [b"check", bytes(catalog), b"--subject", b"b\xff", b"--lat", b"35.7", b"--lon", b"139.77",
                  b"--accuracy", b"5", b"--time", b"2026-11-20T09:00:00Z"]):
        p = subprocess.run([bytes(CLI)] + args, capture_output=True)
        assert p.returncode == 1, p
        assert b"is not UTF-8 text: its byte " in p.stderr and b" is 0xFF: " in p.stderr, p.stderr
    assert not [f for f in tmp_path.iterdir() if f.name.startswith("d")], list(tmp_path.iterdir())
    assert dump(catalog) == before


def test_an_empty_group_is_no_group(tmp_path):
    """`"group_id": ""` (a spreadsheet's empty cell) made the id `#A`; `--group ''` did too."""
    db = tmp_path / "c.db"
    gf("init", db)
    feature = square("A", 0, 0, 0.02)
    feature["properties"]["group_id"] = ""
    gf("import", db, write_collection(tmp_path / "a.geojson", [feature]))
    assert sql(db, "SELECT area_id FROM gf_areas;").stdout.strip() == "A"
    for args in (["import", db, write_collection(tmp_path / "b.geojson", [square("B", 0, 0, 0.02)]), "--group", ""],
                 ["areas", "add", db, "--id", "C", "--circle", "0,0,100", "--group", ""]):
        p = gf(*args, check=False)
        assert p.returncode == 64 and "--group needs a group id" in p.stderr, p
    assert sql(db, "SELECT group_concat(area_id) FROM gf_areas;").stdout.strip() == "A"


def test_a_tab_at_an_ids_end_survives_the_conditions_csv(tmp_path):
    """`conditions list --csv` wrote `\\tA` bare and `conditions import` dropped the tab: A's conditions took them."""
    db, db2 = tmp_path / "c.db", tmp_path / "c2.db"
    areas = write_collection(tmp_path / "a.geojson", [square("A", 0, 0, 0.02), square("\tA", 1, 1, 0.02)])
    for d in (db, db2):
        gf("init", d)
    gf("import", db, areas, "--with-default-conditions")
    gf("import", db2, areas)
    listing = tmp_path / "c.csv"
    listing.write_text(gf("conditions", "list", db, "--csv").stdout)
    gf("conditions", "import", db2, listing)
    query = "SELECT condition_id, hex(area_id), timing FROM gf_conditions ORDER BY 1;"
    assert sql(db2, query).stdout == sql(db, query).stdout


def test_an_area_validity_written_with_an_exponent_is_a_time(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    f = tmp_path / "a.geojson"
    f.write_text('{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"area_id":"V","valid_from":1e-05,'
                 '"valid_until":1.7951331e9},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}]}')
    gf("import", db, f)
    assert sql(db, "SELECT valid_from, valid_until FROM gf_areas;").stdout.strip() == \
        "1970-01-01T00:00:00.000010Z|2026-11-20T00:05:00.000000Z"


def test_a_suggested_command_quotes_the_file_name(tmp_path):
    folder = tmp_path / "my fences"
    folder.mkdir()
    db = folder / "it's.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 0, 0, 0.02)]), "--with-default-conditions")
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(f"s{k},2026-11-20T09:00:0{k}Z,0.01,0.01,5\n" for k in range(5)))
    p = gf("judge", db, "--fixes", fixes, "--out", "/dev/full", check=False)
    assert p.returncode == 1, p
    quoted = "'" + str(db).replace("'", "'\\''") + "'"
    assert f"`geofence notifications {quoted} --run 1 --format csv`" in p.stderr, p.stderr


def test_a_subject_with_edge_spaces_written_unquoted_by_pythons_csv_is_that_subject(tmp_path):
    """From a new-user trial: Python's csv, pandas, DuckDB and Excel write
    the id ` sp ` unquoted (RFC 4180 keeps the spaces), and the reader
    dropped them, merging ` sp ` with `sp` (and an id of spaces became a
    missing subject)."""
    db = spaced_catalog(tmp_path)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
    w.writerow([" sp ", "2026-11-20T09:00:00Z", 0.01, 0.01, 5])
    w.writerow(["sp", "2026-11-20T09:00:00Z", 0.01, 0.01, 5])
    w.writerow(["  ", "2026-11-20T09:00:00Z", 0.01, 0.01, 5])
    assert "\n sp ,2026" in out.getvalue()           # unquoted, as Python writes it
    f = tmp_path / "fixes.csv"
    f.write_text(out.getvalue())
    gf("judge", db, "--fixes", f)
    subjects = run("sqlite3", db, "SELECT '[' || subject_id || ']' FROM gf_subjects ORDER BY subject_id").stdout.split("\n")
    assert subjects[:3] == ["[  ]", "[ sp ]", "[sp]"], subjects


def test_an_unknown_area_names_the_one_a_spreadsheet_meant(tmp_path):
    """From a new-user trial: a spreadsheet turns `00001` into `1`; the
    unknown-area error now names the area that differs only by leading
    zeros or edge spaces, in either direction."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("00001", 0, 0, 0.02), square(" 00050 ", 1, 1, 0.02)]))
    for given, meant in (("1", "00001"), ("00050", " 00050 ")):
        p = gf("conditions", "add", db, "--area", given, "--timing", "IN", check=False)
        assert p.returncode == 1 and f"unknown area '{given}' (area '{meant}' exists" in p.stderr, p.stderr
