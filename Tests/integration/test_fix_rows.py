"""Rows of fixes that say two things at once, or give bytes where text is
due: a header naming a column twice is refused (which column holds the fix
is anyone's guess), and a BLOB subject or time in a table is an invalid fix
that says so. A CSV file's lines may end in LF, CRLF or a lone CR (as
spreadsheets on the Mac export them): all three read the same."""
import json
import sqlite3
import time

from conftest import SAMPLES, gf, square, write_collection


def catalog(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0, 1.0)]), "--with-default-conditions")
    return db


def test_a_header_naming_a_column_twice_is_refused(tmp_path):
    db = catalog(tmp_path)
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m,lat\ns,2026-01-01T00:00:00Z,35.5,139.5,5,10\n")
    p = gf("judge", db, "--fixes", fixes, check=False)
    assert p.returncode == 1 and "the header names column 'lat' twice" in p.stderr, p.stderr


def test_a_blob_subject_or_time_is_an_invalid_fix_that_says_so(tmp_path):
    db = catalog(tmp_path)
    c = sqlite3.connect(db)
    c.executescript("""
        CREATE TABLE mine (subject_id, ts, lat, lon, accuracy_m);
        INSERT INTO mine VALUES (x'73', '2026-01-01T00:00:00Z', 35.5, 139.5, 5), ('s', x'00', 35.5, 139.5, 5);
    """)
    c.close()
    p = gf("judge", db, "--table", "mine", "--explain")
    assert "0 judged, 0 stale, 2 invalid" in p.stdout, p.stdout
    reasons = sqlite3.connect(db).execute("SELECT reason FROM gf_explain WHERE kind = 'invalid' ORDER BY rowid").fetchall()
    assert reasons == [("row 1: subject_id is a BLOB, not text",), ("row 2: ts is a BLOB, not a time",)], reasons


def test_csv_lines_may_end_in_a_lone_cr(tmp_path):
    """judge --fixes, locate --fixes and conditions import read a CR-only
    file as they read it with LF (it once read as one line: judge refused its
    header, locate silently found nothing); a CR inside quotes stays."""
    seen = {}
    for name, end in [("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")]:
        db = tmp_path / f"{name}.db"
        gf("init", db)
        gf("import", db, SAMPLES / "areas.geojson", "--group", "AREA_GROUPID_001", "--with-default-conditions")
        conditions, fixes = tmp_path / f"conditions-{name}.csv", tmp_path / f"fixes-{name}.csv"
        conditions.write_bytes((SAMPLES / "conditions.csv").read_text().replace("\n", end).encode())
        lines = (SAMPLES / "fixes.csv").read_text().splitlines() + ['"quoted\rsubject",2026-11-20T10:00:00+09:00,35.7150,139.7730,8']
        fixes.write_bytes("".join(line + end for line in lines).encode())
        gf("conditions", "import", db, conditions)
        out = tmp_path / f"out-{name}.csv"
        summary = gf("judge", db, "--fixes", fixes, "--out", out).stdout
        assert "12 fixes: 12 judged, 0 stale, 0 invalid" in summary, (name, summary)
        located = gf("locate", db, "--fixes", fixes).stdout
        seen[name] = (gf("conditions", "list", db, "--json").stdout, out.read_bytes(), located,
                      gf("state", db, "--json").stdout)
    assert seen["cr"] == seen["crlf"] == seen["lf"]
    _, events, located, state = seen["cr"]
    # 10 events, with the imported conditions' DWELL (101) and filtered IN (102).
    assert events.count(b"\n") == 11 and b",101,DWELL," in events and b",102,IN," in events, events
    assert b'"quoted\rsubject"' in events, events
    assert len(located.splitlines()) > 1 and "quoted\rsubject" in [s["subject_id"] for s in json.loads(state)]


def test_conditions_import_counts_what_it_imports_not_blank_lines(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "a", "--geometry", '{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}')
    blank = tmp_path / "blank.csv"
    blank.write_bytes(b"condition_id,area_id,timing\r\r\r\r")
    assert gf("conditions", "import", db, blank).stdout.strip() == "imported 0 conditions"
    two = tmp_path / "two.csv"
    two.write_bytes(b"condition_id,area_id,timing\r50,a,IN\r\r51,a,OUT\r\r")
    assert gf("conditions", "import", db, two).stdout.strip() == "imported 2 conditions"
    assert sqlite3.connect(db).execute("SELECT count(*) FROM gf_conditions").fetchone()[0] == 2


def wait_until_read(pipe, seconds=120):
    """Waits until the reader has taken every byte written into `pipe`
    (FIONREAD on it says how many are still unread): what comes next is in
    another read."""
    deadline = time.monotonic() + seconds
    while unread(pipe) > 0:
        assert time.monotonic() < deadline, "the reader stopped reading"
        time.sleep(0.001)


def unread(pipe):
    import array
    import fcntl
    import termios
    n = array.array("i", [0])
    fcntl.ioctl(pipe.fileno(), termios.FIONREAD, n)
    return n[0]


def test_ndjson_lines_end_as_csv_lines_do_and_a_bom_is_skipped(tmp_path):
    """NDJSON fixes: LF, CRLF and a lone CR end a line, also when a CRLF is
    split between two reads of a pipe; a byte-order mark first is skipped."""
    import subprocess
    import time
    from conftest import CLI
    rows = [json.dumps({"subject_id": "a", "ts": f"2026-11-20T09:0{k}:00+09:00", "lat": 35.7085 + k * 0.001,
                        "lon": 139.7735, "accuracy_m": 5}).encode() for k in range(6)]
    results = {}
    for name, data in {"lf": b"\n".join(rows) + b"\n",
                       "mixed": b"\xef\xbb\xbf" + rows[0] + b"\r" + rows[1] + b"\r\n" + rows[2] + b"\n" + b"\r".join(rows[3:]) + b"\r"}.items():
        db = tmp_path / f"{name}.db"
        gf("init", db)
        gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
        f = tmp_path / f"{name}.ndjson"
        f.write_bytes(data)
        p = gf("judge", db, "--fixes", f, "--out", "-")
        assert "6 judged, 0 stale, 0 invalid" in p.stderr, (name, p.stderr)
        results[name] = p.stdout
    assert results["mixed"] == results["lf"] and results["lf"].count("\n") > 1
    # A CRLF cut between two writes of a pipe.
    db = tmp_path / "pipe.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    p = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", "-", "--fixes-format", "ndjson", "--out", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for row in rows:
        p.stdin.write(row + b"\r"); p.stdin.flush()
        wait_until_read(p.stdin)  # the CR has been read without its LF
        p.stdin.write(b"\n"); p.stdin.flush()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and b"6 judged, 0 stale, 0 invalid" in err, err
    assert out.decode() == results["lf"]
