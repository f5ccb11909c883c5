"""A user's catalog file, read from Python as the command line reads it.

    conn = open_read_only("fences.db")          # sqlite3 connection, read-only, never writes the file
    signature("fences.db")                      # changes whenever what a reader would see may have changed

``open_read_only`` opens the file with ``mode=ro``. A WAL catalog in a
folder this user cannot write has no -shm file and SQLite cannot read it
that way; then, as ``geofence`` does (docs/operations.md, read-only
catalogs), it is read as ``immutable=1`` when nothing committed can be
outside the file: no -wal file with pages in it, no -journal left by a
writer that stopped. Otherwise it is refused, saying what to ask of the
file's owner, since an immutable read would silently miss committed pages
or show uncommitted ones.

``signature`` tells one version of a catalog from another without opening
it (the Spark door's shipped snapshot, an executor's opened task): the
file's and its -wal's identity, size and modification time, and the
counters SQLite writes in each header at every change, so that a change
of the same size within one tick of the file system's clock is still seen.
"""
import os
import sqlite3
from urllib.request import pathname2url

from ._errors import GeofenceError

# SQLite's primary result codes for a file it cannot open as asked.
_SQLITE_READONLY, _SQLITE_CANTOPEN = 8, 14


def open_read_only(path, timeout=10):
    """A read-only sqlite3 connection to the database file at ``path``
    (a plain path, checked to exist), in autocommit; raises GeofenceError
    naming the file when it cannot be read without writing beside it."""
    if not os.path.isfile(path):
        raise GeofenceError(f"{path}: no such catalog file")
    uri = f"file:{pathname2url(path)}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.Error as e:
        conn.close()
        if getattr(e, "sqlite_errorcode", 0) & 0xFF not in (_SQLITE_READONLY, _SQLITE_CANTOPEN):
            raise GeofenceError(f"{path}: cannot read it as a SQLite database: {e}") from None
    _refuse_unseen_changes(path)
    conn = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=timeout, isolation_level=None)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        conn.close()
        raise GeofenceError(f"{path}: cannot read it as a SQLite database: {e}") from None
    return conn


def _refuse_unseen_changes(path):
    """Raises when an immutable read of ``path`` would not show what its
    writers committed (pages in a -wal) or would show what they did not
    (a -journal of a transaction that never ended)."""
    real = os.path.realpath(path)   # side files sit beside the file a link leads to
    if _size(real + "-journal") > 0:
        raise GeofenceError(f"{path}: a writer stopped in the middle of a transaction and left its -journal file; SQLite must "
                            "roll the catalog back before it can be read, and cannot here (no write access): ask its owner "
                            f"to open it once (sqlite3 {path} 'PRAGMA quick_check'), or copy it with its -journal to a "
                            "folder you can write")
    if _size(real + "-wal") > 0:
        raise GeofenceError(f"{path}: the catalog has committed changes in its -wal file that SQLite cannot read here "
                            "(no -shm file can be made beside it): ask its owner to checkpoint it "
                            f"(sqlite3 {path} 'PRAGMA wal_checkpoint(TRUNCATE)'), or copy it with its -wal to a folder "
                            "you can write")


def signature(path):
    """A value equal for two looks at ``path`` only if no reader could see
    a difference between them (see the module's text)."""
    out = []
    real = os.path.realpath(path)   # SQLite keeps the -wal beside the file a link leads to
    for p, counters in ((real, ((24, 4), (92, 4))), (real + "-wal", ((12, 12),))):
        try:
            st = os.stat(p)
        except FileNotFoundError:
            out.append(None)
            continue
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, _header_bytes(p, counters)))
    return tuple(out)


def _header_bytes(path, spans):
    """The bytes at (offset, length) ``spans`` of the file's header: the
    database's change counter and version-valid-for number (offsets 24 and
    92), the -wal's checkpoint sequence and salts (offset 12): each moves
    when SQLite changes the file. Empty when the file cannot be read."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError:
        return b""
    return b"".join(head[o:o + n] for o, n in spans)


def _size(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
