"""Judgement in the caller's process over Arrow batches (libgeofence's task
ABI through geofence.arrow, issue 41): a catalog opened read-only, never
written; the notifications and the end state `geofence judge` and `geofence
state export` give, byte for byte, whatever order the rows come in when an
order column says theirs, with the ts as text or as a timestamp; runs split
by event time carrying the records; times without an offset read in the
catalog's default_timezone as judge reads them; bad input refused naming its
row or subject, and the task still usable after."""
import random

import pyarrow as pa
import pytest

from task_scenario import canonical, digest, export_text, fixes_with_ties, gf, reference, use_this_build

use_this_build()
from geofence import GeofenceError, arrow  # noqa: E402  (after use_this_build)


def table(rows, order=True, timestamps=False):
    """rows as a fixes table; with `order`, an order column of the rows' places, and the rows shuffled."""
    idx = list(range(len(rows)))
    if order:
        random.Random(7).shuffle(idx)
    cols = {k: [rows[i][j] for i in idx] for j, k in enumerate(("subject_id", "ts", "lat", "lon", "accuracy_m"))}
    if timestamps:
        cols["ts"] = pa.array(pa.array(cols["ts"]).cast(pa.timestamp("us", "+09:00")), pa.timestamp("us", "UTC"))
    if order:
        cols["order"] = pa.array(idx, pa.int64())
    return pa.table(cols)


def notes_of(t):
    return [tuple(r.values()) for r in t.to_pylist()]


def test_one_call_gives_what_one_judge_gives_and_the_catalog_is_not_written(tmp_path):
    db, rows = fixes_with_ties(tmp_path, subjects=30, per_subject=60)
    expected, exported, counts = reference(tmp_path, db, [rows])
    assert {n[4] for n in expected} == {"IN", "OUT", "DWELL"}
    before = digest(db)
    task = arrow.Task(db)
    for order, timestamps in ((False, False), (True, False), (True, True)):
        notes, states, counters = task.judge(table(rows, order, timestamps))
        assert notes_of(notes) == expected, (order, timestamps)
        assert export_text(states["subject_id"].to_pylist(), states["record"].to_pylist()) == exported
        assert {k: counters[k] for k in counts} == counts
    task.close()
    assert digest(db) == before


def test_runs_split_by_event_time_carry_the_records_and_late_fixes_are_stale(tmp_path):
    db, rows = fixes_with_ties(tmp_path, subjects=12, per_subject=60, seed=5)
    cut = len(rows) // 2
    # A late fix: older than its subject's state after the first run.
    late = [r for r in rows[:cut] if r[0] == rows[cut - 1][0]][-3]
    first, second = rows[:cut], rows[cut:] + [late]
    expected, exported, counts = reference(tmp_path, db, [first, second])
    task = arrow.task(db)
    notes1, states1, c1 = task.judge(table(first))
    notes2, states2, c2 = task.judge(table(second), states1)
    assert canonical(notes_of(notes1) + notes_of(notes2)) == canonical(expected)
    assert export_text(states2["subject_id"].to_pylist(), states2["record"].to_pylist()) == exported
    assert c1["stale"] + c2["stale"] == counts["stale"] >= 1
    # A subject with a record and no fix keeps its record as it was.
    only = states1.filter(pa.compute.equal(states1["subject_id"], "dev-3"))
    _, kept, _ = task.judge(table([r for r in second if r[0] != "dev-3"]), only)
    assert kept.filter(pa.compute.equal(kept["subject_id"], "dev-3"))["record"].to_pylist() == only["record"].to_pylist()


def test_bad_input_is_refused_naming_its_row_or_subject(tmp_path):
    db, rows = fixes_with_ties(tmp_path, subjects=3, per_subject=10)
    task = arrow.task(db)
    _, states, _ = task.judge(table(rows, order=False))
    bad_subject = table(rows, order=False).set_column(0, "subject_id", pa.array([r[0] if i != 2 else None for i, r in enumerate(rows)]))
    with pytest.raises(GeofenceError, match=r"fixes row 3: subject_id is null"):
        task.judge(bad_subject)
    record = states["record"][0].as_py().replace('"judged":', '"judged":-')
    bad_state = pa.table({"subject_id": [states["subject_id"][0].as_py()], "record": [record]})
    with pytest.raises(GeofenceError, match=r"states row 1: .*subject 'dev-0'"):
        task.judge(table(rows), bad_state)
    twice = pa.concat_tables([states.slice(0, 1), states.slice(0, 1)])
    with pytest.raises(GeofenceError, match=r"states row 2: subject 'dev-0' has a state record at states row 1"):
        task.judge(table(rows), twice)
    with pytest.raises(GeofenceError, match=r"the fixes batch has no column accuracy_m"):
        task.judge(table(rows).drop_columns(["accuracy_m"]))
    with pytest.raises(GeofenceError, match=r"fixes column lat has the Arrow type 'u'"):
        task.judge(table(rows).set_column(2, "lat", pa.array([str(r[2]) for r in rows])))
    with pytest.raises(GeofenceError, match=r"no such table|not a geofence catalog|cannot open"):
        arrow.Task(tmp_path / "missing.db")
    # An invalid fix is counted as judge counts it; the task still judges.
    invalid = table(rows, order=False).set_column(1, "ts", pa.array(["not a time"] + [r[1] for r in rows[1:]]))
    _, _, counters = task.judge(invalid)
    assert counters["invalid"] == 1 and counters["judged"] + counters["stale"] == len(rows) - 1


@pytest.mark.parametrize("zone", ["Asia/Tokyo", None])
def test_times_without_an_offset_are_read_as_judge_reads_them(tmp_path, zone):
    # Local times: in the catalog's default_timezone once set, as `geofence
    # judge` reads them; refused (every fix invalid) in a catalog without one.
    db, rows = fixes_with_ties(tmp_path, subjects=8, per_subject=40, seed=11)
    if zone:
        gf("settings", db, "default_timezone", zone)
    local = [(s, t.removesuffix("+09:00"), lat, lon, acc) for s, t, lat, lon, acc in rows]
    assert all(r[1] != l[1] for r, l in zip(rows, local))
    expected, exported, counts = reference(tmp_path, db, [local])
    assert counts["invalid"] == (0 if zone else len(rows))
    notes, states, counters = arrow.Task(db).judge(table(local))
    assert notes_of(notes) == expected
    assert export_text(states["subject_id"].to_pylist(), states["record"].to_pylist()) == exported
    assert {k: counters[k] for k in counts} == counts
