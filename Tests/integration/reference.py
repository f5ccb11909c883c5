"""Independent references for the geometry: GEOS (through shapely and
SpatiaLite) for containment, GeographicLib (through pyproj) for distances."""
import glob
import json
import math
import sqlite3
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pyproj
import shapely
from shapely.geometry import shape

from conftest import CLI, EXTENSION, ROOT

GEOD = pyproj.Geod(ellps="WGS84")


def connect(db):
    c = sqlite3.connect(db)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(EXTENSION))
    return c


def natural_earth_countries(workdir):
    """Natural Earth 1:110m admin-0 countries (public domain), from the copy in
    geopandas 0.14's wheel, converted to GeoJSON by GDAL's ogr2ogr, with the
    country name as area_id."""
    wheel = glob.glob(str(ROOT / ".venv-test" / "wheels" / "geopandas-0.14.4-*.whl"))[0]
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if "naturalearth_lowres/naturalearth_lowres." in name:
                (workdir / Path(name).name).write_bytes(z.read(name))
    out = workdir / "countries.geojson"
    subprocess.run(["ogr2ogr", "-f", "GeoJSON", out, workdir / "naturalearth_lowres.shp", "-sql",
                    "SELECT name AS area_id, continent, iso_a3 FROM naturalearth_lowres"], check=True, capture_output=True)
    return out


def import_areas(db, path, *flags):
    subprocess.run([CLI, "init", db], check=True, capture_output=True)
    subprocess.run([CLI, "import", db, path, *flags], check=True, capture_output=True)
    exported = subprocess.run([CLI, "export", db], check=True, capture_output=True, text=True).stdout
    return {f["properties"]["area_id"]: f for f in json.loads(exported)["features"]}


def cut_edges(geom):
    """Edges along ±180 of a shape that has parts on both sides: not boundary (RFC 7946 §3.1.9)."""
    coords = shapely.get_coordinates(geom.boundary)
    return (coords[:, 0] == 180).any() and (coords[:, 0] == -180).any()


def edges(geom):
    """All boundary edges as (lon1, lat1, lon2, lat2), without antimeridian cut
    edges and without edges along latitude ±90 (the pole: a point, not boundary)."""
    polys = list(geom.geoms) if geom.geom_type == "MultiPolygon" else [geom]
    skip_cut = cut_edges(geom)
    out = []
    for p in polys:
        for ring in [p.exterior, *p.interiors]:
            c = np.asarray(ring.coords)[:, :2]
            for a, b in zip(c[:-1], c[1:]):
                if skip_cut and a[0] == b[0] and abs(a[0]) == 180:
                    continue
                if a[1] == b[1] and abs(a[1]) == 90:
                    continue
                out.append((a[0], a[1], b[0], b[1]))
    return np.array(out)


def reference_boundary_distance(geom, lon, lat, spacing_m=500.0):
    """Geodesic distance (m) from the point to the nearest point of the boundary,
    whose edges are straight in lon/lat. Every edge is sampled every ≤ spacing_m
    with pyproj; each window whose samples come near the best is refined by
    golden-section search on GeographicLib's inverse. Independent of the engine's
    frame-and-candidates method."""
    return reference_edge_distance(edges(geom), lon, lat, spacing_m)


def reference_edge_distance(e, lon, lat, spacing_m=500.0):
    """reference_boundary_distance over the given edges, rows of (lon1, lat1,
    lon2, lat2) as edges() gives them: the geodesic distance (m) from the
    point to the nearest point of any of them. The caller may leave out
    edges it has proved farther than another edge's point."""
    lengths = GEOD.inv(e[:, 0], e[:, 1], e[:, 2], e[:, 3])[2]
    counts = np.maximum(2, np.ceil(lengths / spacing_m).astype(int) + 1)
    idx = np.repeat(np.arange(len(e)), counts)
    t = np.concatenate([np.linspace(0, 1, n) for n in counts])
    lons = e[idx, 0] + t * (e[idx, 2] - e[idx, 0])
    lats = e[idx, 1] + t * (e[idx, 3] - e[idx, 1])
    d = GEOD.inv(np.full_like(lons, lon), np.full_like(lats, lat), lons, lats)[2]
    best = d.min()
    result = best
    for k in np.nonzero(d <= best + spacing_m)[0]:
        i = idx[k]
        step = 1.0 / (counts[i] - 1)
        lo, hi = max(0.0, t[k] - step), min(1.0, t[k] + step)

        def f(s, i=i):
            return GEOD.inv(lon, lat, e[i, 0] + s * (e[i, 2] - e[i, 0]), e[i, 1] + s * (e[i, 3] - e[i, 1]))[2]
        g = (math.sqrt(5) - 1) / 2
        c, dd = hi - g * (hi - lo), lo + g * (hi - lo)
        fc, fd = f(c), f(dd)
        for _ in range(60):
            if fc < fd:
                hi, dd, fd = dd, c, fc
                c = hi - g * (hi - lo); fc = f(c)
            else:
                lo, c, fc = c, dd, fd
                dd = lo + g * (hi - lo); fd = f(dd)
        result = min(result, fc, fd)
    return result


def extent_m(geom):
    minx, miny, maxx, maxy = geom.bounds
    return GEOD.inv(minx, miny, maxx, maxy)[2]
