"""Integration tests: the real CLI, the real sqlite3 shell, Debian's python3,
ogrinfo and spatialite, against real database files. Run by scripts/test.sh
after scripts/build.sh has put the release binaries into dist/."""
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# GEOFENCE_DIST=/path/to/other/dist runs the tests against another build (to
# see a new test fail on an older one).
DIST = Path(os.environ.get("GEOFENCE_DIST", ROOT / "dist"))
CLI = DIST / "geofence"
EXTENSION = DIST / "libgeofence.so"
SAMPLES = ROOT / "samples"


def run(*args, check=True, input=None, cwd=None):
    """Runs a command; returns CompletedProcess with text output."""
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, input=input, cwd=cwd, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return p


class small_tmpfs:
    """`with small_tmpfs(folder, "64k"):` mounts a tmpfs of that size on
    `folder` (made if need be) for a full-disk test, and unmounts it after;
    skips, naming the capability, where mounting is not allowed."""

    def __init__(self, folder, size):
        self.folder, self.size = Path(folder), size

    def __enter__(self):
        self.folder.mkdir(exist_ok=True)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.folder)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            pytest.skip(f"needs root and CAP_SYS_ADMIN to mount a small tmpfs to fill: {p.stderr.strip()}")
        return self.folder

    def __exit__(self, *exc):
        subprocess.run(["umount", str(self.folder)], capture_output=True)


def gf(*args, check=True, input=None):
    return run(CLI, *args, check=check, input=input)


def current_schema_version():
    """The catalog schema version this build writes ("catalog schema N" in `geofence --version`)."""
    return re.search(r"catalog schema (\d+)", gf("version").stdout).group(1)


def stored_rows(db, query, args=()):
    """The rows `query` reads from the database file `db` (Python's sqlite3, no extension), the connection closed after."""
    con = sqlite3.connect(db)
    try:
        return con.execute(query, args).fetchall()
    finally:
        con.close()


def sql(db, script, check=True):
    """Runs SQL in the stock sqlite3 shell with SpatiaLite and the extension loaded."""
    head = f".load mod_spatialite\n.load {EXTENSION.with_suffix('')}\n"
    return run("sqlite3", "-bail", "-batch", db, check=check, input=head + script)


VERSION = subprocess.run([str(CLI), "--version"], capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """The Python package's wheel (scripts/make_wheel.py), from python/ and DIST's binaries."""
    out = tmp_path_factory.mktemp("wheel")
    run("/usr/bin/python3", ROOT / "scripts" / "make_wheel.py", VERSION, DIST, out)
    (path,) = out.glob("*.whl")
    return path


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory):
    """A fresh venv of Debian's python3 with the wheel, pandas, apsw and
    geopandas installed (one for the session: pip is the slow part)."""
    where = tmp_path_factory.mktemp("venv") / "v"
    run("/usr/bin/python3", "-m", "venv", where)
    # From the wheels scripts/test.sh downloaded (Tests/wheel-requirements.txt): no index at test time.
    wheels = ROOT / ".venv-test" / "wheels"
    pip = [where / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "--no-index", "--find-links", wheels]
    run(*pip, "-r", ROOT / "Tests" / "wheel-requirements.txt")
    run(*pip, wheel)
    return where


@pytest.fixture
def catalog(tmp_path):
    """A new catalog with the sample areas (grouped, with default conditions)."""
    db = tmp_path / "fences.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--group", "G", "--with-default-conditions")
    return db


def snapshot(db):
    """Everything a user can see of the catalog, to prove a failed command changed nothing."""
    areas = gf("areas", "list", db, "--json").stdout
    conditions = gf("conditions", "list", db, "--json").stdout
    settings = gf("settings", db, "--json").stdout
    return areas, conditions, settings


def write_collection(path, features, **members):
    doc = {"type": "FeatureCollection", **members, "features": features}
    Path(path).write_text(json.dumps(doc))
    return path


def square(area_id, lon, lat, size=0.01, **props):
    ring = [[lon, lat], [lon + size, lat], [lon + size, lat + size], [lon, lat + size], [lon, lat]]
    return {"type": "Feature", "properties": {"area_id": area_id, **props},
            "geometry": {"type": "Polygon", "coordinates": [ring]}}


def judge_while_another_writes(db):
    """`geofence judge` of the sample fixes while another connection holds the
    write lock throughout; returns (the finished process, seconds it waited)."""
    import subprocess as sp
    import time
    holder = sp.Popen(["sqlite3", db], stdin=sp.PIPE, stdout=sp.PIPE, text=True)
    holder.stdin.write("BEGIN IMMEDIATE;\nINSERT INTO gf_settings VALUES ('x', 'y');\nSELECT 'holding';\n")
    holder.stdin.flush()
    assert holder.stdout.readline() == "holding\n"  # the lock is taken
    try:
        t = time.time()
        p = gf("judge", db, "--fixes", SAMPLES / "fixes.csv", check=False)
        waited = time.time() - t
    finally:
        holder.stdin.write("ROLLBACK;\n.quit\n"); holder.stdin.flush(); holder.wait(timeout=30)
    return p, waited


@pytest.fixture(scope="session")
def countries(tmp_path_factory):
    """Natural Earth 1:110m countries imported once for the session (with
    --make-valid): (catalog path, {area_id: shapely geometry})."""
    from shapely.geometry import shape
    from reference import import_areas, natural_earth_countries
    work = tmp_path_factory.mktemp("ne")
    db = work / "countries.db"
    features = import_areas(db, natural_earth_countries(work), "--make-valid")
    return db, {k: shape(f["geometry"]) for k, f in features.items()}


class Stopped:
    """A command started with GEOFENCE_TEST_STOP_AT=<point>, stopped there
    (the CLI raises SIGSTOP on itself at that point: TestStops.swift), so a
    test sends its signal at an exact moment instead of after a guessed delay.
    `reached` is False when the command ended without reaching the point."""

    def __init__(self, args, point, cwd=None, ignored=()):
        import signal as _signal
        import subprocess as sp
        import tempfile
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        env = {**os.environ, "GEOFENCE_TEST_STOP_AT": point}
        # The signals a test sends are not inherited as ignored (as in a background job of a
        # shell), except those named in `ignored` (as under nohup).
        def dispositions():
            for s in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
                _signal.signal(s, _signal.SIG_IGN if s in ignored else _signal.SIG_DFL)
        self.p = sp.Popen([str(a) for a in args], stdout=self._out, stderr=self._err, env=env, cwd=cwd,
                          preexec_fn=dispositions)
        _, status = os.waitpid(self.p.pid, os.WUNTRACED)  # bounded by the test's own timeout
        self.reached = os.WIFSTOPPED(status)
        if not self.reached:  # waitpid reaped it: tell Popen what it got
            self.p.returncode = os.waitstatus_to_exitcode(status)

    def send(self, sig):
        """Sends `sig` to the stopped command, lets it go on, and returns
        (exit status, stdout, stderr) once it has ended."""
        import signal as _signal
        assert self.reached, f"the command ended (exit {self.p.returncode}) before its stop point: {self.result()[2]}"
        os.kill(self.p.pid, sig)
        if sig != _signal.SIGKILL:
            os.kill(self.p.pid, _signal.SIGCONT)
        self.p.wait(timeout=120)
        return self.result()

    def result(self):
        self._out.seek(0)
        self._err.seek(0)
        return self.p.returncode, self._out.read().decode(), self._err.read().decode()


# ---- skips: shown, and on CI's kind of machine only those docs/testing.md allows ----------
#
# A test may skip only for a capability the machine lacks (root, mounting, a
# terminal, two CPUs), and its reason says which. scripts/test.sh prints every
# skip with its reason (pytest -rs). On a Debian machine as root (CI's kind),
# a skip that docs/testing.md's table does not list, with the reason it gives,
# fails the run: an install step that went missing must not turn into tests
# that silently stop testing.

_skips = []


def _record(report):
    """A skip, a skipped module (importorskip, allow_module_level) or an
    expected failure: each is a test that did not test, and counts alike."""
    if not report.skipped:
        return
    if hasattr(report, "wasxfail"):
        reason = f"xfail: {report.wasxfail}"
    else:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    _skips.append((report.nodeid, reason.removeprefix("Skipped: ")))


def pytest_runtest_logreport(report):
    _record(report)


def pytest_collectreport(report):
    _record(report)


def allowed_skips():
    """(test name, reason start) pairs from docs/testing.md's table of skips:
    rows `| test_file.py::test_name | reason start | ... |`."""
    rows = []
    for line in (ROOT / "docs" / "testing.md").read_text().splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and "::" in cells[0]:
            rows.append((cells[0], cells[1]))
    return rows


def ci_kind_of_machine():
    return os.geteuid() == 0 and Path("/etc/debian_version").exists()


def unexpected_skips():
    allowed = allowed_skips()
    def listed(nodeid, reason):
        name = nodeid.split("/")[-1].split("[")[0]
        return any(name == test and reason.startswith(start) for test, start in allowed)
    return [(n, r) for n, r in _skips if not listed(n, r)]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not ci_kind_of_machine():
        if _skips:
            terminalreporter.write_line(f"{len(_skips)} skipped (not CI's kind of machine: Debian as root; see docs/testing.md)")
        return
    bad = unexpected_skips()
    for nodeid, reason in bad:
        terminalreporter.write_line(f"UNEXPECTED SKIP on CI's kind of machine: {nodeid}: {reason}", red=True)
    if bad:
        terminalreporter.write_line("docs/testing.md lists the skips allowed here; install what is missing, or list the skip with its reason")


def pytest_sessionfinish(session, exitstatus):
    if ci_kind_of_machine() and unexpected_skips() and session.exitstatus == 0:
        session.exitstatus = 1
