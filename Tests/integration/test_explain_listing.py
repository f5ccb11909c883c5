"""Explanations as events GIS tools open (issue 36): every gf_explain row
carries the position of the fix it is about (`lat`, `lon`, schema version
6; NULL where that fix had no readable position), and `geofence explain`
lists the rows in canonical order (run, subject, time, area, condition, id)
as a table, CSV, NDJSON, GeoJSON or GeoJSONSeq, written by the same code as
notifications. A catalog of version 5 is upgraded in place when opened: its
rows stay, their positions NULL."""
import csv
import io
import json
import os
import sqlite3
from pathlib import Path

from conftest import SAMPLES, current_schema_version, gf, run, stored_rows
from older_layouts import (FLOOR_BEFORE_VERSION_11, RUNS_BEFORE_VERSION_10, VERSION_6_NOTIFICATIONS, conditions_before_version_12,
                            state_layout_before_version_8)

COLUMNS = ["run_id", "subject_id", "ts", "area_id", "condition_id", "kind", "reason", "lat", "lon"]
OLD_COLUMNS = "run_id, subject_id, ts, area_id, condition_id, kind, reason"
# Positions with all 17 digits, so that an exact position cannot be a rounded one by chance.
INSIDE_UENO = (35.71512345678901, 139.77412345678902)
INSIDE_STATION = (35.68012345678901, 139.76512345678902)
FAR = (35.01234567890123, 139.01234567890124)


def catalog(folder, cli=None):
    db = folder / "fences.db"
    (cli or gf)("init", db)
    (cli or gf)("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    return db


def fixes_file(path):
    """Fixes with reasons about an area: an accuracy above the area's limit,
    a confirmation under way; and a fix far from every area. Judged again,
    every one is stale (a reason about the whole fix)."""
    rows = [
        ("walker", "2026-11-20T00:00:00Z", *INSIDE_UENO, 150),        # above AREA_ID_001's IN limit of 100 m
        ("walker", "2026-11-20T00:10:00Z", *INSIDE_STATION, 5),       # AREA_ID_002 counts 1 of 2
        ("walker", "2026-11-20T00:05:00Z", *FAR, 5),                  # no reason
        ("rider", "2026-11-20T00:01:00Z", *INSIDE_STATION, 7),        # AREA_ID_002 counts 1 of 2
    ]
    path.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(f"{s},{t},{a!r},{o!r},{c}\n" for s, t, a, o, c in rows))
    return path, rows


def stored(db, query):
    return stored_rows(db, query)


def listing(db, *args):
    return list(csv.DictReader(io.StringIO(gf("explain", db, "--format", "csv", *args).stdout)))


def test_new_reasons_carry_the_exact_position_of_their_fix(tmp_path):
    db = catalog(tmp_path)
    fixes, rows = fixes_file(tmp_path / "fixes.csv")
    gf("judge", db, "--fixes", fixes, "--explain")
    gf("judge", db, "--fixes", fixes, "--explain")   # every fix stale now
    position = {(s, t[:19]): (a, o) for s, t, a, o, _ in rows}
    reasons = stored(db, "SELECT subject_id, ts, kind, area_id, lat, lon FROM gf_explain")
    kinds = {(r[2], r[3]) for r in reasons}
    assert {("stale", None), ("not counted", "AREA_ID_001"), ("counting", "AREA_ID_002")} <= kinds, reasons
    for subject, ts, kind, area, lat, lon in reasons:
        assert (lat, lon) == position[(subject, ts[:19])], (subject, ts, kind, area)
    # The listing writes them as stored, bit for bit, in the Point too.
    features = json.loads(gf("explain", db, "--format", "geojson").stdout)["features"]
    assert len(features) == len(reasons)
    for f in features:
        p = f["properties"]
        assert f["geometry"] == {"type": "Point", "coordinates": [p["lon"], p["lat"]]}
        assert (p["lat"], p["lon"]) == position[(p["subject_id"], p["ts"][:19])]
    assert all(type(f["properties"][k]) is int for f in features for k in ("run_id",))


def test_csv_columns_and_canonical_order(tmp_path):
    db = catalog(tmp_path)
    fixes, _ = fixes_file(tmp_path / "fixes.csv")
    gf("judge", db, "--fixes", fixes, "--explain")
    gf("judge", db, "--fixes", fixes, "--explain")   # run 2: every fix stale now
    text = gf("explain", db, "--format", "csv").stdout
    assert text.splitlines()[0] == ",".join(COLUMNS)
    rows = listing(db)
    assert len(rows) == stored(db, "SELECT count(*) FROM gf_explain")[0][0]

    def key(r):   # NULL (an empty cell) first, as SQLite orders it
        return (int(r["run_id"]), r["subject_id"], r["ts"], r["area_id"], int(r["condition_id"] or 0))
    assert [key(r) for r in rows] == sorted(key(r) for r in rows)
    assert {r["run_id"] for r in rows} == {"1", "2"}
    assert rows[0]["subject_id"] == "rider" and rows[0]["ts"] == "2026-11-20T00:01:00Z"
    # Filters, alone and together; NDJSON and GeoJSONSeq hold the same rows.
    assert listing(db, "--run", "2") == [r for r in rows if r["run_id"] == "2"]
    assert listing(db, "--subject", "walker", "--run", "1") == [r for r in rows if r["run_id"] == "1" and r["subject_id"] == "walker"]
    lines = [json.loads(line) for line in gf("explain", db, "--format", "ndjson").stdout.splitlines()]
    seq = [json.loads(line) for line in gf("explain", db, "--format", "geojsonseq").stdout.splitlines()]
    assert [str(line["reason"]) for line in lines] == [f["properties"]["reason"] for f in seq] == [r["reason"] for r in rows]
    assert [line["geometry"] for line in lines] == [f["geometry"] for f in seq]
    # The table for people has the same columns.
    assert gf("explain", db, "--run", "1").stdout.split()[:len(COLUMNS)] == COLUMNS


def test_a_run_that_is_not_there_is_an_error(tmp_path):
    db = catalog(tmp_path)
    p = gf("explain", db, "--run", "3", "--format", "csv", check=False)
    assert p.returncode == 1 and "no run 3 in" in p.stderr and "it has no runs yet" in p.stderr and p.stdout == "", p
    fixes, _ = fixes_file(tmp_path / "fixes.csv")
    gf("judge", db, "--fixes", fixes)   # a run without --explain is there: no rows, no error
    assert gf("explain", db, "--run", "1", "--format", "csv").stdout == ",".join(COLUMNS) + "\n"
    assert json.loads(gf("explain", db, "--run", "1", "--format", "geojson").stdout) == {"type": "FeatureCollection", "features": []}
    p = gf("explain", db, "--run", "2", check=False)
    assert p.returncode == 1 and "no run 2 in" in p.stderr and "numbered up to 1" in p.stderr, p
    p = gf("explain", db, "--format", "csv", "--json", check=False)
    assert p.returncode == 64 and "--format csv" in p.stderr and "--json" in p.stderr, p


def test_an_invalid_fix_has_its_position_only_when_it_has_a_readable_one(tmp_path):
    db = catalog(tmp_path)
    fixes = tmp_path / "bad.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                     "a,2026-11-20T00:00:00Z,,139.5,5\n"                 # no latitude
                     "b,2026-11-20T00:00:00Z,95.25,139.5,5\n"            # latitude off the globe
                     "c,2026-11-20T00:00:00Z,35.123456789012345,139.5,-1\n"  # negative accuracy: the position is readable
                     "d,yesterday,35.25,139.75,5\n"                      # no readable time, a readable position
                     "e,2026-11-20T00:00:00Z,north,139.5,5\n")           # latitude not a number
    gf("judge", db, "--fixes", fixes, "--explain")
    rows = {r["subject_id"]: r for r in listing(db)}
    assert {s: rows[s]["kind"] for s in rows} == dict.fromkeys("abcde", "invalid")
    assert [(rows[s]["lat"], rows[s]["lon"]) for s in "abe"] == [("", "")] * 3
    assert (float(rows["c"]["lat"]), float(rows["c"]["lon"])) == (35.123456789012345, 139.5)
    assert (rows["d"]["ts"], rows["d"]["lat"], rows["d"]["lon"]) == ("", "35.25", "139.75")
    features = {f["properties"]["subject_id"]: f for f in json.loads(gf("explain", db, "--format", "geojson").stdout)["features"]}
    assert [features[s]["geometry"] for s in "abe"] == [None] * 3
    assert features["a"]["properties"]["lat"] is None and features["d"]["properties"]["ts"] is None
    assert features["c"]["geometry"]["coordinates"] == [139.5, 35.123456789012345]
    assert stored(db, "SELECT typeof(lat), typeof(lon) FROM gf_explain WHERE subject_id = 'b'") == [("null", "null")]


def older_catalog(folder):
    """A catalog of schema version 5 with reasons its judge wrote. Made by
    the previous build when GEOFENCE_PREVIOUS_DIST names one (its
    `geofence`, e.g. /work/dist-eab26c6); else by this build, then turned
    into what version 5 was: gf_explain without lat and lon, the subject
    state in its rows of then (`state_layout_before_version_8`), the
    notification tables of then (empty), version 5."""
    previous = os.environ.get("GEOFENCE_PREVIOUS_DIST")
    cli = (lambda *a: run(Path(previous) / "geofence", *a)) if previous else gf
    db = catalog(folder, cli)
    fixes, _ = fixes_file(folder / "fixes.csv")
    cli("judge", db, "--fixes", fixes, "--explain")
    con = sqlite3.connect(db)
    with con:
        if "gf_condition_rows" in [r[0] for r in con.execute("SELECT name FROM sqlite_master")]:
            con.executescript(conditions_before_version_12())
        for column in ("lat", "lon"):
            if column in [c[1] for c in con.execute("PRAGMA table_info(gf_explain)")]:
                con.execute(f"ALTER TABLE gf_explain DROP COLUMN {column}")
        if "gf_subject_state" in [r[0] for r in con.execute("SELECT name FROM sqlite_master")]:
            con.executescript(state_layout_before_version_8())
            con.executescript("\n".join(VERSION_6_NOTIFICATIONS))
        con.executescript(RUNS_BEFORE_VERSION_10 + FLOOR_BEFORE_VERSION_11)
        con.execute("UPDATE gf_meta SET value = '5' WHERE key = 'schema_version'")
    con.close()
    return db, fixes


def test_an_older_catalog_keeps_its_reasons_and_gets_the_columns(tmp_path):
    db, fixes = older_catalog(tmp_path)
    before = stored(db, f"SELECT {OLD_COLUMNS} FROM gf_explain ORDER BY rowid")
    assert len(before) == 3
    old_rows = listing(db)   # opening upgrades it, in place
    assert stored(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [(current_schema_version(),)]
    assert [c[1] for c in stored(db, "PRAGMA table_info(gf_explain)")][-2:] == ["lat", "lon"]
    assert stored(db, f"SELECT {OLD_COLUMNS} FROM gf_explain ORDER BY rowid") == before
    assert stored(db, "SELECT count(*) FROM gf_explain WHERE lat IS NOT NULL OR lon IS NOT NULL") == [(0,)]
    assert len(old_rows) == len(before) and {(r["lat"], r["lon"]) for r in old_rows} == {("", "")}
    # The same fixes judged again (now all stale) give rows with positions, after the old ones.
    gf("judge", db, "--fixes", fixes, "--explain")
    new_rows = listing(db, "--run", "2")
    assert len(new_rows) == 4 and all(r["lat"] and r["lon"] for r in new_rows)
    assert listing(db, "--run", "1") == old_rows
    geo = json.loads(gf("explain", db, "--format", "geojson").stdout)["features"]
    assert [f["geometry"] is None for f in geo] == [True] * len(before) + [False] * 4


def test_gis_tools_open_the_reasons(tmp_path, venv):
    db = catalog(tmp_path)
    fixes, _ = fixes_file(tmp_path / "fixes.csv")
    gf("judge", db, "--fixes", fixes, "--explain")
    gf("judge", db, "--fixes", fixes, "--explain")   # every fix stale now
    bad = tmp_path / "bad.csv"
    bad.write_text("subject_id,ts,lat,lon,accuracy_m\nz,2026-11-20T00:00:00Z,,139.5,5\n")
    gf("judge", db, "--fixes", bad, "--explain")   # one row with a null geometry
    (tmp_path / "r.geojson").write_text(gf("explain", db, "--format", "geojson").stdout)
    (tmp_path / "r.geojsonl").write_text(gf("explain", db, "--format", "geojsonseq").stdout)
    rows = listing(db)
    for name in ("r.geojson", "r.geojsonl"):
        info = run("ogrinfo", "-ro", "-so", "-al", tmp_path / name).stdout
        assert "Geometry: Point" in info and f"Feature Count: {len(rows)}" in info, info
        assert "reason: String" in info and "run_id: Integer" in info and "lat: Real" in info, info
    lines = run(venv / "bin" / "python", "-c", f"""
import geopandas, pandas
rows = pandas.read_csv(__import__("io").StringIO({gf("explain", db, "--format", "csv").stdout!r}),
                       float_precision="round_trip", dtype={{"subject_id": str}})
for name in ("r.geojson", "r.geojsonl"):
    frame = geopandas.read_file({str(tmp_path)!r} + "/" + name)
    placed = frame[frame.geometry.notna()]
    print(len(frame) == len(rows) > 4, int(frame.geometry.isna().sum()), str(frame.crs.to_epsg()),
          set(placed.geom_type) == {{"Point"}}, list(placed.geometry.x) == list(rows["lon"].dropna()),
          list(placed.geometry.y) == list(rows["lat"].dropna()), list(frame["reason"]) == list(rows["reason"]))
""").stdout.splitlines()
    assert lines == ["True 1 4326 True True True True"] * 2, lines
