"""geofence.arrow: judgement in this process over Arrow data, no files.

    import pyarrow as pa, geofence.arrow
    notes, states, counts = geofence.arrow.judge_batches("fences.db", fixes_table, states_table)

The engine runs inside this process through libgeofence's task ABI
(gf_task_open / gf_task_judge, Sources/GeofenceExtension/TaskEntry.swift),
called with ctypes; tables cross as Arrow C Data Interface structs
(pyarrow's ``_export_to_c`` / ``_import_from_c``), without a copy into
another format. The catalog is opened read-only and never written; it is
prepared once per process and catalog path and kept (``task``), so a Spark
executor's Python worker, reused between tasks, pays for it once.

Columns in (others are ignored): fixes ``subject_id`` (string), ``ts``
(string as ``geofence judge`` reads it, or a timestamp with a time zone),
``lat``, ``lon``, ``accuracy_m`` (numbers), ``order`` (int64, optional: the
input order that breaks ties of equal time; without it, the rows' order);
states ``subject_id``, ``record`` (a subject record, docs/subject-record.md).
"""
import ctypes
import os
import threading

from . import GeofenceError, extension_path
from ._catalog_file import signature as _signature

# What gf_task_judge counts, in the order it fills its counters.
COUNTERS = ("fixes", "judged", "stale", "invalid", "transitions", "notifications", "filtered")


class _ArrowSchema(ctypes.Structure):
    """struct ArrowSchema of the Arrow C Data Interface."""
    _fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
                ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


class _ArrowArray(ctypes.Structure):
    """struct ArrowArray of the Arrow C Data Interface."""
    _fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
                ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64), ("buffers", ctypes.c_void_p),
                ("children", ctypes.c_void_p), ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


_lock = threading.Lock()
_library = None
_tasks = {}


def library_path() -> str:
    """The libgeofence.so this module calls: $GEOFENCE_LIBRARY when set
    (a build of one's own), else the one inside the package."""
    return os.environ.get("GEOFENCE_LIBRARY") or extension_path()


def _lib():
    """libgeofence loaded once per process, with the task ABI's signatures declared."""
    global _library
    if _library is None:
        lib = ctypes.CDLL(library_path())
        P = ctypes.c_void_p
        lib.gf_task_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
        lib.gf_task_open.restype = P
        lib.gf_task_judge.argtypes = [P] * 9 + [ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(P)]
        lib.gf_task_judge.restype = ctypes.c_int
        lib.gf_task_close.argtypes = [P]
        lib.gf_task_close.restype = None
        lib.gf_free_error.argtypes = [P]
        lib.gf_free_error.restype = None
        lib.gf_task_area_count.argtypes = [P]
        lib.gf_task_area_count.restype = ctypes.c_int64
        _library = lib
    return _library


def _take_error(lib, err) -> str:
    """The message libgeofence put in ``err``, freed."""
    if not err.value:
        return "libgeofence failed without a message"
    try:
        return ctypes.string_at(err.value).decode("utf-8", "replace")
    finally:
        lib.gf_free_error(err)


class Task:
    """A catalog opened read-only and prepared, for any number of ``judge``
    calls (one at a time; libgeofence serializes them). Raises GeofenceError
    naming the file when it is no catalog or cannot be read."""

    def __init__(self, catalog):
        self._lib = _lib()
        err = ctypes.c_void_p()
        self._handle = self._lib.gf_task_open(os.fsencode(os.path.abspath(os.fspath(catalog))), ctypes.byref(err))
        if not self._handle:
            raise GeofenceError(_take_error(self._lib, err))

    @property
    def area_count(self) -> int:
        return self._lib.gf_task_area_count(self._handle)

    def judge(self, fixes, states=None):
        """Judges ``fixes`` (a pyarrow Table or RecordBatch) with the subjects'
        ``states`` (Table, RecordBatch or None): returns (notifications
        Table in canonical order, states Table in subject_id byte order,
        counters dict). Raises GeofenceError naming the row and subject of
        bad input (a null subject_id, a record this engine does not write)."""
        import pyarrow as pa
        fixes_batch = _one_batch(fixes)
        arrays = [_ArrowArray() for _ in range(4)]
        schemas = [_ArrowSchema() for _ in range(4)]
        fixes_batch._export_to_c(ctypes.addressof(arrays[0]), ctypes.addressof(schemas[0]))
        state_ptrs = [None, None]
        if states is not None:
            _one_batch(states)._export_to_c(ctypes.addressof(arrays[1]), ctypes.addressof(schemas[1]))
            state_ptrs = [ctypes.addressof(arrays[1]), ctypes.addressof(schemas[1])]
        counters = (ctypes.c_int64 * len(COUNTERS))()
        err = ctypes.c_void_p()
        rc = self._lib.gf_task_judge(self._handle, ctypes.addressof(arrays[0]), ctypes.addressof(schemas[0]), *state_ptrs,
                                     ctypes.addressof(arrays[2]), ctypes.addressof(schemas[2]),
                                     ctypes.addressof(arrays[3]), ctypes.addressof(schemas[3]), counters, ctypes.byref(err))
        if rc != 0:
            raise GeofenceError(_take_error(self._lib, err))
        notes = pa.RecordBatch._import_from_c(ctypes.addressof(arrays[2]), ctypes.addressof(schemas[2]))
        new_states = pa.RecordBatch._import_from_c(ctypes.addressof(arrays[3]), ctypes.addressof(schemas[3]))
        return (pa.Table.from_batches([notes]), pa.Table.from_batches([new_states]), dict(zip(COUNTERS, counters)))

    def close(self):
        """Frees the prepared catalog; the task cannot judge afterwards."""
        if self._handle:
            self._lib.gf_task_close(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone first
            pass


def task(catalog) -> Task:
    """The Task of ``catalog`` for this process, opened on first use and kept
    (a Spark executor's reused Python worker opens each catalog once); opened
    again when the file has changed since (another file put in its place, an
    area imported) or the kept one was closed, so a task never judges against
    an older copy of the catalog than the file now holds."""
    key = os.path.abspath(os.fspath(catalog))
    signature = _signature(key)
    with _lock:
        kept = _tasks.get(key)
        if kept is None or kept[0] != signature or not kept[1]._handle:
            # The old Task is freed when its last user lets go of it (__del__), not closed
            # here under a thread that may still be judging with it.
            _tasks[key] = (signature, Task(key))
        return _tasks[key][1]


def judge_batches(catalog, fixes_table, states_table=None):
    """Judges ``fixes_table`` with ``states_table`` against ``catalog`` (opened
    read-only, kept per process: ``task``): returns (notifications,
    states, counters) as ``Task.judge`` does."""
    return task(catalog).judge(fixes_table, states_table)


def _one_batch(data):
    """``data`` (a Table or RecordBatch) as one RecordBatch, string views cast to strings."""
    import pyarrow as pa
    if isinstance(data, pa.RecordBatch):
        table = pa.Table.from_batches([data])
    elif isinstance(data, pa.Table):
        table = data
    else:
        raise GeofenceError(f"expected a pyarrow Table or RecordBatch, got {type(data).__name__}")
    views = [i for i, f in enumerate(table.schema) if pa.types.is_string_view(f.type)]
    for i in views:
        table = table.set_column(i, table.schema[i].name, table.column(i).cast(pa.string()))
    table = table.combine_chunks()
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in table.schema], schema=table.schema)
