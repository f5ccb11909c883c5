"""The lon-first point forms PostGIS and SpatiaLite users write:
gf_contains(area, MakePoint(lon, lat, 4326), accuracy_m [, p]), the GEOS-style
gf_contains(area, point), gf_distance_m(area, point) and
gf_inside_probability(area, point, accuracy_m) give exactly the lat/lon forms'
answers; a point of another SRID or a geometry that is not a point is an error
naming the argument."""
import random

import pytest

from conftest import sql


def test_point_forms_equal_the_lat_lon_forms(catalog):
    rng = random.Random(5)
    rows = []
    for _ in range(300):
        lat, lon = 35.70 + rng.uniform(-0.03, 0.03), 139.75 + rng.uniform(-0.05, 0.05)
        acc, p = rng.choice([0, 5, 40, 300]), rng.choice([0, 0.5, 0.95])
        rows.append(f"({lat!r}, {lon!r}, {acc}, {p})")
    script = ("CREATE TEMP TABLE f (lat, lon, acc, p); INSERT INTO f VALUES " + ", ".join(rows) + ";\n"
              "SELECT count(*), sum(a.kind = 'circle'),"
              " sum(gf_contains(a.geom, MakePoint(f.lon, f.lat, 4326), f.acc, f.p) IS gf_contains(a.geom, f.lat, f.lon, f.acc, f.p)),"
              " sum(gf_contains(a.geom, MakePoint(f.lon, f.lat, 4326), f.acc) IS gf_contains(a.geom, f.lat, f.lon, f.acc)),"
              " sum(gf_contains(a.geom, MakePoint(f.lon, f.lat, 4326)) IS gf_contains(a.geom, f.lat, f.lon, 0)),"
              " sum(gf_distance_m(a.geom, MakePoint(f.lon, f.lat, 4326)) = gf_distance_m(a.geom, f.lat, f.lon)),"
              " sum(gf_inside_probability(a.geom, MakePointZ(f.lon, f.lat, 12.5, 0), f.acc)"
              "     = gf_inside_probability(a.geom, f.lat, f.lon, f.acc)),"
              " sum(gf_contains(a.geom, f.lat, f.lon, f.acc, f.p) = 1)"
              " FROM f, gf_areas AS a;\n")
    total, circles, *same, inside = map(int, sql(catalog, script).stdout.strip().split("|"))
    assert total == 300 * 4 and circles > 0 and inside > 0
    assert same == [total] * 5


@pytest.mark.parametrize("call,message", [
    ("gf_contains(gf_circle(35, 139, 100), MakePoint(139, 35, 3857), 10)",
     "gf_contains: argument 2 (point) has SRID 3857; only 4326"),
    ("gf_distance_m(gf_circle(35, 139, 100), GeomFromText('LINESTRING(139 35, 139.1 35.1)', 4326))",
     "gf_distance_m: argument 2 (point) is not a usable point geometry: geometry class 2 is not a Point"),
    ("gf_contains(gf_circle(35, 139, 100), MakePoint(200, 35, 4326), 10)",
     "gf_contains: argument 2 (point) is not a usable point geometry: point (200.0, 35.0) is not a longitude/latitude"),
    ("gf_contains(gf_circle(35, 139, 100), MakePoint(139, 35, 4326), -1)",
     "gf_contains: argument 3 (accuracy_m) must be >= 0 metres"),
    ("gf_contains(gf_circle(35, 139, 100), MakePoint(139, 35, 4326), 10, 0.5, 1)",
     "gf_contains: 5 arguments, but with a point geometry it takes (area, point, accuracy_m [, p])"),
    ("gf_contains(gf_circle(35, 139, 100), MakePoint(139, 35, 4326), 10, 1.5)",
     "gf_contains: argument 4 (p) must be a confidence in [0, 1)"),
    ("gf_contains(gf_circle(35, 139, 100), 35, 139)",
     "gf_contains: 3 arguments, but with a latitude and longitude it takes (area, lat, lon, accuracy_m [, p])"),
    ("gf_inside_probability(gf_circle(35, 139, 100), MakePoint(139, 35, 4326), 1, 2)",
     "gf_inside_probability: 4 arguments, but with a point geometry it takes (area, point, accuracy_m)"),
])
def test_point_form_errors_name_the_argument(catalog, call, message):
    p = sql(catalog, f"SELECT {call};", check=False)
    assert p.returncode != 0 and message in p.stderr, p.stderr
