"""Schema version 7 (notifications as narrow rows, docs/write-path.md):
a catalog of version 6 holding two judge runs and gf_check calls,
conditions in zones other than UTC and one with a suppression, and a
deleted newest notification, is opened by this build and upgraded in place.
Every documented SQL read then gives what the version-6 build's own reads
gave before the upgrade (gf_notifications with its ids and value types,
gf_last_notified, gf_runs, gf_subjects, gf_stays, the cursor read), and a
new run's ids come after every old one. Ids are never handed out again, even
after the newest notifications are deleted or reset. Times at the edges
(sub-second, before 1970, years 0 and 9999, local dates in years -1 and
10000) read as that build wrote them.

The version-6 catalogs and that build's reads are fixtures, each written
by its make.py with the build of fc3bbd3 (Tests/fixtures/v6_notification_rows,
Tests/fixtures/v6_edge_times), so only this build runs here. A user's
trigger on gf_notifications stopping the upgrade is test_upgrade_v6.py's."""
import csv
import datetime
import json
import sqlite3

from conftest import ROOT, gf
from older_layouts import version_6_catalog

FIXTURES = ROOT / "Tests" / "fixtures"
T0 = datetime.datetime(2026, 11, 20, 20, 0, tzinfo=datetime.timezone.utc)


def write_fixes(path, rows):
    """A fixes CSV of (subject_id, ts, lat, lon, accuracy_m) rows."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(rows)


COLUMNS = "id, run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m"
# The reads the fixtures' make.py ran with the version-6 build (it imports them from here).
READS = {
    "notifications": f"SELECT {COLUMNS} FROM gf_notifications ORDER BY id",
    "types": "SELECT typeof(id), typeof(run_id), typeof(subject_id), typeof(ts), typeof(area_id), typeof(condition_id), "
             "typeof(transition), typeof(lat), typeof(lon), typeof(accuracy_m) FROM gf_notifications ORDER BY id",
    "canonical": f"SELECT {COLUMNS} FROM gf_notifications ORDER BY subject_id, ts, area_id, condition_id, id",
    "one subject": f"SELECT {COLUMNS} FROM gf_notifications WHERE subject_id = 'u3' AND ts >= '2026-11-22' ORDER BY ts, id",
    "cursor": f"SELECT {COLUMNS} FROM gf_notifications WHERE id > 40 ORDER BY id",
    # The columns version 6 had (version 10 adds status).
    "runs": "SELECT run_id, kind, source, started_at, fixes, judged, stale, invalid, transitions, notifications, filtered, "
            "dropped_accuracy, dropped_distance FROM gf_runs ORDER BY run_id",
    "subjects": "SELECT * FROM gf_subjects ORDER BY subject_id",
    "stays": "SELECT * FROM gf_stays ORDER BY subject_id, area_id",
    "last notified": "SELECT subject_id, condition_id, local_date, typeof(local_date) FROM gf_last_notified ORDER BY subject_id, condition_id",
}
# Reads of notification rows in another order, or some of them: the fixture
# keeps the ids of their rows, in order (the rows are in "notifications").
BY_ID = ("canonical", "one subject", "cursor")


def made_reads(fixture):
    """(the version-6 build's reads as reads() gives them, the notification
    it deleted as [id, subject_id, condition_id]) from fixture/reads.json."""
    made = json.loads((fixture / "reads.json").read_text())
    (deleted,) = made.pop("deleted")
    by_id = {r[0]: r for r in made["notifications"]}
    return {k: [by_id[i] for i in v] if k in BY_ID else v for k, v in made.items()}, deleted


def reads(db, names=READS):
    """The named reads as JSON gives them back (rows as lists; REALs exact)."""
    con = sqlite3.connect(db)
    try:
        return json.loads(json.dumps({k: [list(r) for r in con.execute(READS[k])] for k in names}))
    finally:
        con.close()


def stored(db, query, args=()):
    """The query's rows as sqlite3 gives them (tuples)."""
    con = sqlite3.connect(db)
    try:
        return con.execute(query, args).fetchall()
    finally:
        con.close()


def test_an_old_catalog_is_upgraded_and_reads_as_before(tmp_path):
    fixture = FIXTURES / "v6_notification_rows"
    before, newest = made_reads(fixture)
    db = version_6_catalog(tmp_path / "old.db", fixture / "rows.sql")
    assert stored(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [("6",)]
    assert reads(db) == before   # the fixture's rows are what that build read
    assert len(before["notifications"]) > 200
    assert {n[6] for n in before["notifications"]} == {"IN", "OUT", "DWELL"}
    assert {n[5] for n in before["notifications"]} >= {900, 901, 902, 903}
    assert {n[1] for n in before["notifications"]} == {0, 1, 2}   # two runs and the gf_check calls (run_id 0)
    assert any(not r[3].endswith(".000000Z") for r in before["notifications"]), "sub-second times"

    gf("settings", db)   # opening upgrades
    after = reads(db)
    assert int(stored(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'")[0][0]) >= 7
    assert stored(db, "SELECT type FROM sqlite_master WHERE name = 'gf_notifications'") == [("view",)]
    for k in READS:
        if k != "last notified":
            assert after[k] == before[k], k
    # gf_last_notified: the (subject, condition) of the deleted notification
    # may show the day of its latest remaining one; every other is as the
    # old table kept it.
    assert len(after["last notified"]) > 10
    old_days = {tuple(r[:2]): r[2:] for r in before["last notified"]}
    new_days = {tuple(r[:2]): r[2:] for r in after["last notified"]}
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
    gf("judge", db, "--fixes", fixture / "later.csv")
    new = stored(db, f"SELECT {COLUMNS} FROM gf_notifications WHERE id > ? ORDER BY id", (last_old,))
    run_id = stored(db, "SELECT max(run_id) FROM gf_runs")[0][0]
    assert new and {r[1] for r in new} == {run_id}
    assert min(r[0] for r in new) > last_old
    kept = stored(db, f"SELECT {COLUMNS} FROM gf_notifications WHERE id <= ? ORDER BY id", (last_old,))
    assert json.loads(json.dumps(kept)) == before["notifications"]
    assert stored(db, "PRAGMA integrity_check") == [("ok",)]


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


def test_times_at_the_edges_read_as_the_old_build_wrote_them(tmp_path):
    """The gf_notifications view rebuilds `ts` from microseconds, and
    gf_last_notified its date from a day number: sub-second times, times
    before 1970, the first and last storable instants, and local dates in
    years -1 and 10000 (zones 11 and 14 hours off UTC) must read exactly as
    the version-6 build's text rows do (reads.json), judged from the same
    fixes by this build, and in that build's catalog once upgraded."""
    fixture = FIXTURES / "v6_edge_times"
    want = json.loads((fixture / "reads.json").read_text())
    names = ("notifications", "types", "last notified")
    db = tmp_path / "new.db"
    gf("init", db)
    gf("import", db, fixture / "areas.geojson", "--with-default-conditions")
    gf("conditions", "import", db, fixture / "conditions.csv")
    gf("judge", db, "--fixes", fixture / "fixes.csv")
    assert reads(db, names) == want
    dates = {r[2] for r in want["last notified"]}
    assert {"-0001-12-31", "10000-01-01"} <= dates, dates
    assert {r[3] for r in want["notifications"]} >= {"0000-01-01T00:00:00.000000Z", "1969-12-31T23:59:59.500000Z",
                                                     "9999-12-31T23:59:59.999999Z", "2026-11-20T12:00:00.250000Z"}
    old = version_6_catalog(tmp_path / "old.db", fixture / "rows.sql")
    gf("settings", old)   # opening upgrades
    assert int(stored(old, "SELECT value FROM gf_meta WHERE key = 'schema_version'")[0][0]) >= 7
    assert reads(old, names) == want
