"""Retention (issue 40): `geofence prune CATALOG --before DATE` removes
notifications, explanations and runs older than a date, a bounded number of
rows per transaction, and never the subjects' state: the state export is
the same byte for byte, a suppression still suppresses after its
notification is pruned, and the cursor read (`WHERE id > :last_seen`) stays
exactly-once (docs/operations.md, "Retention"). The space afterwards and
gf_prune: test_prune_space_and_sql.py."""
import datetime
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest

from conftest import CLI, Stopped, current_schema_version, gf, sql, stored_rows
from older_layouts import version_6_catalog
from prune_scenario import DAY0, catalog, counts, cursor_read, judge_day, month, older_than, state

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


# ---- what goes and what stays ----------------------------------------------------------------------

def test_prune_removes_what_is_older_and_prints_the_counts(tmp_path):
    db = month(tmp_path)
    cutoff = DAY0.replace(hour=0) + datetime.timedelta(days=2)   # 2026-11-22: days 0 and 1 go
    n, e, r = older_than(db, cutoff)
    before = counts(db)
    assert n > 0 and e > 0 and r == 2, (n, e, r)
    out = gf("prune", db, "--before", "2026-11-22").stdout
    assert f"notifications: removed {n} (before 2026-11-22T00:00:00Z)" in out
    assert f"explanations: removed {e} (before 2026-11-22T00:00:00Z)" in out
    assert f"runs: removed {r} (before 2026-11-22T00:00:00Z)" in out
    assert "free pages: " in out
    assert counts(db) == {"gf_notification_rows": before["gf_notification_rows"] - n,
                          "gf_explain": before["gf_explain"] - e, "gf_runs": before["gf_runs"] - r}
    assert stored_rows(db, "SELECT count(*) FROM gf_notification_rows WHERE ts_us < ?", (int(cutoff.timestamp()) * 10**6,)) == [(0,)]
    assert stored_rows(db, "SELECT min(run_id) FROM gf_runs") == [(3,)]
    # Once more: nothing is left to remove.
    again = gf("prune", db, "--before", "2026-11-22").stdout
    assert "notifications: removed 0" in again and "runs: removed 0" in again


def test_a_date_time_with_its_offset_is_that_instant(tmp_path):
    db = month(tmp_path, days=2)
    cutoff = DAY0 + datetime.timedelta(minutes=25)   # within day 0's first run
    n, e, _ = older_than(db, cutoff)
    out = gf("prune", db, "--before", "2026-11-20T17:25:00+09:00").stdout
    assert f"notifications: removed {n} (before 2026-11-20T08:25:00Z)" in out
    assert f"explanations: removed {e} " in out
    assert "runs: removed 0 " in out   # day 0's run still has rows


def test_an_explanation_without_a_time_goes_by_its_runs_start(tmp_path):
    db = catalog(tmp_path)
    judge_day(db, tmp_path, 0)
    bad = tmp_path / "bad.csv"
    bad.write_text("subject_id,ts,lat,lon,accuracy_m\nz1,garbage,35.7,139.7,5\n")
    gf("judge", db, "--fixes", bad, "--explain")
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE gf_runs SET started_at = '2026-11-21T12:00:00Z' WHERE run_id = 2")
    con.close()
    judge_day(db, tmp_path, 2)
    untimed = "SELECT run_id, reason FROM gf_explain WHERE ts IS NULL"
    assert [r[0] for r in stored_rows(db, untimed)] == [2]
    gf("prune", db, "--before", "2026-11-21T12:00:00Z")   # its run started at that instant, not before
    assert [r[0] for r in stored_rows(db, untimed)] == [2]
    assert stored_rows(db, "SELECT run_id FROM gf_runs ORDER BY 1") == [(2,), (3,)]
    out = gf("prune", db, "--before", "2026-11-21T12:00:01Z").stdout
    assert stored_rows(db, untimed) == [] and "explanations: removed 1 " in out
    assert stored_rows(db, "SELECT run_id FROM gf_runs ORDER BY 1") == [(3,)]


def test_the_newest_run_and_a_run_with_rows_stay(tmp_path):
    db = month(tmp_path, days=3)
    out = gf("prune", db, "--before", "2030-01-01").stdout
    # Everything is older, but the newest run stays: its number is not handed out again.
    assert counts(db) == {"gf_notification_rows": 0, "gf_explain": 0, "gf_runs": 1}
    assert "runs: removed 2 " in out
    judge_day(db, tmp_path, 3)
    assert stored_rows(db, "SELECT run_id FROM gf_runs ORDER BY run_id") == [(3,), (4,)]


def test_the_state_is_untouched_byte_for_byte(tmp_path):
    db = month(tmp_path)
    before = state(db)
    last_notified = stored_rows(db, """SELECT * FROM gf_last_notified WHERE condition_id = 7 ORDER BY 1, 2""")
    gf("prune", db, "--before", "2030-01-01")
    assert state(db) == before
    assert stored_rows(db, "SELECT * FROM gf_last_notified WHERE condition_id = 7 ORDER BY 1, 2") == last_notified
    # The dictionaries stay: a key remains its id's.
    assert stored_rows(db, "SELECT subject_id FROM gf_subject_keys ORDER BY 1") == [("u1",), ("u2",)]


def test_a_suppression_still_suppresses_after_its_notification_is_pruned(tmp_path):
    db = catalog(tmp_path)
    judge_day(db, tmp_path, 0, visits=1)
    assert stored_rows(db, "SELECT count(*) FROM gf_notifications WHERE condition_id = 7") == [(2,)]
    twin = tmp_path / "twin.db"
    shutil.copy(db, twin)
    gf("prune", db, "--before", "2026-11-21")
    assert stored_rows(db, "SELECT count(*) FROM gf_notification_rows") == [(0,)]
    # The next day the subjects enter again: condition 7 is still within its 2 days, on both copies alike.
    judge_day(db, tmp_path, 1, visits=1)
    judge_day(twin, tmp_path, 1, visits=1)
    new = "SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications WHERE run_id = 2 ORDER BY id"
    assert stored_rows(db, new) == stored_rows(twin, new)
    assert [r for r in stored_rows(db, new) if r[3] == 7] == []
    assert {r[3] for r in stored_rows(db, new)} == {1, 2}
    assert state(db) == state(twin)


# ---- the cursor read ------------------------------------------------------------------------------

def test_the_cursor_read_stays_exactly_once_across_a_prune(tmp_path):
    db = catalog(tmp_path)
    judge_day(db, tmp_path, 0)
    seen = cursor_read(db, 0)
    last_seen = seen[-1][0]
    judge_day(db, tmp_path, 1)
    unread = cursor_read(db, last_seen)
    # A prune of the old day only: the unread rows are all still there, read once.
    gf("prune", db, "--before", "2026-11-21")
    assert cursor_read(db, last_seen) == unread
    last_seen = unread[-1][0]
    # A prune of everything, the newest rows included: their ids are never handed out again.
    gf("prune", db, "--before", "2030-01-01")
    assert cursor_read(db, 0) == []
    judge_day(db, tmp_path, 2)
    new = cursor_read(db, last_seen)
    assert new and new[0][0] == last_seen + 1
    assert {r[2][:10] for r in new} == {"2026-11-22"}, "only the new day's notifications, none read before"
    # And with gf_prune in SQL too.
    sql(db, "SELECT gf_prune('2030-01-01');")
    judge_day(db, tmp_path, 3)
    newer = cursor_read(db, new[-1][0])
    assert newer[0][0] == new[-1][0] + 1 and {r[2][:10] for r in newer} == {"2026-11-23"}


# ---- bounded transactions -------------------------------------------------------------------------

def test_a_kill_between_chunks_loses_nothing_and_the_next_prune_goes_on(tmp_path):
    db = month(tmp_path)
    twin = tmp_path / "twin.db"
    shutil.copy(db, twin)
    gf("prune", twin, "--before", "2026-11-22")
    before = counts(db)
    # Stopped right after its first chunk committed, then killed: those 5 rows are gone, nothing else.
    p = Stopped([CLI, "prune", db, "--before", "2026-11-22", "--chunk-rows", "5"], "committed")
    assert p.reached
    p.send(signal.SIGKILL)
    assert counts(db)["gf_notification_rows"] == before["gf_notification_rows"] - 5
    assert counts(db)["gf_explain"] == before["gf_explain"]
    out = gf("prune", db, "--before", "2026-11-22", "--chunk-rows", "5").stdout
    assert counts(db) == counts(twin)
    every = "SELECT * FROM gf_notification_rows ORDER BY id"
    assert stored_rows(db, every) == stored_rows(twin, every)
    assert stored_rows(db, "SELECT * FROM gf_explain ORDER BY rowid") == stored_rows(twin, "SELECT * FROM gf_explain ORDER BY rowid")
    assert "runs: removed 2 " in out


def test_a_kill_inside_a_chunk_loses_only_that_chunk(tmp_path):
    db = month(tmp_path, days=2)
    before = counts(db)
    # Stopped with its first chunk deleted but not committed, then killed: nothing is removed.
    p = Stopped([CLI, "prune", db, "--before", "2026-11-21", "--chunk-rows", "5"], "chunk")
    assert p.reached
    p.send(signal.SIGKILL)
    assert counts(db) == before
    assert gf("prune", db, "--before", "2026-11-21").returncode == 0


def test_a_signal_between_chunks_stops_and_says_what_stands(tmp_path):
    db = month(tmp_path, days=2)
    before = counts(db)
    p = Stopped([CLI, "prune", db, "--before", "2026-11-21", "--chunk-rows", "5"], "committed")
    code, out, err = p.send(signal.SIGTERM)
    assert code == -signal.SIGTERM
    assert "notifications: removed 5 " in out and "stopped before the end" in out
    assert "the changes had been committed, and stand" in err
    assert counts(db)["gf_notification_rows"] == before["gf_notification_rows"] - 5


# ---- refusals -------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--before", "2026-13-01"], "--before: must be a date (2026-10-01, its start in UTC) or a date-time with its offset (2026-10-01T00:00:00+09:00), got '2026-13-01'"),
    (["--before", "2026-02-30T00:00Z"], "--before: time '2026-02-30T00:00Z' is neither ISO 8601 with an offset nor Unix seconds"),
    (["--before", "30"], "--before: must be a date (2026-10-01, its start in UTC) or a date-time with its offset"),
    (["--before", "2026-10-01T00:00:00"], "--before: time '2026-10-01T00:00:00' has no UTC offset"),
    (["--before", "yesterday"], "got 'yesterday'"),
    (["--older-than", "30"], "--older-than: must be a number of days such as 30d or 30 days, got '30'"),
    (["--older-than", "-3d"], "--older-than: must be a number of days"),
    (["--before", "2026-10-01", "--older-than", "3d"], "give --before or --older-than, not both"),
    (["--before", "2026-10-01", "--chunk-rows", "0"], "--chunk-rows: must be 1 or more, got 0"),
])
def test_bad_cutoffs_are_refused_naming_the_option_and_the_value(tmp_path, args, message):
    db = month(tmp_path, days=1)
    before = counts(db)
    p = gf("prune", db, *args, check=False)
    assert p.returncode == 1, p.stderr
    assert message in p.stderr
    assert counts(db) == before


def test_no_cutoff_and_no_setting_is_refused(tmp_path):
    db = month(tmp_path, days=1)
    p = gf("prune", db, check=False)
    assert p.returncode == 1
    assert "no --before or --older-than, and the catalog has no retention setting" in p.stderr


def test_a_read_only_catalog_is_refused_clearly(tmp_path):
    db = month(tmp_path, days=1)
    before = counts(db)
    p = gf("prune", f"file:{db}?mode=ro", "--before", "2030-01-01", check=False)
    assert p.returncode == 2
    assert "this command writes to the catalog, which is read-only here" in p.stderr
    assert "nothing was changed" in p.stderr
    assert counts(db) == before


def test_an_older_catalog_is_upgraded_first(tmp_path):
    db = version_6_catalog(tmp_path / "old.db", FIXTURES / "v6_notification_rows" / "rows.sql")
    twin = tmp_path / "twin.db"
    shutil.copy(db, twin)
    gf("settings", twin)   # upgraded only
    times = [r[0] for r in stored_rows(twin, "SELECT ts FROM gf_notifications ORDER BY ts")]
    middle = times[len(times) // 2][:10]
    cutoff_us = int(datetime.datetime.fromisoformat(middle + "T00:00:00+00:00").timestamp()) * 10**6
    n = stored_rows(twin, "SELECT count(*) FROM gf_notification_rows WHERE ts_us < ?", (cutoff_us,))[0][0]
    out = gf("prune", db, "--before", middle).stdout
    assert stored_rows(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [(current_schema_version(),)]
    assert f"notifications: removed {n} " in out
    assert stored_rows(db, "SELECT record FROM gf_subject_state ORDER BY 1") == stored_rows(twin, "SELECT record FROM gf_subject_state ORDER BY 1")


# ---- retention settings -----------------------------------------------------------------------------

def test_retention_settings_prune_each_kind_by_its_own_age(tmp_path):
    db = month(tmp_path, days=2)
    before = counts(db)
    # The fixes are of 2026-11-20 and 21; "now" is later, so 1 day back from now is after all of them.
    gf("settings", db, "retention_notifications", "1d")
    out = gf("prune", db).stdout
    assert f"notifications: removed {before['gf_notification_rows']} (before " in out
    assert "explanations: kept (the catalog has no retention_explanations setting)" in out
    assert "runs: kept (the catalog has no retention_runs setting)" in out
    assert counts(db) == {**before, "gf_notification_rows": 0}
    gf("settings", db, "retention_explanations", "2 days")
    gf("settings", db, "retention_runs", "1 day")
    out = gf("prune", db).stdout
    assert f"explanations: removed {before['gf_explain']} " in out and "runs: removed 1 " in out
    gf("settings", db, "retention_runs", "--unset")


def test_a_bad_retention_setting_is_refused_naming_the_key_and_the_value(tmp_path):
    db = month(tmp_path, days=1)
    p = gf("settings", db, "retention_notifications", "ninety", check=False)
    assert p.returncode == 1
    assert "retention_notifications: must be a number of days such as 30d or 30 days, got 'ninety'" in p.stderr
    con = sqlite3.connect(db)   # as a hand-edited catalog might have it
    with con:
        con.execute("INSERT INTO gf_settings (key, value) VALUES ('retention_runs', '3 weeks')")
    con.close()
    p = gf("prune", db, check=False)
    assert p.returncode == 1
    assert "retention_runs: must be a number of days such as 30d or 30 days, got '3 weeks'" in p.stderr
