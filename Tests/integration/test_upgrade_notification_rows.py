"""Schema version 7 (notifications as narrow rows, docs/write-path.md):
a catalog made by the build before it (/work/dist-fc3bbd3, or
GEOFENCE_OLD_DIST), holding two judge runs and gf_check calls, conditions in
zones other than UTC and one with a suppression, and a deleted newest
notification, is opened by this build and upgraded in place. Every
documented SQL read then gives what the old build's own reads gave before
the upgrade (gf_notifications with its ids and value types, gf_last_notified,
gf_runs, gf_subjects, gf_stays, the cursor read), and a new run's ids come
after every old one. Also: ids are never handed out again, even after the
newest notifications are deleted or reset; a catalog with a user's trigger
on gf_notifications is not upgraded, the trigger named, nothing changed."""
import csv
import datetime
import json
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import gf, run, sql

OLD = Path(os.environ.get("GEOFENCE_OLD_DIST", "/work/dist-fc3bbd3"))
T0 = datetime.datetime(2026, 11, 20, 20, 0, tzinfo=datetime.timezone.utc)   # late evening UTC: the next day in Tokyo

pytestmark = pytest.mark.skipif(not (OLD / "geofence").exists(), reason=f"needs the build before schema 7 in {OLD}")


def old_gf(*args):
    return run(OLD / "geofence", *args)


def old_sql(db, script):
    """The sqlite3 shell with SpatiaLite and the old build's extension (its gf_check)."""
    return run("sqlite3", "-bail", "-batch", db, input=f".load mod_spatialite\n.load {OLD / 'libgeofence'}\n" + script)


def write_fixes(path, rows):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(rows)


def walk(rng, subjects, start, steps):
    """Subjects hopping between the areas' centres and the space between
    them, a fix every 20–140 minutes (times across UTC midnight, so a
    condition's local day differs from UTC's), some with sub-second times."""
    rows = []
    for s in range(subjects):
        t = start + datetime.timedelta(minutes=rng.uniform(0, 30))
        for _ in range(steps):
            t += datetime.timedelta(minutes=rng.uniform(20, 140), microseconds=rng.choice([0, 0, 250_000, 1]))
            k = rng.randrange(8)
            lon, lat = (139.70 + 0.01 * k, 35.68) if k < 5 else (139.70 + 0.01 * k + 0.005, 35.69)
            rows.append((f"u{s}", t.isoformat(), lat, lon, rng.choice([5, 10, 20.5])))
    return rows


def old_catalog(tmp_path):
    """The catalog as the old build leaves it, and the fixes for a later run."""
    rng = random.Random(38)
    features = [{"type": "Feature", "properties": {"area_id": f"A{k}", "radius_m": 300},
                 "geometry": {"type": "Point", "coordinates": [139.70 + 0.01 * k, 35.68]}} for k in range(5)]
    areas = tmp_path / "areas.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    conds = tmp_path / "conditions.csv"
    conds.write_text("condition_id,area_id,timing,dwell_s,weekdays,start_time,end_time,start_date,end_date,renotify_suppress_days,timezone\n"
                     "900,A1,IN,,,,,,,1,Asia/Tokyo\n"           # a suppression, in Tokyo
                     "901,A2,OUT,,,,,,,,America/New_York\n"
                     "902,A3,DWELL,1800,,,,,,,\n"               # the catalog's default zone (UTC)
                     "903,A4,IN,,,,,,,2,\n")                     # a suppression in UTC
    db = tmp_path / "old.db"
    old_gf("init", db)
    old_gf("import", db, areas, "--with-default-conditions")
    old_gf("conditions", "import", db, conds)
    fixes = walk(rng, 6, T0, 120)
    fixes.sort(key=lambda r: r[1])
    parts = [fixes[:300], fixes[300:500], fixes[500:620], fixes[620:]]
    for n, part in enumerate(parts[:2]):
        write_fixes(tmp_path / f"run{n}.csv", part)
        old_gf("judge", db, "--fixes", tmp_path / f"run{n}.csv")
    for part in parts[2:]:   # two gf_check sessions, fix by fix
        calls = "\n".join(f"SELECT gf_check('{s}', '{t}', {lat}, {lon}, {acc});" for s, t, lat, lon, acc in part)
        old_sql(db, "BEGIN;\n" + calls + "\nCOMMIT;\n")
    con = sqlite3.connect(db)
    newest = con.execute("SELECT id, subject_id, condition_id FROM gf_notifications ORDER BY id DESC LIMIT 1").fetchone()
    con.execute("DELETE FROM gf_notifications WHERE id = ?", (newest[0],))
    con.commit()
    con.close()
    later = walk(rng, 6, T0 + datetime.timedelta(days=12), 40)
    later.sort(key=lambda r: r[1])
    write_fixes(tmp_path / "later.csv", later)
    return db, newest


COLUMNS = "id, run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m"
READS = {
    "notifications": f"SELECT {COLUMNS} FROM gf_notifications ORDER BY id",
    "types": "SELECT typeof(id), typeof(run_id), typeof(subject_id), typeof(ts), typeof(area_id), typeof(condition_id), "
             "typeof(transition), typeof(lat), typeof(lon), typeof(accuracy_m) FROM gf_notifications ORDER BY id",
    "canonical": f"SELECT {COLUMNS} FROM gf_notifications ORDER BY subject_id, ts, area_id, condition_id, id",
    "one subject": f"SELECT {COLUMNS} FROM gf_notifications WHERE subject_id = 'u3' AND ts >= '2026-11-22' ORDER BY ts, id",
    "cursor": f"SELECT {COLUMNS} FROM gf_notifications WHERE id > 40 ORDER BY id",
    "runs": "SELECT * FROM gf_runs ORDER BY run_id",
    "subjects": "SELECT * FROM gf_subjects ORDER BY subject_id",
    "stays": "SELECT * FROM gf_stays ORDER BY subject_id, area_id",
    "last notified": "SELECT subject_id, condition_id, local_date, typeof(local_date) FROM gf_last_notified ORDER BY subject_id, condition_id",
}


def reads(db):
    con = sqlite3.connect(db)
    try:
        return {k: [tuple(r) for r in con.execute(q)] for k, q in READS.items()}
    finally:
        con.close()


def test_an_old_catalog_is_upgraded_and_reads_as_before(tmp_path):
    db, newest = old_catalog(tmp_path)
    before = reads(db)
    assert len(before["notifications"]) > 200
    assert {n[6] for n in before["notifications"]} == {"IN", "OUT", "DWELL"}
    assert {n[5] for n in before["notifications"]} >= {900, 901, 902, 903}
    assert {n[1] for n in before["notifications"]} == {0, 1, 2}   # two runs and the gf_check calls (run_id 0)
    assert any(not r[3].endswith(".000000Z") for r in before["notifications"]), "sub-second times"

    gf("settings", db)   # opening upgrades
    after = reads(db)
    con = sqlite3.connect(db)
    assert con.execute("SELECT value FROM gf_meta WHERE key = 'schema_version'").fetchone()[0] == "7"
    assert con.execute("SELECT type FROM sqlite_master WHERE name = 'gf_notifications'").fetchone()[0] == "view"
    con.close()
    for k in READS:
        if k != "last notified":
            assert after[k] == before[k], k
    # gf_last_notified is read from the notifications: the (subject, condition)
    # of the deleted one shows the day of its latest remaining notification,
    # every other is as the old table kept it.
    assert len(after["last notified"]) > 10
    old_days = {r[:2]: r[2:] for r in before["last notified"]}
    new_days = {r[:2]: r[2:] for r in after["last notified"]}
    assert set(new_days) <= set(old_days)
    assert {k for k in old_days if new_days.get(k) != old_days[k]} <= {tuple(newest[1:])}
    # The zones matter: for Tokyo's and New York's conditions some local dates are not the UTC date of the latest notification.
    latest = {}
    for n in before["notifications"]:
        latest[(n[2], n[5])] = n[3][:10]
    zoned = [k for k, v in new_days.items() if k[1] in (900, 901) and k != tuple(newest[1:]) and v[0] != latest[k]]
    assert zoned, "a local date that is not the UTC date"

    # A new run: its ids come after every old one, and the cursor reads exactly its rows.
    last_old = before["notifications"][-1][0]
    gf("judge", db, "--fixes", tmp_path / "later.csv")
    con = sqlite3.connect(db)
    new = con.execute(f"SELECT {COLUMNS} FROM gf_notifications WHERE id > ? ORDER BY id", (last_old,)).fetchall()
    run_id = con.execute("SELECT max(run_id) FROM gf_runs").fetchone()[0]
    assert new and {r[1] for r in new} == {run_id}
    assert min(r[0] for r in new) > last_old
    assert con.execute(f"SELECT {COLUMNS} FROM gf_notifications WHERE id <= ? ORDER BY id", (last_old,)).fetchall() == before["notifications"]
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()


def test_ids_are_never_handed_out_again(tmp_path):
    """Deleting the newest notifications (a pruning DELETE through the
    view) or `reset --notifications` leaves later ones with larger ids, so a
    consumer's cursor never skips one."""
    db = tmp_path / "c.db"
    areas = tmp_path / "a.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"area_id": "A", "radius_m": 300}, "geometry": {"type": "Point", "coordinates": [139.7, 35.68]}}]}))
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    def fixes(name, day):
        rows = []
        for k in range(6):
            t = T0 + datetime.timedelta(days=day, hours=k)
            rows.append(("u1", t.isoformat(), 35.68 if k % 2 == 0 else 35.70, 139.7, 5))
        write_fixes(tmp_path / name, rows)
        return tmp_path / name
    gf("judge", db, "--fixes", fixes("1.csv", 0))
    con = sqlite3.connect(db)
    top = con.execute("SELECT max(id) FROM gf_notifications").fetchone()[0]
    assert top >= 4
    con.execute("DELETE FROM gf_notifications WHERE id >= ?", (top - 1,))
    con.commit()
    assert con.execute("SELECT max(id) FROM gf_notifications").fetchone()[0] == top - 2
    gf("judge", db, "--fixes", fixes("2.csv", 1))
    second = con.execute("SELECT min(id), max(id) FROM gf_notifications WHERE run_id = 2").fetchone()
    assert second[0] == top + 1, second
    gf("reset", db, "--notifications")
    assert con.execute("SELECT count(*) FROM gf_notifications").fetchone()[0] == 0
    gf("judge", db, "--fixes", fixes("3.csv", 2))
    assert con.execute("SELECT min(id) FROM gf_notifications").fetchone()[0] == second[1] + 1
    con.close()


def test_a_users_trigger_on_the_old_table_stops_the_upgrade(tmp_path):
    db = tmp_path / "old.db"
    old_gf("init", db)
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE q (id); CREATE TRIGGER my_feed AFTER INSERT ON gf_notifications BEGIN INSERT INTO q VALUES (NEW.id); END;")
    con.close()
    before = db.read_bytes()
    p = gf("settings", db, check=False)
    assert p.returncode != 0
    assert "'my_feed' on gf_notifications" in p.stderr and "WHERE id > :last_seen" in p.stderr, p.stderr
    assert db.read_bytes() == before


def test_times_at_the_edges_read_as_the_old_build_wrote_them(tmp_path):
    """The gf_notifications view rebuilds `ts` from microseconds, and
    gf_last_notified its date from a day number: sub-second times, times
    before 1970, the first and last storable instants, and local dates in
    years -1 and 10000 (zones 11 and 14 hours off UTC) must read exactly as
    the old build's text rows do, judged from the same fixes."""
    edges = [("early", "0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000001Z"),
             ("pre1970", "1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.999999Z"),
             ("epoch", "1969-12-31T23:59:59.999999Z", "1970-01-01T00:00:00.000001Z"),
             ("subsecond", "2026-11-20T12:00:00.25Z", "2026-11-20T12:00:00.250001Z"),
             ("late", "9999-12-31T23:59:59.5Z", "9999-12-31T23:59:59.999999Z")]
    fixes = tmp_path / "edges.csv"
    write_fixes(fixes, [row for s, a, b in edges for row in ((s, a, 35.68, 139.7, 5), (s, b, 35.70, 139.7, 5))])
    conds = tmp_path / "c.csv"
    conds.write_text("condition_id,area_id,timing,dwell_s,weekdays,start_time,end_time,start_date,end_date,renotify_suppress_days,timezone\n"
                     "900,A,IN,,,,,,,1,Pacific/Kiritimati\n"
                     "901,A,OUT,,,,,,,,Pacific/Pago_Pago\n")
    areas = tmp_path / "a.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"area_id": "A", "radius_m": 300}, "geometry": {"type": "Point", "coordinates": [139.7, 35.68]}}]}))
    got = []
    for cli in (OLD / "geofence", None):
        db = tmp_path / f"{'old' if cli else 'new'}.db"
        tool = (lambda *a: run(cli, *a)) if cli else gf
        tool("init", db)
        tool("import", db, areas, "--with-default-conditions")
        tool("conditions", "import", db, conds)
        tool("judge", db, "--fixes", fixes)
        got.append({k: reads(db)[k] for k in ("notifications", "types", "last notified")})
    assert got[0] == got[1]
    dates = {r[2] for r in got[1]["last notified"]}
    assert {"-0001-12-31", "10000-01-01"} <= dates, dates
    assert {r[3] for r in got[1]["notifications"]} >= {"0000-01-01T00:00:00.000000Z", "1969-12-31T23:59:59.500000Z",
                                                      "9999-12-31T23:59:59.999999Z", "2026-11-20T12:00:00.250000Z"}


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_v6"
FIXTURE_READS = {   # Tests/fixtures/catalog_v6/make.py's reads
    "notifications": f"SELECT {COLUMNS} FROM gf_notifications ORDER BY id",
    "subjects": "SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes FROM gf_subjects ORDER BY subject_id",
    "stays": "SELECT subject_id, area_id, state, in_streak, out_streak, entered_at, dwell_spent FROM gf_stays ORDER BY subject_id, area_id",
    "last_notified": "SELECT subject_id, condition_id, local_date FROM gf_last_notified ORDER BY subject_id, condition_id",
    "runs": "SELECT run_id, kind, source, started_at, fixes, judged, stale, invalid, transitions, notifications, filtered FROM gf_runs "
            "ORDER BY run_id",
    "explain": "SELECT run_id, subject_id, ts, area_id, condition_id, kind, reason, lat, lon FROM gf_explain ORDER BY rowid",
}


def fixture_reads(db):
    con = sqlite3.connect(db)
    try:
        return {k: [[repr(v) if isinstance(v, float) else v for v in row] for row in con.execute(q)] for k, q in FIXTURE_READS.items()}
    finally:
        con.close()


def test_the_version_6_fixture_reads_as_that_build_read_it_once_upgraded(tmp_path):
    """The catalog of Tests/fixtures/catalog_v6 (the identity workload judged
    by the fc3bbd3 build: two runs, gf_check calls, explanations, the newest
    notification deleted), read into a version-6 catalog and upgraded by
    opening it: every documented read is what that build gave (reads.json),
    and judging the further batch gives what that build gave (next.json).
    gf_last_notified is read from the notifications: only the (subject,
    condition) of the deleted newest notification may show another day."""
    db = tmp_path / "v6.db"
    gf("init", db, "--schema-version", "6")
    sql(db, f".read {FIXTURE / 'rows.sql'}\n")
    assert run("sqlite3", db, "SELECT value FROM gf_meta WHERE key = 'schema_version'").stdout.strip() == "6"
    gf("settings", db)
    expected = json.loads((FIXTURE / "reads.json").read_text())
    got = fixture_reads(db)
    for k in FIXTURE_READS:
        if k != "last_notified":
            assert got[k] == expected[k], k
    old_days = {tuple(r[:2]): r[2] for r in expected["last_notified"]}
    new_days = {tuple(r[:2]): r[2] for r in got["last_notified"]}
    assert len({k for k in old_days.keys() | new_days.keys() if old_days.get(k) != new_days.get(k)}) <= 1

    gf("judge", db, "--fixes", FIXTURE / "next.csv")
    expected = json.loads((FIXTURE / "next.json").read_text())
    got = fixture_reads(db)
    for k in ("notifications", "subjects", "stays", "explain"):
        assert got[k] == expected[k], k
    # The new run's source (the file's path) and start differ; its counts do not.
    assert [r[:2] + r[4:] for r in got["runs"]] == [r[:2] + r[4:] for r in expected["runs"]]
