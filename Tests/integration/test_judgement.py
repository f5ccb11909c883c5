"""Judgement end to end with the real binaries: batch vs chunks vs fix by fix
(SQL gf_check and `geofence check`), inputs, invalid rows, atomicity."""
import csv
import io
import json
import math
import random
import shutil

import pytest

from conftest import SAMPLES, gf, run, snapshot, sql, judge_while_another_writes


def heptagon(lon, lat, r):
    """A GeoJSON polygon: seven corners on an ellipse of half-axes r (lon) and 0.8 r (lat) degrees."""
    ring = [[lon + r * math.cos(a), lat + 0.8 * r * math.sin(a)] for a in [k * 2 * math.pi / 7 for k in range(7)]]
    return {"type": "Polygon", "coordinates": [ring + [ring[0]]]}


def scenario(tmp_path, subjects=4, per_subject=150, seed=21):
    """A compact, busy scenario: 12 overlapping areas within ~2 km of Ueno,
    conditions with every filter, subjects random-walking across them for
    three days with realistic accuracy. Returns (db, fixes.csv path, rows)."""
    rng = random.Random(seed)
    lon0, lat0 = 139.772, 35.712
    features = []
    for i in range(12):
        lon, lat = lon0 + rng.uniform(-0.012, 0.012), lat0 + rng.uniform(-0.01, 0.01)
        props = {"area_id": f"A{i:02d}", "in_confirm_count": rng.choice([1, 1, 2, 3]),
                 "out_confirm_count": rng.choice([1, 2]), "in_accuracy_max_m": rng.choice([None, 60, 200])}
        if i % 4 == 0:
            props["confidence"] = 0.9
        if i == 5:
            props["valid_from"] = "2026-11-21T00:00:00+09:00"
        if i % 3 == 0:
            props["radius_m"] = rng.uniform(120, 500)
            geometry = {"type": "Point", "coordinates": [lon, lat]}
        else:
            geometry = heptagon(lon, lat, rng.uniform(0.002, 0.006))
        features.append({"type": "Feature", "properties": {k: v for k, v in props.items() if v is not None}, "geometry": geometry})
    areas = tmp_path / "areas.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    conds = tmp_path / "conditions.csv"
    with conds.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition_id", "area_id", "timing", "dwell_s", "weekdays", "start_time", "end_time", "start_date", "end_date",
                    "renotify_suppress_days", "timezone"])
        cid = 1
        for i in range(12):
            a = f"A{i:02d}"
            w.writerow([cid, a, "IN", "", "", "", "", "", "", "", ""]); cid += 1
            w.writerow([cid, a, "OUT", "", "", "", "", "", "", "", ""]); cid += 1
            w.writerow([cid, a, "DWELL", rng.choice([0, 300, 900]), "", "", "", "", "", "", ""]); cid += 1
            w.writerow([cid, a, "IN", "", "Sat,Sun", "22:00", "06:00", "", "", "1", "Asia/Tokyo"]); cid += 1
            w.writerow([cid, a, "OUT", "", "", "09:00", "", "2026-11-21", "2026-11-22", "1", "America/New_York"]); cid += 1
    db = tmp_path / "scenario.db"
    gf("init", db)
    gf("import", db, areas)
    gf("conditions", "import", db, conds)
    rows = []
    state = [[lon0 + rng.uniform(-0.01, 0.01), lat0 + rng.uniform(-0.01, 0.01), 1_763_650_000 + rng.uniform(0, 600)] for _ in range(subjects)]
    for step in range(per_subject):
        for s in range(subjects):
            lon, lat, t = state[s]
            lon += rng.gauss(0, 0.0012); lat += rng.gauss(0, 0.001)
            lon = min(max(lon, lon0 - 0.02), lon0 + 0.02); lat = min(max(lat, lat0 - 0.016), lat0 + 0.016)
            t += rng.uniform(60, 1800)
            state[s] = [lon, lat, t]
            acc = round(rng.uniform(3, 40) if rng.random() < 0.85 else rng.uniform(40, 400), 1)
            rows.append((f"dev-{s}", t, round(lat, 6), round(lon, 6), acc))
    rows.sort(key=lambda r: r[1])
    fixes = tmp_path / "fixes.csv"
    write_fixes(fixes, rows)
    return db, fixes, rows


def write_fixes(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for r in rows:
            w.writerow([r[0], iso(r[1]), r[2], r[3], r[4]])


def iso(t):
    import datetime
    return datetime.datetime.fromtimestamp(t, datetime.timezone(datetime.timedelta(hours=9))).isoformat()


def notifications(db):
    return [tuple(r.values()) for r in json.loads(gf("notifications", db, "--json").stdout)]


def test_whole_chunks_and_fix_by_fix_are_identical(tmp_path):
    db, fixes, rows = scenario(tmp_path)
    copies = {k: tmp_path / f"{k}.db" for k in ("chunks", "sql", "cli")}
    for p in copies.values():
        shutil.copy(db, p)
    out = gf("judge", db, "--fixes", fixes).stdout
    whole = notifications(db)
    assert len(whole) > 40, out
    assert {n[4] for n in whole} == {"IN", "OUT", "DWELL"}

    for i in range(0, len(rows), 37):
        part = tmp_path / f"part{i}.csv"
        write_fixes(part, rows[i:i + 37])
        gf("judge", copies["chunks"], "--fixes", part)
    assert notifications(copies["chunks"]) == whole

    # Plain SQL, one gf_check per fix, in time order.
    sql(copies["sql"], f"""
CREATE TEMP TABLE fixes (subject_id TEXT, ts TEXT, lat REAL, lon REAL, accuracy_m REAL);
.import --csv --skip 1 {fixes} fixes
CREATE TEMP TABLE ordered AS SELECT * FROM fixes ORDER BY gf_time(ts), rowid;
SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM ordered ORDER BY rowid;
""")
    assert notifications(copies["sql"]) == whole

    # `geofence check` per fix, for the first 120 fixes, against a whole run of those 120.
    first = tmp_path / "first.csv"
    write_fixes(first, rows[:120])
    ref = tmp_path / "ref.db"
    shutil.copy(copies["cli"], ref)
    gf("judge", ref, "--fixes", first)
    for r in rows[:120]:
        gf("check", copies["cli"], "--subject", r[0], "--lat", r[2], "--lon", r[3], "--accuracy", r[4], "--time", iso(r[1]))
    assert notifications(copies["cli"]) == notifications(ref)
    # The state is the same too.
    assert gf("state", copies["cli"], "--json").stdout == gf("state", ref, "--json").stdout


def test_inbox_ndjson_out_and_invalid_rows(tmp_path):
    db = tmp_path / "d.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--group", "G", "--with-default-conditions")
    nd = tmp_path / "fixes.ndjson"
    nd.write_text("\n".join([
        json.dumps({"subject_id": "p", "ts": "2026-11-20T09:00:00+09:00", "lat": 35.715, "lon": 139.773, "accuracy_m": 10}),
        json.dumps({"subject_id": "p", "ts": 1795133400, "lat": 35.7115, "lon": 139.771, "accuracy_m": 10}),
        json.dumps({"subject_id": "p", "ts": "2026-11-20T09:20:00", "lat": 35.715, "lon": 139.773, "accuracy_m": 10}),
        json.dumps({"subject_id": "p", "ts": "2026-11-20T09:30:00Z", "lat": 95, "lon": 139.773, "accuracy_m": 10}),
        json.dumps({"subject_id": "p", "ts": "2026-11-20T09:40:00Z", "lat": 35.715, "lon": 139.773, "accuracy_m": -1}),
        "{not json",
        json.dumps({"subject_id": "p", "ts": "2026-11-20T08:00:00+09:00", "lat": 35.715, "lon": 139.773, "accuracy_m": 10}),
    ]) + "\n")
    out = tmp_path / "n.csv"
    p = gf("judge", db, "--fixes", nd, "--out", out, "--explain")
    assert "7 fixes: 3 judged, 0 stale, 4 invalid; 2 transitions, 2 notifications" in p.stdout
    # The first invalid fix's reason goes to standard error, so a log shows why (new-user trial: a
    # pandas file of times without offsets was all invalid, and exit 0 looked like a quiet day).
    assert p.stderr.startswith("invalid fixes: 4 of 7, not judged; the first: row 3: time '2026-11-20T09:20:00' has no UTC offset"), p.stderr
    got = list(csv.DictReader(out.open()))
    assert [(r["area_id"], r["transition"]) for r in got] == [("G#AREA_ID_001", "IN"), ("G#AREA_ID_001", "OUT")]
    reasons = run("sqlite3", db, "SELECT reason FROM gf_explain WHERE kind = 'invalid' ORDER BY rowid").stdout
    assert "no UTC offset" in reasons and "latitude 95" in reasons and "negative accuracy" in reasons and "not a JSON object" in reasons
    # A later run with an older fix: stale.
    assert "7 fixes: 0 judged, 3 stale, 4 invalid" in gf("judge", db, "--fixes", nd).stdout
    # The inbox: rows in gf_fixes are judged and removed, unless --keep.
    run("sqlite3", db, "INSERT INTO gf_fixes VALUES ('q', '2026-11-20T09:00:00Z', 35.6586, 139.7454, 5), ('q', 1795167000, 35.70, 139.70, 5)")
    assert "2 judged" in gf("judge", db, "--keep").stdout
    assert run("sqlite3", db, "SELECT count(*) FROM gf_fixes").stdout.strip() == "2"
    assert "0 judged, 2 stale" in gf("judge", db).stdout
    assert run("sqlite3", db, "SELECT count(*) FROM gf_fixes").stdout.strip() == "0"
    assert [n[2] for n in notifications(db) if n[0] == "q"] == ["G#AREA_ID_004", "G#AREA_ID_004"]


def test_bad_input_aborts_with_nothing_written(tmp_path):
    db = tmp_path / "d.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson")
    bad = tmp_path / "bad.csv"
    bad.write_text("subject_id,time,lat,lon,accuracy_m\np,2026-11-20T09:00:00Z,35.715,139.773,10\n")
    before = run("sqlite3", db, "SELECT count(*) FROM gf_runs; SELECT count(*) FROM gf_subjects;").stdout
    p = gf("judge", db, "--fixes", bad, check=False)
    assert p.returncode == 1 and "bad.csv, line 1: the header has no column 'ts'" in p.stderr
    p = gf("judge", db, "--table", "nope", check=False)
    assert p.returncode == 1 and "no table or view named 'nope'" in p.stderr
    p = gf("judge", db, "--fixes", tmp_path / "missing.csv", check=False)
    assert p.returncode == 1
    assert run("sqlite3", db, "SELECT count(*) FROM gf_runs; SELECT count(*) FROM gf_subjects;").stdout == before


@pytest.mark.parametrize("name, body, where", [
    ("quote", 'q,2026-11-20T09:10:00Z,35.7,139.7,5\n"r,2026-11-20T09:20:00Z,35.7,139.7,5\n', "line 4: unterminated quoted field"),
    ("utf8", b"q\xff,2026-11-20T09:10:00Z,35.7,139.7,5\n".decode("latin-1"), "line 3: field 1 is not valid UTF-8"),
])
def test_a_fixes_file_unreadable_part_way_fails_the_batch(tmp_path, name, body, where):
    """Rows after a CSV syntax error cannot be read: judging the rows before it
    and reporting success would lose the rest silently. The batch fails,
    naming the file and line, and keeps nothing; so does locate."""
    db = tmp_path / "d.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson")
    bad = tmp_path / f"{name}.csv"
    bad.write_bytes(("subject_id,ts,lat,lon,accuracy_m\np,2026-11-20T09:00:00Z,35.715,139.773,10\n" + body).encode("latin-1"))
    before = run("sqlite3", db, "SELECT count(*) FROM gf_runs; SELECT count(*) FROM gf_subjects; SELECT count(*) FROM gf_stays;").stdout
    for command in (["judge", db, "--fixes", bad], ["locate", db, "--fixes", bad]):
        p = gf(*command, check=False)
        assert p.returncode == 1 and f"{bad}, {where}" in p.stderr, p.stderr
    assert run("sqlite3", db, "SELECT count(*) FROM gf_runs; SELECT count(*) FROM gf_subjects; SELECT count(*) FROM gf_stays;").stdout == before


def test_check_command_and_sql_errors(tmp_path):
    db = tmp_path / "d.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--group", "AREA_GROUPID_001", "--with-default-conditions")
    out = gf("check", db, "--subject", "x", "--lat", "35.715", "--lon", "139.773", "--accuracy", "10",
             "--time", "2026-11-20T09:00:00+09:00", "--seed").stdout
    assert out.strip() == ("*** 通知条件ID:[1] エリアID:[AREA_GROUPID_001#AREA_ID_001] 内外判定:[内] *** "
                           "日時:[2026-11-20T00:00:00Z] 緯度:[35.715] 経度:[139.773] 誤差:[10.0]")
    p = gf("check", db, "--subject", "x", "--lat", "35.715", "--lon", "139.773", "--accuracy=-1", "--time", "2026-11-20T09:10:00+09:00", check=False)
    assert p.returncode == 1 and "--accuracy: must be a finite number of metres >= 0, got -1.0" in p.stderr
    r = sql(db, "SELECT gf_check('x', '2026-11-20T09:05:00+09:00', 35.7115, 139.771, 10);").stdout
    assert json.loads(r)[0]["transition"] == "OUT"
    assert sql(db, "SELECT gf_check('x', '2026-11-20T09:01:00+09:00', 35.7115, 139.771, 10);").stdout.strip() == "[]"
    p = sql(db, "SELECT gf_check('x', '2026-11-20 09:30', 35.7, 139.7, 10);", check=False)
    assert p.returncode != 0 and "gf_check: argument 2 (ts) makes the fix invalid: time" in p.stderr and "no UTC offset" in p.stderr
    # gf_check is direct-only: a view cannot call it.
    p = sql(db, "CREATE VIEW v AS SELECT gf_check('x', '2026-11-21T00:00:00Z', 35, 139, 5) AS n; SELECT * FROM v;", check=False)
    assert p.returncode != 0 and "unsafe use of gf_check" in p.stderr
    gf("reset", db, "--subject", "x")
    assert json.loads(gf("state", db, "--json").stdout) == []


def test_a_second_writer_waits_then_refuses_clearly(tmp_path):
    """While one process holds the write lock, a judgement waits for the busy
    timeout and then refuses with a clear message, changing nothing."""
    import subprocess, time
    db = tmp_path / "d.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    p, waited = judge_while_another_writes(db)
    assert p.returncode == 3 and f"error: {db}: the database is busy" in p.stderr, p.stderr
    assert waited >= 2, "it waits for the other writer before refusing"
    assert json.loads(gf("notifications", db, "--json").stdout) == []
    assert "11 judged" in gf("judge", db, "--fixes", SAMPLES / "fixes.csv").stdout
