"""Signed distances far from a shape against GeographicLib (pyproj.Geod): the
docs/sql.md's 0.01 m + 1e-6 × distance at every distance, on Natural Earth's
continent-sized countries (fixes hundreds to thousands of km away, across the
North Pole, within a few km of it), on lon/lat-straight edges thousands of km
long, and from nearly antipodal fixes."""
import json
import math
import random

import pytest
import shapely
from shapely.geometry import Point, shape

from reference import GEOD, connect, import_areas, natural_earth_countries, reference_boundary_distance


def tolerance(d):
    return 0.01 + 1e-6 * abs(d)



def check(conn, geom, name, lat, lon):
    got = conn.execute("SELECT gf_area_distance_m(?, ?, ?)", (name, lat, lon)).fetchone()[0]
    ref = reference_boundary_distance(geom, lon, lat, spacing_m=2000)
    signed = ref if geom.contains(Point(lon, lat)) else -ref
    assert abs(got - signed) <= tolerance(ref), (name, lat, lon, got, signed)


# Fixes whose nearest boundary point lies across the North Pole: the local
# frame at the fix once picked the wrong edge, 2-600 km off.
ACROSS_THE_POLE = [("Canada", 73.55742, 109.82740), ("Canada", 79.44174, 107.55405), ("Canada", 82.79177, 113.41751),
                   ("Canada", 64.83584, 16.43092), ("Russia", 69.61336, -41.38477), ("Russia", 74.10547, -82.28696),
                   ("Greenland", 62.95268, 145.78469), ("Norway", 67.05421, -150.26720)]


@pytest.mark.parametrize("name,lat,lon", ACROSS_THE_POLE)
def test_distances_across_the_pole(countries, name, lat, lon):
    db, shapes = countries
    check(connect(db), shapes[name], name, lat, lon)


def test_far_distances_on_continent_sized_shapes(countries):
    """Fixes 100-3,000 km from a boundary vertex of the largest countries, in
    every direction, inside and outside."""
    db, shapes = countries
    conn = connect(db)
    rng = random.Random(60)
    names = ["Russia", "Canada", "United States of America", "Greenland", "Antarctica", "Brazil", "Australia",
             "China", "Indonesia", "Chile", "Norway", "Fiji", "Kazakhstan"]
    for name in names:
        g = shapes[name]
        coords = shapely.get_coordinates(g.boundary)
        for _ in range(5):
            vx, vy = coords[rng.randrange(len(coords))]
            lon, lat, _ = GEOD.fwd(vx, vy, rng.uniform(0, 360), rng.uniform(100e3, 3000e3))
            if abs(lat) > 89.9:
                continue
            check(conn, g, name, lat, lon)


def test_distances_near_the_north_pole(countries):
    """Within 0.1° (11 km) of the pole, where the frame's longitude scale is
    nearly 0: the nearest coast is 700-800 km away in some direction."""
    db, shapes = countries
    conn = connect(db)
    rng = random.Random(61)
    for name in ["Canada", "Greenland", "Russia"]:
        for _ in range(4):
            lat, lon = 90 - rng.uniform(0.0001, 0.1), rng.uniform(-180, 180)
            check(conn, shapes[name], name, lat, lon)


def test_distances_to_long_lon_lat_straight_edges(tmp_path):
    """Edges 20-100° of longitude long at 50-75° N, which bow far from their
    great circles: fixes 1 km to 3,000 km from them, both sides."""
    shapes = {
        "north": shapely.Polygon([(-150, 60), (-50, 60), (-50, 75), (-150, 75), (-150, 60)]),
        "slant": shapely.Polygon([(0, 50), (80, 70), (80, 75), (0, 55), (0, 50)]),
        "wedge": shapely.Polygon([(100, 50), (160, 52), (130, 72), (100, 50)]),
    }
    features = [{"type": "Feature", "properties": {"area_id": n}, "geometry": json.loads(shapely.to_geojson(g))}
                for n, g in shapes.items()]
    path = tmp_path / "long.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    db = tmp_path / "long.db"
    import_areas(db, path)
    conn = connect(db)
    rng = random.Random(62)
    for name, g in shapes.items():
        ring = list(g.exterior.coords)
        for _ in range(12):
            i = rng.randrange(len(ring) - 1)
            (x1, y1), (x2, y2) = ring[i], ring[i + 1]
            t = rng.uniform(0, 1)
            lon, lat, _ = GEOD.fwd(x1 + t * (x2 - x1), y1 + t * (y2 - y1), rng.uniform(0, 360),
                                   10 ** rng.uniform(3, math.log10(3e6)))
            check(conn, g, name, lat, lon)


def test_circle_distances_from_nearly_antipodal_fixes():
    """Fixes within 3° of the antipode of a circle's centre, where Vincenty's
    iteration does not settle (19,700-20,000 km)."""
    conn = connect(":memory:")
    rng = random.Random(63)
    for _ in range(300):
        lat0, lon0 = rng.uniform(-80, 80), rng.uniform(-180, 180)
        lat = max(-90, min(90, -lat0 + rng.uniform(-3, 3)))
        lon = (lon0 + 180 + rng.uniform(-3, 3) + 180) % 360 - 180
        r = rng.choice([50.0, 5_000.0])
        got = conn.execute("SELECT gf_distance_m(gf_circle(?, ?, ?), ?, ?)", (lat0, lon0, r, lat, lon)).fetchone()[0]
        d = GEOD.inv(lon0, lat0, lon, lat)[2]
        assert abs(got - (r - d)) <= tolerance(d), (lat0, lon0, lat, lon, got, r - d)
