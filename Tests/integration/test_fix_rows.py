"""Rows of fixes that say two things at once, or give bytes where text is
due: a header naming a column twice is refused (which column holds the fix
is anyone's guess), and a BLOB subject or time in a table is an invalid fix
that says so."""
import sqlite3

from conftest import gf, square, write_collection


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
