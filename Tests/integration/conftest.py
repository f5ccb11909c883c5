"""Integration tests: the real CLI, the real sqlite3 shell, Debian's python3,
ogrinfo and spatialite, against real database files. Run by scripts/test.sh
after scripts/build.sh has put the release binaries into dist/."""
import json
import os
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


def gf(*args, check=True, input=None):
    return run(CLI, *args, check=check, input=input)


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
    pip = [where / "bin" / "pip", "install", "-q", "--disable-pip-version-check"]
    try:
        run(*pip, "pandas", "apsw", "geopandas==0.14.4")
    except AssertionError:
        run(*pip, "pandas", "apsw", "geopandas==0.14.4")  # one retry: the index has been seen to fail transiently
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
    holder = sp.Popen(["sqlite3", db], stdin=sp.PIPE, text=True)
    holder.stdin.write("BEGIN IMMEDIATE;\nINSERT INTO gf_settings VALUES ('x', 'y');\n")
    holder.stdin.flush()
    time.sleep(0.5)
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
