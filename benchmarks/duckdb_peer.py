"""DuckDB's spatial join as a peer on the containment question ("for every
fix, which fences contain it"), from its own stored catalog.

DuckDB 1.4.4 with the spatial extension from PyPI (`duckdb==1.4.4`,
`duckdb-ext-spatial==1.4.4.20260205`, installed by
benchmarks/install-peers.sh). The extension is loaded from the wheel's own
folder with auto-install and auto-load off, so nothing is downloaded. The
catalog is a DuckDB database file (fences with a GEOMETRY column: polygons
from the GeoJSON, circles as the same lon/lat box shapely's peer uses: a
degree is more than 100 km of latitude, and more than 100 km × cos(latitude)
of longitude, so the box encloses the circle at any latitude),
written once; a timed run opens it, reads the fixes' CSV and answers with
one query that DuckDB plans as a SPATIAL_JOIN on all threads: polygons by
ST_Contains (boundary excluded, as GEOS), circles by their box and then the
ellipsoidal distance to the centre (ST_Distance_Spheroid, GeographicLib),
strictly less than the radius, as the other peers.
"""
import csv
import json
import sys
import time
from pathlib import Path

import duckdb
import numpy as np


def extension_directory():
    import duckdb_ext
    return str(Path(list(duckdb_ext.__path__)[0]) / "extensions")


def connect(path, read_only):
    con = duckdb.connect(str(path), read_only=read_only, config={
        "autoinstall_known_extensions": False, "autoload_known_extensions": False,
        "extension_directory": extension_directory()})
    con.execute("LOAD spatial")
    return con


def build_catalog(path, features):
    """The fences as DuckDB would store them (not timed). The rows go through
    a CSV beside the catalog, which DuckDB reads in bulk (a million rows by
    executemany take minutes)."""
    path = Path(path)
    path.unlink(missing_ok=True)
    raw = path.with_suffix(".raw.csv")
    with open(raw, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["i", "kind", "gj", "clon", "clat", "r"])
        for i, feature in enumerate(features):
            g = feature["geometry"]
            if g["type"] == "Point":
                lon, lat = g["coordinates"]
                w.writerow([i, "circle", "", repr(float(lon)), repr(float(lat)), repr(float(feature["properties"]["radius_m"]))])
            else:
                w.writerow([i, "polygon", json.dumps(g, separators=(",", ":")), "", "", ""])
    con = connect(path, read_only=False)
    con.execute("CREATE TABLE fences (i INTEGER, kind VARCHAR, geom GEOMETRY, clon DOUBLE, clat DOUBLE, r DOUBLE)")
    con.execute("""CREATE TEMP TABLE raw AS SELECT * FROM read_csv(?, header = true, quote = '"', escape = '"',
                   columns = {'i': 'INTEGER', 'kind': 'VARCHAR', 'gj': 'VARCHAR', 'clon': 'DOUBLE', 'clat': 'DOUBLE', 'r': 'DOUBLE'})""",
                [str(raw)])
    con.execute("""INSERT INTO fences SELECT i, kind,
                   CASE kind WHEN 'polygon' THEN ST_GeomFromGeoJSON(gj)
                   ELSE ST_MakeEnvelope(clon - r / (100000 * greatest(cos(radians(clat)), 0.01)), clat - r / 100000,
                                        clon + r / (100000 * greatest(cos(radians(clat)), 0.01)), clat + r / 100000) END,
                   clon, clat, r FROM raw ORDER BY i""")
    con.close()
    raw.unlink()


QUERY = """
WITH fixes AS MATERIALIZED (
    SELECT row_number() OVER () - 1 AS fi, lat, lon, ST_Point(lon, lat) AS pt
    FROM read_csv(?, header = true, columns = {'subject_id': 'VARCHAR', 'ts': 'VARCHAR', 'lat': 'DOUBLE',
                                               'lon': 'DOUBLE', 'accuracy_m': 'DOUBLE'})),
-- Materialized, so that the distance test below is not folded into the
-- join's condition (which turns the SPATIAL_JOIN into a nested loop).
near_circles AS MATERIALIZED (
    SELECT f.fi, f.lat, f.lon, a.i, a.clat, a.clon, a.r FROM fixes AS f JOIN fences AS a ON ST_Intersects(a.geom, f.pt)
    WHERE a.kind = 'circle')
SELECT f.fi, a.i FROM fixes AS f JOIN fences AS a ON ST_Contains(a.geom, f.pt)
WHERE a.kind = 'polygon'
UNION ALL
SELECT fi, i FROM near_circles WHERE ST_Distance_Spheroid(ST_Point(clat, clon), ST_Point(lat, lon)) < r
"""


def containment(path, fixes_csv):
    """One end-to-end run: open the stored catalog, read the fixes, join.
    Returns (fix indices, fence indices, seconds for the query alone)."""
    con = connect(path, read_only=True)
    t = time.perf_counter()
    res = con.execute(QUERY, [str(fixes_csv)]).fetchnumpy()
    query_s = time.perf_counter() - t
    con.close()
    return np.asarray(res["fi"]), np.asarray(res["i"]), query_s


def plan(path, fixes_csv):
    con = connect(path, read_only=True)
    text = "\n".join(r[1] for r in con.execute("EXPLAIN " + QUERY, [str(fixes_csv)]).fetchall())
    con.close()
    return text


if __name__ == "__main__":
    # One end-to-end run as its own process (so that its peak RSS is its own):
    #   python benchmarks/duckdb_peer.py CATALOG.duckdb FIXES.csv OUT.npz
    fi, ai, q = containment(sys.argv[1], sys.argv[2])
    np.savez(sys.argv[3], fi=fi, ai=ai)
    print(f"query {q:.3f} s, {len(fi)} pairs", file=sys.stderr)
