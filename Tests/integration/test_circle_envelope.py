"""A catalog circle's `geom` (the polygon stored for the R*Tree and GIS
tools) encloses the exact circle and not much more, also across the
antimeridian, where it is two parts split at ±180 (it was a band round the
whole Earth: `gf_contains(geom, …)` said a fix 17,772 km away was inside).
Points from GeographicLib (pyproj.Geod) at 0.995 and 1.05 radii, every 5°."""
import pytest

from conftest import gf, sql
from reference import GEOD

CIRCLES = [  # (id, lat, lon, radius_m)
    ("tokyo", 35.6586, 139.7454, 300),
    ("seam_east", 0.0, 179.9, 50_000),
    ("seam_west", -12.5, -179.97, 20_000),
    ("north_seam", 60.0, 179.99, 5_000),
    ("south_wide", -45.0, 178.0, 800_000),
]


@pytest.fixture(scope="module")
def circles(tmp_path_factory):
    db = tmp_path_factory.mktemp("circles") / "c.db"
    gf("init", db)
    for area_id, lat, lon, r in CIRCLES:
        gf("areas", "add", db, "--id", area_id, "--circle", f"{lat},{lon},{r}")
    return db


def ask(db, rows):
    """gf_contains(geom, lat, lon, 0) of each (area_id, lat, lon), in order."""
    values = ",".join(f"({k},'{a}',{lat!r},{lon!r})" for k, (a, lat, lon) in enumerate(rows))
    out = sql(db, f"WITH q(k, a, lat, lon) AS (VALUES {values}) "
                  "SELECT gf_contains(g.geom, q.lat, q.lon, 0) FROM q JOIN gf_areas g ON g.area_id = q.a ORDER BY q.k;").stdout
    return [int(v) for v in out.split()]


def ring(lat, lon, r, scale):
    out = []
    for azimuth in range(0, 360, 5):
        lon2, lat2, _ = GEOD.fwd(lon, lat, azimuth, r * scale)
        out.append((lat2, lon2))
    return out


@pytest.mark.parametrize("area_id,lat,lon,r", CIRCLES)
def test_geom_encloses_the_circle_and_little_more(circles, area_id, lat, lon, r):
    inner = ring(lat, lon, r, 0.995)
    outer = ring(lat, lon, r, 1.05)
    got = ask(circles, [(area_id, a, b) for a, b in inner + outer])
    assert got[:len(inner)] == [1] * len(inner), [p for p, v in zip(inner, got) if v != 1]
    assert got[len(inner):] == [0] * len(outer), [p for p, v in zip(outer, got[len(inner):]) if v != 0]


def test_a_circle_across_the_antimeridian_is_two_parts_within_the_range(circles):
    rows = sql(circles, "SELECT area_id, NumGeometries(geom), MbrMinX(geom) >= -180, MbrMaxX(geom) <= 180 FROM gf_areas "
                        "WHERE area_id LIKE '%seam%' ORDER BY area_id;").stdout.split()
    assert rows == ["north_seam|2|1|1", "seam_east|2|1|1", "seam_west|2|1|1"]
    # Far from the circle on its own latitude, and on the seam itself inside it.
    assert ask(circles, [("seam_east", 0.1, -20.0), ("north_seam", 60.0, 0.0), ("seam_east", 0.0, 180.0),
                         ("seam_east", 0.0, -180.0), ("seam_east", 0.3, -179.95)]) == [0, 0, 1, 1, 1]
