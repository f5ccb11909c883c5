"""Stream-only judging, for pipelines: `judge --out FILE
--no-store-notifications` writes the notifications to FILE (or standard
output) only; the catalog stores no notification, yet records the run with
its counts and stores the subjects' state, exactly as a storing run does."""
import csv
import datetime
import json
import shutil
import sqlite3

from conftest import gf

T0 = datetime.datetime(2026, 11, 20, 8, 0, tzinfo=datetime.timezone.utc)


def catalog(tmp_path):
    areas = tmp_path / "a.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"area_id": f"A{k}", "radius_m": 300},
         "geometry": {"type": "Point", "coordinates": [139.7 + 0.01 * k, 35.68]}} for k in range(3)]}))
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    fixes = tmp_path / "fixes.csv"
    with fixes.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for s in range(4):
            for k in range(30):
                t = T0 + datetime.timedelta(minutes=17 * k + s)
                spot = (k + s) % 4   # 3: between the areas
                w.writerow([f"u{s}", t.isoformat(), 35.68 if spot < 3 else 35.70, 139.7 + 0.01 * min(spot, 2), 8])
    return db, fixes


def rows(db, query):
    con = sqlite3.connect(db)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


STATE = ["SELECT * FROM gf_subjects ORDER BY subject_id", "SELECT * FROM gf_stays ORDER BY subject_id, area_id"]
RUNS = "SELECT run_id, kind, fixes, judged, stale, invalid, transitions, notifications, filtered FROM gf_runs ORDER BY run_id"


def test_stream_only_writes_the_file_and_stores_the_state_but_no_notification(tmp_path):
    db, fixes = catalog(tmp_path)
    stored = tmp_path / "stored.db"
    shutil.copy(db, stored)
    gf("judge", stored, "--fixes", fixes, "--out", tmp_path / "stored.csv")

    summary = gf("judge", db, "--fixes", fixes, "--out", tmp_path / "streamed.csv", "--no-store-notifications").stdout
    streamed = (tmp_path / "streamed.csv").read_text()
    assert streamed == (tmp_path / "stored.csv").read_text()
    assert streamed.count("\n") > 20, summary
    assert rows(db, "SELECT count(*) FROM gf_notifications") == [(0,)]
    assert rows(db, "SELECT count(*) FROM gf_last_notified") == [(0,)]
    assert rows(db, RUNS) == rows(stored, RUNS)
    assert rows(db, RUNS)[0][7] == streamed.count("\n") - 1   # the header
    for q in STATE:
        assert rows(db, q) == rows(stored, q) != []

    # To standard output too; a later storing run then stores only its own.
    more = tmp_path / "more.csv"
    more.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                    f"u0,{(T0 + datetime.timedelta(days=1)).isoformat()},35.70,139.7,8\n"
                    f"u0,{(T0 + datetime.timedelta(days=1, minutes=5)).isoformat()},35.68,139.7,8\n")
    p = gf("judge", db, "--fixes", more, "--out", "-", "--no-store-notifications")
    assert p.stdout.splitlines()[0].startswith("subject_id,") and len(p.stdout.splitlines()) >= 2, p.stdout
    assert rows(db, "SELECT count(*) FROM gf_notifications") == [(0,)]


def test_stream_only_needs_out(tmp_path):
    db, fixes = catalog(tmp_path)
    p = gf("judge", db, "--fixes", fixes, "--no-store-notifications", check=False)
    assert p.returncode != 0 and "--no-store-notifications needs --out" in p.stderr, p.stderr
    assert rows(db, "SELECT count(*) FROM gf_runs") == [(0,)]


def test_listing_a_stream_only_run_says_its_notifications_were_not_stored(tmp_path):
    db, fixes = catalog(tmp_path)
    gf("judge", db, "--fixes", fixes, "--out", tmp_path / "o.csv", "--no-store-notifications")
    p = gf("notifications", db, "--run", "1", "--format", "csv")
    assert p.stdout == "subject_id,ts,area_id,condition_id,transition,lat,lon,accuracy_m\n"
    counted = rows(db, "SELECT notifications FROM gf_runs WHERE run_id = 1")[0][0]
    assert counted > 0
    assert f"run 1 counted {counted} notifications and the catalog holds none of them" in p.stderr
