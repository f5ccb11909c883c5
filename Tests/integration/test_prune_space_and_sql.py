"""Retention (issue 40), continued from test_prune.py: the space a prune
frees (`--vacuum`, and a VACUUM that runs out of space leaving the prune as
it was) and the SQL form, gf_prune(before, max_rows): a loop of autocommit
calls, a call inside the caller's transaction, and its refusals."""
import datetime
import os
import shutil

import pytest

from conftest import gf, small_tmpfs, sql, stored_rows
from prune_scenario import counts, month, older_than


# ---- space ----------------------------------------------------------------------------------------

def test_vacuum_gives_the_free_pages_back(tmp_path):
    db = month(tmp_path, days=3)
    out = gf("prune", db, "--before", "2030-01-01", "--vacuum").stdout
    assert "free pages: 0 of " in out
    assert stored_rows(db, "PRAGMA freelist_count") == [(0,)]
    assert stored_rows(db, "PRAGMA integrity_check") == [("ok",)]


def test_a_vacuum_that_runs_out_of_space_leaves_the_prune_as_it_was(tmp_path):
    src = month(tmp_path, days=3)
    with small_tmpfs(tmp_path / "small", str(2 * os.path.getsize(src) + 2**20)) as small:
        db = small / "c.db"
        shutil.copy(src, db)
        with open(small / "filler", "wb") as f:   # leaves less free space than the file's size
            free = shutil.disk_usage(small).free
            f.write(b"\0" * max(free - os.path.getsize(db) // 2, 0))
        before = counts(db)
        p = gf("prune", db, "--before", "2026-11-21", "--vacuum", check=False)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "VACUUM ran out of space" in p.stderr and "the catalog is as the prune left it" in p.stderr
        assert "notifications: removed " in p.stdout
        (small / "filler").unlink()
        assert stored_rows(db, "PRAGMA integrity_check") == [("ok",)]
        assert counts(db)["gf_notification_rows"] < before["gf_notification_rows"]


# ---- gf_prune -------------------------------------------------------------------------------------

def test_gf_prune_in_a_loop_of_its_own_transactions(tmp_path):
    db = month(tmp_path)
    twin = tmp_path / "twin.db"
    shutil.copy(db, twin)
    gf("prune", twin, "--before", "2026-11-22")
    n, e, r = older_than(db, datetime.datetime(2026, 11, 22, tzinfo=datetime.timezone.utc))
    total = n + e + r
    got = []
    while True:
        removed = int(sql(db, "SELECT gf_prune('2026-11-22', 7);").stdout)
        got.append(removed)
        if removed == 0:
            break
    assert sum(got) == total and max(got) <= 7 and len(got) > 3
    assert counts(db) == counts(twin)


def test_gf_prune_inside_the_callers_transaction(tmp_path):
    db = month(tmp_path, days=2)
    before = counts(db)
    out = sql(db, "BEGIN; SELECT gf_prune('2030-01-01', 1000000); SELECT count(*) FROM gf_notification_rows; ROLLBACK;").stdout.split()
    assert int(out[0]) > 0 and out[1] == "0"
    assert counts(db) == before   # the caller's ROLLBACK undid it
    sql(db, "BEGIN IMMEDIATE; SELECT gf_prune('2030-01-01', 1000000); COMMIT;")
    assert counts(db) == {"gf_notification_rows": 0, "gf_explain": 0, "gf_runs": 1}


@pytest.mark.parametrize("call, message", [
    ("gf_prune('2026-13-01')", "gf_prune: argument 1 (before) must be a date (2026-10-01, its start in UTC) or a date-time with its offset (2026-10-01T00:00:00+09:00), got '2026-13-01'"),
    ("gf_prune(30)", "gf_prune: argument 1 (before) must be a date (2026-10-01, its start in UTC)"),
    ("gf_prune(NULL)", "gf_prune: argument 1 (before) must be a date (2026-10-01) or a date-time with its offset, not NULL"),
    ("gf_prune('2026-10-01', 0)", "gf_prune: argument 2 (max_rows) must be a whole number of rows, 1 or more, got 0.0"),
])
def test_gf_prune_refuses_bad_arguments(tmp_path, call, message):
    db = month(tmp_path, days=1)
    p = sql(db, f"SELECT {call};", check=False)
    assert message in p.stderr
    assert p.returncode != 0


def test_gf_prune_on_a_state_database_prunes_its_rows_and_never_the_catalog(tmp_path):
    db = month(tmp_path, days=1)
    before = counts(db)
    state = tmp_path / "state.db"
    attach = f"ATTACH 'file:{db}?mode=ro' AS catalog;\n"
    sql(state, attach + "SELECT gf_state_init();")
    sql(state, attach + "SELECT gf_check('w', '2026-11-20T08:00:00Z', 35.68, 139.70, 5);"
                        "SELECT gf_check('w', '2026-11-22T08:00:00Z', 35.70, 139.70, 5);")
    assert [r[0] for r in stored_rows(state, "SELECT ts FROM gf_notifications ORDER BY id")] == [
        "2026-11-20T08:00:00.000000Z", "2026-11-20T08:00:00.000000Z", "2026-11-22T08:00:00.000000Z"]
    assert sql(state, attach + "SELECT gf_prune('2026-11-21');").stdout == "2\n"
    assert [r[0] for r in stored_rows(state, "SELECT ts FROM gf_notifications")] == ["2026-11-22T08:00:00.000000Z"]
    assert counts(db) == before

