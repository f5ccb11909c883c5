"""How a pandas DataFrame (or a geopandas GeoDataFrame) of fixes becomes the
file the ``geofence`` command reads: fix columns (``--fixes F.fixcols``), a
binary form that holds each column whole (docs/inputs.md).

A float column of lat, lon or accuracy_m is written as its doubles: a coordinate
arrives with the bits it had (1e-300 and 0.1 + 0.2 as they were; a float32 as
the double of its shortest decimal, as in a CSV file), and
no number is formatted as text only to be parsed back, which cost the caller
more than the run itself (benchmarks/results.md). Any other column is written
as text, each value as the command would read it from a CSV field; a missing
value (NaN, None, NA) is missing, which makes that fix invalid, as an empty
CSV field does.
"""
import re
import struct
import sys

from ._errors import GeofenceError

_MAGIC = b"GFFIXES1"
_FLOAT64, _TEXT = 1, 2


def fix_columns(fixes, needed, optional=(), names=None):
    """The columns of ``fixes`` the command reads, as a dict engine field ->
    pandas Series in the frame's row order: the ``needed`` ones (GeofenceError
    names what is missing) and those of ``optional`` that are there.
    ``names`` maps an engine field to the frame's column that holds it
    (``{"lat": "latitude"}``); a field not in it is read from its own name. A
    GeoDataFrame's Point geometry gives lat and lon (see ``_points``)."""
    if not hasattr(fixes, "columns") or not hasattr(fixes, "itertuples"):
        raise GeofenceError(f"fixes: a pandas DataFrame is needed, got {type(fixes).__name__}")
    names = column_names(names)
    wanted = (*needed, *optional)
    twice = sorted({c for c in fixes.columns[fixes.columns.duplicated()] if c in {names[f] for f in wanted}})
    if twice:
        raise GeofenceError(f"fixes: column(s) {', '.join(twice)} appear more than once; which holds the fix is anyone's guess")
    columns = {f: fixes[names[f]] for f in wanted if names[f] in fixes.columns}
    if _is_geodataframe(fixes):
        columns.update(_points(fixes, columns))
    missing = [names[f] for f in needed if f not in columns]
    if missing:
        raise GeofenceError(f"fixes: missing column(s) {', '.join(missing)}; need {', '.join(names[f] for f in needed)}"
                            + ("" if "subject_id" in needed else " (or a GeoDataFrame's Point geometry)")
                            + (f"; {', '.join(names[f] for f in optional)} if given" if optional else "")
                            + ("; accuracy_m=METRES gives fixes without one an accuracy" if names["accuracy_m"] in missing else "")
                            + ("" if set(names.values()) != set(names) else "; columns={'lat': 'latitude', …} names your own")
                            + f"; the frame's columns: {', '.join(map(repr, list(fixes.columns)[:20]))}")
    return columns


FIELDS = ("subject_id", "ts", "lat", "lon", "accuracy_m")


def column_names(names):
    """Every engine field's column in the frame: ``names`` (a dict field ->
    column, or None) over the fields' own names. A key that is no field, or
    a value that is not a column name, is a GeofenceError."""
    if names is None:
        return {f: f for f in FIELDS}
    if not isinstance(names, dict):
        raise GeofenceError(f"columns: a dict of field -> column is needed ({{'lat': 'latitude'}}), got {type(names).__name__}")
    unknown = [k for k in names if k not in FIELDS]
    if unknown:
        raise GeofenceError(f"columns: {', '.join(map(repr, unknown))} is no field of a fix; the fields are {', '.join(FIELDS)}")
    bad = [k for k, v in names.items() if not isinstance(v, str) or not v]
    if bad:
        raise GeofenceError(f"columns: the column of {', '.join(bad)} must be a column name (non-empty text)")
    # The command reads --columns as FIELD=COLUMN pairs, trimmed, split at ",FIELD=".
    unsendable = [v for v in names.values() if v != v.strip() or re.search(r",\s*(?:" + "|".join(FIELDS) + r")\s*=", v)]
    if unsendable:
        raise GeofenceError(f"columns: the column name {unsendable[0]!r} cannot be named to the command "
                            "(spaces at its ends, or ',FIELD=' inside): rename the frame's column")
    return {f: names.get(f, f) for f in FIELDS}


def columns_options(names):
    """The command's --columns options for ``names`` (one per renamed field)."""
    return [a for f, c in column_names(names).items() if c != f for a in ("--columns", f"{f}={c}")]


def write_fixes(columns, path, names=None):
    """Writes ``columns`` (from ``fix_columns``) to ``path`` as fix columns
    named as ``names`` says (the frame's own names, which the command is told
    with ``columns_options``, so its errors name them), and returns the
    fields of each column written as text (a list of str per engine field; a
    float column's Series is not turned into text). A field that is not
    Unicode text (a lone surrogate) is a GeofenceError naming its row,
    counted from 1."""
    import numpy
    names = column_names(names)
    parts, texts = [], {}
    for field, series in columns.items():
        if series.dtype.kind == "f" and isinstance(series.dtype, numpy.dtype) and field in ("lat", "lon", "accuracy_m"):
            parts.append((names[field], _FLOAT64, [_doubles(series.to_numpy())]))
        else:
            texts[field] = _fields(series, field)
            parts.append((names[field], _TEXT, _text_column(texts[field], names[field])))
    rows = len(next(iter(columns.values()))) if columns else 0
    with open(path, "wb") as f:
        f.write(_MAGIC + struct.pack("<QI", rows, len(parts)))
        for name, kind, data in parts:
            encoded = name.encode("utf-8")
            f.write(struct.pack("<I", len(encoded)) + encoded + struct.pack("<BQ", kind, sum(d.nbytes for d in data)))
        for _, _, data in parts:
            for d in data:
                f.write(memoryview(d).cast("B"))
    return texts


def _doubles(values):
    """A float column as the doubles the command reads: a float64 as it is;
    a narrower float as the double of its shortest decimal (float32 34.1 is
    34.1, as its text in a CSV file and a 32-bit GDAL field give it, not
    34.099998474121094)."""
    import numpy
    if values.dtype.itemsize < 8:
        values = values.astype(str).astype(numpy.float64)
    return numpy.ascontiguousarray(values, dtype="<f8")


def _text_column(values, name):
    """A text column's data: rows + 1 byte offsets, then the UTF-8 bytes."""
    import numpy
    joined = "".join(values)
    if joined.isascii():
        blob, lengths = joined.encode("ascii"), numpy.fromiter(map(len, values), dtype="<u8", count=len(values))
    else:
        try:
            encoded = list(map(str.encode, values))
        except UnicodeEncodeError as e:
            row = next(k for k, v in enumerate(values) if not _encodes(v)) + 1
            raise GeofenceError(f"fixes: row {row} holds text that is not Unicode text ({e.reason}: "
                                f"{values[row - 1][e.start:e.end]!r} in column {name})") from None
        blob, lengths = b"".join(encoded), numpy.fromiter(map(len, encoded), dtype="<u8", count=len(encoded))
    offsets = numpy.zeros(len(values) + 1, dtype="<u8")
    numpy.cumsum(lengths, out=offsets[1:])
    return [offsets, numpy.frombuffer(blob, dtype=numpy.uint8)]


def _encodes(value):
    try:
        value.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


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
