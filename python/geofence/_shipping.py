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
modification time, header counters: _catalog_file.signature) since the
last one this process took.

Copies live in a folder per Spark session (``PID-SESSION`` under
``geofence-spark-UID`` in the temporary directory, which must be this
user's own and closed to others: a folder another user made or can write
is refused, so nobody else can swap the copy a job ships). A session's
folder is locked (flock on the folder itself) by the process that ships
from it for as long as it runs; it is made under a hidden name, locked,
then renamed into place, so no other process ever sees it unlocked while
it is in use. Each ship removes the session folders whose lock nobody
holds (sessions that are over, in any process or PID namespace that shares
the folder) and this process's earlier sessions' folders, and the process
removes its own when it exits.
"""
import fcntl
import atexit
import hashlib
import os
import shutil
import sqlite3
import tempfile
import threading

from ._catalog_file import open_read_only, signature as catalog_signature
from ._errors import GeofenceError

_lock = threading.Lock()
# This process's session folders and the descriptor that holds each one's lock.
_alive = {}
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
    # The command line's busy timeout: a writer's lock is waited for, then refused in words.
    source = open_read_only(path, timeout=10)
    try:
        # The read transaction taken first, within the timeout: the backup then never meets a
        # lock (Python's backup retries a locked source without end: a writer in this very
        # process, a notebook's open transaction, would never let go).
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
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
    # Spark reads what it ships as a URI: a '#' or '?' in the name would end its path.
    copy = os.path.join(folder, f"{_safe(stem)}-{h.hexdigest()[:16]}{_safe(suffix[1:]) and '.' + _safe(suffix[1:])}")
    if os.path.exists(copy):
        _remove(partial)
    else:
        os.replace(partial, copy)
    return copy


def base_folder():
    """The folder of every session's copies for this user, made (mode 700)
    if missing; refused unless it is a folder of this user's that nobody
    else may write (group and others without write permission)."""
    base = os.path.join(tempfile.gettempdir(), f"geofence-spark-{os.getuid()}")
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(base)
    if not os.path.isdir(base) or os.path.islink(base) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise GeofenceError(f"{base}: the folder of the catalog copies geofence.spark ships is not this user's own, closed "
                            f"to others (owner uid {st.st_uid}, mode {st.st_mode & 0o7777:o}): another user could replace "
                            "what a job ships; remove it, or set TMPDIR to a folder of your own")
    return base


def _session_folder(session):
    """``PID-SESSION`` under ``base_folder()``, made if missing and locked
    for this process's life; the folders of sessions that are over removed
    first."""
    base = base_folder()
    name = f"{os.getpid()}-{_safe(session)}"
    for other in os.listdir(base):
        if other != name and not other.startswith(".") and _over(other):
            shutil.rmtree(os.path.join(base, other), ignore_errors=True)
            mine = _alive.pop(other, None)
            if mine is not None:
                os.close(mine)
    folder = os.path.join(base, name)
    if name not in _alive:
        making = tempfile.mkdtemp(prefix=".making-", dir=base)
        fd = os.open(making, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        # A folder of this name is a gone process's (its pid reused, the session id its own).
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(making, folder)
        _alive[name] = fd
        atexit.register(shutil.rmtree, folder, True)
    return folder


def _over(name):
    """Whether the session of the folder ``name`` can run no more tasks: an
    earlier session of this process (one SparkContext runs in a process at a
    time), or a folder no process holds locked (its process is gone,
    whatever PID namespace it ran in)."""
    if name in _alive:
        return True  # the caller keeps the current session's folder out of this
    try:
        fd = os.open(os.path.join(base_folder(), name), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _safe(session):
    """A session id as a file name: letters, digits, '-' and '_' kept."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(session))


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
