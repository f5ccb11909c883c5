"""The scenario of the retention tests (test_prune.py,
test_prune_space_and_sql.py): a catalog with one area and a suppressed
condition, daily runs judged with --explain whose starts are set to their
day, and what a prune before a date must remove, counted in SQL."""
import csv
import datetime
import json
import sqlite3

from conftest import gf, stored_rows

DAY0 = datetime.datetime(2026, 11, 20, 8, 0, tzinfo=datetime.timezone.utc)
# A 300 m circle at A; B is 2 km away, outside it.
A, B = (35.68, 139.70), (35.70, 139.70)


def catalog(tmp_path, suppress_days=2):
    """Area A with its default IN (1) and OUT (2), and condition 7: an IN
    suppressed for `suppress_days` days after it notified (what the
    suppression reads lives in the subject's record, not in the
    notifications). test_last_notified_view.py uses it too."""
    areas = tmp_path / "a.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"area_id": "A", "radius_m": 300},
         "geometry": {"type": "Point", "coordinates": [A[1], A[0]]}}]}))
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    con = sqlite3.connect(db)
    with con:
        con.execute("INSERT INTO gf_conditions (condition_id, area_id, timing, renotify_suppress_days) VALUES (7, 'A', 'IN', ?)", (suppress_days,))
    con.close()
    return db


def judge_day(db, tmp_path, day, visits=3, subjects=("u1", "u2")):
    """One daily run: each subject in and out of A `visits` times, 10
    minutes a fix, on day `day` after DAY0, with --explain (the repeated
    INs of condition 7 are suppressed and explained). The run's start is
    set to that day's end, as a daily job's would be."""
    path = tmp_path / f"day{day}.csv"
    start = DAY0 + datetime.timedelta(days=day)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for s in subjects:
            for k in range(visits * 2):
                lat, lon = A if k % 2 == 0 else B
                w.writerow([s, (start + datetime.timedelta(minutes=10 * k)).isoformat(), lat, lon, 5])
    gf("judge", db, "--fixes", path, "--explain")
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE gf_runs SET started_at = ? WHERE run_id = (SELECT max(run_id) FROM gf_runs)",
                    ((start + datetime.timedelta(hours=15)).strftime("%Y-%m-%dT%H:%M:%SZ"),))
    con.close()


def month(tmp_path, days=4):
    db = catalog(tmp_path)
    for d in range(days):
        judge_day(db, tmp_path, d)
    return db


def counts(db):
    return {t: stored_rows(db, f"SELECT count(*) FROM {t}")[0][0] for t in ("gf_notification_rows", "gf_explain", "gf_runs")}


def older_than(db, cutoff):
    """What a prune before `cutoff` (a datetime) must remove: (notifications, explanations, runs)."""
    us = int(cutoff.timestamp()) * 1_000_000
    text = cutoff.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    n = stored_rows(db, "SELECT count(*) FROM gf_notification_rows WHERE ts_us < ?", (us,))[0][0]
    e = stored_rows(db, "SELECT count(*) FROM gf_explain WHERE ts < ?", (text,))[0][0]
    r = stored_rows(db, """SELECT count(*) FROM gf_runs WHERE started_at < ? AND run_id < (SELECT max(run_id) FROM gf_runs)
                           AND run_id NOT IN (SELECT run_id FROM gf_notification_rows WHERE ts_us >= ?)
                           AND run_id NOT IN (SELECT run_id FROM gf_explain WHERE ts >= ?)""",
                    (cutoff.strftime("%Y-%m-%dT%H:%M:%SZ"), us, text))[0][0]
    return n, e, r


def state(db):
    """Every subject's state as `geofence state export` writes it, and gf_inside."""
    return gf("state", "export", db).stdout, stored_rows(db, "SELECT * FROM gf_inside ORDER BY 1, 2")


def cursor_read(db, last_seen):
    """The consumer of docs/sql.md: what came after last_seen, in id order."""
    return stored_rows(db, "SELECT id, subject_id, ts, condition_id FROM gf_notifications WHERE id > ? ORDER BY id", (last_seen,))
