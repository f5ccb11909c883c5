"""The first gf_check on a connection reads what its fix touches: the areas
whose boxes hold it and their conditions, not every condition of the
catalog. On a catalog of millions of conditions a call that read them all
(to learn which have a suppression) took over a second cold before it judged
anything (benchmarks/first_touch.py).

Told by the bytes the process reads (`rchar` of /proc/self/io: every read
system call, page cache or not; SQLite's memory map is off here), not by
time: the call must read a small part of a conditions table far larger than
anything it touches."""
import sqlite3
from pathlib import Path

from conftest import EXTENSION, gf, square, stored_rows, write_collection

FAR_CONDITIONS = 200_000


def bytes_read():
    """What this process has read through system calls so far."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def connect(db):
    """A fresh connection with SpatiaLite and the extension, its database file read, not mapped."""
    c = sqlite3.connect(db)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(EXTENSION))
    c.execute("PRAGMA mmap_size = 0")
    return c


def catalog_with_far_conditions(tmp_path):
    """NEAR with an IN that suppresses for a day, and FAR, half the world away,
    with FAR_CONDITIONS conditions, a tenth of them suppressing too; returns
    (the catalog, the bytes FAR's conditions added to it)."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [
        square("NEAR", 139.70, 35.60, 0.10), square("FAR", 10.0, 10.0, 0.10)]))
    before = db.stat().st_size
    c = sqlite3.connect(db)
    c.execute("""
        WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
        INSERT INTO gf_conditions (area_id, timing, renotify_suppress_days)
        SELECT 'FAR', 'IN', CASE WHEN x % 10 = 0 THEN 1 END FROM n""", (FAR_CONDITIONS,))
    c.execute("INSERT INTO gf_conditions (area_id, timing, renotify_suppress_days) VALUES ('NEAR', 'IN', 1)")
    c.commit()
    c.execute("VACUUM")
    c.close()
    return db, db.stat().st_size - before


def test_the_first_check_reads_the_conditions_its_fix_meets_not_the_catalogs(tmp_path):
    db, far_bytes = catalog_with_far_conditions(tmp_path)
    assert far_bytes > 4_000_000
    c = connect(db)
    start = bytes_read()
    out = c.execute("SELECT gf_check('walker', '2026-11-30T09:00:00Z', 35.65, 139.75, 10)").fetchone()[0]
    read = bytes_read() - start
    c.close()
    assert '"area_id":"NEAR"' in out and '"transition":"IN"' in out, out
    assert read < far_bytes / 10, f"the first gf_check read {read:,} bytes; FAR's conditions alone are {far_bytes:,}"


def test_a_suppression_read_on_demand_still_keeps_the_day_and_suppresses(tmp_path):
    """The suppressing conditions are asked one by one: NEAR's IN notifies
    once a day (the subject's record keeps the day), on new connections as
    on one."""
    db, _ = catalog_with_far_conditions(tmp_path)
    fixes = [("09:00", 35.65, 139.75), ("09:10", 35.0, 139.0), ("09:20", 35.65, 139.75)]
    for i, (hhmm, lat, lon) in enumerate(fixes):
        c = connect(db)
        c.execute("SELECT gf_check('walker', ?, ?, ?, 10)", (f"2026-11-30T{hhmm}:00Z", lat, lon)).fetchone()
        if i == 0:
            c.execute("SELECT gf_check('stroller', '2026-11-30T09:00:00Z', 35.65, 139.75, 10)").fetchone()
        c.close()
    notified = stored_rows(db, "SELECT subject_id, ts, area_id, transition FROM gf_notifications ORDER BY id")
    assert notified == [("walker", "2026-11-30T09:00:00.000000Z", "NEAR", "IN"),
                        ("stroller", "2026-11-30T09:00:00.000000Z", "NEAR", "IN")]
    days = stored_rows(db, "SELECT subject_id, local_date FROM gf_last_notified ORDER BY subject_id")
    assert days == [("stroller", "2026-11-30"), ("walker", "2026-11-30")]
