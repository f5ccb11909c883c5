"""Fixes as users' feeds bring them (issue 36): their own column names
(--columns), epoch milliseconds (--time-unit ms), no accuracy column
(--accuracy-m), local times in the catalog's zone, dates for --since, and
circles given longitude first. Each feed must judge exactly as the same
fixes written the engine's way do."""
import csv
import io
import json

from conftest import ROOT, gf, sql

STANDARD = "subject_id,ts,lat,lon,accuracy_m\n"


def fence(folder):
    """A catalog in `folder` (made if need be) with one circle (1 km around
    35N 139E) notifying on IN and OUT."""
    folder.mkdir(exist_ok=True)
    db = folder / "feed.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "F", "--circle", "35,139,1000")
    gf("conditions", "add", db, "--area", "F", "--timing", "IN")
    gf("conditions", "add", db, "--area", "F", "--timing", "OUT")
    return db


# (subject, Unix seconds, lat, lon, accuracy): out, in, out for u1; in for u2.
FIXES = [("u1", 1795132800, 35.1, 139.0, 5), ("u1", 1795133100, 35.0, 139.0, 5),
         ("u2", 1795133200, 35.0, 139.001, 8), ("u1", 1795133700, 35.2, 139.0, 5)]


def notifications(db, tmp_path, *args, input=None):
    """Judges fixes with `args` into a fresh copy of `db`'s state; returns
    (notification rows without run-specific fields, the judge process)."""
    out = tmp_path / "events.csv"
    p = gf("judge", db, *args, "--out", out, input=input)
    return list(csv.reader(io.StringIO(out.read_text())))[1:], p


def reference(tmp_path):
    """The notifications of FIXES written the engine's way."""
    db = fence(tmp_path / "ref")
    f = tmp_path / "ref" / "fixes.csv"
    f.write_text(STANDARD + "".join(f"{s},{t},{la},{lo},{a}\n" for s, t, la, lo, a in FIXES))
    rows, _ = notifications(db, tmp_path / "ref", "--fixes", f)
    assert len(rows) == 3, rows
    return rows


# 1. Column names as they come.

MAPPING = "subject_id=device_id,lat=latitude,lon=longitude,ts=timestamp,accuracy_m=acc"


def test_a_feed_with_its_own_column_names_judges_as_the_engine_names_do(tmp_path):
    """CSV, NDJSON, standard input and a table, each with the feed's own
    column names, give the notifications of the same fixes as gf_fixes
    names them; columns the engine does not read are left alone."""
    expected = reference(tmp_path)
    rows = [("timestamp", "device_id", "speed", "latitude", "longitude", "acc")] + [(t, s, 3, la, lo, a) for s, t, la, lo, a in FIXES]
    feed = tmp_path / "feed.csv"
    feed.write_text("".join(",".join(map(str, r)) + "\n" for r in rows))
    got, _ = notifications(fence(tmp_path / "a"), tmp_path, "--fixes", feed, "--columns", MAPPING)
    assert got == expected
    ndjson = tmp_path / "feed.ndjson"
    ndjson.write_text("".join(json.dumps({"device_id": s, "timestamp": t, "latitude": la, "longitude": lo, "acc": a}) + "\n"
                              for s, t, la, lo, a in FIXES))
    got, _ = notifications(fence(tmp_path / "b"), tmp_path, "--fixes", ndjson, "--columns", MAPPING)
    assert got == expected
    got, _ = notifications(fence(tmp_path / "c"), tmp_path, "--fixes", "-", "--columns", MAPPING, input=feed.read_text())
    assert got == expected
    db = fence(tmp_path / "d")
    sql(db, "CREATE TABLE feed (device_id TEXT, timestamp INTEGER, latitude REAL, longitude REAL, acc REAL);\n"
        + "".join(f"INSERT INTO feed VALUES ('{s}', {t}, {la}, {lo}, {a});\n" for s, t, la, lo, a in FIXES))
    got, _ = notifications(db, tmp_path, "--table", "feed", "--columns", MAPPING)
    assert got == expected


def test_errors_name_the_users_column_and_a_missing_one_lists_the_header(tmp_path):
    db = fence(tmp_path)
    feed = tmp_path / "feed.csv"
    feed.write_text("device_id,timestamp,latitude,longitude,acc\nu1,1795132800,abc,139,5\nu1,1795132900,95,139,5\n")
    p = gf("judge", db, "--fixes", feed, "--columns", MAPPING)
    assert "invalid fixes: 2 of 2, not judged; the first: row 1: column 'latitude': lat 'abc' is not a number" in p.stderr, p.stderr
    gf("judge", db, "--fixes", feed, "--columns", MAPPING, "--explain")
    reasons = sql(db, "SELECT reason FROM gf_explain WHERE run_id = (SELECT max(run_id) FROM gf_runs) ORDER BY rowid;").stdout
    assert "row 2: column 'latitude': latitude 95.0 outside [-90, 90]" in reasons, reasons
    p = gf("judge", db, "--fixes", feed, "--columns", "subject_id=device_id,lat=lat_deg,lon=longitude,ts=timestamp,accuracy_m=acc", check=False)
    assert p.returncode == 1 and p.stderr.strip() == (
        f"error: {feed}, line 1: the header has no column 'lat_deg' (--columns lat=lat_deg); "
        "its columns: 'device_id', 'timestamp', 'latitude', 'longitude', 'acc'"), p.stderr
    ndjson = tmp_path / "feed.ndjson"
    ndjson.write_text(json.dumps({"device_id": "u1", "timestamp": 1795132800, "lat": 35, "longitude": 139, "acc": 5}) + "\n")
    p = gf("judge", db, "--fixes", ndjson, "--columns", MAPPING)
    assert ("the first: row 1: line 1: no key 'latitude' (--columns lat=latitude); its keys: 'device_id', 'timestamp', 'lat', "
            "'longitude', 'acc'") in p.stderr, p.stderr
    p = gf("judge", db, "--fixes", feed, "--columns", "subject=device_id", check=False)
    assert p.returncode != 0 and "'subject' is no field of a fix; the fields are subject_id, ts, lat, lon, accuracy_m" in p.stderr, p.stderr


def test_locate_takes_the_feeds_column_names_and_accuracy(tmp_path):
    db = fence(tmp_path)
    feed = tmp_path / "where.csv"
    feed.write_text("latitude,longitude\n35,139\n35.0085,139\n40,139\n")
    p = gf("locate", db, "--fixes", feed, "--columns", "lat=latitude,lon=longitude")
    # Without an accuracy a row is exact (behaviour §2): 945 m from the centre is inside.
    assert p.stdout == "row,area_id,verdict\n1,F,inside\n2,F,inside\n", p.stdout
    p = gf("locate", db, "--fixes", feed, "--columns", "lat=latitude,lon=longitude", "--accuracy-m", "100", "--confidence", "0.9")
    assert p.stdout == "row,area_id,verdict\n1,F,inside\n2,F,undecided\n", p.stdout


# 2. Epoch times.

def test_epoch_milliseconds_are_read_when_the_feed_says_so_and_named_when_it_does_not(tmp_path):
    """pandas' default `to_json(orient='records', lines=True)` writes times
    as epoch milliseconds: read as seconds every fix is invalid, and the run
    says so and names --time-unit ms; with it they judge as the seconds do."""
    expected = reference(tmp_path)
    ndjson = tmp_path / "pandas.ndjson"
    ndjson.write_text("".join(json.dumps({"subject_id": s, "ts": t * 1000, "lat": la, "lon": lo, "accuracy_m": a}) + "\n"
                              for s, t, la, lo, a in FIXES))
    db = fence(tmp_path / "a")
    p = gf("judge", db, "--fixes", ndjson)
    assert "0 judged, 0 stale, 4 invalid" in p.stdout, p.stdout
    assert "every invalid fix has a time of 13 digits, read as Unix seconds: epoch milliseconds (pandas' to_json, JavaScript)? " \
        "--time-unit ms reads them" in p.stderr, p.stderr
    got, _ = notifications(db, tmp_path, "--fixes", ndjson, "--time-unit", "ms")
    assert got == expected
    # A fraction of a millisecond is kept to the microsecond; seconds stay the default.
    db = fence(tmp_path / "b")
    f = tmp_path / "ms.csv"
    f.write_text(STANDARD + "u1,1795133100123.5,35,139,5\n")
    got, _ = notifications(db, tmp_path, "--fixes", f, "--time-unit", "ms")
    assert got[0][1] == "2026-11-20T00:05:00.123500Z", got
    p = gf("check", db, "--subject", "u3", "--lat", "35", "--lon", "139", "--accuracy", "5", "--time", "1795133100000", "--time-unit", "ms")
    assert "2026-11-20T00:05:00Z" in p.stdout, p.stdout
    p = gf("judge", db, "--fixes", f, "--time-unit", "minutes", check=False)
    assert p.returncode != 0 and "--time-unit" in p.stderr
    assert "fall before 1973" not in gf("judge", fence(tmp_path / "c"), "--fixes", ndjson, "--time-unit", "ms").stderr
    # A feed mixing both units: its seconds, read as milliseconds, are valid 1970 times; judged, and named.
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(STANDARD + "u1,1795133100123,35,139,5\nu2,1795133100,35,139,5\nu3,1795133160,35,139,5\n")
    p = gf("judge", fence(tmp_path / "d"), "--fixes", mixed, "--time-unit", "ms")
    assert "3 judged" in p.stdout, p.stdout
    assert "2 times read as epoch milliseconds (--time-unit ms) fall before 1973" in p.stderr, p.stderr
    # Read as seconds, its milliseconds are the invalid fixes among valid ones: named too.
    p = gf("judge", fence(tmp_path / "e"), "--fixes", mixed)
    assert "2 judged, 0 stale, 1 invalid" in p.stdout, p.stdout
    assert "1 of the 1 invalid fixes have a time of 13 digits, read as Unix seconds: epoch milliseconds? --time-unit ms " \
        "reads every numeric time so: a feed that also has times in seconds needs converting first" in p.stderr, p.stderr


# 3. Default accuracy.

def test_a_feed_without_accuracy_needs_a_stated_one(tmp_path):
    expected = reference(tmp_path)
    feed = tmp_path / "noacc.csv"
    feed.write_text("subject_id,ts,lat,lon\n" + "".join(f"{s},{t},{la},{lo}\n" for s, t, la, lo, a in FIXES))
    db = fence(tmp_path / "a")
    p = gf("judge", db, "--fixes", feed, check=False)
    assert p.returncode == 1 and p.stderr.strip() == (
        f"error: {feed}, line 1: the header has no column 'accuracy_m' (needs subject_id, ts, lat, lon, accuracy_m); "
        "a feed without accuracies takes one for every row from --accuracy-m METRES; "
        "its columns: 'subject_id', 'ts', 'lat', 'lon' (name yours with --columns accuracy_m=COLUMN)"), p.stderr
    got, _ = notifications(db, tmp_path, "--fixes", feed, "--accuracy-m", "5")
    # The same events, carrying the accuracy the fixes were judged with.
    assert [r[:-1] for r in got] == [r[:-1] for r in expected] and {r[-1] for r in got} == {"5.0"}, got
    ndjson = tmp_path / "noacc.ndjson"
    ndjson.write_text("".join(json.dumps({"subject_id": s, "ts": t, "lat": la, "lon": lo}) + "\n" for s, t, la, lo, a in FIXES))
    p = gf("judge", db, "--fixes", ndjson)
    assert "every invalid fix has no accuracy: --accuracy-m METRES gives fixes without one that accuracy" in p.stderr, p.stderr


# 4. Times without an offset.

def test_times_without_an_offset_are_read_in_the_catalogs_zone_once_set(tmp_path):
    db = fence(tmp_path)
    feed = tmp_path / "local.csv"
    feed.write_text(STANDARD + "u1,2026-11-21 06:25:00,35,139,5\n")
    p = gf("judge", db, "--fixes", feed)
    assert "1 invalid" in p.stdout and "has no UTC offset" in p.stderr, p.stderr
    assert "every invalid fix has a time without a UTC offset: write one (Z, +09:00), or name the zone they are in with " \
        "`geofence settings DB default_timezone ZONE` (Etc/UTC for UTC)" in p.stderr, p.stderr
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    got, _ = notifications(db, tmp_path, "--fixes", feed)
    assert [r[1] for r in got] == ["2026-11-20T21:25:00Z"], got
    p = gf("check", db, "--subject", "u9", "--lat", "35", "--lon", "139", "--accuracy", "5", "--time", "2026-11-21T06:30:00")
    assert "2026-11-20T21:30:00Z" in p.stdout, p.stdout


def test_local_times_across_daylight_saving_changes(tmp_path):
    """New York, 2026: 02:30 on 8 March never happened (refused); 01:30 on
    1 November happened twice (the earlier, EDT, is taken)."""
    db = fence(tmp_path)
    gf("settings", db, "default_timezone", "America/New_York")
    feed = tmp_path / "dst.csv"
    feed.write_text(STANDARD + "u1,2026-03-08T02:30:00,35,139,5\nu2,2026-11-01T01:30:00,35,139,5\nu3,2026-07-01T12:00:00,35,139,5\n")
    got, p = notifications(db, tmp_path, "--fixes", feed)
    assert "local time '2026-03-08T02:30:00' does not exist in America/New_York: the clocks skipped it" in p.stderr, p.stderr
    assert sorted((r[0], r[1]) for r in got) == [("u2", "2026-11-01T05:30:00Z"), ("u3", "2026-07-01T16:00:00Z")], got


# 5. --since takes a date.

def test_since_takes_a_date_as_the_start_of_that_day_in_the_catalogs_zone(tmp_path):
    db = fence(tmp_path)
    feed = tmp_path / "f.csv"
    # IN at 2026-11-19T14:59Z (23:59 in Tokyo), OUT at 15:01Z (00:01 the next day in Tokyo).
    feed.write_text(STANDARD + "u1,2026-11-19T14:59:00Z,35,139,5\nu1,2026-11-19T15:01:00Z,36,139,5\n")
    gf("judge", db, "--fixes", feed)
    listed = gf("notifications", db, "--since", "2026-11-19", "--format", "csv").stdout
    assert listed.count("\n") == 3, listed
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    listed = gf("notifications", db, "--since", "2026-11-20", "--format", "csv").stdout
    assert listed.count("\n") == 2 and ",OUT," in listed, listed
    p = gf("notifications", db, "--since", "2026-11-31", check=False)
    assert p.returncode != 0 and "--since" in p.stderr


# 6. Lon-first where GIS is lon-first.

def test_circles_given_longitude_first_and_every_circle_says_its_centre(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    p = gf("areas", "add", db, "--id", "nyc", "--circle-lonlat", "-74.006,40.7128,100")
    assert p.stdout == "added area nyc: circle, centre 40.7128° N, 74.006° W, radius 100 m\n", p.stdout
    # The same pair written latitude-first by mistake is valid, and its centre in words shows the mistake.
    p = gf("areas", "add", db, "--id", "swapped", "--circle", "-74.006,40.7128,100")
    assert p.stdout == "added area swapped: circle, centre 74.006° S, 40.7128° E, radius 100 m\n", p.stdout
    gf("areas", "add", db, "--id", "nyc2", "--circle", "40.7128,-74.006,100")
    listed = {a["area_id"]: a for a in json.loads(gf("areas", "list", db, "--json").stdout)}
    assert listed["nyc"]["shape"] == listed["nyc2"]["shape"], listed
    p = gf("areas", "add", db, "--id", "bad", "--circle-lonlat", "40.7128,-174.006,100", check=False)
    assert p.returncode == 1 and "--circle-lonlat: LAT must be a latitude in [-90, 90], got -174.006" in p.stderr, p.stderr
    p = gf("areas", "add", db, "--id", "two", "--circle-lonlat", "1,2,3", "--circle", "2,1,3", check=False)
    assert p.returncode == 1 and "give exactly one of --circle, --circle-lonlat and --geometry" in p.stderr, p.stderr


# 7. The accuracy default, stated.

def test_the_readmes_accuracy_example_is_what_the_tool_prints(tmp_path):
    """README's first lines: confidence 0 judges the point (inside); 0.95
    makes the same fix, 56 m inside with an 80 m accuracy, undecided."""
    readme = (ROOT / "README.md").read_text()
    assert "`default_confidence` is 0, so a fix is judged by its point" in readme.split("## Quick start")[0]
    db = tmp_path / "a.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "station", "--circle", "35.681,139.767,300")
    for extra, verdict in [((), "inside"), (("--confidence", "0.95"), "undecided")]:
        row = gf("locate", db, "--lat", "35.6832", "--lon", "139.767", "--accuracy", "80", *extra).stdout.splitlines()[2].split()
        assert row == ["station", verdict, "55.9", "0.8306"], row
        assert f"# station {verdict} 55.9 0.8306" in readme


def test_a_renamed_feed_without_its_accuracy_named_is_told_how_to_name_it(tmp_path):
    """A feed whose other columns are renamed and whose accuracy column is
    not (a new-user trial's `hacc`) is told both ways: a fixed accuracy, or
    naming the column, which a user with real accuracies wants."""
    feed = tmp_path / "renamed.csv"
    feed.write_text("device_id,recorded_at,latitude,longitude,hacc\n" + "".join(f"{s},{t},{la},{lo},{a}\n" for s, t, la, lo, a in FIXES))
    db = fence(tmp_path / "a")
    p = gf("judge", db, "--fixes", feed, "--columns", "subject_id=device_id,ts=recorded_at,lat=latitude,lon=longitude", check=False)
    assert p.returncode == 1 and "--accuracy-m METRES" in p.stderr and "(name yours with --columns accuracy_m=COLUMN)" in p.stderr, p.stderr
