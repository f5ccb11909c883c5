"""gf_check as one transaction: killed at every commit, a write failing part
way (a trigger, a full disk), a rolled-back catalog change, SQLITE_BUSY inside
a read snapshot, and concurrent writers on one WAL database. Every case ends
with exactly the notifications of an uninterrupted run."""
# Longer than 300 lines: every way one gf_check transaction can fail (kills, full disk, triggers, busy, writers), sharing the child processes that cause them.
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXTENSION, SAMPLES, gf, run
from test_judgement import iso, notifications, scenario

PYTHON = sys.executable


def connect(db, timeout=10.0):
    """Debian's sqlite3 module, in autocommit: the SQL says where transactions are."""
    c = sqlite3.connect(db, timeout=timeout, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    return c


def fixes_of(rows):
    return [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]


def check_all(c, fixes):
    for f in fixes:
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()


def subject_row(c, subject):
    return c.execute("SELECT last_ts, judged_fixes FROM gf_subjects WHERE subject_id = ?", (subject,)).fetchone()


def reference(tmp_path, db, fixes):
    """Notifications of one uninterrupted fix-by-fix run on a copy."""
    ref = tmp_path / "reference.db"
    shutil.copy(db, ref)
    c = connect(ref)
    check_all(c, fixes)
    c.close()
    expected = notifications(ref)
    assert len(expected) >= 6, "the scenario must notify"
    return expected


# A child that feeds fixes through apsw (its own SQLite) and SIGKILLs itself
# inside SQLite's commit hook at the N-th commit: the moment before that
# commit is durable. With N = 0 it runs through and prints how many commits it made.
KILLED_CHILD = r"""
import apsw, json, os, signal, sys
db, ext, kill_at, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
c = apsw.Connection(db)
c.enable_load_extension(True)
c.load_extension(ext)
commits = 0
def hook():
    global commits
    commits += 1
    if commits == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    return False
c.set_commit_hook(hook)
for f in json.load(open(path)):
    c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
print(commits)
"""


def test_killed_at_every_commit_of_gf_check_loses_no_notification(tmp_path):
    db, _, rows = scenario(tmp_path, subjects=2, per_subject=30, seed=3)
    fixes = fixes_of(rows)
    path = tmp_path / "fixes.json"
    path.write_text(json.dumps(fixes))
    expected = reference(tmp_path, db, fixes)
    child = tmp_path / "child.py"
    child.write_text(KILLED_CHILD)
    counting = tmp_path / "counting.db"
    shutil.copy(db, counting)
    commits = int(run(PYTHON, child, counting, EXTENSION, 0, path).stdout)
    assert notifications(counting) == expected
    # One call, one commit: a notifying call never commits in pieces.
    assert commits == len(fixes), commits
    work = tmp_path / "work.db"
    for n in range(1, commits + 1):
        shutil.copy(db, work)
        for suffix in ("-wal", "-shm"):
            Path(str(work) + suffix).unlink(missing_ok=True)
        p = subprocess.run([PYTHON, child, work, EXTENSION, str(n), path], capture_output=True, text=True, timeout=120)
        assert p.returncode == -9, (n, p.returncode, p.stderr)
        assert run("sqlite3", work, "PRAGMA integrity_check;").stdout.strip() == "ok"
        # The retry sends every fix again: those judged before the kill are stale.
        c = connect(work)
        check_all(c, fixes)
        c.close()
        assert notifications(work) == expected, f"killed at commit {n}"


FAILING_TRIGGER = """
CREATE TRIGGER full_disk BEFORE INSERT ON gf_notification_rows
WHEN (SELECT count(*) FROM gf_notification_rows) % 3 = 2
BEGIN SELECT RAISE({how}, 'disk full (simulated)'); END;
"""


# FAIL keeps the rows a multi-row INSERT wrote before the failing one (as
# the engine's own `INSERT OR FAIL` does): the call's savepoint must undo them.
@pytest.mark.parametrize("how", ["ABORT", "FAIL"])
@pytest.mark.parametrize("form", ["autocommit", "transaction"])
def test_a_write_failing_inside_gf_check_undoes_the_whole_call(tmp_path, form, how):
    db, _, rows = scenario(tmp_path, subjects=3, per_subject=30, seed=8)
    fixes = fixes_of(rows)
    expected = reference(tmp_path, db, fixes)
    c = connect(db)
    failing = FAILING_TRIGGER.format(how=how)
    c.execute(failing)
    if form == "transaction":
        c.execute("BEGIN IMMEDIATE")
    failures = 0
    for f in fixes:
        before = (subject_row(c, f[0]), c.execute("SELECT count(*) FROM gf_notifications").fetchone())
        try:
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
            continue
        except sqlite3.DatabaseError as e:
            assert "disk full (simulated)" in str(e)
        failures += 1
        # Nothing of the failed call remains, and the caller's transaction goes on.
        assert (subject_row(c, f[0]), c.execute("SELECT count(*) FROM gf_notifications").fetchone()) == before
        assert c.in_transaction == (form == "transaction")
        # The space comes back; the same fix is sent again.
        c.execute("DROP TRIGGER full_disk")
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        c.execute(failing)
    if form == "transaction":
        c.execute("COMMIT")
    c.close()
    assert failures >= 2
    assert notifications(db) == expected


def test_a_full_disk_during_gf_check_loses_nothing(tmp_path):
    """A real full disk: the database on a small tmpfs with a few pages free."""
    db, _, rows = scenario(tmp_path, subjects=2, per_subject=40, seed=9)
    fixes = fixes_of(rows)
    expected = reference(tmp_path, db, fixes)
    mnt = tmp_path / "small"
    mnt.mkdir()
    size = os.path.getsize(db) + (1 << 20)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a tmpfs")
    try:
        small = mnt / "d.db"
        shutil.copy(db, small)
        c = connect(small)
        c.execute("SELECT count(*) FROM gf_areas").fetchone()   # -wal and -shm exist now
        filler = mnt / "filler"
        try:
            with open(filler, "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass
        # Leave room for a few WAL frames: calls fail part way through the run.
        with open(filler, "r+b") as f:
            f.truncate(max(0, os.path.getsize(filler) - 6 * 4096))
        failed_at = None
        for i, f in enumerate(fixes):
            before = subject_row(c, f[0]), c.execute("SELECT count(*) FROM gf_notifications").fetchone()
            try:
                c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
            except sqlite3.DatabaseError as e:
                assert "full" in str(e).lower(), e
                assert (subject_row(c, f[0]), c.execute("SELECT count(*) FROM gf_notifications").fetchone()) == before
                failed_at = i
                break
        assert failed_at is not None, "the disk must fill up during the run"
        filler.unlink()
        check_all(c, fixes[failed_at:])
        c.close()
        assert notifications(small) == expected
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


def one_square_catalog(tmp_path):
    db = tmp_path / "sq.db"
    gf("init", db)
    ring = [[139.70, 35.60], [139.71, 35.60], [139.71, 35.61], [139.70, 35.61], [139.70, 35.60]]
    (tmp_path / "sq.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"area_id": "SQ"}, "geometry": {"type": "Polygon", "coordinates": [ring]}}]}))
    gf("import", db, tmp_path / "sq.geojson", "--with-default-conditions")
    return db


INSIDE, OUTSIDE = (35.605, 139.705), (35.50, 139.50)


@pytest.mark.parametrize("undo", ["ROLLBACK", "ROLLBACK TO"])
def test_a_rolled_back_catalog_change_is_not_judged_with_afterwards(tmp_path, undo):
    db = one_square_catalog(tmp_path)
    c = connect(db)
    assert c.execute("SELECT gf_check('s', '2026-11-20T09:00:00Z', ?, ?, 5)", OUTSIDE).fetchone()[0] == "[]"
    c.execute("BEGIN")
    if undo == "ROLLBACK TO":
        c.execute("SAVEPOINT change")
    # Three inside fixes would be needed to enter; a probe on this connection caches that.
    c.execute("UPDATE gf_areas SET in_confirm_count = 3")
    assert c.execute("SELECT gf_check('probe', '2026-11-20T09:00:00Z', ?, ?, 5)", INSIDE).fetchone()[0] == "[]"
    if undo == "ROLLBACK TO":
        c.execute("ROLLBACK TO change")
        c.execute("RELEASE change")
        c.execute("COMMIT")
    else:
        c.execute("ROLLBACK")
    entered = json.loads(c.execute("SELECT gf_check('s', '2026-11-20T09:01:00Z', ?, ?, 5)", INSIDE).fetchone()[0])
    assert [(n["area_id"], n["transition"]) for n in entered] == [("SQ", "IN")]


def test_busy_inside_a_read_snapshot_is_an_error_to_retry_and_no_connection_stays_stuck(tmp_path):
    db = one_square_catalog(tmp_path)
    a, b = connect(db), connect(db)
    walk = [("a", f"2026-11-20T09:{m:02d}:00Z", *(INSIDE if m % 2 else OUTSIDE), 5) for m in range(20)]
    a.execute("CREATE TEMP TABLE t (subject_id, ts, lat, lon, accuracy_m)")
    a.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", walk)
    # docs/sql.md's table form without BEGIN IMMEDIATE: the SELECT holds a read snapshot.
    cur = a.execute("SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM t ORDER BY rowid")
    cur.fetchone()
    b.execute("SELECT gf_check('b', '2026-11-20T09:00:00Z', ?, ?, 5)", INSIDE).fetchall()   # another writer commits
    with pytest.raises(sqlite3.OperationalError) as e:
        cur.fetchall()
    assert e.value.sqlite_errorcode & 0xFF == 5, e.value.sqlite_errorcode   # SQLITE_BUSY
    assert "retry" in str(e.value) and "BEGIN IMMEDIATE" in str(e.value)
    # Nothing of a's holds a snapshot: a checkpoint can reset the WAL.
    assert b.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    # The retry, as the message says, goes through and judges what is left.
    a.execute("BEGIN IMMEDIATE")
    a.execute("SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM t ORDER BY rowid").fetchall()
    a.execute("COMMIT")
    ref = tmp_path / "ref.db"
    shutil.copy(db, ref)
    run("sqlite3", ref, "DELETE FROM gf_notifications; DELETE FROM gf_subjects;")
    c = connect(ref)
    check_all(c, [["b", "2026-11-20T09:00:00Z", *INSIDE, 5]] + [list(w) for w in walk])
    assert sorted(notifications(db)) == sorted(notifications(ref))
    assert subject_row(a, "a")[1] == 20


def test_gf_check_inside_a_statement_that_writes(tmp_path):
    db = one_square_catalog(tmp_path)
    c = connect(db)
    c.execute("CREATE TABLE answers (n TEXT)")
    # Autocommit: the INSERT's own transaction holds the whole call.
    c.execute("INSERT INTO answers SELECT gf_check('s', '2026-11-20T09:00:00Z', ?, ?, 5)", INSIDE)
    assert "IN" in c.execute("SELECT n FROM answers").fetchone()[0]
    # Inside a transaction SQLite opens no savepoint there: refused, nothing written.
    c.execute("BEGIN")
    with pytest.raises(sqlite3.OperationalError, match="inside a statement that writes"):
        c.execute("INSERT INTO answers SELECT gf_check('s', '2026-11-20T09:01:00Z', ?, ?, 5)", OUTSIDE)
    c.execute("COMMIT")
    assert subject_row(c, "s") == ("2026-11-20T09:00:00.000000Z", 1)


# A writer process in one of docs/sql.md's forms; retries SQLITE_BUSY as the
# error message says, and prints how often it had to.
WRITER = r"""
import json, sqlite3, sys, time
db, ext, form, path, log = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "log"
c = sqlite3.connect(db, timeout=20, isolation_level=None)
c.enable_load_extension(True)
c.load_extension(ext)
fixes = json.load(open(path))
retries = 0
def busy(e):
    return getattr(e, "sqlite_errorcode", 0) & 0xFF == 5
def attempt(body):
    global retries
    while True:
        try:
            return body()
        except sqlite3.OperationalError as e:
            if c.in_transaction:
                c.execute("ROLLBACK")
            if not busy(e):
                raise
            retries += 1
            time.sleep(0.005)
if form == "single":
    for f in fixes:
        attempt(lambda: c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall())
elif form == "logged":
    # One call and its record in one transaction: the record's order is the calls' order.
    def one(f):
        c.execute("BEGIN IMMEDIATE")
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        c.execute("INSERT INTO calls (subject_id, ts, lat, lon, accuracy_m) VALUES (?, ?, ?, ?, ?)", f)
        c.execute("COMMIT")
    for f in fixes:
        attempt(lambda: one(f))
else:
    c.execute("CREATE TEMP TABLE ordered (subject_id, ts, lat, lon, accuracy_m)")
    for i in range(0, len(fixes), 15):
        c.execute("DELETE FROM ordered")
        c.executemany("INSERT INTO ordered VALUES (?, ?, ?, ?, ?)", fixes[i:i + 15])
        def chunk():
            c.execute("BEGIN IMMEDIATE")
            c.execute("SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM ordered ORDER BY rowid").fetchall()
            c.execute("COMMIT")
        attempt(chunk)
print(retries)
"""


def start_writers(tmp_path, db, jobs):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = []
    for i, (form, fixes) in enumerate(jobs):
        path = tmp_path / f"writer{i}.json"
        path.write_text(json.dumps(fixes))
        procs.append(subprocess.Popen([PYTHON, str(script), str(db), str(EXTENSION), form, str(path), "log" if form == "logged" else "-"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err


def test_four_writers_on_disjoint_subjects_lose_and_duplicate_nothing(tmp_path):
    db, fixes_csv, rows = scenario(tmp_path, subjects=4, per_subject=90, seed=10)
    batch = tmp_path / "batch.db"
    shutil.copy(db, batch)
    gf("judge", batch, "--fixes", fixes_csv)
    fixes = fixes_of(rows)
    jobs = [(form, [f for f in fixes if f[0] == f"dev-{s}"]) for s, form in enumerate(["single", "single", "table", "table"])]
    start_writers(tmp_path, db, jobs)
    assert notifications(db) == notifications(batch)


def alternate(ns, conditions):
    """Per area, the plain IN/OUT notifications alternate, starting with IN."""
    last = {}
    for n in ns:
        if n[3] in conditions:
            assert last.get(n[2], "OUT") != n[4], f"two {n[4]} in a row for {n[2]}"
            last[n[2]] = n[4]


def test_two_writers_of_one_subject_are_serialised(tmp_path):
    """The documented rule: calls for one subject from two connections are
    judged one after the other, in the order they commit; a fix reaching the
    database after a later fix of its subject is stale and skipped."""
    db, _, rows = scenario(tmp_path, subjects=1, per_subject=160, seed=11)
    fixes = fixes_of(rows)
    plain = {c for c in range(1, 61) if c % 5 in (1, 2)}   # each area's unfiltered IN and OUT
    run("sqlite3", db, "CREATE TABLE calls (seq INTEGER PRIMARY KEY, subject_id, ts, lat, lon, accuracy_m);")
    single = tmp_path / "single.db"
    shutil.copy(db, single)
    start_writers(tmp_path, db, [("logged", fixes[0::2]), ("logged", fixes[1::2])])
    calls = [list(r) for r in sqlite3.connect(db).execute("SELECT subject_id, ts, lat, lon, accuracy_m FROM calls ORDER BY seq")]
    assert len(calls) == len(fixes)
    # Replayed alone in commit order, the same calls give the same notifications.
    ref = tmp_path / "replay.db"
    shutil.copy(db, ref)
    run("sqlite3", ref, "DELETE FROM gf_notifications; DELETE FROM gf_subjects;")
    c = connect(ref)
    check_all(c, calls)
    c.close()
    got = notifications(db)
    assert got == notifications(ref)
    alternate(got, plain)
    # The autocommit form: serialised too, so no entry or exit is notified twice.
    start_writers(tmp_path, single, [("single", fixes[0::2]), ("single", fixes[1::2])])
    alternate(notifications(single), plain)


def test_a_trigger_that_rolls_back_the_callers_transaction_says_so(tmp_path):
    """RAISE(ROLLBACK) (or a full disk while SQLite spills its cache) ends the
    caller's whole transaction, not only the call: the error says so, and
    retrying that transaction from its BEGIN loses nothing."""
    db, _, rows = scenario(tmp_path, subjects=2, per_subject=30, seed=9)
    fixes = fixes_of(rows)
    expected = reference(tmp_path, db, fixes)
    c = connect(db)
    c.execute("CREATE TABLE mine (x)")
    c.execute("CREATE TRIGGER veto BEFORE INSERT ON gf_notification_rows BEGIN SELECT RAISE(ROLLBACK, 'vetoed'); END")
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO mine VALUES (1)")
    with pytest.raises(sqlite3.DatabaseError) as e:
        check_all(c, fixes)
    assert "vetoed" in str(e.value) and "rolled back the whole transaction" in str(e.value)
    assert "retry the transaction from its BEGIN" in str(e.value)
    assert not c.in_transaction
    assert c.execute("SELECT count(*) FROM mine").fetchone() == (0,)
    c.execute("DROP TRIGGER veto")
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO mine VALUES (1)")
    check_all(c, fixes)
    c.execute("COMMIT")
    c.close()
    assert notifications(db) == expected


def test_journal_mode_off_is_refused(tmp_path):
    """Without a journal SQLite cannot undo a call that fails half way, so
    gf_check refuses to run rather than risk a subject advanced without its
    notifications."""
    db, _, rows = scenario(tmp_path, subjects=1, per_subject=5, seed=10)
    c = connect(db)
    c.execute("PRAGMA journal_mode = DELETE")
    assert c.execute("PRAGMA journal_mode = OFF").fetchone() == ("off",)
    with pytest.raises(sqlite3.OperationalError, match="journal_mode is OFF"):
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", fixes_of(rows)[0]).fetchall()
    assert c.execute("SELECT count(*) FROM gf_subjects").fetchone() == (0,)
    c.execute("PRAGMA journal_mode = WAL")
    assert c.execute("SELECT gf_check(?, ?, ?, ?, ?)", fixes_of(rows)[0]).fetchone() is not None
