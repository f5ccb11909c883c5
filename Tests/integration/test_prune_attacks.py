"""Retention under attack (the red team's findings on `geofence prune`): a
user's trigger that puts a removed notification back does not make the
prune chase it forever; a trigger that keeps a row (RAISE(IGNORE)) keeps it
out of the counts; a nearly full disk is pruned to the end in one run of
small chunks (each chunk's pages checkpointed into the file, so the -wal
does not grow by every chunk); a read-only catalog or a disk too full for
one chunk does not claim that chunks stand when none was committed."""
import os
import shutil
import sqlite3

from conftest import gf, small_tmpfs, sql, stored_rows
from prune_scenario import catalog, counts, judge_day, month


def test_a_trigger_putting_rows_back_does_not_make_prune_chase_them(tmp_path):
    db = month(tmp_path, days=3)
    before = counts(db)["gf_notification_rows"]
    con = sqlite3.connect(db)
    with con:
        con.execute("""CREATE TRIGGER keep_them AFTER DELETE ON gf_notification_rows BEGIN
                         INSERT INTO gf_notification_rows (run_id, subject_key, ts_us, area_key, condition_id, transition,
                                                           lat, lon, accuracy_m, local_day)
                         VALUES (old.run_id, old.subject_key, old.ts_us, old.area_key, old.condition_id, old.transition,
                                 old.lat, old.lon, old.accuracy_m, old.local_day);
                       END""")
    con.close()
    p = gf("prune", db, "--before", "2030-01-01", "--chunk-rows", "3")   # before: never ended (timeout 600 s)
    assert f"notifications: removed {before} " in p.stdout
    assert counts(db)["gf_notification_rows"] == before   # each one put back once, under a new id


def test_rows_a_trigger_keeps_are_not_counted_as_removed(tmp_path):
    db = month(tmp_path, days=3)
    before = counts(db)
    con = sqlite3.connect(db)
    with con:
        con.execute("CREATE TRIGGER keep_explanations BEFORE DELETE ON gf_explain BEGIN SELECT RAISE(IGNORE); END")
    con.close()
    twin = tmp_path / "twin.db"
    shutil.copy(db, twin)
    p = gf("prune", db, "--before", "2030-01-01")
    assert "explanations: removed 0 " in p.stdout and counts(db)["gf_explain"] == before["gf_explain"] > 0
    got = sql(twin, "SELECT gf_prune('2030-01-01', 1000000000);\nSELECT count(*) FROM gf_notification_rows;\n").stdout.split()
    assert got == [str(before["gf_notification_rows"]), "0"]   # the notifications it removed, not the explanations it kept


def test_a_nearly_full_disk_is_pruned_to_the_end_in_small_chunks(tmp_path):
    src = catalog(tmp_path)
    for day in range(4):   # removing every row then dirties far more pages than the disk has room for
        judge_day(src, tmp_path, day, visits=10, subjects=[f"u{n}" for n in range(40)])
    with small_tmpfs(tmp_path / "small", str(os.path.getsize(src) + 3 * 2**20)) as small:
        db = small / "c.db"
        shutil.copy(src, db)
        with open(small / "filler", "wb") as f:   # leaves 96 KiB: room for a small chunk's pages, not for many
            f.write(b"\0" * max(shutil.disk_usage(small).free - 96 * 1024, 0))
        env_tmp = os.environ.get("SQLITE_TMPDIR")
        os.environ["SQLITE_TMPDIR"] = str(small)
        try:
            p = gf("prune", db, "--before", "2030-01-01", "--chunk-rows", "20", check=False)
        finally:
            os.environ.pop("SQLITE_TMPDIR") if env_tmp is None else os.environ.__setitem__("SQLITE_TMPDIR", env_tmp)
        assert p.returncode == 0, p.stdout + p.stderr
        (small / "filler").unlink()
        assert counts(db)["gf_notification_rows"] == 0
        assert stored_rows(db, "PRAGMA integrity_check") == [("ok",)]


def test_no_chunk_is_said_to_stand_when_none_was_committed(tmp_path):
    db = month(tmp_path, days=2)
    p = gf("prune", f"file:{db}?mode=ro", "--before", "2030-01-01", check=False)
    assert p.returncode != 0 and "nothing was changed" in p.stderr
    assert "chunks above stand" not in p.stdout


def test_a_prune_leaves_an_unfinished_resumable_run_whole(tmp_path):
    """The red team's finding: a prune between a cut and its resume removed
    the committed chunks' notifications, and the resumed run, reading them
    back for --out, wrote a file without them (exit 0)."""
    import signal
    from conftest import CLI, Stopped
    db = month(tmp_path, days=2)
    feed = tmp_path / "later.csv"
    feed.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(
        f"s{n},2026-11-25T0{k}:00:00Z,{35.68 if k % 2 == 0 else 35.70},139.70,5\n" for n in range(6) for k in range(6)))
    cut = Stopped([CLI, "judge", db, "--fixes", feed, "--resume", "--chunk-fixes", "12"], "chunk-committed")
    cut.send(signal.SIGKILL)
    held = stored_rows(db, "SELECT count(*) FROM gf_notification_rows WHERE run_id = (SELECT run_id FROM gf_runs WHERE status = 'running')")
    assert held[0][0] > 0
    gf("prune", db, "--before", "2030-01-01")
    assert stored_rows(db, "SELECT count(*) FROM gf_notification_rows") == held   # only the unfinished run's rows stay
