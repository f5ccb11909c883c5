"""What a signal or a closed pipe does to `judge --out`: before the run is
committed the temporary file goes (SQLite rolls the run back); across the
COMMIT signals are held; after it, the complete file is put in place before
the process ends, and a stream cut short says the run is committed and how
to list it. A committed run's events must never be lost: a retry finds every
fix stale."""
import signal
import sqlite3
import subprocess

import pytest

from conftest import CLI, Stopped
from test_judge_out_streamed import catalog, fixes, read_back


def many_fixes(tmp_path, n=200_000):
    return fixes(tmp_path, [(f"s{k % 500}", f"2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z",
                             str(k % 7 * 0.001), "0", "5") for k in range(n)])


def test_a_signal_during_the_run_leaves_no_partial_file(tmp_path):
    db = catalog(tmp_path, ["A", "B1"])
    out = tmp_path / "out.csv"
    out.write_text("OLD\n")
    stopped = Stopped([CLI, "judge", db, "--fixes", many_fixes(tmp_path, 20_000), "--out", out], "began")
    assert list(tmp_path.glob("out.csv.partial-*")), "the output is opened before the run"
    code, _, err = stopped.send(signal.SIGTERM)
    assert code == -signal.SIGTERM, err
    assert list(tmp_path.glob("out.csv.partial-*")) == []
    assert sqlite3.connect(db).execute("SELECT count(*) FROM gf_runs").fetchone()[0] == 0
    assert out.read_text() == "OLD\n"


def test_an_ignored_hangup_stays_ignored(tmp_path):
    """Under nohup (SIGHUP ignored) a hangup during the run must not end it."""
    db = catalog(tmp_path, ["A", "B1"])
    out = tmp_path / "out.csv"
    stopped = Stopped([CLI, "judge", db, "--fixes", many_fixes(tmp_path, 20_000), "--out", out], "began",
                      ignored=(signal.SIGHUP,))
    code, _, err = stopped.send(signal.SIGHUP)
    assert code == 0, err
    assert out.read_text() == read_back(db, "csv")


@pytest.mark.parametrize("point", ["committing", "committed"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_as_the_run_commits_keeps_its_events(tmp_path, sig, point):
    """Sent as the run commits: in WAL mode the COMMIT goes on to
    checkpoint, and a signal then removed the complete temporary file: the
    run stood, its events were lost, and a retry found every fix stale. Now
    the signal waits for the COMMIT, and the file is put in place before the
    process ends."""
    db = catalog(tmp_path, ["A", "B1", "Z"])
    sqlite3.connect(db).execute("PRAGMA journal_mode = WAL").fetchone()
    out = tmp_path / "out.csv"
    out.write_text("OLD\n")
    code, _, err = Stopped([CLI, "judge", db, "--fixes", many_fixes(tmp_path, 20_000), "--out", out], point).send(sig)
    assert code == -sig, (code, err)
    assert f"interrupted after run 1 was committed; its notifications are in {out}" in err, err
    assert out.read_text() == read_back(db, "csv")
    assert list(tmp_path.glob("out.csv.partial-*")) == []


def test_a_reader_that_stops_early_gets_an_error_naming_the_committed_run(tmp_path):
    """`judge --out - | head -1` died by SIGPIPE (exit 141) with no word that the run was committed."""
    db = catalog(tmp_path, ["A", "B1", "Z"])
    p = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", str(many_fixes(tmp_path, 50_000)), "--out", "-"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().startswith(b"subject_id,")
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=120)
    assert p.returncode == 1, (p.returncode, err)
    assert b"Broken pipe" in err and b"the run (1) was committed" in err and b"--run 1 --format csv" in err, err
    assert sqlite3.connect(db).execute("SELECT count(*) FROM gf_runs").fetchone()[0] == 1
