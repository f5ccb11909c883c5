"""Condition values a catalog can hold but judging cannot use, written past
the table's CHECK by hand or by another tool: each is refused in every door
that reads the condition, naming it and its column, and nothing is written."""
import sqlite3

import pytest

from conftest import gf, sql

HEADER = "subject_id,ts,lat,lon,accuracy_m\n"


@pytest.mark.parametrize("column,value,shown", [("renotify_suppress_days", "'3 days'", "'3 days'"),
                                                ("renotify_suppress_days", "3.7", "3.7"),
                                                ("dwell_s", "'600s'", "'600s'")])
def test_a_condition_value_that_is_no_whole_number_is_refused_naming_it(tmp_path, column, value, shown):
    """SQLite's CHECK lets text through (text compares above every number):
    a suppression of '3 days' or a dwell of '600s' was read as none, so the
    suppression silently did not apply (a red team's finding) and the DWELL
    fired at once. Every door now refuses it, naming the condition and the
    column, and leaves the catalog as it was."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "A", "--circle", "35.7,139.7,500")
    timing = ["--timing", "DWELL", "--dwell-s", "600"] if column == "dwell_s" else ["--timing", "IN", "--renotify-suppress-days", "3"]
    gf("conditions", "add", db, "--id", "1", "--area", "A", *timing)
    sqlite3.connect(db).executescript(f"UPDATE gf_conditions SET {column} = {value} WHERE condition_id = 1;")

    def stored():
        c = sqlite3.connect(db)
        try:
            return [c.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                    for t in ("gf_conditions", "gf_notification_rows", "gf_subject_state", "gf_inside", "gf_runs")]
        finally:
            c.close()
    before = stored()
    fixes = tmp_path / "f.csv"
    fixes.write_text(HEADER + "u,2026-11-20T00:00:00Z,35.7,139.7,5\nu,2026-11-20T00:20:00Z,35.7,139.7,5\n")
    expected = f"condition 1, {column}: must be a whole number or empty, got {shown}"
    refused_by_every_door(db, fixes, expected)
    assert stored() == before


def refused_by_every_door(db, fixes, expected):
    """judge, check and gf_check each refuse, saying `expected`; the two
    commands exit 2, the catalog's problem, as for other rows written past
    its constraints."""
    p = gf("judge", db, "--fixes", fixes, check=False)
    assert p.returncode == 2 and expected in p.stderr, p.stderr
    p = gf("check", db, "--subject", "u", "--lat", "35.7", "--lon", "139.7", "--accuracy", "5", "--time", "2026-11-20T00:00:00Z", check=False)
    assert p.returncode == 2 and expected in p.stderr, p.stderr
    p = sql(db, "SELECT gf_check('u', '2026-11-20T00:00:00Z', 35.7, 139.7, 5);", check=False)
    assert p.returncode != 0 and f"gf_check: {expected}" in p.stderr, p.stderr


@pytest.mark.parametrize("table,where,row,in_sql", [("gf_conditions", "condition_id = 1", "condition 1", "condition 1"),
                                                    ("gf_areas", "area_id = 'A'", "id 'A'", "area 'A'")])
def test_a_time_zone_stored_as_a_blob_is_refused_naming_its_row(tmp_path, table, where, row, in_sql):
    """A red team's finding: a BLOB in a text column was read as nothing, so
    a zone written as CAST('Asia/Tokyo' AS BLOB) was none, and the catalog's
    UTC judged the condition's window silently."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "A", "--circle", "35.7,139.7,500")
    gf("conditions", "add", db, "--id", "1", "--area", "A", "--timing", "IN")
    sqlite3.connect(db).executescript(f"UPDATE {table} SET timezone = CAST('Asia/Tokyo' AS BLOB) WHERE {where};")
    fixes = tmp_path / "f.csv"
    fixes.write_text(HEADER + "u,2026-11-20T00:00:00Z,35.7,139.7,5\n")
    p = gf("judge", db, "--fixes", fixes, check=False)
    assert p.returncode != 0 and f"{row}, timezone: must be text or empty, got a BLOB" in p.stderr, p.stderr
    p = sql(db, "SELECT gf_check('u', '2026-11-20T00:00:00Z', 35.7, 139.7, 5);", check=False)
    assert p.returncode != 0 and f"gf_check: {in_sql}, timezone: must be text or empty, got a BLOB" in p.stderr, p.stderr
    assert sql(db, "SELECT count(*) FROM gf_notification_rows;").stdout.split() == ["0"]


@pytest.mark.parametrize("others", [0, 9], ids=["prepared-all", "on-demand"])
@pytest.mark.parametrize("table,where,row", [("gf_conditions", "condition_id = 1", "condition 1 of area 'A'"),
                                             ("gf_areas", "area_id = 'A'", "area 'A'")])
def test_a_time_zone_written_by_sql_that_does_not_load_names_its_row(tmp_path, table, where, row, others):
    """The import and `conditions add` check a zone's name; a row written by
    SQL is checked when judging meets it. It was reported as the zone alone,
    a crash's 'Error:' from the command (a new-user trial's finding): every
    door now names the row and its column, as the catalog's fault (exit 2).
    With 9 other areas, one fix is judged on demand (CandidateStrategy)."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "A", "--circle", "35.7,139.7,500")
    for k in range(others):
        gf("areas", "add", db, "--id", f"B{k}", "--circle", f"36.{k},139.7,500")
    gf("conditions", "add", db, "--id", "1", "--area", "A", "--timing", "IN")
    sqlite3.connect(db).executescript(f"UPDATE {table} SET timezone = 'Mars/Base' WHERE {where};")
    fixes = tmp_path / "f.csv"
    fixes.write_text(HEADER + "u,2026-11-20T00:00:00Z,35.7,139.7,5\n")
    refused_by_every_door(db, fixes, f"{row}, timezone: unknown time zone 'Mars/Base'")
    assert sql(db, "SELECT count(*) FROM gf_notification_rows;").stdout.split() == ["0"]
