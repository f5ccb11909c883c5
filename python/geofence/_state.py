"""Subjects' state as Arrow and Parquet (docs/state.md): the records of
`geofence state export|import` as a pyarrow Table of two string columns,
subject_id and record, the columns of geofence.spark's new_state frame.

    table = geofence.export_state("fences.db")                # every subject with state, subject_id byte order
    pyarrow.parquet.write_table(table, "state.parquet")
    geofence.import_state("other.db", "state.parquet")        # or a Table, or the folder a Spark job wrote
    geofence.import_state("other.db", table, replace=True)    # replaces the state subjects have

Both go through the engine's SQL functions (gf_state_export, gf_state_import)
in libgeofence loaded into a sqlite3 connection, so a record is read, checked
and stored as `geofence state export|import` do it: an exported record is
the text `state export` writes for the subject, byte for byte, and an import
is one transaction (every row, or nothing).
"""
import os
import sqlite3
from urllib.request import pathname2url

from ._catalog_file import open_read_only
from ._errors import GeofenceError

STATE_COLUMNS = ("subject_id", "record")


def export_state(catalog, subjects=None):
    """The state of every subject that has state in ``catalog`` (or of the
    ``subjects`` named, those without state left out) as a pyarrow Table
    (subject_id string, record string) in the byte order of the subject_id's
    UTF-8: the records `geofence state export` writes, byte for byte, read
    in one read transaction of a read-only connection."""
    import pyarrow as pa
    if isinstance(subjects, (str, bytes)):
        raise GeofenceError(f"subjects: expected a list of subject ids, got the single {type(subjects).__name__} "
                            f"{subjects!r} (write subjects=[{subjects!r}])")
    conn = _connect(catalog, readonly=True)
    try:
        conn.execute("BEGIN")
        if subjects is None:
            rows = conn.execute("SELECT subject_id, gf_state_export(subject_id) FROM gf_subject_state "
                                "ORDER BY subject_id").fetchall()
        else:
            ids = sorted({s.encode(): s for s in _subject_ids(subjects)}.items())
            rows = [(s, conn.execute("SELECT gf_state_export(?)", (s,)).fetchone()[0]) for _, s in ids]
        conn.execute("COMMIT")
    except sqlite3.Error as e:
        raise GeofenceError(f"{_path(catalog)}: cannot export the state: {e}") from None
    finally:
        conn.close()
    rows = [r for r in rows if r[1] is not None]
    return pa.table({"subject_id": pa.array([r[0] for r in rows], pa.string()),
                     "record": pa.array([r[1] for r in rows], pa.string())})


def _subject_ids(subjects):
    """``subjects`` as a list of strings; anything else is refused naming
    it (str() would make 7 the subject '7', and None the subject 'None')."""
    ids = list(subjects)
    for n, s in enumerate(ids, start=1):
        if not isinstance(s, str):
            raise GeofenceError(f"subjects, item {n}: {s!r} is a {type(s).__name__}; subject ids are strings")
    return ids


def import_state(catalog, state, replace=False):
    """Stores the records of ``state`` (a pyarrow Table or RecordBatch with
    columns subject_id and record, other columns ignored, or the path of a
    parquet file or folder of them, such as a Spark job's new_state written
    with ``.write.parquet``) as their subjects' state in ``catalog``, checked
    as `geofence state import` checks a line. A subject that has state
    already is refused unless ``replace``, which replaces its state. One
    transaction: a row refused (named by its position from 1 and its
    subject) leaves the catalog as it was. Returns how many were stored."""
    table, source = _table(state)
    ids, records = table.column("subject_id").to_pylist(), table.column("record").to_pylist()
    seen = {}
    for row, (subject, record) in enumerate(zip(ids, records), start=1):
        if subject is None or record is None:
            raise GeofenceError(f"{source}, row {row}: the {'subject_id' if subject is None else 'record'} is null")
        if subject.encode() in seen:
            raise GeofenceError(f"{source}, rows {seen[subject.encode()]} and {row}: subject {subject!r} twice "
                                "(state holds one record per subject)")
        seen[subject.encode()] = row
    conn = _connect(catalog, readonly=False)
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise GeofenceError(f"{_path(catalog)}: cannot begin writing the state: {e}") from None
        for row, (subject, record) in enumerate(zip(ids, records), start=1):
            _import_one(conn, (source, row, catalog), subject, record, replace)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return len(ids)


def _import_one(conn, where, subject, record, replace):
    """One row's gf_state_import, a refusal raised as GeofenceError naming
    the source, the row and the subject."""
    source, row, catalog = where
    try:
        if not replace and conn.execute("SELECT gf_state_export(?) IS NOT NULL", (subject,)).fetchone()[0]:
            raise GeofenceError(f"{source}, row {row}: subject {subject!r} already has state in {_path(catalog)}: "
                                "import_state(..., replace=True) replaces it")
        conn.execute("SELECT gf_state_import(?, ?, ?)", (subject, record, 1 if replace else 0)).fetchone()
    except sqlite3.Error as e:
        raise GeofenceError(f"{source}, row {row} (subject {subject!r}): {e}") from None


def _table(state):
    """``state`` as a Table of STATE_COLUMNS (strings) and the name errors
    give its rows: the file's path, or "state" for a table given."""
    import pyarrow as pa
    if isinstance(state, (str, os.PathLike)):
        import pyarrow.parquet as pq
        source = os.fspath(state)
        try:
            table = pq.read_table(source, columns=list(STATE_COLUMNS))
        except (OSError, pa.ArrowException) as e:
            raise GeofenceError(f"{source}: cannot read it as parquet of subject_id and record: {e}") from None
    elif isinstance(state, pa.RecordBatch):
        table, source = pa.Table.from_batches([state]), "state"
    elif isinstance(state, pa.Table):
        table, source = state, "state"
    else:
        raise GeofenceError(f"state: expected a pyarrow Table or RecordBatch or a parquet path, got {type(state).__name__}")
    missing = [c for c in STATE_COLUMNS if c not in table.column_names]
    if missing:
        raise GeofenceError(f"{source}: no column {', '.join(missing)} (state has subject_id and record)")
    # Strings only: a number cast to text would name another subject than the one it was exported as.
    for name in STATE_COLUMNS:
        kind = table.schema.field(name).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise GeofenceError(f"{source}: column {name} is {kind}, and must be strings (state export's text)")
    return table.select(list(STATE_COLUMNS)).cast(pa.schema([(c, pa.string()) for c in STATE_COLUMNS])), source


def _connect(catalog, readonly):
    """A sqlite3 connection to the catalog file with libgeofence loaded (the
    library geofence.arrow calls), in autocommit so transactions are ours;
    a missing file is refused, not created."""
    from .arrow import library_path
    path = _path(catalog)
    if readonly:
        conn = open_read_only(path)
    elif not os.path.isfile(path):
        raise GeofenceError(f"{path}: no such catalog file")
    else:
        conn = sqlite3.connect(f"file:{pathname2url(path)}?mode=rw", uri=True, timeout=10, isolation_level=None)
    try:
        conn.enable_load_extension(True)
        conn.load_extension(library_path())
        conn.enable_load_extension(False)
    except (AttributeError, sqlite3.Error) as e:
        conn.close()
        raise GeofenceError(f"cannot load libgeofence ({library_path()}) into this Python's sqlite3: {e}") from None
    try:
        # The engine's own check of the catalog (its schema version, its tables), and its words.
        conn.execute("SELECT gf_state_export('')").fetchone()
    except sqlite3.Error as e:
        conn.close()
        raise GeofenceError(f"{path}: {e}") from None
    return conn


def _path(p):
    return os.path.abspath(os.fspath(p))
