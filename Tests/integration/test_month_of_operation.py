"""A month of operation ends where one uninterrupted history ends (issue 40's
"Done means"). Thirty daily runs of month_scenario.py's fixes, two ways:

- **uninterrupted**: this build judges day 1 to day 30, one run a day, on a
  catalog it made;
- **operated**: days 1–15 were judged by the previous release's package
  (Tests/fixtures/month: its catalog, of its schema); this build takes the
  catalog over (the upgrade midway) and judges days 16–30, with what months
  of operation bring on the way: day 20 judged with `--resume` in small
  chunks and killed (SIGKILL) after its first chunk committed, then resumed
  by the same command; at day 25 a prune of what came before day 10.

Both end with the same state (`geofence state export`, byte for byte), the
same last-notified days, the same runs, and the same notifications (ids,
runs, every column) from the prune's date on; before it the operated
catalog holds none."""
import gzip
import signal
import sqlite3

import pytest

import month_scenario as month
from conftest import CLI, Stopped, gf, run

PRUNE_BEFORE_DAY = 10


def judge_day(db, folder, day, *extra):
    """Day `day` judged as the fixture's old build judged it: from the folder
    of the file, which a run records as its source."""
    month.write_day(folder, day)
    return run(CLI, "judge", db.name, "--fixes", month.day_name(day), *extra, cwd=folder)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("month-uninterrupted")
    db = folder / "month.db"
    gf("init", db)
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    gf("import", db, month.AREAS)
    gf("conditions", "import", db, month.CONDITIONS)
    for day in range(1, month.DAYS + 1):
        judge_day(db, folder, day)
    return db


@pytest.fixture(scope="module")
def operated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("month-operated")
    db = folder / "month.db"
    with gzip.open(month.FIXTURES / "month" / "days01-15.db.gz") as f:
        db.write_bytes(f.read())
    for day in range(16, month.DAYS + 1):
        if day == 20:   # a long run cut by a kill after its first chunk, then resumed
            month.write_day(folder, day)
            args = [CLI, "judge", db.name, "--fixes", month.day_name(day), "--resume", "--chunk-fixes", "600"]
            cut = Stopped(args, "chunk-committed", cwd=folder)
            assert cut.send(signal.SIGKILL)[0] == -signal.SIGKILL
            assert reads(db, "SELECT status FROM gf_runs ORDER BY run_id DESC LIMIT 1") == [("running",)]
            run(*args, cwd=folder)
            assert reads(db, "SELECT status FROM gf_runs ORDER BY run_id DESC LIMIT 1") == [("done",)]
        else:
            judge_day(db, folder, day)
        if day == 25:   # a month's retention: what happened before day 10 goes
            gf("prune", db, "--before", month.day_start(PRUNE_BEFORE_DAY)[:10], "--chunk-rows", "700")
    return db


def notifications(db, since=None):
    con = sqlite3.connect(db)
    try:
        where, args = ("WHERE ts >= ?", (since,)) if since else ("", ())
        return con.execute(f"SELECT * FROM gf_notifications {where} ORDER BY id", args).fetchall()
    finally:
        con.close()


def reads(db, query):
    con = sqlite3.connect(db)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_the_state_is_the_same_byte_for_byte(uninterrupted, operated):
    one, other = gf("state", "export", uninterrupted).stdout, gf("state", "export", operated).stdout
    assert one.count("\n") == len(month.SUBJECTS) and one == other


def test_the_last_notified_days_are_the_same(uninterrupted, operated):
    query = "SELECT * FROM gf_last_notified ORDER BY 1, 2"
    assert reads(uninterrupted, query) == reads(operated, query) != []


def test_the_notifications_are_the_same_from_the_prune_on(uninterrupted, operated):
    since = month.day_start(PRUNE_BEFORE_DAY).replace("Z", ".000000Z")
    kept = notifications(operated)
    assert kept == notifications(uninterrupted, since) and len(kept) > 1000
    assert notifications(operated, None) == notifications(operated, since)   # nothing before the cutoff is left


def test_the_runs_are_the_same(uninterrupted, operated):
    # A run goes by when it started (today, for every run here), so the prune by the fixes' month keeps them all.
    query = "SELECT run_id, kind, source, fixes, judged, stale, invalid, transitions, notifications, filtered FROM gf_runs ORDER BY run_id"
    assert reads(operated, query) == reads(uninterrupted, query) and len(reads(operated, query)) == month.DAYS
