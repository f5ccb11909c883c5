"""Nearest-N areas (issue 7): the engine's gf_nearest against SpatiaLite's KNN
virtual table and PostGIS's index-assisted `<->` (geography and geometry), on
the same city-like catalog and the same query positions.

    bash benchmarks/install-peers.sh                              # PostGIS, psycopg
    .venv-test/bin/python benchmarks/nearest.py --fences 1000000 --queries 2000    # "large"

Each engine answers "the n areas nearest to this position" one query at a time
from one client connection (what a region-planning server does per phone).
Times are medians of 3 passes over all queries. Agreement: the share of
queries whose set of n areas equals the engine's, and the share whose n-th
distance matches (within 1 % + 2 m). Sets differ where many areas tie at 0 m
(a position inside more than n areas) and where peers measure the circles'
enclosing 32-gons instead of the circles (metres off); PostGIS geography
measures on a sphere; PostGIS geometry `<->` orders by degrees.
"""
import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import workload  # noqa: E402
from containment import connect  # noqa: E402


def timed(fn, queries, runs=3):
    times, answers = [], None
    for _ in range(runs):
        t = time.perf_counter()
        answers = [fn(lat, lon) for lat, lon in queries]
        times.append(time.perf_counter() - t)
    return statistics.median(times), answers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fences", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--no-postgis", action="store_true")
    ap.add_argument("--slow-queries", type=int, default=50,
                    help="SpatiaLite's KNN takes seconds per query on large catalogs: time it on only this many of the queries")
    ap.add_argument("--db", help="reuse this catalog (made by an earlier run with the same --fences)")
    args = ap.parse_args()
    n = args.n
    work = Path(tempfile.mkdtemp(prefix="gf-nearest-"))
    db = Path(args.db) if args.db else work / "fences.db"
    if not db.exists():
        path = work / "fences.geojson"
        workload.write_fences(path, args.fences)
        subprocess.run([ROOT / "dist" / "geofence", "init", db], check=True, capture_output=True)
        t = time.perf_counter()
        subprocess.run([ROOT / "dist" / "geofence", "import", db, path], check=True, capture_output=True)
        print(f"imported {args.fences:,} fences in {time.perf_counter() - t:.1f} s", flush=True)
        path.unlink()
    rng = random.Random(3)
    queries = [(lat, lon) for lon, lat in (workload.city_point(rng) for _ in range(args.queries))]
    conn = connect(db)
    # The same memory budget PostGIS gets (shared_buffers 1 GB): the catalog stays in memory.
    conn.execute("PRAGMA mmap_size = 4000000000")
    conn.execute("PRAGMA cache_size = -1000000")
    ids = dict(conn.execute("SELECT id, area_id FROM gf_areas"))

    results = {}

    def engine(lat, lon):
        return conn.execute("SELECT area_id, distance_m FROM gf_nearest(?, ?, ?)", (lat, lon, n)).fetchall()

    def spatialite(lat, lon):
        return [(ids[r[0]], r[1]) for r in conn.execute(
            "SELECT fid, distance FROM KNN WHERE f_table_name = 'gf_areas' AND f_geometry_column = 'geom' "
            "AND ref_geometry = MakePoint(?, ?, 4326) AND max_items = ?", (lon, lat, n))]

    peers = [("engine gf_nearest", engine, queries), ("SpatiaLite KNN", spatialite, queries[:args.slow_queries])]
    pg = None
    if not args.no_postgis:
        from postgis import PostGIS
        pg = PostGIS().__enter__()
        t = time.perf_counter()
        pg.load_areas(db)
        print(f"loaded PostGIS (ogr2ogr + 2 GiST indexes) in {time.perf_counter() - t:.1f} s", flush=True)

        def postgis_geog(lat, lon):
            return pg.query("SELECT area_id, geog <-> p FROM fences, CAST(ST_SetSRID(ST_MakePoint(%s, %s), 4326) AS geography) AS p "
                            "ORDER BY geog <-> p LIMIT %s", (lon, lat, n))

        def postgis_geom(lat, lon):
            # Degrees, not metres: only the set is comparable.
            return [(r[0], None) for r in pg.query(
                "SELECT area_id FROM fences ORDER BY geom <-> ST_SetSRID(ST_MakePoint(%s, %s), 4326) LIMIT %s", (lon, lat, n))]
        peers += [("PostGIS geography <->", postgis_geog, queries), ("PostGIS geometry <-> (degrees)", postgis_geom, queries)]
    try:
        for name, fn, qs in peers:
            t, answers = timed(fn, qs)
            results[name] = (t / len(qs), answers)
            print(f"{name:34s} {t / len(qs) * 1e6:10.1f} µs/query ({len(qs)} queries)", flush=True)
    finally:
        if pg:
            pg.__exit__(None, None, None)
    base_t, base = results["engine gf_nearest"]
    print(f"\nn = {n}, {args.fences:,} fences, {len(queries):,} queries")
    print("| engine | µs per query | engine speed-up | same n areas | same n-th distance (±1 % + 2 m) |")
    print("|---|---:|---:|---:|---:|")
    for name, (t, answers) in results.items():
        same = sum({a for a, _ in x} == {a for a, _ in y} for x, y in zip(answers, base)) / len(answers)
        # Ties (many areas at 0 m in the centre) and the peers' 32-gon circles make sets differ
        # where the answers are equally right: the n-th distance says whether they are.
        def close(x, y):
            if not x or x[-1][1] is None:
                return None
            return abs(x[-1][1] - y[-1][1]) <= 0.01 * y[-1][1] + 2
        nth = [close(x, y) for x, y in zip(answers, base)]
        nth_text = "n/a (degrees)" if None in nth else f"{sum(nth) / len(nth):.1%}"
        print(f"| {name} ({len(answers)} queries) | {t * 1e6:.1f} | {t / base_t:.1f}× | {same:.1%} | {nth_text} |")

if __name__ == "__main__":
    main()
