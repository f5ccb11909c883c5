"""How a pandas DataFrame (or a geopandas GeoDataFrame) of fixes becomes the
CSV file the ``geofence`` command reads.

Each column is turned into text in one vectorised pass, not row by row (the
writer is most of what the wrapper adds to the command's own time). A
number is written with the shortest digits that read back as the same double
(-0.0, 1e-300 and 0.1 + 0.2 arrive as they were): a coordinate may not change
on its way in. Text is quoted where the command would otherwise read it
differently (a comma, quote or line end inside; a space or tab at either end,
which the command drops from a bare field). A missing value is an empty field,
which makes that fix invalid, as in a CSV file.
"""
import re
import sys

from ._errors import GeofenceError

# A field the command would read differently unless it is quoted.
_NEEDS_QUOTES = re.compile(r'[,"\r\n]|^[ \t]|[ \t]$')
_SEP = "\x00"  # joins a column's fields for one search over all of them (no field holds it: the command refuses NUL)
_QUOTE_MARKS = (",", '"', "\r", "\n", _SEP + " ", _SEP + "\t", " " + _SEP, "\t" + _SEP)


def fix_columns(fixes, needed, optional=()):
    """The columns of ``fixes`` the command reads, as a dict name -> pandas
    Series in the frame's row order: the ``needed`` ones (GeofenceError names
    what is missing) and those of ``optional`` that are there. A
    GeoDataFrame's Point geometry gives lat and lon (see ``_points``)."""
    if not hasattr(fixes, "columns") or not hasattr(fixes, "itertuples"):
        raise GeofenceError(f"fixes: a pandas DataFrame is needed, got {type(fixes).__name__}")
    wanted = (*needed, *optional)
    twice = sorted({c for c in fixes.columns[fixes.columns.duplicated()] if c in wanted})
    if twice:
        raise GeofenceError(f"fixes: column(s) {', '.join(twice)} appear more than once; which holds the fix is anyone's guess")
    columns = {c: fixes[c] for c in wanted if c in fixes.columns}
    if _is_geodataframe(fixes):
        columns.update(_points(fixes, columns))
    missing = [c for c in needed if c not in columns]
    if missing:
        raise GeofenceError(f"fixes: missing column(s) {', '.join(missing)}; need {', '.join(needed)}"
                            + ("" if "subject_id" in needed else " (or a GeoDataFrame's Point geometry)")
                            + (f"; {', '.join(optional)} if given" if optional else ""))
    return columns


def write_fixes(columns, path):
    """Writes ``columns`` (from ``fix_columns``) to ``path`` as the command's
    CSV, and returns each column's fields as written, unquoted (a list of str
    per name). A field that is not Unicode text (a lone surrogate) is a
    GeofenceError naming its row, counted from 1."""
    fields = {name: _fields(series, name) for name, series in columns.items()}
    written = [_quoted(values) if columns[name].dtype.kind not in "fiu" else values for name, values in fields.items()]
    text = "\n".join([",".join(fields), *map(",".join, zip(*written))]) + "\n"
    del written
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        row = text.count("\n", 0, e.start)
        raise GeofenceError(f"fixes: row {row} holds text that is not Unicode text ({e.reason}: {text[e.start:e.end]!r})") from None
    with open(path, "wb") as f:
        f.write(data)
    return fields


def _fields(series, name):
    """A column's fields as the command reads them: a list of str, "" for a
    missing value. A float is written as Python's repr, the shortest digits
    that read back as the same double. A subject id that is a whole float is
    written as an integer: pandas turns a column of integer ids into floats
    as soon as one is missing, and subject 7 must not become subject "7.0"."""
    import numpy
    import pandas
    kind = series.dtype
    if kind.kind == "f" and isinstance(kind, numpy.dtype):
        values = series.to_numpy()
        out = list(map(repr, values.tolist()))
        if name == "subject_id":
            whole = numpy.isfinite(values) & (numpy.floor(values) == values) & (numpy.abs(values) < 2.0 ** 63)
            for k, v in zip(numpy.flatnonzero(whole).tolist(), values[whole].astype(numpy.int64).tolist()):
                out[k] = str(v)
        return _blanked(out, numpy.isnan(values))
    if kind.kind in "iu" and isinstance(kind, numpy.dtype):
        return list(map(str, series.to_numpy().tolist()))
    if pandas.api.types.is_datetime64_any_dtype(kind):
        return _blanked(series.astype(str).to_numpy(dtype=object).tolist(), series.isna().to_numpy())
    if pandas.api.types.infer_dtype(series, skipna=True) in ("string", "empty"):
        return series.to_numpy(dtype=object, na_value="").tolist()  # None, NaN, NA: ""
    missing = series.isna().to_numpy()
    return _blanked([_text(v, name) for v in series.to_numpy(dtype=object).tolist()], missing)


def _blanked(out, missing):
    """``out`` with "" where ``missing`` (a boolean array) holds."""
    import numpy
    for k in numpy.flatnonzero(missing).tolist():
        out[k] = ""
    return out


def _text(v, name):
    """One value of a column of mixed types, as ``_fields`` writes it."""
    if name == "subject_id" and isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _quoted(values):
    """``values`` (a list of str) with each field the command would read
    differently quoted, "" doubled inside. One search over the whole column
    first: most columns need no quotes at all."""
    joined = _SEP + _SEP.join(values) + _SEP
    if not any(mark in joined for mark in _QUOTE_MARKS):
        return values
    return ['"' + v.replace('"', '""') + '"' if _NEEDS_QUOTES.search(v) else v for v in values]


def _is_geodataframe(frame):
    geopandas = sys.modules.get("geopandas")  # a GeoDataFrame means geopandas is imported already
    return geopandas is not None and isinstance(frame, geopandas.GeoDataFrame)


def _points(frame, columns):
    """lat and lon from a GeoDataFrame's active geometry, in EPSG:4326
    (reprojected when the frame has another CRS; refused when it has none).
    A missing or empty geometry is a missing position (an invalid fix); any
    other shape than a Point is refused, naming its row. lat or lon columns
    of the frame must agree with the geometry: two positions for one fix
    leave which one counts to guesswork."""
    import numpy
    import pandas
    if frame.crs is None:
        raise GeofenceError("fixes: the GeoDataFrame's geometry has no CRS, so its coordinates could be in any units; "
                            "say which they are in (fixes.set_crs('EPSG:4326') for longitude, latitude in degrees)")
    geometry = frame.geometry
    if frame.crs.to_epsg() != 4326:
        geometry = geometry.to_crs("EPSG:4326")
    absent = (geometry.isna() | geometry.is_empty).to_numpy()
    kinds = geometry.geom_type.to_numpy(dtype=object)
    shapes = ~absent & (kinds != "Point")
    if shapes.any():
        k = int(shapes.argmax())
        raise GeofenceError(f"fixes: row {k + 1} (index {frame.index[k:k + 1].tolist()[0]!r}): the geometry is a {kinds[k]}; "
                            "a fix is a Point (longitude, latitude)")
    lon = numpy.where(absent, numpy.nan, geometry.x.to_numpy(dtype=float, na_value=numpy.nan))
    lat = numpy.where(absent, numpy.nan, geometry.y.to_numpy(dtype=float, na_value=numpy.nan))
    points = {"lat": pandas.Series(lat, index=frame.index), "lon": pandas.Series(lon, index=frame.index)}
    for name, series in points.items():
        given = columns.get(name)
        if given is not None and not _same(given, series):
            raise GeofenceError(f"fixes: the {name} column and the geometry give different positions; "
                                f"drop the {name} column or make the geometry from it")
    return points


def _same(given, series):
    import numpy
    import pandas
    values = pandas.to_numeric(given, errors="coerce").to_numpy(dtype=float, na_value=numpy.nan)
    return bool(numpy.array_equal(values, series.to_numpy(), equal_nan=True))
