"""Resumable runs (`judge --fixes FILE --resume`, docs/operations.md): a run
committed chunk by chunk, cut short at every chunk boundary by SIGKILL or a
full disk, then resumed by the same command, ends as the run never cut does,
byte for byte: its notifications (ids too), explanations, state records, its
gf_runs row and counts, its summary line and its --out file. A resume with
another input or other options is refused naming the run; a rerun of an
input judged to its end judges nothing.

The workload is test_judge_output_identity's (conditions of every kind, 12
subjects of 1,000 fixes) with its invalid rows, in chunks of 2,500 fixes:
whole subjects, so 3 a chunk and 4 chunks. Every stop is a TestStops point
(`chunk`: a chunk written, not committed; `chunk-committed`), never a delay."""
import os
import shutil
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, Stopped, gf
from test_judge_output_identity import workload

CHUNK = ["--chunk-fixes", "2500", "--threads", "2"]
# Fixes judged once k chunks are committed (dev-0, dev-1, dev-10 | dev-11, dev-2, dev-3 | dev-4 … | … dev-9:
# subjects in byte order; dev-1 and dev-3 have a fix more, dev-0 and dev-2 an invalid one), and the last subject.
JUDGED_AFTER = [0, 3001, 6002, 9002, 12002]
LAST_AFTER = [None, "dev-10", "dev-3", "dev-6", "dev-9"]
ISSUED = "SELECT max(coalesce((SELECT id FROM gf_notification_floor), 0), coalesce((SELECT max(id) FROM gf_notification_rows), 0))"


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The catalog before any judgement, the input (valid, invalid and
    local-time rows), and what one judge in one transaction gives."""
    d = tmp_path_factory.mktemp("resume")
    db, fixes, bad, _ = workload(d)
    data = d / "day.csv"
    data.write_text(fixes.read_text() + "".join(bad.read_text().splitlines(True)[1:]))
    pristine = d / "pristine.db"
    shutil.copy(db, pristine)
    judged = d / "plain.db"
    shutil.copy(db, judged)
    gf("judge", judged, "--fixes", data, "--explain", "--out", d / "plain.csv")
    return {"dir": d, "pristine": pristine, "data": data, "plain": judged, "plain_out": (d / "plain.csv").read_bytes()}


@pytest.fixture(scope="module")
def made(plain):
    """`plain`, and what one uninterrupted --resume run gives."""
    d = plain["dir"]
    ref = d / "reference.db"
    shutil.copy(plain["pristine"], ref)
    p = gf("judge", ref, "--fixes", plain["data"], "--explain", "--out", d / "reference.csv", "--resume", *CHUNK)
    return {**plain, "reference": ref, "summary": p.stdout, "out": (d / "reference.csv").read_bytes()}


def end_state(db):
    """Everything a run leaves that a user reads: notifications with ids, explanations in stored
    order, the state as exported, the run's row without its start time, and the ids' floor."""
    c = sqlite3.connect(db)
    try:
        got = {q: c.execute(q).fetchall() for q in (
            "SELECT * FROM gf_notifications ORDER BY id",
            "SELECT * FROM gf_explain ORDER BY rowid",
            "SELECT run_id, kind, source, fixes, judged, stale, invalid, transitions, notifications, filtered, "
            "dropped_accuracy, dropped_distance, status FROM gf_runs ORDER BY run_id",
            ISSUED)}
    finally:
        c.close()
    got["state"] = gf("state", "export", db).stdout
    got["listing"] = gf("notifications", db).stdout
    return got


def fresh(made, tmp_path, name="c.db"):
    return shutil.copy(made["pristine"], tmp_path / name)


def judge_args(db, made, out, *more):
    return [CLI, "judge", db, "--fixes", made["data"], "--explain", "--out", out, "--resume", *CHUNK, *more]


def stop_at(args, point, k):
    """The command stopped at its k-th `point` (1-based), or None if it ended before."""
    stopped = Stopped(args, point)
    for _ in range(k - 1):
        if not stopped.reached:
            return None
        os.kill(stopped.p.pid, signal.SIGCONT)
        _, status = os.waitpid(stopped.p.pid, os.WUNTRACED)
        stopped.reached = os.WIFSTOPPED(status)
        if not stopped.reached:
            stopped.p.returncode = os.waitstatus_to_exitcode(status)
    return stopped if stopped.reached else None


def reader_sees(db):
    """gf_runs as another connection reads it: (status, judged) of each run."""
    with sqlite3.connect(db) as c:
        return c.execute("SELECT status, judged FROM gf_runs").fetchall()


@pytest.mark.parametrize("point", ["chunk", "chunk-committed"])
def test_a_kill_at_every_chunk_boundary_resumes_to_the_uninterrupted_end(made, tmp_path, point):
    reference = end_state(made["reference"])
    assert reference[ISSUED][0][0] > 3000
    k = 1
    while True:
        db = fresh(made, tmp_path, f"k{k}.db")
        out = tmp_path / f"k{k}.csv"
        stopped = stop_at(judge_args(db, made, out), point, k)
        if stopped is None:
            break
        code, _, err = stopped.send(signal.SIGKILL)
        assert code == -signal.SIGKILL, err
        seen = reader_sees(db)
        committed = k if point == "chunk-committed" else k - 1
        if committed == 0:
            assert seen == [], seen  # nothing of the run is visible before its first commit
        else:
            # Between chunks a reader sees the run 'running', with the counts of the subjects committed.
            assert seen == [("running", JUDGED_AFTER[committed])], seen
        assert not out.exists()
        # The same command, with the output to standard output once: resumed to the end.
        stdout_out = k == 2
        p = gf(*judge_args(db, made, "-" if stdout_out else out)[1:])
        got = (p.stdout.encode() if stdout_out else out.read_bytes())
        assert got == made["out"], f"--out after a kill at {point} {k}"
        summary = p.stderr.splitlines()[0] if stdout_out else p.stdout
        assert summary.split("\n")[0] == made["summary"].split("\n")[0]
        if committed and not stdout_out:  # the partial file the killed run synced with its commit was taken up
            assert list(tmp_path.glob(f"k{k}.csv.partial-*")) == []
        assert end_state(db) == reference, f"after a kill at {point} {k}"
        k += 1
    assert k == 5, f"{k - 1} stops at {point}: 4 chunks expected"


def test_a_run_ordered_through_the_temporary_table_resumes_too(made, tmp_path):
    """Past --in-memory-fixes the fixes are ordered in a temporary table, read while each chunk commits."""
    db, out = fresh(made, tmp_path), tmp_path / "out.csv"
    stop_at(judge_args(db, made, out, "--in-memory-fixes", "1000"), "chunk-committed", 2).send(signal.SIGKILL)
    gf(*judge_args(db, made, out, "--in-memory-fixes", "1000")[1:])
    assert out.read_bytes() == made["out"] and end_state(db) == end_state(made["reference"])


def test_the_resumable_run_ends_as_a_run_in_one_transaction(made):
    """Chunked commits change nothing of what a run gives, but its record."""
    plain, chunked = end_state(made["plain"]), end_state(made["reference"])
    assert made["plain_out"] == made["out"]
    for key in plain:
        assert plain[key] == chunked[key], key


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"needs root and CAP_SYS_ADMIN to mount a small tmpfs to fill: {p.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(folder):
    with open(folder / "filler", "wb", buffering=0) as f:
        for size in (1 << 16, 4096, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_full_disk_after_a_chunk_is_resumed_to_the_uninterrupted_end(made, tmp_path, small_disk, k):
    """The disk fills once chunk k is committed: the next chunk fails (the
    catalog's -wal cannot grow), is rolled back, and the command says where
    the run stands; with room again, the same command finishes it."""
    db = small_disk / "c.db"
    shutil.copy(made["pristine"], db)
    out = tmp_path / "out.csv"
    stopped = stop_at(judge_args(db, made, out), "chunk-committed", k)
    assert stopped is not None
    fill(small_disk)
    code, _, err = stopped.send(signal.SIGCONT)
    assert code == 2, err
    assert "no space left on device" in err, err
    assert f"run 1 is unfinished, committed up to subject '{LAST_AFTER[k]}'" in err, err
    assert "--resume` goes on from there" in err
    (small_disk / "filler").unlink()
    assert reader_sees(db) == [("running", JUDGED_AFTER[k])]
    gf(*judge_args(db, made, out)[1:])
    assert out.read_bytes() == made["out"]
    assert list(tmp_path.glob("out.csv.partial-*")) == []  # kept through the failure, then taken up
    assert end_state(db) == end_state(made["reference"])


def cut_after_first_chunk(made, tmp_path):
    db = fresh(made, tmp_path)
    stopped = stop_at(judge_args(db, made, tmp_path / "out.csv"), "chunk-committed", 1)
    stopped.send(signal.SIGKILL)
    return db


def test_a_resume_with_another_input_or_options_is_refused_naming_the_run(made, tmp_path):
    db = cut_after_first_chunk(made, tmp_path)
    changed = tmp_path / "day.csv"
    changed.write_bytes(made["data"].read_bytes().replace(b"dev-5,", b"dev-6,", 1))
    p = gf("judge", db, "--fixes", changed, "--explain", "--resume", *CHUNK, check=False)
    assert p.returncode == 1, p.stderr
    assert f"run 1 (judge --resume of {made['data']}, started " in p.stderr, p.stderr
    assert "committed up to subject 'dev-10')" in p.stderr and f"{changed} is not that run's input" in p.stderr, p.stderr
    assert "its content differs (SHA-256" in p.stderr and "its size is" not in p.stderr, p.stderr
    assert f"--fixes {made['data']} --explain --resume`" in p.stderr, p.stderr
    # The same name, changed since: said so.
    shutil.copy(made["data"], tmp_path / "kept.csv")
    shutil.copy(changed, made["data"])
    try:
        p = gf("judge", db, "--fixes", made["data"], "--explain", "--resume", *CHUNK, check=False)
    finally:
        shutil.copy(tmp_path / "kept.csv", made["data"])
    assert p.returncode == 1 and f"{made['data']} changed since that run began judging it" in p.stderr, p.stderr
    # Without --explain: the options differ. Without --resume: other fixes would be judged out of order.
    original = tmp_path / "again.csv"
    shutil.copy(made["data"], original)
    p = gf("judge", db, "--fixes", original, "--resume", *CHUNK, check=False)
    assert p.returncode == 1 and "was judged with options '--explain', this command gives ''" in p.stderr, p.stderr
    p = gf("judge", db, "--fixes", changed, check=False)
    assert p.returncode == 1 and "run 1 (judge --resume of" in p.stderr and "is unfinished" in p.stderr, p.stderr
    assert reader_sees(db) == [("running", JUDGED_AFTER[1])]
    # The same content under another name resumes it.
    out = tmp_path / "out.csv"
    gf("judge", db, "--fixes", original, "--explain", "--out", out, "--resume", *CHUNK)
    assert out.read_bytes() == made["out"]
    assert end_state(db) == end_state(made["reference"])


def test_a_resume_after_the_catalog_changed_is_refused(made, tmp_path):
    db = cut_after_first_chunk(made, tmp_path)
    gf("settings", db, "default_timezone", "Europe/Paris")
    p = gf("judge", db, "--fixes", made["data"], "--explain", "--resume", *CHUNK, check=False)
    assert p.returncode == 2 and "run 1" in p.stderr and "the catalog's areas, conditions or settings changed" in p.stderr, p.stderr
    assert "status = 'abandoned' WHERE run_id = 1" in p.stderr
    sqlite3.connect(db).execute("UPDATE gf_runs SET status = 'abandoned' WHERE run_id = 1").connection.commit()
    # Given up, the run no longer holds other judgements back.
    assert "run 2:" in gf("judge", db, "--fixes", made["data"]).stdout


def test_a_rerun_of_a_judged_input_judges_nothing(made, tmp_path):
    db = fresh(made, tmp_path)
    gf(*judge_args(db, made, tmp_path / "out.csv")[1:])
    before = end_state(db)
    copy = tmp_path / "copy.csv"
    shutil.copy(made["data"], copy)
    for given in (made["data"], copy):
        p = gf("judge", db, "--fixes", given, "--resume", *CHUNK)
        assert p.stdout.startswith(f"{given}: already judged to its end by run 1 (started "), p.stdout
        assert "nothing judged" in p.stdout and f"`geofence notifications {db} --run 1`" in p.stdout
    assert end_state(db) == before
    # Without --resume the user asks for it to be judged again (every fix stale).
    assert "12002 stale" in gf("judge", db, "--fixes", made["data"]).stdout


@pytest.mark.parametrize("args, says", [
    (["--fixes", "-"], "--resume needs --fixes FILE"),
    ([], "--resume needs --fixes FILE"),
    (["--fixes", "F", "--out", "o.csv", "--no-store-notifications"], "--resume cannot be used with --no-store-notifications"),
    (["--fixes", "F", "--state", "s.jsonl"], "--resume judges into the catalog"),
])
def test_what_resume_cannot_do_is_refused_before_the_run(made, tmp_path, args, says):
    db = fresh(made, tmp_path)
    p = gf("judge", db, *[str(made["data"]) if a == "F" else a for a in args], "--resume", check=False)
    assert p.returncode != 0 and says in p.stderr, p.stderr


def test_judge_explain_with_out_to_standard_output_keeps_the_hint_off_the_events(plain, tmp_path):
    """Before, with --explain and --out -: the `reasons:` line was printed
    after the last event, on standard output, inside the CSV."""
    db = fresh(plain, tmp_path)
    p = gf("judge", db, "--fixes", plain["data"], "--explain", "--out", "-")
    assert p.stdout.encode() == plain["plain_out"]
    assert "reasons: `geofence explain" in p.stderr


def test_a_signal_rolls_back_the_chunk_under_way_and_says_the_run_goes_on(made, tmp_path):
    db = fresh(made, tmp_path)
    out = tmp_path / "out.csv"
    code, _, err = stop_at(judge_args(db, made, out), "chunk", 2).send(signal.SIGTERM)
    assert code == -signal.SIGTERM, err
    assert "run 1 is unfinished, committed up to subject 'dev-10'" in err, err
    assert "interrupted by SIGTERM: the chunk under way was rolled back; the chunks committed before it stand" in err, err
    assert reader_sees(db) == [("running", JUDGED_AFTER[1])]
    gf(*judge_args(db, made, out)[1:])
    assert out.read_bytes() == made["out"]
    assert end_state(db) == end_state(made["reference"])
