"""A gf_check session whose fixes keep missing its windows of the spatial
index reads the whole index into memory once (docs/sql.md), and from then on
finds each fix's candidates by their place in that index, through a cache of
its own, as a batch's judging threads do. Both ways must judge alike: here
subjects hop across a region dense with overlapping areas (every hop a miss,
so the session switches after its 64th call or so), checked call by call in
one transaction, and the notifications and state must be those of
`geofence judge` on the same fixes."""
import csv
import json
import random
import shutil
import sqlite3

import pytest

from conftest import EXTENSION, gf, sql, square, write_collection
from test_judgement import heptagon, iso, notifications

LON0, LAT0 = 139.60, 35.55


def region(tmp_path, rng):
    """60 overlapping areas over ~30 km (circles and heptagons), default IN and
    OUT conditions, and on every fifth area a DWELL and a suppressed IN."""
    features = []
    for i in range(60):
        lon, lat = LON0 + rng.uniform(0, 0.3), LAT0 + rng.uniform(0, 0.25)
        props = {"area_id": f"R{i:02d}", "in_confirm_count": rng.choice([1, 1, 2])}
        if i % 2 == 0:
            props["radius_m"] = rng.uniform(2000, 6000)
            geometry = {"type": "Point", "coordinates": [lon, lat]}
        else:
            geometry = heptagon(lon, lat, rng.uniform(0.02, 0.06))
        features.append({"type": "Feature", "properties": props, "geometry": geometry})
    areas = tmp_path / "region.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    conds = tmp_path / "conditions.csv"
    with conds.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition_id", "area_id", "timing", "dwell_s", "renotify_suppress_days"])
        for i in range(0, 60, 5):
            w.writerow([1000 + 2 * i, f"R{i:02d}", "DWELL", 600, ""])
            w.writerow([1001 + 2 * i, f"R{i:02d}", "IN", "", 1])
    db = tmp_path / "region.db"
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    gf("conditions", "import", db, conds)
    return db


def hops(rng, subjects=30, per_subject=25):
    """Each subject's fixes ten minutes apart, anywhere in the region, all subjects interleaved in time."""
    rows = []
    for k in range(per_subject):
        for s in range(subjects):
            rows.append((f"s{s:02d}", 1_763_650_000 + 600 * k + s, LAT0 + rng.uniform(0, 0.25), LON0 + rng.uniform(0, 0.3),
                         rng.choice([5, 15, 40])))
    return rows


def state_of(db):
    c = sqlite3.connect(db)
    out = (c.execute("SELECT * FROM gf_subjects ORDER BY subject_id").fetchall(),
           c.execute("SELECT * FROM gf_stays ORDER BY subject_id, area_id").fetchall(),
           c.execute("SELECT * FROM gf_last_notified ORDER BY subject_id, condition_id").fetchall(),
           c.execute("SELECT * FROM gf_inside ORDER BY area_id, subject_id").fetchall())
    c.close()
    return out


def test_a_session_on_the_whole_index_judges_as_a_batch(tmp_path):
    rng = random.Random(29)
    db = region(tmp_path, rng)
    rows = hops(rng)
    batch, session = tmp_path / "batch.db", tmp_path / "session.db"
    shutil.copy(db, batch)
    shutil.copy(db, session)
    fixes = tmp_path / "fixes.csv"
    with fixes.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for s, t, lat, lon, acc in rows:
            w.writerow([s, iso(t), repr(lat), repr(lon), acc])
    gf("judge", batch, "--fixes", fixes)
    want = notifications(batch)
    assert len(want) > 300 and {n[4] for n in want} == {"IN", "OUT", "DWELL"}, "the scenario must notify every way"
    assert session_notifications(session, rows) == (want, state_of(batch))


def session_notifications(db, rows):
    """The region's hops through gf_check, call by call in one transaction; then what they stored."""
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    c.execute("BEGIN")
    for s, t, lat, lon, acc in rows:
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", (s, iso(t), lat, lon, acc)).fetchall()
    c.execute("COMMIT")
    c.close()
    return notifications(db), state_of(db)


@pytest.mark.parametrize("stored", ["CAST(x'ff41' AS TEXT)", "CAST('FAR' AS BLOB)"])
def test_a_damaged_row_no_fix_meets_keeps_the_session_on_its_windows(tmp_path, stored):
    """A row whose area_id is not text fails a door only where a fix meets
    it. The whole index would have to read it: so a session whose misses
    call for the whole index, in a catalog holding such a row far from every
    fix, stays on its windows and judges as it would without the row; the
    call that switched used to fail on it, and one every 64 misses after
    (red team)."""
    rng = random.Random(31)
    db = region(tmp_path, rng)
    rows = hops(rng)
    gf("import", db, write_collection(tmp_path / "far.geojson", [square("FAR", -70.0, -30.0, 0.5)]))
    clean, damaged = tmp_path / "clean.db", tmp_path / "damaged.db"
    shutil.copy(db, clean)
    shutil.copy(db, damaged)
    sql(clean, "DELETE FROM gf_areas WHERE area_id = 'FAR';")
    sql(damaged, f"UPDATE gf_areas SET area_id = {stored} WHERE area_id = 'FAR';")
    want = session_notifications(clean, rows)
    assert len(want[0]) > 300
    assert session_notifications(damaged, rows) == want
