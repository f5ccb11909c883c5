"""SIGINT, SIGTERM or SIGHUP in the middle of a write transaction: the
transaction is rolled back before the process ends by the signal, so the
database is as it was and no side file is left behind (a hot -journal used
to stay, which locks out a reader who cannot write the folder; in WAL mode
an unused -wal and -shm). A second signal still ends the process at once."""
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CLI, ROOT, Stopped, gf
from test_judge_out_streamed import catalog, fixes

sys.path.insert(0, str(ROOT / "benchmarks"))
import workload  # noqa: E402

SIDE_FILES = ("-journal", "-wal", "-shm")


def side_files(db):
    return [s for s in SIDE_FILES if (db.parent / (db.name + s)).exists()]


def in_transaction(db):
    """True once another connection holds the write lock (the command's BEGIN IMMEDIATE)."""
    c = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        c.execute("BEGIN IMMEDIATE")
        c.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        c.close()


def journal(db, mode):
    c = sqlite3.connect(db)
    c.execute(f"PRAGMA journal_mode = {mode}").fetchone()
    c.close()  # an open connection keeps a WAL in place


def many_fixes(tmp_path, n):
    return fixes(tmp_path, [(f"s{k % 500}", f"2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z",
                             str(k % 7 * 0.001), "0", "5") for k in range(n)])


@pytest.mark.parametrize("point", ["began", "chunk"])
@pytest.mark.parametrize("mode", ["delete", "wal"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_during_a_judgement_rolls_it_back(tmp_path, mode, sig, point):
    """At the run's start (before a fix is read) and once its fixes are
    judged and written (not yet committed), the signal rolls the whole run
    back. At the start it is prompt: reading the fixes runs no statement, and
    used to go on to the end of the file before the rollback, past the 10 s
    a rollback may take on a loaded machine."""
    db = catalog(tmp_path, ["A", "B1", "Z"])
    journal(db, mode)
    many = many_fixes(tmp_path, 250_000)
    code, _, err = Stopped([CLI, "judge", db, "--fixes", many, "--threads", "2"], point).send(sig)
    assert code == -sig, (code, err)
    assert f"interrupted by {signal.Signals(sig).name}: the transaction was rolled back" in err, err
    assert side_files(db) == []
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert c.execute("SELECT (SELECT count(*) FROM gf_runs) + (SELECT count(*) FROM gf_notifications)"
                     " + (SELECT count(*) FROM gf_subjects)").fetchone()[0] == 0
    c.close()
    # The same fixes judged afterwards are not stale: nothing of the interrupted run remains.
    assert "250000 judged" in gf("judge", db, "--fixes", many).stdout


@pytest.mark.parametrize("point", ["began", "committed"])
@pytest.mark.parametrize("mode", ["delete", "wal"])
def test_a_signal_during_an_import_rolls_it_back_and_after_its_commit_it_stands(tmp_path, mode, point):
    fences = tmp_path / "fences.geojson"
    workload.write_fences(fences, 20000, seed=5)
    db = tmp_path / "k.db"
    gf("init", db)
    journal(db, mode)
    code, _, err = Stopped([CLI, "import", db, fences, "--with-default-conditions"], point).send(signal.SIGTERM)
    assert code == -signal.SIGTERM, (code, err)
    assert side_files(db) == [], err
    c = sqlite3.connect(db)
    stored = c.execute("SELECT (SELECT count(*) FROM gf_areas) + (SELECT count(*) FROM gf_conditions)").fetchone()[0]
    c.close()
    if point == "began":
        assert "the transaction was rolled back" in err and stored == 0, err
    else:  # came as the whole catalog was being committed: the import stands and says so
        assert "the changes had been committed, and stand" in err and stored == 60000, err


def test_a_second_signal_ends_the_process_at_once(tmp_path):
    """The rollback is asked for by the first signal; the second one does not wait for it.
    SQLite rolls the transaction back when the database is next opened."""
    db = catalog(tmp_path, ["A", "B1", "Z"])
    journal(db, "delete")
    stopped = Stopped([CLI, "judge", db, "--fixes", many_fixes(tmp_path, 250_000)], "chunk")
    # Both pending while it is stopped (two of one kind would merge into one): whichever
    # comes first asks for the rollback, the other ends the process at once, by itself.
    os.kill(stopped.p.pid, signal.SIGINT)
    code, _, err = stopped.send(signal.SIGTERM)
    assert code in (-signal.SIGINT, -signal.SIGTERM), err
    assert "ended at once, before the rollback" in err, err
    c = sqlite3.connect(db)
    assert c.execute("SELECT count(*) FROM gf_runs").fetchone()[0] == 0
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("mode", ["delete", "wal"])
def test_a_signal_just_after_the_commit_says_the_changes_stand(tmp_path, mode):
    """Sent as soon as the run has committed: the process used to end at
    once, silently (no summary, no line), with the run committed, so a user
    took it for rolled back; and a WAL catalog kept its -wal and -shm."""
    db = catalog(tmp_path, ["A", "B1", "Z"])
    journal(db, mode)
    many = fixes(tmp_path, [(f"s{k % 500}", f"2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z",
                             str(k % 7 * 0.001), "0", "5") for k in range(20_000)])
    code, out, err = Stopped([CLI, "judge", db, "--fixes", many], "committed").send(signal.SIGINT)
    assert code == -signal.SIGINT, (code, err)
    assert "interrupted by SIGINT: the changes had been committed, and stand" in err, err
    assert "run 1: 20000 fixes" in out
    assert side_files(db) == []


def waiting_in_sleep(pid):
    """True while `pid` sleeps in a system call (SQLite's busy handler sleeps
    between tries for the lock); /proc/PID/syscall names the call."""
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()[0]
    except (OSError, IndexError):
        return False
    return call in ("35", "230")  # nanosleep, clock_nanosleep (x86_64)


def test_a_signal_while_waiting_for_the_lock_says_nothing_was_changed(tmp_path):
    db = catalog(tmp_path, ["A"])
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    p = subprocess.Popen([str(CLI), "reset", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not waiting_in_sleep(p.pid) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None and waiting_in_sleep(p.pid), "reset must be waiting for the lock"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    holder.execute("ROLLBACK")
    holder.close()
    assert p.returncode == -signal.SIGTERM
    assert err == f"error: {db}: interrupted by SIGTERM: nothing was changed\n".encode(), err


SMALL_WRITES = {
    "settings": (["settings", "{db}", "default_timezone", "Asia/Tokyo"],
                 "SELECT count(*) FROM gf_settings WHERE key = 'default_timezone' AND value = 'Asia/Tokyo'"),
    "conditions add": (["conditions", "add", "{db}", "--id", "77", "--area", "A", "--timing", "IN"],
                       "SELECT count(*) FROM gf_conditions WHERE condition_id = 77"),
    "check": (["check", "{db}", "--subject", "zz", "--lat", "0", "--lon", "0", "--accuracy", "5",
               "--time", "2030-01-01T00:00:00Z"], "SELECT count(*) FROM gf_notifications"),
}


# Where a signal lands, and what the database and the line must then say.
AT_POINT = {
    # point: (rolled back?, what the line says)
    "ready": (True, "nothing was changed"),
    "began": (True, "the transaction was rolled back, the database is as it was"),
    "committing": (False, "the changes had been committed, and stand"),
    "committed": (False, "the changes had been committed, and stand"),
}


def small_write(tmp_path, command, name):
    base = tmp_path / "base" / "c.db"
    if not base.exists():
        base.parent.mkdir()
        catalog(base.parent, ["A"])
        journal(base, "delete")
    db = tmp_path / f"{name}.db"
    db.write_bytes(base.read_bytes())
    args, changed = SMALL_WRITES[command]
    return db, [CLI] + [a.format(db=db) for a in args], changed


def changed_in(db, changed):
    c = sqlite3.connect(db)
    try:
        return c.execute(changed).fetchone()[0] > 0
    finally:
        c.close()


@pytest.mark.parametrize("point", AT_POINT)
@pytest.mark.parametrize("command", SMALL_WRITES)
def test_a_signal_at_each_moment_of_a_small_write_tells_the_truth(tmp_path, command, point):
    """SIGTERM at each named moment of a short command's life (the CLI stops
    itself there: GEOFENCE_TEST_STOP_AT) must leave the database as before
    (the line says nothing was changed, or rolled back) or as after (the line
    says the changes stand, and the command's own output is printed), never a
    hot -journal. `settings` and `conditions add` wrote outside a transaction
    (a -journal stayed; 'nothing was changed' was said of a stored value), and
    `check` lost its rows after its commit."""
    db, args, changed = small_write(tmp_path, command, point)
    code, out, err = Stopped(args, point).send(signal.SIGTERM)
    rolled_back, line = AT_POINT[point]
    assert code == -signal.SIGTERM, (code, err)
    prefix = "error: " if point == "ready" else f"error: {db}: "
    assert err.endswith(f"{prefix}interrupted by SIGTERM: {line}\n"), err
    assert side_files(db) == [], err
    assert changed_in(db, changed) == (not rolled_back)
    if not rolled_back:
        assert out, "a command whose changes stand prints what it did"
    # Left alone, the same command finishes.
    db2, args2, _ = small_write(tmp_path, command, point + "-whole")
    p = subprocess.run([str(a) for a in args2], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout and changed_in(db2, changed), p.stderr


@pytest.mark.parametrize("point", ["began", "committing", "committed"])
@pytest.mark.parametrize("command", SMALL_WRITES)
def test_a_kill_at_each_commit_boundary_leaves_before_or_after(tmp_path, command, point):
    """SIGKILL cannot be caught: at each boundary the database is then as
    before (up to the COMMIT) or as after (once it has committed), and the
    next connection finds it whole (SQLite rolls a hot journal back)."""
    db, args, changed = small_write(tmp_path, command, point)
    code, _, _ = Stopped(args, point).send(signal.SIGKILL)
    assert code == -signal.SIGKILL
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    c.close()
    assert changed_in(db, changed) == (point == "committed")
