"""How the command's output comes back to the caller: its CSV read into a
DataFrame whose rows carry the caller's index labels, its summary line in
``frame.attrs["summary"]``, and a GeofenceWarning when fixes were skipped that
says why the first invalid one was (the line the command writes on standard
error)."""
import re
import warnings

import numpy

from ._errors import GeofenceWarning


def read_csv(path):
    """The command's CSV output as a DataFrame: ids stay text ("007" is not
    7); lat, lon, accuracy_m are floats and row, condition_id integers."""
    import pandas  # only the DataFrame helpers need it
    frame = pandas.read_csv(path, dtype=str, keep_default_na=False)
    for column in ("lat", "lon", "accuracy_m"):
        if column in frame.columns:
            frame[column] = frame[column].astype(float)
    for column in ("row", "condition_id"):
        if column in frame.columns:
            frame[column] = frame[column].astype("int64")
    return frame


def summarized(frame, done, skipped_pattern, hint=None):
    """``frame`` with the command's summary line (the first line of its
    standard output, else the last of its standard error) in
    ``frame.attrs["summary"]``, and a GeofenceWarning when ``skipped_pattern``
    finds fixes skipped in it or the command wrote anything else on standard
    error (why fixes were invalid: "invalid fixes: N of M, not judged; the
    first: row 3: …", a row counted from 1 in the frame's order; how many
    times without an offset were read as local time). The warning holds the
    summary, those lines, and ``hint`` (what may have caused them in the
    frame) when given."""
    out = done.stdout.strip().splitlines()
    err = [line for line in done.stderr.strip().splitlines() if line]
    summary = out[0] if out else (err.pop() if err else "")
    frame.attrs["summary"] = summary
    skipped = re.search(skipped_pattern, summary)
    if err or (skipped and any(int(g) for g in skipped.groups())):
        warnings.warn(GeofenceWarning("\n".join([summary, *err, *([hint] if hint else [])])), stacklevel=3)
    return frame


def locate_index(pairs, fixes):
    """``pairs`` (locate's rows) indexed by the label of the fix each row
    names (its ``row`` column counts from 1 in ``fixes``' order)."""
    pairs.index = fixes.index.take(pairs["row"].to_numpy() - 1)
    return pairs


def judge_index(notes, fixes, columns, sent, accuracy_m=None, time_unit="s", zone=None):
    """``notes`` (judge's notifications) indexed by the label of the fix that
    gave each: the first row of ``fixes`` with its subject, instant, lat, lon
    and accuracy (``columns``: the frame's fix columns, from fix_columns;
    ``sent``: the text columns as written, from write_fixes; ``accuracy_m``:
    the accuracy of a fix without one; ``time_unit``: of numeric times;
    ``zone``: the catalog's zone of times without an offset, None when it
    refuses them, or a function giving it, asked only when times are read). A notification whose subject and position only one row
    has is that row's; times are read only where rows share them, as the
    command reads them. A notification no row matches (none should) gets
    None."""
    import pandas
    if notes.empty:
        notes.index = fixes.index[:0]
        return notes
    keys = ["subject_id", "lat", "lon", "accuracy_m"]
    numbers = {c: pandas.to_numeric(columns[c], errors="coerce").to_numpy(dtype=float, na_value=numpy.nan)
               if c in columns else numpy.full(len(fixes), numpy.nan) for c in keys[1:]}
    if accuracy_m is not None:
        numbers["accuracy_m"] = numpy.where(numpy.isnan(numbers["accuracy_m"]), float(accuracy_m), numbers["accuracy_m"])
    given = pandas.DataFrame({"subject_id": sent["subject_id"], **numbers, "position": numpy.arange(len(fixes))})
    given = given[given["lat"].isin(notes["lat"]) & given["lon"].isin(notes["lon"]) & given["subject_id"].isin(notes["subject_id"])]
    pairs = notes[keys].assign(note=numpy.arange(len(notes))).merge(given, how="inner", on=keys)[["note", "position"]]
    shared = pairs["note"].duplicated(keep=False).to_numpy()
    if shared.any():
        # Rows with one subject and position at several times: the one at the notification's instant.
        several = pairs[shared]
        times = numpy.array(sent["ts"], dtype=object)[several["position"].to_numpy()]
        at = (_instants(times, time_unit, zone() if callable(zone) else zone).to_numpy()
              == _instants(notes["ts"].to_numpy(dtype=object)[several["note"].to_numpy()], "s", None).to_numpy())
        pairs = pandas.concat([pairs[~shared], several[at]])
    found = pairs.groupby("note")["position"].min().reindex(numpy.arange(len(notes)))
    if found.isna().any():
        labels = [None if p != p else fixes.index[int(p)] for p in found.tolist()]
        notes.index = pandas.Index(labels, dtype=object, name=fixes.index.name)
    else:
        notes.index = fixes.index.take(found.to_numpy(dtype=numpy.int64))
    return notes


def _instants(texts, unit="s", zone=None):
    """Times as the command reads them (ISO 8601 with an offset, a number of
    ``unit``, "s" or "ms", since 1970, or ISO 8601 without an offset as local
    time in ``zone``, a name, when given: a time the clocks skipped is NaT,
    one they showed twice the earlier instant) as UTC instants to the
    microsecond; NaT where none of these reads. A time without an offset is
    never read as UTC here unless ``zone`` says so: that would give it
    another row's instant."""
    import pandas
    texts = pandas.Series(texts, dtype=object)
    # An offset (Z, +09:00, +0900) ends the text; a number has none and is read below.
    offset = texts.str.contains(r"(?:[zZ]|[+-]\d\d(?::?\d\d)?)\s*$", regex=True, na=False)
    instants = pandas.Series(pandas.NaT, index=texts.index, dtype="datetime64[us, UTC]")
    if offset.any():
        instants[offset] = pandas.to_datetime(texts[offset], utc=True, format="ISO8601", errors="coerce").astype("datetime64[us, UTC]")
    naive = ~offset & texts.str.contains(r"^\s*\d{4}-\d\d-\d\d", regex=True, na=False)
    if zone is not None and naive.any():
        local = pandas.to_datetime(texts[naive], format="ISO8601", errors="coerce")
        instants[naive] = local.dt.tz_localize(zone, ambiguous=True, nonexistent="NaT").dt.tz_convert("UTC").astype("datetime64[us, UTC]")
    left = ~offset & ~naive
    if left.any():
        numbers = pandas.to_numeric(texts[left], errors="coerce")
        instants[left] = pandas.to_datetime(numbers, unit=unit, utc=True, errors="coerce").dt.round("us")
    return instants
