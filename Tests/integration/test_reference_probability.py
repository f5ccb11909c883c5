"""gf_inside_probability against a brute-force grid integral of the Gaussian
over the shapely polygon, near long edges at small accuracies (a border
segment of hundreds of km seen from metres away) and on shapes wider than 180°
of longitude or lying across ±180 from the fix (Antarctica, Russia, a
synthetic 200°-wide band). The issue's tolerance: ±0.002."""
import json
import math
import random

import numpy as np
import pytest
import shapely
from shapely.geometry import shape

from reference import GEOD, connect, import_areas, natural_earth_countries

SIGMA_PER_ACCURACY = 1 / math.sqrt(-2 * math.log(0.32))


def grid_probability(geom, lon, lat, acc, n=1201):
    """P(inside) by a grid over ±6σ in the local metric frame at the fix (metres
    per degree from pyproj), each grid point's lon/lat folded into [-180, 180]
    and tested with GEOS."""
    sigma = acc * SIGMA_PER_ACCURACY
    offs = np.linspace(-6 * sigma, 6 * sigma, n)
    ex, ny = np.meshgrid(offs, offs)
    m_lat = GEOD.inv(lon, lat - 0.0005, lon, lat + 0.0005)[2] / 0.001
    m_lon = GEOD.inv(lon - 0.0005, lat, lon + 0.0005, lat)[2] / 0.001
    px = (lon + ex / m_lon + 180) % 360 - 180
    py = lat + ny / m_lat
    inside = shapely.contains_xy(geom, px.ravel(), py.ravel()).reshape(px.shape)
    w = np.exp(-(ex ** 2 + ny ** 2) / (2 * sigma ** 2))
    return float((w * inside).sum() / w.sum())



# Natural Earth 1:110m edges of 300-630 km: Alaska/Yukon on 141°W, Egypt/Sudan
# on 22°N, Russia's Arctic coast.
LONG_EDGES = [
    ("Canada", (-140.99778, 60.30639), (-140.9925, 66.00003)),
    ("United States of America", (-140.9925, 66.00003), (-140.99778, 60.30639)),
    ("Egypt", (29.02, 22.0), (25.0, 22.0)),
    ("Sudan", (25.0, 22.0), (29.02, 22.0)),
    ("Russia", (140.46817, 72.84941000000015), (149.5, 72.2)),
]


def test_inside_probability_near_long_edges(countries):
    """1-20 m accuracy, fixes 0.2σ-4σ either side of a point along a long
    edge (the edge's own lon/lat line, so the side is exact)."""
    db, shapes = countries
    conn = connect(db)
    rng = random.Random(20)
    checked = 0
    for name, a, b in LONG_EDGES:
        g = shapes[name]
        for _ in range(6):
            acc = rng.choice([1.0, 2.0, 5.0, 10.0, 20.0])
            sigma = acc * SIGMA_PER_ACCURACY
            t = rng.uniform(0.2, 0.8)
            ex, ey = a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])
            m_lat = GEOD.inv(ex, ey - 0.0005, ex, ey + 0.0005)[2] / 0.001
            m_lon = GEOD.inv(ex - 0.0005, ey, ex + 0.0005, ey)[2] / 0.001
            # Unit normal in metres, pointing left of a→b.
            dx, dy = (b[0] - a[0]) * m_lon, (b[1] - a[1]) * m_lat
            norm = math.hypot(dx, dy)
            off = rng.choice([-1, 1]) * rng.uniform(0.2, 4) * sigma
            lon, lat = ex - dy / norm * off / m_lon, ey + dx / norm * off / m_lat
            got = conn.execute("SELECT gf_area_inside_probability(?, ?, ?, ?)", (name, lat, lon, acc)).fetchone()[0]
            ref = grid_probability(g, lon, lat, acc)
            assert abs(got - ref) <= 0.002, (name, lat, lon, acc, off / sigma, got, ref)
            checked += 1
    assert checked == 30


def test_inside_probability_on_continent_sized_shapes(countries):
    """Fixes inside Antarctica (a ring over all 360° of longitude), Russia and
    Canada, far inside and near the coast, 5 m to 5 km accuracy."""
    db, shapes = countries
    conn = connect(db)
    rng = random.Random(21)
    cases = [("Antarctica", -80.0, 0.0), ("Antarctica", -75.0, 100.0), ("Antarctica", -82.0, -120.0),
             ("Antarctica", -75.0, 160.0), ("Antarctica", -85.0, 179.5), ("Russia", 62.0, 100.0), ("Russia", 66.0, 170.0),
             ("Russia", 55.0, 40.0), ("Canada", 60.0, -100.0)]
    checked = 0
    for name, lat, lon in cases:
        g = shapes[name]
        assert g.contains(shapely.Point(lon, lat))
        for acc in (5.0, 500.0, 5000.0):
            got = conn.execute("SELECT gf_area_inside_probability(?, ?, ?, ?)", (name, lat, lon, acc)).fetchone()[0]
            assert abs(got - 1) <= 0.002, (name, lat, lon, acc, got)
            checked += 1
    # Near the coast, where the answer is between 0 and 1.
    for name in ["Antarctica", "Russia"]:
        g = shapes[name]
        polys = sorted(g.geoms, key=lambda p: -p.area)
        coords = np.asarray(polys[0].exterior.coords)
        done = 0
        while done < 6:
            i = rng.randrange(len(coords) - 1)
            (x1, y1), (x2, y2) = coords[i], coords[i + 1]
            if abs(x1) == 180 or abs(y1) == 90 or abs(x2) == 180 or abs(y2) == 90 or abs(y1) > 80:
                continue
            acc = rng.choice([10.0, 200.0, 2000.0])
            t = rng.uniform(0.2, 0.8)
            lon, lat = x1 + t * (x2 - x1), y1 + t * (y2 - y1)
            m_lat = GEOD.inv(lon, lat - 0.0005, lon, lat + 0.0005)[2] / 0.001
            lat += rng.uniform(-1.5, 1.5) * acc * SIGMA_PER_ACCURACY / m_lat
            got = conn.execute("SELECT gf_area_inside_probability(?, ?, ?, ?)", (name, lat, lon, acc)).fetchone()[0]
            ref = grid_probability(g, lon, lat, acc, n=801)
            assert abs(got - ref) <= 0.002, (name, lat, lon, acc, got, ref)
            done += 1
            checked += 1
    assert checked == 39


def test_inside_probability_on_a_band_wider_than_180_degrees(tmp_path):
    """A band 200° wide (lon -100..100, one ring) and one across ±180
    (lon 80..180 and -180..-80, a multipolygon cut at the meridian)."""
    band = shapely.Polygon([(-100, 10), (100, 10), (100, 20), (-100, 20), (-100, 10)])
    across = shapely.MultiPolygon([shapely.Polygon([(80, 10), (180, 10), (180, 20), (80, 20), (80, 10)]),
                                   shapely.Polygon([(-180, 10), (-80, 10), (-80, 20), (-180, 20), (-180, 10)])])
    features = [{"type": "Feature", "properties": {"area_id": name}, "geometry": json.loads(shapely.to_geojson(g))}
                for name, g in (("band", band), ("across", across))]
    path = tmp_path / "bands.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    db = tmp_path / "bands.db"
    import_areas(db, path)
    conn = connect(db)
    shapes = {"band": band, "across": across}
    rng = random.Random(22)
    for name, g in shapes.items():
        for lon in (-95.0, -60.0, 0.0, 60.0, 95.0, 120.0, 179.0, -179.0, -120.0):
            if not g.contains(shapely.Point(lon, 15)):
                continue
            for acc in (5.0, 5000.0):
                got = conn.execute("SELECT gf_area_inside_probability(?, ?, ?, ?)", (name, 15.0, lon, acc)).fetchone()[0]
                assert abs(got - 1) <= 0.002, (name, lon, acc, got)
            # And near its northern edge.
            acc = rng.choice([3.0, 300.0, 3000.0])
            m_lat = GEOD.inv(lon, 19.9995, lon, 20.0005)[2] / 0.001
            lat = 20 + rng.uniform(-2, 2) * acc * SIGMA_PER_ACCURACY / m_lat
            got = conn.execute("SELECT gf_area_inside_probability(?, ?, ?, ?)", (name, lat, lon, acc)).fetchone()[0]
            ref = grid_probability(g, lon, lat, acc)
            assert abs(got - ref) <= 0.002, (name, lat, lon, acc, got, ref)


def aeqd_grid_probability(geom, lon, lat, acc, n=1001):
    """P(inside) by a grid over ±6σ in the azimuthal equidistant projection
    about the fix (PROJ's aeqd, through pyproj), which holds a pole; each grid
    point back to lon/lat and tested with GEOS."""
    import pyproj
    sigma = acc * SIGMA_PER_ACCURACY
    offs = np.linspace(-6 * sigma, 6 * sigma, n)
    ex, ny = np.meshgrid(offs, offs)
    back = pyproj.Transformer.from_crs(pyproj.CRS.from_proj4(f"+proj=aeqd +lat_0={lat} +lon_0={lon} +ellps=WGS84"),
                                       "EPSG:4326", always_xy=True)
    px, py = back.transform(ex.ravel(), ny.ravel())
    inside = shapely.contains_xy(geom, np.asarray(px), np.asarray(py)).reshape(ex.shape)
    w = np.exp(-(ex ** 2 + ny ** 2) / (2 * sigma ** 2))
    return float((w * inside).sum() / w.sum())


def test_inside_probability_near_the_poles(countries, tmp_path):
    """Fixes whose pole is within a few σ: a cap round the North Pole (a ring
    along 85°N, the seam and the pole), a quarter of it (a wedge with a
    corner at the pole), and Antarctica round the South Pole."""
    cap = shapely.Polygon([(-180, 85), (180, 85), (180, 90), (-180, 90), (-180, 85)])
    wedge = shapely.Polygon([(0, 88), (90, 88), (90, 90), (0, 90), (0, 88)])
    features = [{"type": "Feature", "properties": {"area_id": name}, "geometry": json.loads(shapely.to_geojson(g))}
                for name, g in (("cap", cap), ("wedge", wedge))]
    path = tmp_path / "polar.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    db = tmp_path / "polar.db"
    import_areas(db, path)
    conn = connect(db)
    for lat in (89.9, 89.99, 89.999, 90.0):
        for acc in (10.0, 1000.0, 5000.0):
            got = conn.execute("SELECT gf_area_inside_probability('cap', ?, 20, ?)", (lat, acc)).fetchone()[0]
            assert abs(got - 1) <= 0.002, (lat, acc, got)
    rng = random.Random(23)
    for _ in range(12):
        lat, lon = 90 - rng.uniform(0, 0.03), rng.uniform(-30, 120)
        acc = rng.choice([100.0, 1000.0, 3000.0])
        got = conn.execute("SELECT gf_area_inside_probability('wedge', ?, ?, ?)", (lat, lon, acc)).fetchone()[0]
        ref = aeqd_grid_probability(wedge, lon, lat, acc)
        assert abs(got - ref) <= 0.002, (lat, lon, acc, got, ref)
    db, shapes = countries
    conn = connect(db)
    for lat in (-89.9, -89.99, -90.0):
        for acc in (100.0, 5000.0):
            got = conn.execute("SELECT gf_area_inside_probability('Antarctica', ?, 45, ?)", (lat, acc)).fetchone()[0]
            assert abs(got - 1) <= 0.002, (lat, acc, got)


def test_a_vanishing_accuracy_gives_what_accuracy_zero_gives(tmp_path):
    """From a new-user trial: at a circle's centre, an accuracy of 1e-200 m
    gave probability 0 (σ² underflowed to zero and the integral to NaN),
    where accuracy 0 and 1e-100 give 1. A polygon already held."""
    conn = connect(tmp_path / "none.db")
    circle, square = "gf_circle(35, 139, 100)", "GeomFromText('POLYGON((138 34, 140 34, 140 36, 138 36, 138 34))', 4326)"
    for area in (circle, square):
        for acc in (0, 1e-100, 1e-200, 5e-324):
            inside, = conn.execute(f"SELECT gf_inside_probability({area}, 35, 139, ?)", (acc,)).fetchone()
            outside, = conn.execute(f"SELECT gf_inside_probability({area}, 40, 139, ?)", (acc,)).fetchone()
            assert abs(inside - 1) < 1e-12 and abs(outside) < 1e-12, (area, acc, inside, outside)
    # Tiny but normal accuracies (a trial found 0.962 at 1e-13 m, 156 m inside: the
    # Gaussian was integrated in units of σ from the centre, a few ulps wide there).
    for acc in (10.0 ** e for e in range(-15, 0)):
        for metres, expected in ((0, 1), (150, 1), (299, 1), (301, 0)):
            lon, lat, _ = GEOD.fwd(139, 35, 45, metres)
            got, = conn.execute("SELECT gf_inside_probability(gf_circle(35, 139, 300), ?, ?, ?)", (lat, lon, acc)).fetchone()
            assert abs(got - expected) < 1e-6, (acc, metres, got)
    # A fix 2σ inside the circle's edge, against the Rice CDF it integrates (the grid's figure, ±0.002).
    sigma = 10 * SIGMA_PER_ACCURACY
    lon, lat, _ = GEOD.fwd(139, 35, 90, 100 - 2 * sigma)
    got = conn.execute(f"SELECT gf_inside_probability({circle}, ?, ?, 10)", (lat, lon)).fetchone()[0]
    ring = shapely.Polygon([GEOD.fwd(139, 35, a, 100)[:2] for a in np.linspace(0, 360, 721)[:-1]])
    assert abs(got - grid_probability(ring, lon, lat, 10)) <= 0.002, got
