"""`locate --fixes` takes a row by the fix's own rules for latitude,
longitude and accuracy (one rule, in the core), needing no subject or
time; a row without accuracy is an exact position. A row those rules refuse
gives no pair and is counted as invalid. `--fixes-format` means for locate
what it means for judge."""
from conftest import CLI, gf, run, square, write_collection


def test_rows_are_taken_by_the_fix_rules_without_subject_or_time(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0, 1.0)]))
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                     ",,35.5,139.5,\n"                       # no subject, time or accuracy: an exact position
                     "s,,35.5,139.5,1e400\n"                 # an infinite accuracy, refused as for judge
                     "s,2026-01-01T00:00:00Z,95,139.5,1\n"   # latitude out of range
                     "x,,35.5,139.5,-1\n"                    # negative accuracy: no fix
                     ",,35.5,139.5,5\n")
    p = gf("locate", db, "--fixes", fixes)
    assert p.stdout == "row,area_id,verdict\n1,A,inside\n5,A,inside\n"
    assert "located 5 fixes (3 invalid): 2 pairs" in p.stderr, p.stderr


def test_a_csv_of_positions_needs_only_lat_and_lon(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0, 1.0)]))
    only = tmp_path / "p.csv"
    only.write_text("lat,lon\n35.5,139.5\n36.5,139.5\n")
    assert gf("locate", db, "--fixes", only).stdout == "row,area_id,verdict\n1,A,inside\n"
    with_accuracy = tmp_path / "q.csv"
    with_accuracy.write_text("lon,lat,accuracy_m\n139.5,35.5,5\n139.5,35.5,-1\n")
    p = gf("locate", db, "--fixes", with_accuracy)
    assert p.stdout == "row,area_id,verdict\n1,A,inside\n" and "(1 invalid)" in p.stderr, p.stderr
    no_lat = tmp_path / "r.csv"
    no_lat.write_text("lon\n139.5\n")
    p = gf("locate", db, "--fixes", no_lat, check=False)
    assert p.returncode == 1 and "no column 'lat' (needs lat, lon)" in p.stderr, p.stderr


def test_fixes_format_says_the_format_whatever_the_name(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0, 1.0)]), "--with-default-conditions")
    named = tmp_path / "fixes.txt"
    named.write_text('{"subject_id": "s", "ts": "2026-01-01T00:00:00Z", "lat": 35.5, "lon": 139.5, "accuracy_m": 5}\n')
    p = gf("judge", db, "--fixes", named, "--fixes-format", "ndjson")
    assert "1 judged, 0 stale, 0 invalid" in p.stdout and "1 fix: 1 judged" in p.stdout and "; 1 transition, 1 notification, 0 not notified" in p.stdout, p.stdout


def test_locate_fixes_format_as_for_judge(tmp_path):
    """NDJSON on standard input, or in a file whatever its name, with
    --fixes-format ndjson; --fixes-format csv reads a .ndjson name as CSV;
    without the option standard input is CSV, as for judge."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0, 1.0)]))
    ndjson = ('{"lat": 35.5, "lon": 139.5}\n{"lat": 36.5, "lon": 139.5}\n'
              '{"lat": 35.25, "lon": 139.25, "accuracy_m": 10}\n')
    pairs = "row,area_id,verdict\n1,A,inside\n3,A,inside\n"
    p = run(CLI, "locate", db, "--fixes", "-", "--fixes-format", "ndjson", input=ndjson)
    assert p.stdout == pairs and "located 3 fixes (0 invalid): 2 pairs" in p.stderr, p.stderr
    named = tmp_path / "fixes.txt"
    named.write_text(ndjson)
    assert gf("locate", db, "--fixes", named, "--fixes-format", "ndjson").stdout == pairs
    csv_named = tmp_path / "positions.ndjson"
    csv_named.write_text("lat,lon\n35.5,139.5\n")
    assert gf("locate", db, "--fixes", csv_named, "--fixes-format", "csv").stdout == "row,area_id,verdict\n1,A,inside\n"
    # Standard input is CSV by default: an NDJSON stream is no CSV header.
    p = run(CLI, "locate", db, "--fixes", "-", input=ndjson, check=False)
    assert p.returncode == 1 and "line 1: stray quote" in p.stderr, p.stderr
    p = gf("locate", db, "--lat", "35.5", "--lon", "139.5", "--fixes-format", "ndjson", check=False)
    assert p.returncode != 0 and "--fixes-format is the format of --fixes" in p.stderr, p.stderr


def test_the_summary_names_the_first_invalid_fix_and_the_fixes_without_accuracy(tmp_path):
    """Before its summary (its last line), locate says which fix was the first invalid one
    and why, in the user's column names (as judge does), and how many fixes
    had no accuracy and were located as exact positions (new-user trial: a
    feed whose accuracy column was not named gave no undecided pair under
    --confidence, without a word)."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0, 1.0)]))
    fixes = tmp_path / "f.csv"
    fixes.write_text("device_id,latitude,longitude,hacc\nd,35.5,139.5,10\nd,95,139.5,3\nd,35.5,139.7,3\n")
    p = gf("locate", db, "--fixes", fixes, "--columns", "lat=latitude,lon=longitude", "--confidence", "0.95")
    lines = p.stderr.splitlines()
    assert lines[0] == "invalid fixes: 1 of 3, not located; the first: row 2: column 'latitude': latitude 95.0 outside [-90, 90]"
    assert lines[1].startswith("2 fixes had no accuracy (no 'accuracy_m' column or key): located as exact positions")
    assert lines[2].startswith("located 3 fixes (1 invalid): 2 pairs; ")
    named = gf("locate", db, "--fixes", fixes, "--columns", "lat=latitude,lon=longitude,accuracy_m=hacc", "--confidence", "0.95")
    assert len(named.stderr.splitlines()) == 2 and "no accuracy" not in named.stderr
