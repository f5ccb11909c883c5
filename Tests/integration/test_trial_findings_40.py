"""What the new user's trial of issue 40 found, each fixed: a resumable run
of a daily feed against a small catalog (judged through a plan, whose chunk
was a million fixes) committed nothing before its end, so every kill lost
it all; the hint after a cut dropped --out, so the repeated command wrote no
file; a run the catalog changed under could only be refused, without a way
on; an upgrade happened without a word."""
import csv
import gzip
import os
import shutil
import signal

import month_scenario as month
from conftest import CLI, Stopped, gf, run, stored_rows


def small_catalog_and_big_feed(tmp_path, subjects=300, per_subject=1000):
    """The month's three areas, and a day of `subjects` × `per_subject` fixes
    (300,000: past a chunk of 200,000, judged through a plan)."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, month.AREAS)
    gf("conditions", "import", db, month.CONDITIONS)
    feed = tmp_path / "feed.csv"
    places = list(month.PLACES.values())
    with feed.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(month.HEAD)
        for s in range(subjects):
            for k in range(per_subject):
                lat, lon, acc = places[(s + k // 7) % len(places)]
                w.writerow([f"d{s:03d}", f"2026-11-20T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z", lat, lon, acc])
    return db, feed


def test_a_planned_daily_feed_commits_before_its_end_with_resume(tmp_path):
    db, feed = small_catalog_and_big_feed(tmp_path)
    cut = Stopped([CLI, "judge", db, "--fixes", feed, "--resume"], "chunk-committed")
    assert cut.reached
    judged = stored_rows(db, "SELECT judged FROM gf_runs WHERE status = 'running'")
    cut.send(signal.SIGKILL)
    assert judged and 0 < judged[0][0] <= 200_000   # before: one chunk of all 300,000, nothing committed until the end


def test_the_hint_after_a_cut_repeats_out_and_the_chunk_size(tmp_path):
    db, feed = small_catalog_and_big_feed(tmp_path, subjects=30, per_subject=100)
    out = tmp_path / "notes.csv"
    args = [CLI, "judge", db, "--fixes", feed, "--out", out, "--resume", "--chunk-fixes", "1000"]
    cut = Stopped(args, "chunk-committed")
    code, _, err = cut.send(signal.SIGTERM)   # the chunk under way rolled back; the command says how to go on
    assert code != 0
    assert f"--out {out}" in err and "--chunk-fixes 1000" in err, err


def test_a_run_the_catalog_changed_under_says_how_to_go_on(tmp_path):
    db, feed = small_catalog_and_big_feed(tmp_path, subjects=30, per_subject=100)
    cut = Stopped([CLI, "judge", db, "--fixes", feed, "--resume", "--chunk-fixes", "1000"], "chunk-committed")
    cut.send(signal.SIGKILL)
    gf("settings", db, "default_confidence", "0.5")
    p = gf("judge", db, "--fixes", feed, "--resume", "--chunk-fixes", "1000", check=False)
    assert p.returncode != 0 and "cannot be resumed" in p.stderr
    assert "status = 'abandoned' WHERE run_id = 1" in p.stderr and "then judge the file again" in p.stderr, p.stderr
    # The way it names works.
    run("sqlite3", db, "UPDATE gf_runs SET status = 'abandoned' WHERE run_id = 1")
    gf("judge", db, "--fixes", feed, "--resume", "--chunk-fixes", "1000")
    assert stored_rows(db, "SELECT status FROM gf_runs ORDER BY run_id") == [("abandoned",), ("done",)]


def test_an_upgrade_in_place_says_so(tmp_path):
    db = tmp_path / "old.db"
    with gzip.open(month.FIXTURES / "month" / "days01-15.db.gz") as f:
        db.write_bytes(f.read())
    p = gf("settings", db)
    assert "upgraded the catalog in place from schema version 9 to" in p.stderr, p.stderr
    assert "upgraded" not in gf("settings", db).stderr   # once


def test_a_name_switched_after_the_hash_does_not_change_what_is_judged(tmp_path):
    """The red team's finding: the run hashed the file by its name, then
    opened the name again; a link switched in between (or a file renamed over
    it) made the run judge one content recorded as another's, and the first
    was then 'already judged' without ever being judged."""
    db, a = small_catalog_and_big_feed(tmp_path, subjects=20, per_subject=100)
    b = tmp_path / "b.csv"
    b.write_text("".join(a.read_text().splitlines(True)[:101]))   # another content: its first 100 fixes
    link = tmp_path / "latest.csv"
    link.symlink_to(a)
    began = Stopped([CLI, "judge", db, "--fixes", link, "--resume"], "began")   # hashed; the lock taken
    link.unlink()
    link.symlink_to(b)
    while True:   # each chunk's transaction begins anew: let it past every later stop
        os.kill(began.p.pid, signal.SIGCONT)
        _, status = os.waitpid(began.p.pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            break
    assert os.waitstatus_to_exitcode(status) == 0
    assert stored_rows(db, "SELECT fixes FROM gf_runs") == [(2000,)]   # a.csv's, which it hashed
    assert "nothing judged" in gf("judge", db, "--fixes", a, "--resume").stdout


def stops_until_end(args, point, kill_at=None):
    """Runs `args` stopping at every `point`; with `kill_at`, SIGKILLs it at
    that stop. Returns how many stops it made."""
    s = Stopped(args, point)
    k = 0
    while s.reached:
        k += 1
        if k == kill_at:
            os.kill(s.p.pid, signal.SIGKILL)
            os.kill(s.p.pid, signal.SIGCONT)
            os.waitpid(s.p.pid, 0)
            return k
        os.kill(s.p.pid, signal.SIGCONT)
        _, status = os.waitpid(s.p.pid, os.WUNTRACED)
        s.reached = os.WIFSTOPPED(status)
    return k


def test_a_kill_after_the_last_commit_still_gives_the_out_file(tmp_path):
    """The red team's finding: killed after the run's last COMMIT and before
    --out was renamed into place, the rerun said 'already judged' and wrote
    no --out; the file, whole, was left beside it as FILE.partial-XXXXXX."""
    db, feed = small_catalog_and_big_feed(tmp_path, subjects=30, per_subject=100)
    uncut = tmp_path / "uncut.db"
    shutil.copy(db, uncut)
    for name in ("notes.csv", "notes.ndjson", "notes.geojsonl", "notes.geojson"):
        gf("judge", uncut, "--fixes", feed, "--out", tmp_path / f"uncut-{name}", "--resume", "--chunk-fixes", "1000")
        cut_db = tmp_path / f"cut-{name}.db"
        shutil.copy(db, cut_db)
        out = tmp_path / name
        args = [CLI, "judge", cut_db, "--fixes", feed, "--out", out, "--resume", "--chunk-fixes", "1000"]
        last = stops_until_end(args, "committed")
        shutil.copy(db, cut_db)
        out.unlink()
        assert stops_until_end(args, "committed", kill_at=last) == last
        assert not out.exists()
        gf(*args[1:])
        assert out.read_bytes() == (tmp_path / f"uncut-{name}").read_bytes()
        assert list(tmp_path.glob(f"{name}.partial-*")) == []
        shutil.copy(db, uncut)   # the next format's uncut run starts afresh too
