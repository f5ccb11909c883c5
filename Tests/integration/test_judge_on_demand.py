"""A batch with fewer fixes than the catalog has areas prepares only the
areas its chunks reach (their fixes' boxes, and the areas of their subjects'
stays), where a batch with at least as many fixes prepares every area
first. Both must judge alike: the same notifications, stays, subjects and
last-notified days, with conditions of every kind, over two runs, the
second ending every stay from a fix far from any area (an exit is judged
however far the fix is from the area).

The fully prepared path is taken by the same fixes plus a padding subject
far from every area, enough of them to outnumber the areas; the padding
changes nothing but its own subject row and the run's counts."""
import csv
import json
import math
import random
import shutil
import sqlite3

from conftest import gf

AREAS, SUBJECTS, STEPS, AWAY = 3000, 40, 50, 8
ORIGIN = (139.70, 35.60)
PAD = "zz-padding"


def catalog(tmp_path, rng):
    """Areas of every kind and rule over ~40 km, and conditions of every kind."""
    lon0, lat0 = ORIGIN
    features = []
    for i in range(AREAS):
        lon, lat = lon0 + rng.uniform(0, 0.4), lat0 + rng.uniform(0, 0.3)
        props = {"area_id": f"A{i:04d}", "in_confirm_count": rng.choice([1, 1, 2]),
                 "out_confirm_count": rng.choice([1, 1, 2]), "in_accuracy_max_m": rng.choice([None, None, 80]),
                 "out_accuracy_max_m": rng.choice([None, None, 150])}
        if i % 5 == 0:
            props["confidence"] = 0.9
        if i % 13 == 5:
            props["valid_from"] = "2025-11-21T06:00:00+09:00"
        if i % 17 == 7:
            props["valid_until"] = "2025-11-21T12:00:00+09:00"
        if i % 3 == 0:
            props["radius_m"] = round(rng.uniform(100, 600), 1)
            geometry = {"type": "Point", "coordinates": [lon, lat]}
        else:
            r = rng.uniform(0.002, 0.008)
            ring = [[round(lon + r * math.cos(a), 7), round(lat + 0.8 * r * math.sin(a), 7)]
                    for a in [k * 2 * math.pi / 9 for k in range(9)]]
            ring.append(ring[0])
            if i % 3 == 1:
                geometry = {"type": "Polygon", "coordinates": [ring]}
            else:
                # A multipolygon: the ring with a hole, and a square beside it.
                hole = [[round(lon + 0.3 * r * math.cos(a), 7), round(lat + 0.24 * r * math.sin(a), 7)]
                        for a in [-k * 2 * math.pi / 5 for k in range(5)]]
                hole.append(hole[0])
                x, y = lon + 1.5 * r, lat
                square = [[x, y], [x + r, y], [x + r, y + r], [x, y + r], [x, y]]
                geometry = {"type": "MultiPolygon", "coordinates": [[ring, hole], [square]]}
        features.append({"type": "Feature", "properties": {k: v for k, v in props.items() if v is not None},
                         "geometry": geometry})
    areas = tmp_path / "areas.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    conds = tmp_path / "conditions.csv"
    with conds.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition_id", "area_id", "timing", "dwell_s", "weekdays", "start_time", "end_time", "start_date",
                    "end_date", "renotify_suppress_days", "timezone"])
        cid = 100_000
        for i in range(AREAS):
            a = f"A{i:04d}"
            if i % 2 == 0:
                w.writerow([cid, a, "DWELL", rng.choice([0, 600, 1800]), "", "", "", "", "", "", ""]); cid += 1
            if i % 3 == 0:
                w.writerow([cid, a, "IN", "", "Thu,Fri", "07:00", "23:00", "", "", "1", "Asia/Tokyo"]); cid += 1
            if i % 5 == 1:
                w.writerow([cid, a, "OUT", "", "Thu,Fri,Sat", "", "", "2025-11-20", "2025-11-23", "1", "America/New_York"]); cid += 1
    db = tmp_path / "catalog.db"
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    gf("conditions", "import", db, conds)
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    return db


def write_fixes(path, rows):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(rows)
    return path


def padded(path, rows, start):
    """The rows and a padding subject's fixes far from every area, enough
    to outnumber the areas."""
    pad = [(PAD, start + k, -60.0, -100.0 + k * 1e-5, 10) for k in range(AREAS + 1)]
    return write_fixes(path, rows + pad)


def rows_of(db, query):
    con = sqlite3.connect(db)
    try:
        return [tuple(r) for r in con.execute(query)]
    finally:
        con.close()


def outcome(db):
    """What a user sees of the judgement, the padding subject left out."""
    where = f"WHERE subject_id <> '{PAD}'"
    return {
        "notifications": rows_of(db, "SELECT subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m "
                                     f"FROM gf_notifications {where} ORDER BY id"),
        "stays": rows_of(db, f"SELECT * FROM gf_stays {where} ORDER BY subject_id, area_id"),
        "subjects": rows_of(db, f"SELECT * FROM gf_subjects {where} ORDER BY subject_id"),
        "last_notified": rows_of(db, f"SELECT * FROM gf_last_notified {where} ORDER BY subject_id, condition_id"),
        "runs": rows_of(db, "SELECT transitions, notifications, filtered FROM gf_runs ORDER BY run_id"),
    }


# Stays INSIDE an area with no end of validity (a stay in an area whose
# validity has ended is left as it is: behaviour §3).
INSIDE_VALID = ("SELECT count(*) FROM gf_stays JOIN gf_areas USING (area_id) "
                "WHERE state = 'INSIDE' AND valid_until IS NULL")


def test_areas_prepared_as_the_batch_reaches_them_judge_as_all_prepared(tmp_path):
    rng = random.Random(2222)
    base = catalog(tmp_path, rng)
    on_demand, prepared = tmp_path / "on_demand.db", tmp_path / "prepared.db"
    shutil.copy(base, on_demand)
    shutil.copy(base, prepared)
    lon0, lat0 = ORIGIN
    t0 = 1_763_650_000   # 2025-11-20T14:46:40Z, a Thursday
    near, away = [], []
    for s in range(SUBJECTS):
        lon, lat, t = lon0 + rng.uniform(0.05, 0.35), lat0 + rng.uniform(0.05, 0.25), t0 + rng.uniform(0, 600)
        for _ in range(STEPS):
            lon += rng.gauss(0, 0.002); lat += rng.gauss(0, 0.0015); t += rng.uniform(60, 1800)
            near.append((f"dev-{s:02d}", round(t), round(lat, 6), round(lon, 6), round(rng.uniform(3, 60), 1)))
        # The second run: the same subjects hundreds of kilometres away.
        for k in range(AWAY):
            away.append((f"dev-{s:02d}", round(t) + 100_000 + 60 * k, 33.0 + rng.uniform(0, 0.1), 131.0, 10))
    assert SUBJECTS * STEPS < AREAS and SUBJECTS * STEPS * 30 >= AREAS, "the first run is one the areas are prepared on demand for"
    end = max(r[1] for r in away) + 1
    for n, rows in enumerate([near, away]):
        gf("judge", on_demand, "--fixes", write_fixes(tmp_path / f"run{n}.csv", rows))
        gf("judge", prepared, "--fixes", padded(tmp_path / f"run{n}-padded.csv", rows, end + 10_000 * n))
        got, want = outcome(on_demand), outcome(prepared)
        assert got == want, n
        if n == 0:
            stays_after_first = rows_of(on_demand, INSIDE_VALID)[0][0]
    # The workload means something: every kind of notification, stays left by
    # the first run, and every one of them ended by the second.
    kinds = {(n[4], n[3] >= 100_000) for n in got["notifications"]}
    assert kinds >= {("IN", False), ("OUT", False), ("DWELL", True), ("IN", True), ("OUT", True)}, kinds
    assert stays_after_first > 20
    assert rows_of(on_demand, INSIDE_VALID) == [(0,)]
    outs_far = rows_of(on_demand, "SELECT count(*) FROM gf_notifications WHERE transition = 'OUT' AND lat < 34")[0][0]
    assert outs_far >= stays_after_first
