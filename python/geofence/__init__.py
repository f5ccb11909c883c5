"""geofence: a geofencing engine inside SQLite, from Python.

    import sqlite3, geofence
    conn = sqlite3.connect("fences.db")
    geofence.load(conn)               # SpatiaLite first when it is installed, then the engine
    conn.execute("SELECT area_id FROM gf_areas WHERE gf_contains(geom, 35.715, 139.773, 20) = 1")

    notes = geofence.judge("fences.db", fixes_df)     # a pandas DataFrame of notifications
    pairs = geofence.locate("fences.db", fixes_df)    # which areas hold each fix

The package carries the loadable extension (``extension_path()``) and the
``geofence`` command (``binary_path()``, also installed on PATH). Neither needs
a Swift toolchain; both use the machine's libsqlite3, and ``load`` uses its
``mod_spatialite`` when present.

How it works: ``load`` calls the connection's own extension loader (sqlite3 or
apsw); ``judge`` and ``locate`` write the DataFrame to a temporary CSV, run the
``geofence`` command on it, and read its CSV output back, so they give exactly
what the command gives.
"""
import os
import re
import signal
import subprocess
import tempfile
import warnings
from pathlib import Path

__version__ = "0.1.0"

_HERE = Path(__file__).resolve().parent

# Columns of a fix, in the order the command reads them.
FIX_COLUMNS = ("subject_id", "ts", "lat", "lon", "accuracy_m")


class GeofenceError(RuntimeError):
    """The geofence command or the extension refused the input; the message says why."""


class GeofenceWarning(UserWarning):
    """A run judged fewer fixes than it was given (invalid or stale ones were
    counted and skipped); the message is the run's summary line."""


def extension_path() -> str:
    """The path of the loadable SQLite extension inside this package."""
    return str(_HERE / "libgeofence.so")


def binary_path() -> str:
    """The path of the ``geofence`` command inside this package."""
    return str(_HERE / "bin" / "geofence")


def load(conn, spatialite: bool = True) -> None:
    """Loads SpatiaLite (when installed and not loaded yet) and the engine into
    ``conn``, a ``sqlite3.Connection`` or an ``apsw.Connection``.

    SpatiaLite is only needed to write areas through SQL; every gf_ function
    works without it. Raises GeofenceError when this Python's sqlite3 module was
    built without extension loading (Debian's /usr/bin/python3 has it; apsw
    always does)."""
    enable = getattr(conn, "enable_load_extension", None)
    if enable is None:
        raise GeofenceError(
            "this Python's sqlite3 module cannot load extensions (built without "
            "enable_load_extension); use Debian's /usr/bin/python3, or apsw")
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


def judge(catalog_path, fixes, *, explain: bool = False, device_filter: bool = False):
    """Judges ``fixes`` (a pandas DataFrame with columns subject_id, ts, lat,
    lon, accuracy_m; ts ISO 8601 with an offset or Unix seconds) against the
    catalog, updating its stay state as ``geofence judge`` does, and returns this
    run's notifications as a DataFrame in canonical order (the columns of
    ``geofence judge --out``). The run's summary line is in
    ``frame.attrs["summary"]``; when some fixes were invalid (a time without an
    offset, say) or stale, a GeofenceWarning says so (their reasons are in the
    catalog's gf_explain table with ``explain=True``)."""
    extra = (["--explain"] if explain else []) + (["--device-filter"] if device_filter else [])
    with tempfile.TemporaryDirectory(prefix="geofence-") as tmp:
        fixes_csv = _write_fixes(fixes, Path(tmp) / "fixes.csv")
        out = Path(tmp) / "notifications.csv"
        done = run("judge", _path(catalog_path), "--fixes", fixes_csv, "--out", out, "--quiet", *extra)
        frame = _read_csv(out)
    return _summarized(frame, done, r"(\d+) stale, (\d+) invalid")


def locate(catalog_path, fixes, *, confidence=None):
    """For every fix of ``fixes`` (a DataFrame as for ``judge``), the areas that
    contain it or are undecided, as ``geofence locate --fixes``: a DataFrame with
    columns row (the fix's position in ``fixes``, from 1), area_id, verdict.
    Nothing in the catalog changes. The summary line is in
    ``frame.attrs["summary"]``; when some fixes were invalid, a
    GeofenceWarning says how many (they have no pairs)."""
    extra = ["--confidence", confidence] if confidence is not None else []
    with tempfile.TemporaryDirectory(prefix="geofence-") as tmp:
        fixes_csv = _write_fixes(fixes, Path(tmp) / "fixes.csv")
        out = Path(tmp) / "pairs.csv"
        done = run("locate", _path(catalog_path), "--fixes", fixes_csv, "--out", out, *extra)
        frame = _read_csv(out)
    return _summarized(frame, done, r"\((\d+) invalid\)")


def _summarized(frame, done, skipped_pattern):
    """The command's summary line in ``frame.attrs["summary"]``, and a
    GeofenceWarning saying it when ``skipped_pattern`` counts fixes skipped."""
    summary = (done.stdout.strip() or done.stderr.strip()).splitlines()[-1:] or [""]
    frame.attrs["summary"] = summary[0]
    skipped = re.search(skipped_pattern, summary[0])
    if skipped and any(int(g) for g in skipped.groups()):
        warnings.warn(GeofenceWarning(summary[0]), stacklevel=3)
    return frame


def _write_fixes(fixes, path: Path) -> Path:
    if not hasattr(fixes, "columns") or not hasattr(fixes, "itertuples"):
        raise GeofenceError(f"fixes: a pandas DataFrame is needed, got {type(fixes).__name__}")
    missing = [c for c in FIX_COLUMNS if c not in fixes.columns]
    if missing:
        raise GeofenceError(f"fixes: missing column(s) {', '.join(missing)}; need {', '.join(FIX_COLUMNS)}")
    twice = sorted({c for c in fixes.columns[fixes.columns.duplicated()] if c in FIX_COLUMNS})
    if twice:
        raise GeofenceError(f"fixes: column(s) {', '.join(twice)} appear more than once; which holds the fix is anyone's guess")
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.write(",".join(FIX_COLUMNS) + "\n")
        for k, row in enumerate(fixes[list(FIX_COLUMNS)].itertuples(index=False, name=None), start=1):
            line = ",".join("" if _missing(v) else _csv_field(_text(v, column))
                            for v, column in zip(row, FIX_COLUMNS)) + "\n"
            try:
                f.write(line)
            except UnicodeEncodeError as e:
                raise GeofenceError(f"fixes: row {k} holds text that is not Unicode text ({e.reason}: {line[e.start:e.end]!r})") from None
    return path


def _text(v, column: str) -> str:
    """A value as the command reads it. A subject id that is a whole float is
    written as an integer: pandas turns a column of integer ids into floats as
    soon as one is missing, and subject 7 must not become subject "7.0"."""
    if column == "subject_id" and isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _csv_field(s: str) -> str:
    """A CSV field as the command reads it back: quoted when it holds a comma,
    quote or line end, or has a space or tab at either end (the command drops
    those from a bare field, and " u1 " is its own subject)."""
    if any(c in s for c in ',"\r\n') or s[:1] in (" ", "\t") or s[-1:] in (" ", "\t"):
        return '"' + s.replace('"', '""') + '"'
    return s


def _path(p) -> str:
    """An absolute path, so a name beginning with '-' is never read as an option."""
    return os.path.abspath(os.fspath(p))


def _missing(v) -> bool:
    if v is None or (isinstance(v, float) and v != v):
        return True
    try:  # pandas' NA and NaT
        import pandas
        return bool(pandas.isna(v))
    except (ImportError, TypeError, ValueError):
        return False


def _read_csv(path: Path):
    import pandas  # only the DataFrame helpers need it
    # Ids stay text ("007" is not 7); numbers are parsed by their own columns.
    frame = pandas.read_csv(path, dtype=str, keep_default_na=False)
    for column in ("lat", "lon", "accuracy_m"):
        if column in frame.columns:
            frame[column] = frame[column].astype(float)
    for column in ("row", "condition_id"):
        if column in frame.columns:
            frame[column] = frame[column].astype("int64")
    return frame
