"""The copy of a catalog that geofence.spark ships to the executors.

    copy = shipped_copy("fences.db", session="local-1764441234567")   # …/geofence-spark-0/PID-SESSION/fences-1f2e….db

What is shipped is a **consistent snapshot** of the catalog: SQLite's
backup API copies it page by page inside one read transaction of a
read-only connection, so the copy holds what a reader sees now, the pages
committed into the catalog's -wal by a connection still open (no checkpoint
yet) included, and nothing half written by a writer at work. A copy of the
file's bytes would hold neither (the -wal's pages are not in the file).

The copy is named for its contents (``NAME-SHA256PREFIX.db``): Spark ships a
file under its base name and refuses a second file of that name with other
contents, so a catalog changed between runs of one session, or two
catalogs named alike, each get a name of their own. A snapshot is taken
again only when the catalog file or its -wal changed (identity, size or
modification time) since the last one this process took.

Copies live in a folder per Spark session (``PID-SESSION`` under
``geofence-spark-UID`` in the temporary directory), kept while that session
may still run tasks that fetch them: each ship removes the folders of
sessions that are over (an earlier session of this process, or a process
that is gone), and this process removes its own when it exits.
"""
import atexit
import hashlib
import os
import shutil
import sqlite3
import tempfile
import threading
from urllib.request import pathname2url

from ._errors import GeofenceError

_lock = threading.Lock()
# The last snapshot of each (catalog, session): the catalog's signature then, and the copy.
_taken = {}


def shipped_copy(path, session):
    """The copy to ship of the catalog file at ``path`` for the Spark session
    ``session`` (its application id): a consistent snapshot named for its
    contents, in the session's folder (made on first use; older sessions'
    folders removed). Raises GeofenceError naming the file when SQLite
    cannot read it as a database."""
    folder = _session_folder(session)
    signature = catalog_signature(path)
    with _lock:
        kept = _taken.get((path, session))
        if kept and kept[0] == signature and os.path.exists(kept[1]):
            return kept[1]
        copy = _snapshot(path, folder)
        _taken[(path, session)] = (signature, copy)
        return copy


def _snapshot(path, folder):
    """A snapshot of ``path`` (backup API, read-only source) written beside
    its final name, hashed, and renamed to ``NAME-SHA256PREFIX.SUFFIX`` in
    ``folder`` (dropped when a copy of that name is there already)."""
    partial = os.path.join(folder, f".{os.getpid()}-{threading.get_ident()}.partial")
    try:
        source = sqlite3.connect(f"file:{pathname2url(path)}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise GeofenceError(f"{path}: cannot open the catalog to ship it: {e}") from None
    try:
        target = sqlite3.connect(partial)
        try:
            source.backup(target)  # every page in one step: one read transaction
        finally:
            target.close()
    except sqlite3.Error as e:
        _remove(partial)
        raise GeofenceError(f"{path}: cannot read the catalog to ship it: {e}") from None
    finally:
        source.close()
    h = hashlib.sha256()
    with open(partial, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    stem, suffix = os.path.splitext(os.path.basename(path))
    copy = os.path.join(folder, f"{stem}-{h.hexdigest()[:16]}{suffix}")
    if os.path.exists(copy):
        _remove(partial)
    else:
        os.replace(partial, copy)
    return copy


def catalog_signature(path):
    """What tells one version of a catalog from another without reading it
    (the shipped snapshot here, an executor's opened task in arrow.py):
    the file's and its -wal's identity, size and modification time."""
    out = []
    for p in (path, path + "-wal"):
        try:
            st = os.stat(p)
            out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


def base_folder():
    """The folder of every session's copies for this user."""
    return os.path.join(tempfile.gettempdir(), f"geofence-spark-{os.getuid()}")


def _session_folder(session):
    """``PID-SESSION`` under ``base_folder()``, made if missing, the folders
    of sessions that are over removed first."""
    base = base_folder()
    os.makedirs(base, exist_ok=True)
    name = f"{os.getpid()}-{_safe(session)}"
    for other in os.listdir(base):
        if other != name and _over(other):
            shutil.rmtree(os.path.join(base, other), ignore_errors=True)
    folder = os.path.join(base, name)
    if not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
        atexit.register(shutil.rmtree, folder, True)
    return folder


def _over(name):
    """Whether the session of the folder ``name`` (``PID-SESSION``) can run
    no more tasks: an earlier session of this process (only one SparkContext
    runs in a process), or any session of a process that is gone. A name of
    another form (a copy an older version shipped, directly in the base
    folder) is not: such a process may still be running and fetching it."""
    pid, _, _ = name.partition("-")
    if not pid.isdigit() or not os.path.isdir(os.path.join(base_folder(), name)):
        return False
    if int(pid) == os.getpid():
        return True  # the caller keeps the current session's folder out of this
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's: not ours to judge
    return False


def _safe(session):
    """A session id as a file name: letters, digits, '-' and '_' kept."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(session))


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
