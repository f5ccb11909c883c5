"""What a signal or a closed pipe does to `judge --out`: before the run is
committed the temporary file goes (SQLite rolls the run back); across the
COMMIT signals are held; after it, the complete file is put in place before
the process ends, and a stream cut short says the run is committed and how
to list it. A committed run's events must never be lost: a retry finds every
fix stale."""
import signal
import sqlite3
import subprocess
import time

import pytest

from conftest import CLI
from test_judge_out_streamed import catalog, fixes, read_back


def test_a_signal_during_the_run_leaves_no_partial_file(tmp_path):
    db = catalog(tmp_path, ["A", "B1"])
    many = [(f"s{k % 500}", f"2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z", str(k % 7 * 0.001), "0", "5")
            for k in range(300_000)]
    out = tmp_path / "out.csv"
    out.write_text("OLD\n")
    p = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", str(fixes(tmp_path, many)), "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not list(tmp_path.glob("out.csv.partial-*")) and p.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    assert list(tmp_path.glob("out.csv.partial-*")) == []
    runs = sqlite3.connect(db).execute("SELECT count(*) FROM gf_runs").fetchone()[0]
    assert out.read_text() == ("OLD\n" if runs == 0 else read_back(db, "csv"))


def test_an_ignored_hangup_stays_ignored(tmp_path):
    """Under nohup (SIGHUP ignored) a hangup during the run must not end it."""
    db = catalog(tmp_path, ["A", "B1"])
    many = [(f"s{k % 500}", f"2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z", str(k % 7 * 0.001), "0", "5")
            for k in range(300_000)]
    out = tmp_path / "out.csv"
    p = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", str(fixes(tmp_path, many)), "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    deadline = time.time() + 60
    while not list(tmp_path.glob("out.csv.partial-*")) and p.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    p.send_signal(signal.SIGHUP)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert out.read_text() == read_back(db, "csv")


def many_fixes(tmp_path, n=200_000):
    return fixes(tmp_path, [(f"s{k % 500}", f"2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z",
                             str(k % 7 * 0.001), "0", "5") for k in range(n)])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_as_the_run_commits_keeps_its_events(tmp_path, sig):
    """Sent as soon as another connection sees the run committed: in WAL mode
    the COMMIT goes on to checkpoint, and a signal then removed the complete
    temporary file: the run stood, its events were lost, and a retry found
    every fix stale. Now the signal waits for the COMMIT, and the file is
    put in place before the process ends."""
    db = catalog(tmp_path, ["A", "B1", "Z"])
    sqlite3.connect(db).execute("PRAGMA journal_mode = WAL").fetchone()
    out = tmp_path / "out.csv"
    out.write_text("OLD\n")
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    p = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", str(many_fixes(tmp_path)), "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while reader.execute("SELECT count(*) FROM gf_runs").fetchone()[0] == 0 and p.poll() is None:
        pass
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    reader.close()
    assert p.returncode in (0, -sig), (p.returncode, err)
    if p.returncode == -sig:
        assert f"interrupted after run 1 was committed; its notifications are in {out}".encode() in err, err
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
