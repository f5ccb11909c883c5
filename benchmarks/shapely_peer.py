"""shapely 2 (GEOS) as a peer on the containment question ("for every fix,
which fences contain it"), as a Python user would answer it: every polygon a
shapely geometry in an STRtree, queried with all fixes at once (point
within polygon: boundary excluded, as ST_Contains); circles by a tree of
lon/lat boxes that enclose them, then the ellipsoidal distance to the
centre (pyproj's Geod, GeographicLib), strictly less than the radius, as
the other peers. Fence index = the fence's position in the file.

benchmarks/peers.py uses it in process; benchmarks/million.py runs it as its
own process, so that its peak RSS is its own:

    python benchmarks/shapely_peer.py FENCES.geojson POINTS.csv OUT.npz

reads the fences (one feature a line, as workload.write_collection writes
them) and the fixes' CSV (subject_id, ts, lat, lon, accuracy_m), answers,
saves the pairs (fi, ai) and prints the time of each phase on stderr.
"""
import sys
import time

import numpy as np
import pyproj
import shapely


class Fences:
    """The fences in shapely's form: an STRtree of the polygons, and an
    STRtree of the circles' enclosing boxes with their centres and radii."""

    def __init__(self, features):
        polys, poly_idx, circles = [], [], []
        for i, f in enumerate(features):
            g = f["geometry"]
            if g["type"] == "Point":
                circles.append((i, g["coordinates"][0], g["coordinates"][1], f["properties"]["radius_m"]))
            else:
                polys.append(shapely.geometry.shape(g)); poly_idx.append(i)
        self.poly_idx = np.array(poly_idx, dtype=np.int64)
        self.tree = shapely.STRtree(polys)
        self.c_idx = np.array([c[0] for c in circles], dtype=np.int64)
        self.c_lon = np.array([c[1] for c in circles], dtype=float)
        self.c_lat = np.array([c[2] for c in circles], dtype=float)
        self.c_r = np.array([c[3] for c in circles], dtype=float)
        # A degree is more than 100 km of latitude and 100 km × cos(latitude)
        # of longitude: the boxes enclose the circles at any latitude (the
        # exact test follows).
        half_lon = self.c_r / (100000 * np.maximum(np.cos(np.radians(self.c_lat)), 0.01))
        boxes = shapely.box(self.c_lon - half_lon, self.c_lat - self.c_r / 100000,
                            self.c_lon + half_lon, self.c_lat + self.c_r / 100000)
        self.ctree = shapely.STRtree(boxes)
        self.geod = pyproj.Geod(ellps="WGS84")

    def containment(self, lon, lat, pts=None):
        """(fix indices, fence indices) of every fence that contains a fix;
        `pts`, the fixes as shapely points, if made already."""
        if pts is None:
            pts = shapely.points(lon, lat)
        pi, gi = self.tree.query(pts, predicate="within")   # point within polygon: boundary excluded, as ST_Contains
        ci, cj = self.ctree.query(pts)
        d = self.geod.inv(lon[ci], lat[ci], self.c_lon[cj], self.c_lat[cj])[2]
        keep = d < self.c_r[cj]
        return np.concatenate([pi, ci[keep]]), np.concatenate([self.poly_idx[gi], self.c_idx[cj][keep]])


def read_fixes(path):
    """(lon, lat) arrays of a fixes CSV with the header subject_id, ts, lat, lon, accuracy_m."""
    latlon = np.loadtxt(path, delimiter=",", skiprows=1, usecols=(2, 3), dtype=float, ndmin=2)
    return np.ascontiguousarray(latlon[:, 1]), np.ascontiguousarray(latlon[:, 0])


if __name__ == "__main__":
    from workload import read_features
    t0 = time.perf_counter()
    fences = Fences(read_features(sys.argv[1]))
    t1 = time.perf_counter()
    lon, lat = read_fixes(sys.argv[2])
    t2 = time.perf_counter()
    fi, ai = fences.containment(lon, lat)
    t3 = time.perf_counter()
    np.savez(sys.argv[3], fi=fi, ai=ai)
    print(f"fences loaded {t1 - t0:.3f} s, fixes read {t2 - t1:.3f} s, query {t3 - t2:.3f} s, {len(fi)} pairs", file=sys.stderr)
