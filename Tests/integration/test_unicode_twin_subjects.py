"""Two subject_ids that differ only in Unicode normalisation ("café" with
é composed, U+00E9, and decomposed, e + U+0301) are two subjects, as SQLite
tells them apart by their bytes and `geofence judge` keeps them: so do
gf_check (its cache of the state it saved last), `state export --subject`
and `state import`, and the Arrow task (the red team's finding: each of
these took them for one)."""
import shutil
import sqlite3

from conftest import EXTENSION, gf, run
from task_scenario import use_this_build
from test_last_notified_view import catalog

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"
FIXES = [("2026-11-20T08:00:00Z", 35.68, 139.70), ("2026-11-20T08:05:00Z", 35.68, 139.70), ("2026-11-20T08:10:00Z", 35.70, 139.70)]


def judged(db):
    con = sqlite3.connect(db)
    try:
        return {s.encode().hex(): n for s, n in con.execute("SELECT subject_id, judged_fixes FROM gf_subjects")}
    finally:
        con.close()


def test_gf_check_keeps_twin_subjects_apart(tmp_path):
    db = catalog(tmp_path)
    calls = []
    for ts, lat, lon in FIXES:  # interleaved, as a service receives them
        for s in (COMPOSED, DECOMPOSED):
            calls.append(f"SELECT gf_check('{s}', '{ts}', {lat}, {lon}, 5);")
    run("sqlite3", db, input=f".load {EXTENSION}\n" + "\n".join(calls) + "\n")
    assert judged(db) == {COMPOSED.encode().hex(): 3, DECOMPOSED.encode().hex(): 3}


def test_state_export_and_import_keep_twin_subjects_apart(tmp_path):
    db = catalog(tmp_path)
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                     + "".join(f"{s},{ts},{lat},{lon},5\n" for s in (COMPOSED, DECOMPOSED) for ts, lat, lon in FIXES))
    gf("judge", db, "--fixes", fixes)
    exported = gf("state", "export", db).stdout
    assert exported.count("\n") == 2
    assert gf("state", "export", db, "--subject", COMPOSED, "--subject", DECOMPOSED).stdout == exported
    other = tmp_path / "other.db"
    shutil.copy(db, other)
    gf("reset", other)
    dump = tmp_path / "s.jsonl"
    dump.write_text(exported)
    gf("state", "import", other, dump)
    assert gf("state", "export", other).stdout == exported


def test_the_arrow_task_keeps_twin_subjects_apart(tmp_path):
    use_this_build()
    import pyarrow as pa
    from geofence import arrow
    db = catalog(tmp_path)
    rows = [(s, ts, lat, lon, 5.0) for s in (COMPOSED, DECOMPOSED) for ts, lat, lon in FIXES]
    fixes = pa.table({k: [r[i] for r in rows] for i, k in enumerate(("subject_id", "ts", "lat", "lon", "accuracy_m"))})
    notes, states, counts = arrow.judge_batches(str(db), fixes, None)
    assert sorted(s.encode().hex() for s in states.column("subject_id").to_pylist()) == sorted(
        [COMPOSED.encode().hex(), DECOMPOSED.encode().hex()])
    # Both records given back are taken, each for its own subject.
    again = pa.table({k: [r[i] for r in rows] for i, k in enumerate(("subject_id", "ts", "lat", "lon", "accuracy_m"))})
    arrow.judge_batches(str(db), again, states)


def test_the_arrow_task_refuses_a_subject_id_that_is_not_utf8(tmp_path):
    use_this_build()
    import pyarrow as pa
    import pytest
    from geofence import GeofenceError, arrow
    db = catalog(tmp_path)
    bad = pa.array([b"ok", b"\xff\xfe"], pa.binary()).view(pa.string())
    fixes = pa.table({"subject_id": bad, "ts": ["2026-11-20T08:00:00Z"] * 2, "lat": [35.68] * 2, "lon": [139.70] * 2,
                      "accuracy_m": [5.0] * 2})
    with pytest.raises(GeofenceError, match="fixes row 2: subject_id is not valid UTF-8"):
        arrow.judge_batches(str(db), fixes, None)
