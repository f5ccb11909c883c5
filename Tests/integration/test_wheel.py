"""The Python package (scripts/wheel.sh): built from the release binaries,
installed with pip into a fresh venv of Debian's python3, and used as the
README shows. Also: nothing in it needs the Swift toolchain, and the wheel's
metadata and tag are right."""
import base64
import csv
import hashlib
import io
import os
import platform
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, VERSION, gf, run


def test_wheel_name_metadata_and_record(wheel):
    assert wheel.name == f"geofence-{VERSION}-py3-none-linux_{platform.machine()}.whl"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = f"geofence-{VERSION}.dist-info"
        meta = z.read(f"{info}/METADATA").decode()
        assert f"\nVersion: {VERSION}\n" in meta and "\nName: geofence\n" in meta
        assert "License-Expression: MIT" in meta
        wheel_file = z.read(f"{info}/WHEEL").decode()
        assert f"Tag: py3-none-linux_{platform.machine()}" in wheel_file
        assert "manylinux" not in wheel.name  # it needs the system's libsqlite3
        for line in csv.reader(io.StringIO(z.read(f"{info}/RECORD").decode())):
            name, digest, size = line
            if name == f"{info}/RECORD":
                continue
            data = z.read(name)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)
            names.discard(name)
        assert names == {f"{info}/RECORD"}, f"files missing from RECORD: {names}"


def test_nothing_installed_needs_the_swift_toolchain(venv):
    site = next((venv / "lib").glob("python3*/site-packages/geofence"))
    for binary in (site / "libgeofence.so", site / "bin" / "geofence"):
        linked = run("ldd", binary).stdout
        assert "not found" not in linked, linked
        assert "swift" not in linked.lower(), f"{binary} needs the Swift toolchain:\n{linked}"


def test_readme_python_example(venv, tmp_path):
    db = tmp_path / "fences.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--group", "G", "--with-default-conditions")
    reference = tmp_path / "ref.db"
    shutil.copy(db, reference)
    expected = tmp_path / "expected.csv"
    gf("judge", reference, "--fixes", SAMPLES / "fixes.csv", "--out", expected, "--quiet")
    script = f"""
import sqlite3, apsw, pandas, geofence
conn = sqlite3.connect({str(db)!r})
geofence.load(conn)
print(conn.execute("SELECT gf_version(), spatialite_version() IS NOT NULL").fetchone())
inside = conn.execute("SELECT area_id FROM gf_areas WHERE gf_contains(geom, 35.715, 139.773, 20) = 1").fetchall()
print(sorted(a for (a,) in inside))
conn.close()
a = apsw.Connection({str(db)!r})
geofence.load(a)
print(list(a.execute("SELECT spatialite_version() IS NOT NULL, count(*) FROM gf_areas WHERE gf_contains(geom, 35.715, 139.773, 20) = 1")))
fixes = pandas.read_csv({str(SAMPLES / 'fixes.csv')!r}, dtype={{"subject_id": str, "ts": str}})
notes = geofence.judge({str(db)!r}, fixes)
notes.to_csv({str(tmp_path / 'got.csv')!r}, index=False)
pairs = geofence.locate({str(db)!r}, fixes)
print(len(pairs), list(pairs.columns))
"""
    p = run(venv / "bin" / "python", "-c", script)
    lines = p.stdout.splitlines()
    assert lines[0] == f"('{VERSION}', 1)"
    assert lines[1] == "['G#AREA_ID_001']"
    assert lines[2] == "[(1, 1)]"
    assert lines[3].endswith("['row', 'area_id', 'verdict']")
    # The DataFrame holds exactly what the command writes.
    got = list(csv.reader(open(tmp_path / "got.csv")))
    want = list(csv.reader(open(expected)))
    assert [r[:5] for r in got] == [r[:5] for r in want] and len(got) > 1
    assert [[float(x) for x in r[5:]] for r in got[1:]] == [[float(x) for x in r[5:]] for r in want[1:]]


def test_command_on_path_is_the_packaged_binary(venv, tmp_path):
    assert run(venv / "bin" / "geofence", "--version").stdout.strip() == VERSION
    p = run(venv / "bin" / "geofence", "init", tmp_path / "no" / "such" / "dir.db", check=False)
    assert p.returncode != 0 and "dir.db" in p.stderr


# A connection as a sqlite3 module built without extension loading gives it
# (SQLITE_OMIT_LOAD_EXTENSION: Python then has no enable_load_extension).
WITHOUT_EXTENSION_LOADING = """
import sqlite3, geofence
class WithoutExtensionLoading(sqlite3.Connection):
    def __getattribute__(self, name):
        if name == "enable_load_extension":
            raise AttributeError(name)
        return super().__getattribute__(name)
geofence.load(sqlite3.connect(":memory:", factory=WithoutExtensionLoading))
"""


def test_clear_error_when_sqlite3_cannot_load_extensions(wheel, tmp_path):
    """A Python whose sqlite3 was built without extension loading (pyenv's
    default build, for one) gets an error that says so and what to use.
    Tried with such a python3 when the machine has one (the first on PATH
    here often is), and always with a connection that lacks the method."""
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(target)
    tries = [("/usr/bin/python3", WITHOUT_EXTENSION_LOADING)]
    for exe in filter(None, [shutil.which("python3"), shutil.which("python3", path="/root/.pyenv/shims")]):
        probe = run(exe, "-c", "import sqlite3; print(hasattr(sqlite3.Connection, 'enable_load_extension'))", check=False)
        if probe.stdout.strip() == "False":
            tries.append((exe, "import sqlite3, geofence; geofence.load(sqlite3.connect(':memory:'))"))
    for exe, code in tries:
        p = run(exe, "-c", code, check=False, cwd=target)
        assert p.returncode != 0, exe
        assert "cannot load extensions" in p.stderr and "/usr/bin/python3" in p.stderr, (exe, p.stderr)


def test_judge_warns_of_skipped_fixes_and_takes_any_catalog_name(venv, tmp_path):
    """Fixes without an offset are invalid: judge() returns no notification for
    them, but says so (a warning with the run's summary) instead of an empty
    frame alone. A catalog named '-x.db' is a file, not an option."""
    db = tmp_path / "-x.db"
    gf("init", tmp_path / "x.db")
    gf("import", tmp_path / "x.db", SAMPLES / "areas.geojson", "--with-default-conditions")
    shutil.copy(tmp_path / "x.db", db)
    script = f"""
import warnings, pandas, geofence, os
os.chdir({str(tmp_path)!r})
fixes = pandas.DataFrame({{"subject_id": ["a", "a"], "ts": [pandas.Timestamp("2026-11-20 09:05"), pandas.NA],
                          "lat": [35.7098, 35.7098], "lon": [139.774, 139.774], "accuracy_m": [15, pandas.NA]}})
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    notes = geofence.judge("-x.db", fixes, explain=True)
print(len(notes), notes.attrs["summary"])
print([type(w.message).__name__ for w in caught], repr(str(caught[0].message)) if caught else "")
"""
    p = run(venv / "bin" / "python", "-c", script)
    first, second = p.stdout.splitlines()
    assert first.startswith("0 run 1: 2 fixes: 0 judged, 0 stale, 2 invalid")
    assert second.startswith("['GeofenceWarning']") and "2 invalid" in second
    reasons = run("sqlite3", db, "SELECT reason FROM gf_explain;").stdout
    assert "no UTC offset" in reasons and "missing time" in reasons, reasons  # pandas.NA written as a missing value


def test_dataframe_ids_columns_and_locates_skipped(venv, tmp_path):
    """From a new-user trial: `" u1 "` and `"u1"` became one subject on the way
    to the command (its CSV was written without quoting the spaces); a column
    named twice made every fix silently invalid; locate() dropped invalid fixes
    without a word."""
    db = tmp_path / "x.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    script = f"""
import warnings, pandas, geofence
fixes = pandas.DataFrame({{"subject_id": [" u1 ", "u1", "a,\\"b\\""], "ts": ["2026-11-20T09:05:00+09:00"] * 3,
                          "lat": [35.7098] * 3, "lon": [139.774] * 3, "accuracy_m": [15] * 3}})
notes = geofence.judge({str(db)!r}, fixes)
print(sorted(set(notes["subject_id"])))
twice = pandas.concat([fixes, fixes[["lat"]]], axis=1)
for f in (geofence.judge, geofence.locate):
    try:
        f({str(db)!r}, twice)
        print("accepted")
    except geofence.GeofenceError as e:
        print(str(e))
bad = fixes.assign(lat=[35.7098, float("nan"), 35.7098])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pairs = geofence.locate({str(db)!r}, bad)
print(sorted(set(pairs["row"])), pairs.attrs["summary"], [str(w.message) for w in caught])
for odd in ({{"subject_id": ["a"]}}, fixes.assign(subject_id=["\\udcff", "u", "v"])):
    try:
        geofence.judge({str(db)!r}, odd)
    except geofence.GeofenceError as e:
        print(str(e))
"""
    lines = run(venv / "bin" / "python", "-c", script).stdout.splitlines()
    assert lines[0] == "[' u1 ', 'a,\"b\"', 'u1']", lines
    assert lines[1] == lines[2] == "fixes: column(s) lat appear more than once; which holds the fix is anyone's guess", lines
    assert lines[3].startswith("[1, 3] located 3 fixes (1 invalid)") and "['located 3 fixes (1 invalid)" in lines[3], lines
    assert lines[4] == "fixes: a pandas DataFrame is needed, got dict", lines
    assert lines[5].startswith("fixes: row 1 holds text that is not Unicode text (surrogates not allowed"), lines


def test_integer_subject_ids_stay_integers_when_one_is_missing(venv, tmp_path):
    """pandas turns a column of integer subject ids into floats as soon as one
    is missing; subject 7 was sent to the command as "7.0". A whole float is
    an integer id; the missing one is an invalid fix, as in a CSV."""
    db = tmp_path / "x.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    script = f"""
import warnings, pandas, geofence
fixes = pandas.DataFrame({{"subject_id": [7, None, 12], "ts": ["2026-11-20T09:05:00+09:00"] * 3,
                          "lat": [35.7098] * 3, "lon": [139.774] * 3, "accuracy_m": [15] * 3}})
print(fixes["subject_id"].dtype)
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    notes = geofence.judge({str(db)!r}, fixes)
print(sorted(set(notes["subject_id"])), notes.attrs["summary"])
"""
    lines = run(venv / "bin" / "python", "-c", script).stdout.splitlines()
    assert lines[0] == "float64", lines
    assert lines[1].startswith("['12', '7'] run 1: 3 fixes: 2 judged, 0 stale, 1 invalid"), lines


def test_an_interrupted_judge_rolls_the_run_back(venv, tmp_path):
    """A KeyboardInterrupt in Python alone (`kill -INT`, a notebook's interrupt)
    made subprocess.run kill the command 0.25 s later, in the middle of its
    rollback: a hot -journal stayed, locking out readers who cannot write the
    folder. The package now passes the SIGINT on and waits for the rollback.
    No guessed delay: the command stops itself once its transaction has begun
    (GEOFENCE_TEST_STOP_AT=began), Python is interrupted then, and the command
    goes on only once the SIGINT Python passes on is pending for it."""
    import signal
    import sqlite3
    from test_judge_out_streamed import catalog, fixes
    from test_signal_rollback import journal, side_files
    db = catalog(tmp_path, ["A", "B1", "Z"])
    journal(db, "delete")
    some = fixes(tmp_path, [(f"s{k % 50}", f"2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z",
                             str(k % 7 * 0.001), "0", "5") for k in range(2_000)])
    script = f"import geofence\ngeofence.run('judge', {str(db)!r}, '--fixes', {str(some)!r})\n"
    env = {**os.environ, "GEOFENCE_TEST_STOP_AT": "began"}  # inherited by the command geofence.run starts
    # SIGINT as a terminal's Ctrl-C finds it: a test run in the background (nohup, `&` in a
    # script) inherits it ignored, and Python then installs no KeyboardInterrupt for it.
    p = subprocess.Popen([str(venv / "bin" / "python"), "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    child = wait_for(lambda: children(p.pid), "the command to start")[0]
    wait_for(lambda: process_state(child) == "T", "the command to stop at its transaction's start")
    wait_for(lambda: waiting_for_output(p.pid), "Python to wait for the command's output")
    p.send_signal(signal.SIGINT)
    wait_for(lambda: pending(child) & (1 << (signal.SIGINT - 1)), "Python to pass the SIGINT on")
    os.kill(child, signal.SIGCONT)
    _, err = p.communicate(timeout=120)
    assert b"KeyboardInterrupt" in err, err
    assert side_files(db) == []
    c = sqlite3.connect(db)
    assert c.execute("SELECT count(*) FROM gf_runs").fetchone()[0] == 0
    c.close()


def wait_for(condition, what, seconds=120):
    """`condition()`'s first true value, asked until it gives one (bounded:
    a hang fails naming what never happened)."""
    import time
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.01)
    return value


def children(pid):
    """The pids of `pid`'s children (Linux: /proc/PID/task/PID/children)."""
    try:
        return [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except FileNotFoundError:
        return []


def waiting_for_output(pid):
    """Whether `pid` sits in poll or select (x86-64 numbers), as
    subprocess's communicate() does while it waits (/proc/PID/syscall)."""
    call = open(f"/proc/{pid}/syscall").read().split()[0]
    return call in {"7", "23", "232", "270", "271", "281"}


def process_state(pid):
    """The one-letter state of `pid` (T: stopped)."""
    return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]


def pending(pid):
    """The signals pending for `pid`, its own and its threads' shared ones, as a bit mask."""
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status").read().splitlines() if ":" in line)
    return int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
