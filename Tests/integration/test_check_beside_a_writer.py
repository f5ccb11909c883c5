"""One gf_check connection beside another writer (issue 40): a call that
opens a deferred transaction waits for the write lock as the busy timeout
says; a call inside a read snapshot cannot, and says so; a catalog change
another connection commits is seen by the next call however it was made
(triggers off, the stamp's row deleted, the spatial index edited: the red
team's cases, each judged by a stale cache while only the stamp counted);
and with the state kept apart, other writers' commits to the state database
leave the session's cached catalog in place."""
import json
import re
import sqlite3
import subprocess
import sys

import pytest

from conftest import CLI, EXTENSION
from test_check_transactions import connect as autocommit_connection, one_square_catalog

PYTHON = sys.executable
INSIDE, OUTSIDE = (35.605, 139.705), (35.50, 139.50)


def connect(db, timeout=60):
    """Python's sqlite3 in autocommit with the extension, the busy timeout set as docs/sql.md says."""
    return autocommit_connection(db, timeout=timeout)


def holder(db):
    """A sqlite3 shell holding `db`'s write lock until told to COMMIT."""
    h = subprocess.Popen(["sqlite3", str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    h.stdin.write("BEGIN IMMEDIATE;\nCREATE TABLE held (x);\nSELECT 'holding';\n")
    h.stdin.flush()
    assert h.stdout.readline() == "holding\n"
    return h


def released(h):
    """Lets the `holder` commit, once it has."""
    h.stdin.write("COMMIT;\nSELECT 'released';\n")
    h.stdin.flush()
    assert h.stdout.readline() == "released\n"


# apsw (its own SQLite, so in a process of its own: the engine is loaded by
# one SQLite library per process) asks a busy handler of ours instead of
# sleeping: the handler's first call ends the other writer, proving the call
# waited. Prints the handler's calls and the call's notifications.
DEFERRED_CALLER = r"""
import apsw, json, subprocess, sys
db, ext, lat, lon = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
h = subprocess.Popen(["sqlite3", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
h.stdin.write("BEGIN IMMEDIATE;\nCREATE TABLE held (x);\nSELECT 'holding';\n")
h.stdin.flush()
assert h.stdout.readline() == "holding\n"
c = apsw.Connection(db)
c.enable_load_extension(True)
c.load_extension(ext)
waits = []
def busy(n):
    if not waits:
        h.stdin.write("COMMIT;\nSELECT 'released';\n")
        h.stdin.flush()
        assert h.stdout.readline() == "released\n"
    waits.append(n)
    return True
c.set_busy_handler(busy)
try:
    c.execute("BEGIN")
    got = c.execute("SELECT gf_check('s', '2026-11-20T09:00:00Z', ?, ?, 5)", (lat, lon)).fetchall()[0][0]
    c.execute("COMMIT")
finally:
    h.stdin.close()
    h.wait(timeout=30)
print(json.dumps({"waits": waits, "got": json.loads(got)}))
"""


def test_a_call_that_opens_a_deferred_transaction_waits_for_the_write_lock(tmp_path):
    """`BEGIN` then gf_check (Python's autocommit=False opens such a
    transaction after every commit): the transaction has read nothing, so the
    call can wait for another writer as the busy timeout says. It used to
    read first and then meet the lock at once (SQLITE_BUSY, no waiting)."""
    pytest.importorskip("apsw")
    db = one_square_catalog(tmp_path)
    script = tmp_path / "deferred.py"
    script.write_text(DEFERRED_CALLER)
    p = subprocess.run([PYTHON, str(script), str(db), str(EXTENSION), *map(str, INSIDE)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["waits"], "the call did not wait for the write lock"
    assert [(n["area_id"], n["transition"]) for n in out["got"]] == [("SQ", "IN")]


def test_a_read_snapshot_still_cannot_wait_and_says_so(tmp_path):
    """A deferred transaction that has read holds a snapshot: no waiting can
    help, so the call fails at once with SQLITE_BUSY, and the transaction is
    as it was."""
    db = one_square_catalog(tmp_path)
    c = connect(db, timeout=30)
    c.execute("BEGIN")
    c.execute("SELECT count(*) FROM gf_areas").fetchall()
    h = holder(db)
    try:
        with pytest.raises(sqlite3.OperationalError) as e:
            c.execute("SELECT gf_check('s', '2026-11-20T09:00:00Z', ?, ?, 5)", INSIDE).fetchall()
        assert e.value.sqlite_errorcode & 0xFF == 5 and "retry" in str(e.value)
        assert c.in_transaction
        c.execute("ROLLBACK")
    finally:
        released(h)
        h.stdin.close()
        h.wait(timeout=30)


def catalog_reads(c, call):
    """The statements reading the catalog's settings that `call` ran on `c`
    (SQLite's trace): a session reads them whenever it reads the catalog
    anew, and not while it keeps it."""
    seen = []
    c.set_trace_callback(seen.append)
    c.execute("SELECT gf_check(?, ?, ?, ?, ?)", call).fetchall()
    c.set_trace_callback(None)
    return [s for s in seen if re.search(r"FROM (\S+\.)?gf_settings", s)]   # named in the catalog's schema, or not


@pytest.mark.parametrize("change", [
    ".dbconfig enable_trigger off\nUPDATE gf_areas SET in_confirm_count = 3;",
    "DELETE FROM idx_gf_areas_geom;",
], ids=["triggers-off", "spatial-index-edited"])
def test_a_catalog_change_the_stamp_misses_is_still_seen(tmp_path, change):
    db = one_square_catalog(tmp_path)
    a = connect(db)
    a.execute("SELECT gf_check('warm', '2026-11-20T09:00:00Z', ?, ?, 5)", INSIDE).fetchall()   # the area cached
    subprocess.run(["sqlite3", "-bail", str(db)], input=change + "\n", text=True, check=True, timeout=60)
    copy = tmp_path / "copy.db"   # before the calls: a fresh connection judges the same fixes on it
    src, dst = sqlite3.connect(db), sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    dst.close()
    calls = [("n", f"2026-11-20T10:00:{k:02d}Z", *INSIDE, 5) for k in range(3)]
    got = [a.execute("SELECT gf_check(?, ?, ?, ?, ?)", c).fetchone()[0] for c in calls]
    fresh = connect(copy)
    want = [fresh.execute("SELECT gf_check(?, ?, ?, ?, ?)", c).fetchone()[0] for c in calls]
    assert got == want


def test_other_writers_of_a_state_database_leave_the_sessions_catalog_cached(tmp_path):
    """With the state kept apart (docs/state.md) the catalog is its own file:
    commits to the state database by other writers (each call is one) keep
    the session's catalog, and a change of the catalog itself is seen."""
    db = one_square_catalog(tmp_path)
    state = tmp_path / "state.db"
    made = connect(state)
    made.execute(f"ATTACH 'file:{db}?mode=ro' AS catalog")
    made.execute("SELECT gf_state_init()").fetchall()
    made.close()

    def apart():
        c = connect(state)
        c.execute(f"ATTACH 'file:{db}?mode=ro' AS catalog")
        return c
    a, b = apart(), apart()
    assert catalog_reads(a, ["a", "2026-11-20T09:00:00Z", *OUTSIDE, 5])   # the first call reads the catalog
    assert not catalog_reads(a, ["a", "2026-11-20T09:01:00Z", *OUTSIDE, 5])
    b.execute("SELECT gf_check('b', '2026-11-20T09:00:00Z', ?, ?, 5)", INSIDE).fetchall()   # another writer commits
    assert not catalog_reads(a, ["a", "2026-11-20T09:02:00Z", *OUTSIDE, 5])
    # The catalog's owner makes entering take three inside fixes: the next call judges by it.
    subprocess.run(["sqlite3", str(db), "UPDATE gf_areas SET in_confirm_count = 3"], check=True, timeout=60)
    assert catalog_reads(a, ["a", "2026-11-20T09:03:00Z", *INSIDE, 5])
    entered = [a.execute("SELECT gf_check('a', ?, ?, ?, 5)", (f"2026-11-20T09:0{m}:00Z", *INSIDE)).fetchone()[0] for m in (4, 5)]
    assert entered[0] == "[]" and json.loads(entered[1])[0]["transition"] == "IN"


def test_a_catalog_without_its_stamp_row_is_refused_until_the_tool_restores_it(tmp_path):
    """The stamp triggers update a row; with the row deleted they change
    nothing, and a cache trusting the stamp would outlive every change."""
    db = one_square_catalog(tmp_path)
    a = connect(db)
    a.execute("SELECT gf_check('warm', '2026-11-20T09:00:00Z', ?, ?, 5)", INSIDE).fetchall()
    subprocess.run(["sqlite3", str(db), "DELETE FROM gf_meta WHERE key = 'catalog_stamp'"], check=True, timeout=60)
    with pytest.raises(sqlite3.OperationalError, match="gf_meta row 'catalog_stamp' is missing"):
        a.execute("SELECT gf_check('warm', '2026-11-20T09:01:00Z', ?, ?, 5)", INSIDE).fetchall()
    subprocess.run([str(CLI), "settings", str(db)], check=True, timeout=60, capture_output=True)
    assert a.execute("SELECT gf_check('warm', '2026-11-20T09:02:00Z', ?, ?, 5)", INSIDE).fetchone()[0] == "[]"
