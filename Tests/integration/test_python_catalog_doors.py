"""The Python package's doors to a catalog file (geofence.export_state,
import_state, the Spark door's shipped snapshot) read it as the command line
does and refuse in the user's terms: a WAL catalog in a folder the user
cannot write is read (as immutable, nothing committed outside the file) or
refused saying what to ask its owner; a file that is no catalog, or of an
older schema, or locked by a writer, gets the engine's words, not a raw
sqlite3 error; subject ids must be strings; a catalog changed without a
change of size or time is still seen as changed. (Issue 41's follow-ups.)"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import SAMPLES
from task_scenario import gf, use_this_build

use_this_build()
pa = pytest.importorskip("pyarrow")  # listed in Tests/requirements.txt: missing means a broken venv

import geofence  # noqa: E402
from geofence import GeofenceError  # noqa: E402
from geofence._catalog_file import signature  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
needs_runuser = pytest.mark.skipif(shutil.which("runuser") is None, reason="needs runuser to run Python as the user nobody")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root can run Python as the user nobody (runuser)")


@pytest.fixture
def judged(tmp_path):
    db = tmp_path / "fences.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    gf("judge", db, "--fixes", SAMPLES / "fixes.csv")
    return db


@pytest.fixture
def nobody_place(judged):
    """A folder only root may write, readable by all, holding a copy of the
    package, the library and a WAL catalog; removed after. The user nobody
    runs this venv's Python (pyarrow is in it): a checkout inside a folder
    only its owner may enter (`mktemp -d` makes one) keeps nobody out of
    the venv, and the test is skipped saying so."""
    probe = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", "import pyarrow"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0 and "Permission denied" not in probe.stderr:
        pytest.fail(f"the user nobody could not run this venv's Python with pyarrow: {probe.stderr}")
    if probe.returncode != 0:
        pytest.skip(f"needs a checkout other users may enter: the user nobody cannot run this venv's Python ({sys.executable}): "
                    f"a folder above it is closed to other users ({probe.stderr.strip()[-200:]})")
    root = Path(tempfile.mkdtemp(prefix="gf-py-ro-", dir="/tmp"))
    try:
        shutil.copytree(ROOT / "python" / "geofence", root / "pkg" / "geofence")
        shutil.copy(os.environ["GEOFENCE_LIBRARY"], root / "libgeofence.so")
        shutil.copy(judged, root / "fences.db")
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield root
    finally:
        shutil.rmtree(root)


def python_as_nobody(place, code):
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(place / "pkg"), "GEOFENCE_LIBRARY": str(place / "libgeofence.so")}
    return subprocess.run(["runuser", "-u", "nobody", "--", "env", *[f"{k}={v}" for k, v in env.items()],
                           sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@needs_runuser
@needs_root
def test_export_state_reads_a_wal_catalog_in_a_folder_it_cannot_write(nobody_place):
    assert (nobody_place / "fences.db").read_bytes()[18] == 2   # a WAL database (its header's write version)
    p = python_as_nobody(nobody_place, f"import geofence; print(geofence.export_state({str(nobody_place / 'fences.db')!r}).num_rows)")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(nobody_place)) == ["fences.db", "libgeofence.so", "pkg"]   # nothing left beside it
    assert int(p.stdout) == gf("state", "export", nobody_place / "fences.db").stdout.count("\n") > 0


@needs_runuser
@needs_root
def test_pages_in_a_wal_it_cannot_read_are_refused_not_missed(nobody_place):
    # A catalog copied with its -wal of committed pages, without its -shm (as a backup tool copies it).
    writer = sqlite3.connect(nobody_place / "fences.db")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE gf_settings SET value = value")
    writer.commit()
    for suffix in ("", "-wal"):
        shutil.copy(nobody_place / f"fences.db{suffix}", nobody_place / f"copy.db{suffix}")
        os.chmod(nobody_place / f"copy.db{suffix}", 0o644)
    writer.close()
    p = python_as_nobody(nobody_place, f"import geofence; geofence.export_state({str(nobody_place / 'copy.db')!r})")
    assert p.returncode != 0
    assert "committed changes in its -wal file" in p.stderr, p.stderr


def test_a_file_that_is_no_catalog_or_of_an_older_schema_is_named(tmp_path, judged):
    plain = tmp_path / "plain.db"
    sqlite3.connect(plain).execute("CREATE TABLE t (x)")
    text = tmp_path / "notes.db"
    text.write_text("not a database\n")
    for path in (plain, text):
        with pytest.raises(GeofenceError, match=str(path)):
            geofence.export_state(path)
        with pytest.raises(GeofenceError, match=str(path)):
            geofence.import_state(path, pa.table({"subject_id": ["a"], "record": ["x"]}))
    with pytest.raises(GeofenceError, match="no geofence catalog"):
        geofence.export_state(plain)


def test_a_locked_catalog_is_refused_in_words_not_a_raw_sqlite_error(judged):
    holder = sqlite3.connect(judged, isolation_level=None)
    holder.execute("PRAGMA busy_timeout = 0")
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(GeofenceError, match=f"{judged}: cannot begin writing the state"):
            geofence.import_state(judged, pa.table({"subject_id": ["new"], "record": ["x"]}))
    finally:
        holder.execute("ROLLBACK")


def test_subject_ids_must_be_strings_and_subjects_a_list(judged):
    with pytest.raises(GeofenceError, match="column subject_id is int64"):
        geofence.import_state(judged, pa.table({"subject_id": [7], "record": ["x"]}))
    with pytest.raises(GeofenceError, match=r"subjects=\['walker-01'\]"):
        geofence.export_state(judged, subjects="walker-01")
    for bad in (7, None):
        with pytest.raises(GeofenceError, match="subjects, item 2: .* subject ids are strings"):
            geofence.export_state(judged, subjects=["walker-01", bad])


def test_a_change_of_the_same_size_within_one_tick_changes_the_signature(tmp_path):
    db = tmp_path / "c.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    before = signature(str(db))
    st = os.stat(db)
    conn.execute("UPDATE t SET x = 2")
    conn.close()
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))   # the same tick, as a coarse clock would show it
    assert os.stat(db).st_size == st.st_size
    assert signature(str(db)) != before


def test_a_commit_into_the_wal_of_a_linked_catalog_changes_the_signature(tmp_path):
    db = tmp_path / "c.db"
    link = tmp_path / "link.db"
    link.symlink_to(db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("CREATE TABLE t (x)")
    before = signature(str(link))
    conn.execute("INSERT INTO t VALUES (1)")   # into the -wal beside c.db: the file itself unchanged
    assert signature(str(link)) != before
    conn.close()
