"""The containment question against the tools a user would otherwise pick:
"for every fix, which fences contain it" — answered by the engine (SQL join of
the R*Tree with gf_contains), by SpatiaLite SQL alone (R*Tree + ST_Contains,
circles by ST_Distance(..., 1) < radius), and by shapely 2 (STRtree, vectorised
contains_xy; circles by pyproj's vectorised geodesic distance). Every engine
must report the same number of (fix, fence) pairs and the same
order-independent checksum, or the script stops. DuckDB's spatial join
(benchmarks/duckdb_peer.py) answers from its own stored catalog, timed end
to end (open, load the extension, read the fixes' CSV, join) and for its
query alone.

    .venv-test/bin/python benchmarks/peers.py --fences 1000 --fixes 100000   # "small"

Times are medians of 3 runs after loading (data already in each tool's form);
ratios are from this one run. The engine's batch path is a command that also
reads and prepares the catalog; its own timing of the locate phase (printed by
`geofence locate --fixes`) is reported beside it, which is what the peers'
times measure. PostGIS runs in a throw-away server
(benchmarks/postgis.py; install it with benchmarks/install-peers.sh): the
catalog is loaded by ogr2ogr, polygons answered with GiST + ST_Contains,
circles by the GiST box of their enclosing polygon, then the spheroidal
distance to the exact centre.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import shapely

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import workload  # noqa: E402
from containment import connect  # noqa: E402
from shapely_peer import Fences  # noqa: E402

MOD = (1 << 61) - 1


def checksum(fix_idx, fence_idx):
    """Order-independent: sum of a mixed key per pair, modulo a prime."""
    k = (np.asarray(fix_idx, dtype=np.uint64) * np.uint64(1_000_003) + np.asarray(fence_idx, dtype=np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
    return int(np.sum(k % np.uint64(MOD), dtype=np.uint64) % np.uint64(MOD)), len(k)


def median_time(fn, runs=3):
    times, result = [], None
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


ENGINE = "engine (SQL: R*Tree + gf_contains)"
ENGINE_BATCH = "engine batch (geofence locate --fixes: in-memory grid, both cores)"
ENGINE_BATCH_LOCATING = "engine batch, locating only (catalog already loaded, as the peers)"
ENGINE_BATCH_COMMAND = "engine batch, the command alone (load, locate, write the CSV)"
DUCKDB = "DuckDB 1.4.4 spatial (SPATIAL_JOIN, all threads), end to end"
DUCKDB_QUERY = "DuckDB 1.4.4 spatial, the query alone (catalog opened, extension loaded)"

try:  # benchmarks/install-peers.sh puts it in .venv-test
    import duckdb_peer
    duckdb = True
except ImportError:
    duckdb = False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fences", type=int, default=1000)
    ap.add_argument("--fixes", type=int, default=100000)
    ap.add_argument("--no-postgis", action="store_true", help="skip PostGIS (needs benchmarks/install-peers.sh)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gf-peers-"))
    path = work / "fences.geojson"
    workload.write_fences(path, args.fences)
    fixes = list(workload.fixes(args.fixes, 1000))
    db = work / "bench.db"
    subprocess.run([ROOT / "dist" / "geofence", "init", db], check=True, capture_output=True)
    subprocess.run([ROOT / "dist" / "geofence", "import", db, path], check=True, capture_output=True)
    results = containment_peers(db, path, fixes, postgis=not args.no_postgis)
    # The peers are timed with their data loaded, as the engine's locate phase.
    base = results[ENGINE_BATCH_LOCATING][0]
    for name, (t, _) in results.items():
        if name != ENGINE_BATCH_LOCATING:
            print(f"{name} / engine locating: {t / base:.1f}x")


def containment_peers(db, fences_path, fixes, postgis=True, runs=3, sql_peers=True):
    """Times every peer on "which fences contain each fix"; returns
    {name: (median seconds, (checksum, pairs))} and stops if any disagree."""
    features = json.loads(Path(fences_path).read_text())["features"]
    lat = np.array([f[2] for f in fixes]); lon = np.array([f[3] for f in fixes])
    conn = connect(db)
    conn.execute("CREATE TEMP TABLE fixes (i INTEGER PRIMARY KEY, lat REAL, lon REAL)")
    conn.executemany("INSERT INTO fixes VALUES (?, ?, ?)", [(i, float(y), float(x)) for i, (y, x) in enumerate(zip(lat, lon))])
    # Fence index = position in the file; the catalog's rowid is that + 1.
    join = """FROM fixes AS f
              CROSS JOIN idx_gf_areas_geom AS r ON r.xmin <= f.lon AND r.xmax >= f.lon AND r.ymin <= f.lat AND r.ymax >= f.lat
              CROSS JOIN gf_areas AS a ON a.id = r.pkid"""

    def engine():
        rows = conn.execute(f"""SELECT f.i, a.id - 1 {join}
            WHERE gf_contains(CASE a.kind WHEN 'circle' THEN gf_circle(a.center_lat, a.center_lon, a.radius_m) ELSE a.geom END,
                              f.lat, f.lon, 0) = 1""").fetchall()
        return checksum([r[0] for r in rows], [r[1] for r in rows])

    def spatialite():
        rows = conn.execute(f"""SELECT f.i, a.id - 1 {join}
            WHERE CASE a.kind WHEN 'circle'
                  THEN ST_Distance(MakePoint(a.center_lon, a.center_lat, 4326), MakePoint(f.lon, f.lat, 4326), 1) < a.radius_m
                  ELSE ST_Contains(a.geom, MakePoint(f.lon, f.lat, 4326)) END = 1""").fetchall()
        return checksum([r[0] for r in rows], [r[1] for r in rows])

    shapely_fences = Fences(features)
    pts = shapely.points(lon, lat)

    def shapely_peer():
        return checksum(*shapely_fences.containment(lon, lat, pts))

    # The engine's batch path: the CLI over a CSV of the fixes (written before timing).
    fixes_csv = Path(db).with_suffix(".fixes.csv")
    with open(fixes_csv, "w") as f:
        f.write("subject_id,ts,lat,lon,accuracy_m\n")
        for i, (y, x) in enumerate(zip(lat, lon)):
            f.write(f"s,{i},{float(y)!r},{float(x)!r},0\n")
    index_of = {str(ft["properties"]["area_id"]): i for i, ft in enumerate(features)}
    pairs_csv = Path(db).with_suffix(".pairs.csv")

    locating = []  # the CLI's own timing of its locate phase, as the peers are timed
    commands = []  # the command's wall time, without Python reading its answer

    def engine_batch():
        t = time.perf_counter()
        done = subprocess.run([ROOT / "dist" / "geofence", "locate", db, "--fixes", fixes_csv, "--out", pairs_csv],
                              check=True, capture_output=True, text=True)
        commands.append(time.perf_counter() - t)
        locating.append(float(done.stderr.split("fixes located in ")[1].split(" s")[0]))
        rows = [line.split(",") for line in pairs_csv.read_text().splitlines()[1:]]
        return checksum([int(r[0]) - 1 for r in rows], [index_of[r[1]] for r in rows])

    peers = [(ENGINE, engine), (ENGINE_BATCH, engine_batch), ("SpatiaLite SQL (R*Tree + ST_Contains)", spatialite),
             ("shapely 2 STRtree (vectorised)", shapely_peer)]
    if not sql_peers:   # one call per (fix, candidate) pair: ~1 ms a fix on medium
        peers = [p for p in peers if p[0] not in (ENGINE, "SpatiaLite SQL (R*Tree + ST_Contains)")]
    duck_queries = []  # DuckDB's query alone, after opening its catalog and loading the extension
    if duckdb:
        duck_db = Path(db).with_suffix(".duckdb")
        duckdb_peer.build_catalog(duck_db, features)
        assert "SPATIAL_JOIN" in duckdb_peer.plan(duck_db, fixes_csv), "DuckDB did not plan a SPATIAL_JOIN"

        def duckdb_end_to_end():
            fi, ai, q = duckdb_peer.containment(duck_db, fixes_csv)
            duck_queries.append(q)
            return checksum(fi, ai)
        peers.append((DUCKDB, duckdb_end_to_end))
    pg = None
    if postgis:
        from postgis import PostGIS
        pg = PostGIS().__enter__()
        pg.load_areas(db)
        # Circles exactly: the enclosing polygon's GiST box first (ST_DWithin with a per-row radius
        # cannot use an index), then the spheroidal distance to the centre, strictly inside as the others.
        pg.conn.execute("ALTER TABLE fences ADD COLUMN centre geography")
        pg.conn.execute("UPDATE fences SET centre = ST_MakePoint(center_lon, center_lat)::geography WHERE kind = 'circle'")
        pg.conn.execute("CREATE TABLE fixes (i integer PRIMARY KEY, pt geometry(Point, 4326), g geography)")
        with pg.conn.cursor().copy("COPY fixes (i, pt) FROM STDIN") as copy:
            for i, (y, x) in enumerate(zip(lat, lon)):
                copy.write_row((i, f"SRID=4326;POINT({float(x)!r} {float(y)!r})"))
        pg.conn.execute("UPDATE fixes SET g = pt::geography")
        pg.conn.execute("VACUUM ANALYZE fences")
        pg.conn.execute("VACUUM ANALYZE fixes")

        def postgis_peer():
            rows = pg.query("""
                SELECT f.i, a.id - 1 FROM fixes f JOIN fences a ON a.kind = 'polygon' AND ST_Contains(a.geom, f.pt)
                UNION ALL
                SELECT f.i, a.id - 1 FROM fixes f JOIN fences a
                    ON a.kind = 'circle' AND a.geom && f.pt AND ST_Distance(a.centre, f.g, true) < a.radius_m""")
            return checksum([r[0] for r in rows], [r[1] for r in rows])
        peers.append(("PostGIS (GiST + ST_Contains / geography distance)", postgis_peer))

    results = {}
    try:
        for name, fn in peers:
            t, r = median_time(fn, runs)
            results[name] = (t, r)
            print(f"{name:52s} {t:8.3f} s   pairs={r[1]:,} checksum={r[0]}", flush=True)
            if name == ENGINE_BATCH:
                results[ENGINE_BATCH_LOCATING] = (statistics.median(locating), r)
                print(f"{ENGINE_BATCH_LOCATING:52s} {statistics.median(locating):8.3f} s", flush=True)
                results[ENGINE_BATCH_COMMAND] = (statistics.median(commands), r)
                print(f"{ENGINE_BATCH_COMMAND:52s} {statistics.median(commands):8.3f} s", flush=True)
            if name == DUCKDB:
                results[DUCKDB_QUERY] = (statistics.median(duck_queries), r)
                print(f"{DUCKDB_QUERY:52s} {statistics.median(duck_queries):8.3f} s", flush=True)
    finally:
        if pg:
            pg.__exit__(None, None, None)
        # Closed here, not whenever Python collects it: an open connection
        # keeps check.py from taking the file back out of WAL mode.
        conn.close()
    answers = {r for _, r in results.values()}
    if len(answers) != 1:
        for name, (_, r) in results.items():
            print(f"  {name}: pairs={r[1]:,} checksum={r[0]}")
        raise SystemExit("the engines disagree")
    return results


if __name__ == "__main__":
    main()
