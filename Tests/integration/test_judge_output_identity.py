"""The judgement's output, byte for byte: one workload with conditions of every
kind (the default IN and OUT of `import --with-default-conditions`, weekday
and time-window filters, a validity period, suppression, DWELL), judged as one
batch (with --explain and --out, and without), in chunks of several sizes,
and fix by fix with gf_check in the sqlite3 shell. Every way must give the
same notifications, stays, subjects and last-notified days, and each output
must hash to what the engine wrote before the output path was rebuilt for
speed (the hashes below were taken from that build): a change that alters
one byte of a notification, an explanation, a row's id or the --out file
fails here.

Longer than 300 lines: one workload and every way of judging it, read
together because the hashes compare them with one another.

A user's queue table is fed after every run by the documented cursor read
(`SELECT … FROM gf_notifications WHERE id > :last_seen ORDER BY id`, its
last_seen kept in the same transaction): it must get every row once, in id
order, the rows an AFTER INSERT trigger on the old gf_notifications table
fed it (the queue's hashes are the trigger's)."""
import csv
import datetime
import hashlib
import json
import math
import random
import shutil
import sqlite3

from conftest import gf, run, sql

# Taken from the build the output path was rebuilt from (/work/base-dist);
# the state hashes without gf_stay_rows (gone in schema version 8, its
# streaks as of a base no view shows) from /work/dist-fc3bbd3, whose
# gf_subjects, gf_stays and gf_last_notified those hashes hold.
EXPECTED = {
    "batch_explain.notifications": "76b5eae5d77152b9",
    "batch_explain.explain": "9ae75b189af1dbc8",
    "batch_explain.out_csv": "86140eabeb4baf61",
    "batch_explain.state": "508c72857812c7b3",
    "batch_explain.queue": "daa92cdf7ead1e90",
    "batch_explain.runs": "b91a364930001030",
    "batch.notifications": "76b5eae5d77152b9",
    "batch.state": "508c72857812c7b3",
    "chunks.notifications": "8319c5493533b5c1",
    "chunks.explain": "f4a750eb14325882",
    "chunks.state": "508c72857812c7b3",
    "chunks.queue": "305190a8fcc7ca16",
    "check.notifications": "71cde18831c51faa",
    "check.state": "508c72857812c7b3",
}

AREAS, SUBJECTS, PER_SUBJECT = 40, 12, 1000
ORIGIN = (139.772, 35.712)


def iso(t, hours):
    return datetime.datetime.fromtimestamp(t, datetime.timezone(datetime.timedelta(hours=hours))).isoformat()


def workload(tmp_path, seed=2121):
    """Areas around Ueno with every rule field in use, conditions of every
    kind, subjects random-walking across them for four days; a few invalid
    and stale rows. Returns (catalog db, fixes.csv, rows in time order)."""
    rng = random.Random(seed)
    lon0, lat0 = ORIGIN
    features = []
    for i in range(AREAS):
        lon, lat = lon0 + rng.uniform(-0.015, 0.015), lat0 + rng.uniform(-0.012, 0.012)
        props = {"area_id": f"A{i:02d}", "in_confirm_count": rng.choice([1, 1, 2, 3]),
                 "out_confirm_count": rng.choice([1, 1, 2]), "in_accuracy_max_m": rng.choice([None, 60, 200]),
                 "out_accuracy_max_m": rng.choice([None, None, 150])}
        if i % 4 == 0:
            props["confidence"] = 0.9
        if i % 9 == 5:
            props["valid_from"] = "2026-11-21T00:00:00+09:00"
        if i % 11 == 7:
            props["valid_until"] = "2026-11-22T12:00:00+09:00"
        if i % 3 == 0:
            props["radius_m"] = round(rng.uniform(120, 500), 1)
            geometry = {"type": "Point", "coordinates": [lon, lat]}
        else:
            r = rng.uniform(0.002, 0.006)
            ring = [[round(lon + r * math.cos(a), 7), round(lat + 0.8 * r * math.sin(a), 7)]
                    for a in [k * 2 * math.pi / 7 for k in range(7)]]
            ring.append(ring[0])
            geometry = {"type": "Polygon", "coordinates": [ring]}
        features.append({"type": "Feature", "properties": {k: v for k, v in props.items() if v is not None}, "geometry": geometry})
    areas = tmp_path / "areas.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    conds = tmp_path / "conditions.csv"
    with conds.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition_id", "area_id", "timing", "dwell_s", "weekdays", "start_time", "end_time", "start_date", "end_date",
                    "renotify_suppress_days", "timezone"])
        cid = 1000
        for i in range(AREAS):
            a = f"A{i:02d}"
            if i % 2 == 0:
                w.writerow([cid, a, "DWELL", rng.choice([0, 300, 900, 3600]), "", "", "", "", "", "", ""]); cid += 1
            if i % 3 == 0:
                w.writerow([cid, a, "IN", "", "Sat,Sun", "22:00", "06:00", "", "", "1", "Asia/Tokyo"]); cid += 1
                w.writerow([cid, a, "DWELL", 600, "Mon,Tue,Wed,Thu,Fri", "09:00", "18:00", "", "", "", ""]); cid += 1
            if i % 5 == 1:
                w.writerow([cid, a, "OUT", "", "", "09:00", "", "2026-11-21", "2026-11-22", "1", "America/New_York"]); cid += 1
                w.writerow([cid, a, "IN", "", "Fri,Sat", "07:30", "23:00", "", "", "", ""]); cid += 1
    db = tmp_path / "catalog.db"
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    gf("conditions", "import", db, conds)
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    rows = []
    state = [[lon0 + rng.uniform(-0.012, 0.012), lat0 + rng.uniform(-0.01, 0.01), 1_763_650_000 + rng.uniform(0, 600)]
             for _ in range(SUBJECTS)]
    for step in range(PER_SUBJECT):
        for s in range(SUBJECTS):
            lon, lat, t = state[s]
            lon += rng.gauss(0, 0.0015); lat += rng.gauss(0, 0.0012)
            lon = min(max(lon, lon0 - 0.022), lon0 + 0.022); lat = min(max(lat, lat0 - 0.018), lat0 + 0.018)
            t += rng.uniform(60, 3600)
            state[s] = [lon, lat, t]
            acc = round(rng.uniform(3, 40) if rng.random() < 0.85 else rng.uniform(40, 400), 1)
            rows.append((f"dev-{s}", t, round(lat, 6), round(lon, 6), acc))
    rows.sort(key=lambda r: r[1])
    fixes = tmp_path / "fixes.csv"
    with fixes.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for k, r in enumerate(rows):
            w.writerow([r[0], iso(r[1], 9 if k % 2 else -5), r[2], r[3], r[4]])
    bad = tmp_path / "bad.csv"   # invalid and stale rows, for --explain
    bad.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                   "dev-0,2026-11-25T09:00:00+09:00,95,139.77,10\n"
                   "dev-1,2026-11-25T09:00:00,35.71,139.77,10\n"
                   "dev-2,2026-11-25T09:00:00+09:00,35.71,139.77,-3\n"
                   f"dev-3,{iso(rows[0][1], 9)},35.71,139.77,10\n")
    return db, fixes, bad, rows


def add_queue(db):
    """A user's queue of notifications, and where its cursor stands."""
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE my_queue (n INTEGER PRIMARY KEY, notification_id INTEGER, subject_id TEXT, ts TEXT, area_id TEXT, transition TEXT);
        CREATE TABLE my_cursor (last_seen INTEGER NOT NULL);
        INSERT INTO my_cursor VALUES (0);
    """)
    con.commit()
    con.close()


def feed_queue(db):
    """The documented cursor read (docs/sql.md): the notifications after
    last_seen, in id order, into the queue, and last_seen moved past them,
    in one transaction."""
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute("""
            INSERT INTO my_queue (notification_id, subject_id, ts, area_id, transition)
            SELECT id, subject_id, ts, area_id, transition FROM gf_notifications
            WHERE id > (SELECT last_seen FROM my_cursor) ORDER BY id""")
        con.execute("UPDATE my_cursor SET last_seen = coalesce((SELECT max(notification_id) FROM my_queue), last_seen)")
        con.execute("COMMIT")
    finally:
        con.close()


def rows_of(db, query):
    con = sqlite3.connect(db)
    try:
        return [tuple(r) for r in con.execute(query)]
    finally:
        con.close()


def digest(value):
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()[:16]


NOTIFICATIONS = "SELECT id, run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM gf_notifications ORDER BY id"
# gf_explain's columns before schema version 6, whose bytes the hashes hold;
# the positions it added are checked against the fixes (`test_every_way…`).
EXPLANATIONS = "SELECT run_id, subject_id, ts, area_id, condition_id, kind, reason FROM gf_explain ORDER BY rowid"
CANONICAL = ("SELECT subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM gf_notifications "
             "ORDER BY subject_id, ts, area_id, condition_id")


def state(db):
    return {
        "subjects": rows_of(db, "SELECT * FROM gf_subjects ORDER BY subject_id"),
        "stays": rows_of(db, "SELECT * FROM gf_stays ORDER BY subject_id, area_id"),
        "last_notified": rows_of(db, "SELECT * FROM gf_last_notified ORDER BY subject_id, condition_id"),
    }


def runs(db):
    return rows_of(db, "SELECT run_id, kind, source IS NOT NULL, fixes, judged, stale, invalid, transitions, notifications, filtered, "
                       "dropped_accuracy, dropped_distance FROM gf_runs ORDER BY run_id")


def test_every_way_of_judging_writes_the_same_bytes_as_before(tmp_path):
    base, fixes, bad, rows = workload(tmp_path)
    dbs = {k: tmp_path / f"{k}.db" for k in ("batch_explain", "batch", "chunks", "check")}
    for p in dbs.values():
        shutil.copy(base, p)
    add_queue(dbs["batch_explain"])
    add_queue(dbs["chunks"])
    got = {}

    # One batch, with --explain and --out; then the invalid and stale rows.
    out = tmp_path / "out.csv"
    summary = gf("judge", dbs["batch_explain"], "--fixes", fixes, "--explain", "--out", out).stdout
    feed_queue(dbs["batch_explain"])
    # The offset-less time of `bad` stays invalid only while the catalog names
    # no zone for such times (behaviour §6; Asia/Tokyo would read it as local
    # time, test_feeds.py): UTC, a new catalog's value, for this run only (it
    # judges no fix, so no condition's window depends on the zone).
    gf("settings", dbs["batch_explain"], "default_timezone", "UTC")
    gf("judge", dbs["batch_explain"], "--fixes", bad, "--explain")
    feed_queue(dbs["batch_explain"])
    gf("settings", dbs["batch_explain"], "default_timezone", "Asia/Tokyo")
    got["batch_explain.notifications"] = rows_of(dbs["batch_explain"], NOTIFICATIONS)
    got["batch_explain.explain"] = rows_of(dbs["batch_explain"], EXPLANATIONS)
    got["batch_explain.out_csv"] = out.read_text()
    got["batch_explain.state"] = state(dbs["batch_explain"])
    got["batch_explain.queue"] = rows_of(dbs["batch_explain"], "SELECT * FROM my_queue ORDER BY n")
    got["batch_explain.runs"] = runs(dbs["batch_explain"])
    whole = rows_of(dbs["batch_explain"], CANONICAL)
    # Enough rows per subject for several rows per statement, and a batch
    # large enough to build the empty table's index at the end.
    assert len(whole) > 3000, summary
    assert {n[4] for n in whole} == {"IN", "OUT", "DWELL"}
    assert {n[3] for n in whole if n[3] >= 1000}, "filtered and DWELL conditions notify too"
    assert len(got["batch_explain.explain"]) > 100
    assert {r[5] for r in got["batch_explain.explain"]} >= {"invalid", "stale"}

    # One batch, no explanations (judged by a plan): --out is written as the
    # rows are stored, and must be the same file.
    batch_out = tmp_path / "batch-out.csv"
    gf("judge", dbs["batch"], "--fixes", fixes, "--out", batch_out)
    assert batch_out.read_text() == got["batch_explain.out_csv"]
    got["batch.notifications"] = rows_of(dbs["batch"], NOTIFICATIONS)
    got["batch.state"] = state(dbs["batch"])
    assert rows_of(dbs["batch"], CANONICAL) == whole

    # Chunks of several sizes: fewer fixes than areas (the R*Tree asked per
    # fix), and more (every area prepared, judged by a plan); some with --explain.
    k, sizes, n = 0, [7, 1500, 23, 610, 3000], 0
    while k < len(rows):
        size = sizes[n % len(sizes)]
        part = tmp_path / f"part{n}.csv"
        with part.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
            for r in rows[k:k + size]:
                w.writerow([r[0], iso(r[1], 9), r[2], r[3], r[4]])
        gf("judge", dbs["chunks"], "--fixes", part, *(["--explain"] if n % 3 == 1 else []))
        feed_queue(dbs["chunks"])
        k += size
        n += 1
    got["chunks.notifications"] = rows_of(dbs["chunks"], NOTIFICATIONS)
    got["chunks.explain"] = rows_of(dbs["chunks"], EXPLANATIONS)
    got["chunks.state"] = state(dbs["chunks"])
    got["chunks.queue"] = rows_of(dbs["chunks"], "SELECT * FROM my_queue ORDER BY n")
    assert rows_of(dbs["chunks"], CANONICAL) == whole

    # Fix by fix, gf_check in the sqlite3 shell, in one transaction. The
    # numbers go in as integers and are divided in SQL: SQLite's own text to
    # REAL conversion can land one unit in the last place away from the
    # nearest double (139.781447 read as 139.78144700000001), while an
    # integer is exact and a division is correctly rounded.
    scaled = tmp_path / "scaled.csv"
    with open(fixes) as f, scaled.open("w", newline="") as g:
        w = csv.writer(g)
        for r in list(csv.reader(f))[1:]:
            w.writerow([r[0], r[1], round(float(r[2]) * 1e6), round(float(r[3]) * 1e6), round(float(r[4]) * 10)])
    sql(dbs["check"], f"""
CREATE TEMP TABLE fixes (subject_id TEXT, ts TEXT, lat INTEGER, lon INTEGER, accuracy INTEGER);
.import --csv {scaled} fixes
CREATE TEMP TABLE ordered AS SELECT * FROM fixes ORDER BY gf_time(ts), rowid;
BEGIN IMMEDIATE;
SELECT count(gf_check(subject_id, ts, lat / 1000000.0, lon / 1000000.0, accuracy / 10.0)) FROM ordered;
COMMIT;
""")
    got["check.notifications"] = rows_of(dbs["check"], NOTIFICATIONS)
    got["check.state"] = state(dbs["check"])
    assert rows_of(dbs["check"], CANONICAL) == whole

    # The same state whichever way (stay rows may differ in their base, not in what gf_stays shows).
    for k in ("batch", "chunks", "check"):
        for part in ("subjects", "stays", "last_notified"):
            assert got[f"{k}.state"][part] == got["batch_explain.state"][part], (k, part)
    # The cursor read gave every row once, in id order.
    for k in ("batch_explain", "chunks"):
        assert [q[1:] for q in got[f"{k}.queue"]] == [(n[0], n[2], n[3], n[4], n[6]) for n in got[f"{k}.notifications"]]
    # Every database has the stored rows' index, as defined, and a subject's notifications are read through it.
    for k, db in dbs.items():
        assert rows_of(db, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'gf_notification_rows'") \
            == rows_of(base, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'gf_notification_rows'") \
            == [("gf_notification_rows_by_subject",
                 "CREATE INDEX gf_notification_rows_by_subject ON gf_notification_rows (subject_key, ts_us)")], k
        plan = rows_of(db, "EXPLAIN QUERY PLAN SELECT * FROM gf_notifications WHERE subject_id = 'dev-1' AND ts > '2026'")
        assert "gf_notification_rows_by_subject" in str(plan), (k, plan)
        assert rows_of(db, "PRAGMA integrity_check") == [("ok",)], k

    # Every reason carries the exact position of the fix it is about; only
    # the fix whose latitude (95) is off the globe has none.
    placed = {(r[0], r[2], r[3]) for r in rows} | {(f"dev-{i}", 35.71, 139.77) for i in (1, 2, 3)}
    for k in ("batch_explain", "chunks"):
        positions = rows_of(dbs[k], "SELECT subject_id, lat, lon FROM gf_explain ORDER BY rowid")
        assert [p[0] for p in positions if p[1] is None or p[2] is None] == (["dev-0"] if k == "batch_explain" else []), k
        assert all(p in placed for p in positions if p[1] is not None), k

    hashes = {k: digest(v) for k, v in got.items()}
    print(json.dumps(hashes, indent=1))
    assert hashes == EXPECTED
