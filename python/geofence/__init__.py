"""geofence: a geofencing engine inside SQLite, from Python.

    import sqlite3, geofence
    conn = sqlite3.connect("fences.db")
    geofence.load(conn)               # SpatiaLite first when it is installed, then the engine
    conn.execute("SELECT area_id FROM gf_areas WHERE gf_contains(geom, 35.715, 139.773, 20) = 1")

    notes = geofence.judge("fences.db", fixes_df)     # a pandas DataFrame of notifications
    pairs = geofence.locate("fences.db", fixes_df)    # which areas hold each fix
    state = geofence.export_state("fences.db")         # subjects' state as a pyarrow Table (import_state: back in)

The package carries the loadable extension (``extension_path()``) and the
``geofence`` command (``binary_path()``, also installed on PATH). Neither needs
a Swift toolchain; both use the machine's libsqlite3, and ``load`` uses its
``mod_spatialite`` when present.

How it works: ``load`` calls the connection's own extension loader (sqlite3 or
apsw); ``judge`` and ``locate`` write the DataFrame to a temporary CSV
(_frames.py), run the ``geofence`` command on it, and read its CSV output back
(_results.py), so they give exactly what the command gives, with the rows
labelled by the caller's index.
"""
import os
import signal
import subprocess
import tempfile
from pathlib import Path

from ._errors import GeofenceError, GeofenceWarning
from ._state import export_state, import_state

__version__ = "0.1.0"
__all__ = ["GeofenceError", "GeofenceWarning", "binary_path", "export_state", "extension_path", "import_state", "judge", "load",
           "locate", "run"]

_HERE = Path(__file__).resolve().parent

# Columns of a fix, in the order the command reads them.
FIX_COLUMNS = ("subject_id", "ts", "lat", "lon", "accuracy_m")


def extension_path() -> str:
    """The path of the loadable SQLite extension inside this package."""
    return str(_HERE / "libgeofence.so")


def binary_path() -> str:
    """The path of the ``geofence`` command inside this package."""
    return str(_HERE / "bin" / "geofence")


def load(conn, spatialite: bool = True) -> None:
    """Loads SpatiaLite (when installed and not loaded yet) and the engine into
    ``conn``, a ``sqlite3.Connection`` or an ``apsw.Connection``, and leaves
    the connection's busy timeout as the caller set it (``timeout=30`` stays
    30 s; loading mod_spatialite sets it to 5 s, and docs/sql.md promises
    writers wait the connection's own timeout).

    SpatiaLite is only needed to write areas through SQL; every gf_ function
    works without it. Raises GeofenceError when this Python's sqlite3 module was
    built without extension loading (Debian's /usr/bin/python3 has it; apsw
    always does)."""
    enable = getattr(conn, "enable_load_extension", None)
    if enable is None:
        raise GeofenceError(
            "this Python's sqlite3 module cannot load extensions (built without "
            "enable_load_extension); use Debian's /usr/bin/python3, or apsw")
    timeout = _busy_timeout(conn)
    enable(True)
    try:
        if spatialite and not _has_spatialite(conn):
            try:
                _load(conn, "mod_spatialite")
            except Exception:
                pass  # not installed: the gf_ functions work without it
        _load(conn, extension_path())
    finally:
        enable(False)
        if _busy_timeout(conn) != timeout:
            list(conn.execute(f"PRAGMA busy_timeout = {int(timeout)}"))


def _busy_timeout(conn) -> int:
    """The connection's busy timeout in milliseconds (sqlite3 and apsw alike)."""
    return int(list(conn.execute("PRAGMA busy_timeout"))[0][0])


def _load(conn, path):
    # sqlite3 and apsw both name it load_extension(path[, entry]).
    conn.load_extension(path)


def _has_spatialite(conn) -> bool:
    try:
        list(conn.execute("SELECT spatialite_version()"))
        return True
    except Exception:
        return False


def run(*args, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the packaged ``geofence`` command with ``args``; raises GeofenceError
    with its message when it fails and ``check`` is true."""
    # In a session of its own, so that a Ctrl-C reaches it once, from here:
    # on SIGINT the command rolls its transaction back, which it is given
    # time to do (subprocess.run would kill it mid-rollback, leaving a hot
    # journal that locks out readers who cannot write the folder).
    with subprocess.Popen([binary_path(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, start_new_session=True) as child:
        try:
            out, err = child.communicate()
        except BaseException:
            child.send_signal(signal.SIGINT)
            child.wait()
            raise
    p = subprocess.CompletedProcess(child.args, child.returncode, out, err)
    if check and p.returncode != 0:
        raise GeofenceError(p.stderr.strip() or f"geofence exited {p.returncode}")
    return p


def judge(catalog_path, fixes, *, explain: bool = False, device_filter: bool = False, columns=None, time_unit=None,
          accuracy_m=None):
    """Judges ``fixes`` (a pandas DataFrame with columns subject_id, ts, lat,
    lon, accuracy_m, or a GeoDataFrame whose Point geometry gives lat and lon;
    ts ISO 8601 with an offset, or Unix seconds) against the catalog, updating
    its stay state as ``geofence judge`` does, and returns this run's
    notifications as a DataFrame in canonical order (the columns of ``geofence
    judge --out``), each row labelled with the index label of the fix that
    gave it. The run's summary line is in ``frame.attrs["summary"]``; when
    some fixes were invalid (a time without an offset, say) or stale, a
    GeofenceWarning says so, with the reason the first invalid fix was (every
    reason is in the catalog's gf_explain table with ``explain=True``).

    A feed as it comes, as the command's options take it (docs/inputs.md):
    ``columns`` names the frame's column of a field (``{"subject_id":
    "device_id", "lat": "latitude"}``; errors then name your columns),
    ``time_unit="ms"`` reads numeric times as epoch milliseconds (pandas'
    ``to_json``), and ``accuracy_m=10`` is the accuracy of every fix without
    one (the accuracy column may then be absent)."""
    from ._frames import columns_options, fix_columns, write_fixes  # numpy and pandas only for the frame helpers
    from ._results import judge_index, read_csv, summarized
    extra = (["--explain"] if explain else []) + (["--device-filter"] if device_filter else []) + _feed_options(columns, time_unit, accuracy_m)
    needed = FIX_COLUMNS if accuracy_m is None else FIX_COLUMNS[:4]
    frame_columns = fix_columns(fixes, needed, () if accuracy_m is None else ("accuracy_m",), names=columns)
    with tempfile.TemporaryDirectory(prefix="geofence-") as tmp:
        fixes_file = Path(tmp) / "fixes.fixcols"
        sent = write_fixes(frame_columns, fixes_file, names=columns)
        out = Path(tmp) / "notifications.csv"
        done = run("judge", _path(catalog_path), "--fixes", fixes_file, "--out", out, *columns_options(columns), *extra)
        frame = read_csv(out)
    notes = judge_index(frame, fixes, frame_columns, sent, accuracy_m=accuracy_m, time_unit=time_unit or "s",
                        zone=lambda: _local_zone(catalog_path))
    return summarized(notes, done, r"(\d+) stale, (\d+) invalid", hint=_naive_hint(frame_columns.get("ts")))


def locate(catalog_path, fixes, *, confidence=None, columns=None, accuracy_m=None):
    """For every fix of ``fixes`` (a DataFrame with lat and lon columns, or a
    GeoDataFrame's Point geometry, and accuracy_m if given, else
    ``accuracy_m``'s value, else 0, as ``geofence locate --fixes``; other
    columns are ignored), the areas that contain it or are undecided: a
    DataFrame with columns row (the fix's position in ``fixes``, from 1),
    area_id, verdict, each row labelled with the fix's index label. Nothing
    in the catalog changes. ``columns`` names the frame's columns as for
    ``judge``. The summary line is in ``frame.attrs["summary"]``; when some
    fixes were invalid, a GeofenceWarning says how many (they have no pairs)."""
    from ._frames import columns_options, fix_columns, write_fixes
    from ._results import locate_index, read_csv, summarized
    extra = (["--confidence", confidence] if confidence is not None else []) + _feed_options(columns, None, accuracy_m)
    frame_columns = fix_columns(fixes, ("lat", "lon"), ("accuracy_m",), names=columns)
    with tempfile.TemporaryDirectory(prefix="geofence-") as tmp:
        fixes_file = Path(tmp) / "fixes.fixcols"
        write_fixes(frame_columns, fixes_file, names=columns)
        out = Path(tmp) / "pairs.csv"
        done = run("locate", _path(catalog_path), "--fixes", fixes_file, "--out", out, *columns_options(columns), *extra)
        frame = read_csv(out)
    return summarized(locate_index(frame, fixes), done, r"\((\d+) invalid\)")


def _feed_options(columns, time_unit, accuracy_m):
    """The command's options for a feed's time unit and default accuracy,
    each checked here first, so that an error names the argument."""
    import math
    if time_unit is not None and time_unit not in ("s", "ms"):
        raise GeofenceError(f"time_unit: 's' (Unix seconds) or 'ms' (epoch milliseconds), got {time_unit!r}")
    if accuracy_m is not None:
        try:
            usable = math.isfinite(float(accuracy_m)) and float(accuracy_m) >= 0
        except (TypeError, ValueError):
            usable = False
        if not usable:
            raise GeofenceError(f"accuracy_m: the accuracy in metres (a finite number, 0 or more) of fixes without one, got {accuracy_m!r}")
    return ((["--time-unit", time_unit] if time_unit is not None else [])
            + (["--accuracy-m", repr(float(accuracy_m))] if accuracy_m is not None else []))


def _local_zone(catalog_path):
    """The zone the command reads a catalog's times without an offset in (its
    default_timezone once set to a zone other than UTC; behaviour §6), or
    None when it refuses them."""
    import sqlite3
    from urllib.request import pathname2url
    conn = sqlite3.connect("file:" + pathname2url(_path(catalog_path)) + "?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM gf_settings WHERE key = 'default_timezone'").fetchone()
    finally:
        conn.close()
    return row[0] if row and row[0] != "UTC" else None


def _naive_hint(ts):
    """What to say of a ts column of naive datetime64 values, which are
    written without an offset (and so refused, or read as local time in the
    catalog's zone): pandas' read_json makes one from epoch times, which are
    UTC. None for any other column."""
    import pandas
    if ts is None or not pandas.api.types.is_datetime64_dtype(ts.dtype) or getattr(ts.dtype, "tz", None) is not None:
        return None
    return ("ts holds datetimes without a time zone, written without an offset; if they are UTC "
            "(pandas' read_json makes such a column from epoch times), say so: fixes['ts'] = fixes['ts'].dt.tz_localize('UTC')")


def _path(p) -> str:
    """An absolute path, so a name beginning with '-' is never read as an option."""
    return os.path.abspath(os.fspath(p))
