"""Where geofence.spark keeps the catalog copies it ships (docs/spark.md),
as a red team attacked it: a folder another user could write is refused (a
swapped copy would be judged), a session is alive while its process holds
its folder's lock, whatever its pid says (a process in another PID
namespace sharing /tmp), and a '#' in a catalog's name does not reach
Spark's URI."""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT
from task_scenario import fixes_with_ties, use_this_build

use_this_build()
from geofence import GeofenceError, _shipping  # noqa: E402

HOLDER = """
import fcntl, os, sys
folder = sys.argv[1]
os.makedirs(folder)
fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("ready", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def temp(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    os.mkdir(tmp_path / "tmp")
    return tmp_path


def test_a_folder_others_may_write_is_refused(temp):
    db, _ = fixes_with_ties(temp, subjects=2, per_subject=5)
    base = temp / "tmp" / f"geofence-spark-{os.getuid()}"
    base.mkdir(mode=0o777)
    base.chmod(0o777)
    with pytest.raises(GeofenceError, match="not this user's own"):
        _shipping.shipped_copy(str(db), session="s1")
    assert os.listdir(base) == []


def test_a_session_whose_process_holds_its_lock_is_kept_and_removed_once_released(temp):
    db, _ = fixes_with_ties(temp, subjects=2, per_subject=5)
    base = _shipping.base_folder()
    other = os.path.join(base, "999999999-another-namespace")   # a pid no process here has
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, other], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "ready"
    copy = _shipping.shipped_copy(str(db), session="s2")
    assert os.path.isdir(other), "a live session's folder was removed"
    holder.stdin.write("\n")
    holder.stdin.close()
    holder.wait()
    _shipping.shipped_copy(str(db), session="s3")
    assert not os.path.exists(other), "a session that is over kept its folder"
    assert not os.path.exists(copy)   # this process's earlier session (s2) is over too


def test_a_hash_in_the_catalogs_name_stays_out_of_the_shipped_name(temp):
    db, _ = fixes_with_ties(temp, subjects=2, per_subject=5)
    odd = temp / "fences#1?.db"
    shutil.copy(db, odd)
    copy = _shipping.shipped_copy(str(odd), session="s4")
    name = os.path.basename(copy)
    assert "#" not in name and "?" not in name and name.endswith(".db") and os.path.getsize(copy) > 0


def test_a_catalog_a_writer_holds_locked_is_refused_in_words_not_waited_for_without_end(temp):
    import sqlite3
    db, _ = fixes_with_ties(temp, subjects=2, per_subject=5)
    catalog = temp / "journal.db"
    shutil.copy(db, catalog)
    c = sqlite3.connect(catalog, isolation_level=None)
    c.execute("PRAGMA journal_mode = DELETE")
    c.execute("BEGIN EXCLUSIVE")   # a writer in this very process, as a notebook's open transaction
    c.execute("DELETE FROM gf_settings WHERE 0")
    with pytest.raises(GeofenceError, match="database is locked"):
        _shipping.shipped_copy(str(catalog), session="s5")
    c.execute("ROLLBACK")
    assert os.path.getsize(_shipping.shipped_copy(str(catalog), session="s5")) > 0
