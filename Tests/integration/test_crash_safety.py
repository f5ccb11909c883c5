"""SIGKILL at random moments during a large import and a large judgement: the
database always opens, passes integrity_check, holds all of an import or none
of it, and re-running the judgement ends with exactly the notifications of an
uninterrupted run."""
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import CLI, ROOT, gf, run
from test_judgement import notifications, scenario

sys.path.insert(0, str(ROOT / "benchmarks"))
import workload  # noqa: E402


def kill_after(args, seconds):
    """Starts the CLI, SIGKILLs it after `seconds` (if still running); True if it was killed."""
    p = subprocess.Popen([str(a) for a in args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        p.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.wait()
        return True


def integrity(db):
    return run("sqlite3", db, "PRAGMA integrity_check;").stdout.strip()


def test_killed_imports_leave_all_or_nothing(tmp_path):
    fences = tmp_path / "fences.geojson"
    workload.write_fences(fences, 20000, seed=5)
    db = tmp_path / "k.db"
    gf("init", db)
    t = time.time()
    gf("import", db, fences)
    full = time.time() - t
    gf("clear", db)
    rng = random.Random(1)
    killed = 0
    for _ in range(6):
        if kill_after([CLI, "import", db, fences, "--replace"], rng.uniform(0.05, full * 0.9)):
            killed += 1
        assert integrity(db) == "ok"
        count = int(run("sqlite3", db, "SELECT count(*) FROM gf_areas;").stdout)
        assert count in (0, 20000), count
        assert run("sqlite3", db, "SELECT count(*) FROM idx_gf_areas_geom;").stdout.strip() == str(count)
    assert killed >= 3, "the kills must land while the import runs"


def test_killed_judgements_resume_exactly(tmp_path):
    db, fixes, rows = scenario(tmp_path, subjects=8, per_subject=1500, seed=4)
    original = tmp_path / "original.db"
    shutil.copy(db, original)
    reference = tmp_path / "ref.db"
    shutil.copy(db, reference)
    t = time.time()
    gf("judge", reference, "--fixes", fixes)
    full = time.time() - t
    expected = notifications(reference)
    rng = random.Random(2)
    killed = attempts = 0
    # The judgement takes a fraction of a second here. A run the kill missed
    # has judged everything, and every later run would only find stale fixes
    # and end at once, so the database goes back to its state before the
    # first run; kills are aimed inside the run, until three have landed.
    while killed < 3 and attempts < 12:
        attempts += 1
        if kill_after([CLI, "judge", db, "--fixes", fixes], rng.uniform(0.15 * full, 0.8 * full)):
            killed += 1
            assert integrity(db) == "ok"
            assert notifications(db) in ([], expected), "a killed run leaves nothing or everything"
        else:
            shutil.copy(original, db)
    gf("judge", db, "--fixes", fixes)   # re-running: all judged once, or all stale if a run had finished
    assert notifications(db) == expected
    assert killed >= 2, f"only {killed} of {attempts} kills landed while the judgement ran ({full:.2f} s)"


def test_readers_during_a_judgement_see_before_or_after(tmp_path):
    """WAL: while a judgement writes, other processes read areas, state and
    notifications and call the SQL functions without errors, and see either
    the state before the run or after it, never part of it."""
    from conftest import EXTENSION
    db, fixes, rows = scenario(tmp_path, subjects=16, per_subject=2500, seed=6)
    reference = tmp_path / "ref.db"
    shutil.copy(db, reference)
    gf("judge", reference, "--fixes", fixes)
    final = len(notifications(reference))
    judge = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", str(fixes)], stdout=subprocess.DEVNULL)
    seen = set()
    reads = 0
    query = (f".load mod_spatialite\n.load {EXTENSION.with_suffix('')}\n"
             "SELECT (SELECT count(*) FROM gf_notifications), (SELECT count(*) FROM gf_areas),"
             " gf_area_contains('A01', 35.712, 139.772, 10) IS NOT NULL OR 1;\n")
    while judge.poll() is None or reads < 3:
        p = run("sqlite3", "-bail", db, input=query)
        n, areas, ok = p.stdout.strip().split("|")
        seen.add(int(n))
        assert areas == "12" and ok == "1"
        reads += 1
        if reads > 200:
            break
    judge.wait()
    assert seen <= {0, final}, seen
    assert 0 in seen, "some reads must land while the run is in progress"
    assert len(notifications(db)) == final


def test_two_judgements_at_once_run_one_after_the_other(tmp_path):
    """Two `geofence judge` started at the same instant on one database: the
    second waits for the first's write lock (BEGIN IMMEDIATE, 10 s busy
    timeout), then runs; their writes never interleave, and together they give
    exactly what one run over all the fixes gives."""
    from test_judgement import write_fixes
    db, fixes, rows = scenario(tmp_path, subjects=8, per_subject=600, seed=9)
    reference = tmp_path / "ref.db"
    shutil.copy(db, reference)
    gf("judge", reference, "--fixes", fixes)
    parts = []
    for half in (0, 1):
        path = tmp_path / f"half{half}.csv"
        write_fixes(path, [r for r in rows if int(r[0].split("-")[1]) % 2 == half])
        parts.append(path)
    procs = [subprocess.Popen([str(CLI), "judge", str(db), "--fixes", str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for p in parts]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    runs = run("sqlite3", db, "SELECT run_id, min(id), max(id), count(*) FROM gf_notifications GROUP BY run_id ORDER BY min(id);").stdout.split()
    assert len(runs) == 2, runs
    (_, _, first_max, _), (_, second_min, _, _) = (r.split("|") for r in runs)
    assert int(first_max) < int(second_min), "one run's notifications never sit between the other's"
    assert sorted(notifications(db)) == sorted(notifications(reference))
