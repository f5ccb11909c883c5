"""gf_nearest and gf_regions walk the R*Tree's nodes nearest first: on real
and generated shapes at the hard places (±180°, near the poles, far out at
sea), the answer is an independent reference's (every area's geodesic
distance to its boundary, 0 inside, from GEOS and GeographicLib, ranked:
nearest_reference.py);
an index of another layout is searched through the virtual table with the
same answer; uncommitted writes are seen; a damaged node is an error that
names it, never a crash or a silently wrong answer."""
import json
import math
import random
import shutil
import sqlite3

import pytest

from conftest import gf, write_collection
from nearest_reference import Areas, Ranking, disagreements
from reference import connect, import_areas, natural_earth_countries


def circle(area_id, lon, lat, radius, **props):
    return {"type": "Feature", "properties": {"area_id": area_id, "radius_m": radius, **props},
            "geometry": {"type": "Point", "coordinates": [lon, lat]}}


def polygon(area_id, lon, lat, size, rng, **props):
    """An irregular ring of 3-12 vertices around (lon, lat), `size` degrees
    across, moved off ±180° and the poles so that it stays one simple ring."""
    n = rng.randint(3, 12)
    lon = max(-180.0 + size / 2, min(180.0 - size / 2, lon))
    lat = max(-90.0 + size / 2, min(90.0 - size / 2, lat))
    ring = []
    for k in range(n):
        a = 2 * math.pi * k / n
        r = size * rng.uniform(0.3, 0.5)
        ring.append([lon + r * math.cos(a), lat + r * math.sin(a)])
    ring.append(ring[0])
    return {"type": "Feature", "properties": {"area_id": area_id, **props},
            "geometry": {"type": "Polygon", "coordinates": [ring]}}


# Clusters of small fences at the hard places: a dense city, both sides of
# the antimeridian, near both poles, on the equator.
CLUSTERS = [(139.76, 35.68, 0.2), (179.7, -17.8, 0.4), (-179.7, -17.8, 0.4), (10.0, 88.5, 1.5),
            (-60.0, -84.0, 2.0), (0.0, 0.0, 0.5), (-74.0, 40.7, 0.3)]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Natural Earth's countries plus 3,000 generated fences (some with a
    validity window): (catalog path, area ids, the areas as the reference
    reads them)."""
    work = tmp_path_factory.mktemp("walk")
    db = work / "world.db"
    features = import_areas(db, natural_earth_countries(work), "--make-valid")
    rng = random.Random(11)
    extra = []
    for i in range(3000):
        lon0, lat0, spread = CLUSTERS[i % len(CLUSTERS)]
        lon = max(-180.0, min(180.0, lon0 + rng.uniform(-spread, spread)))
        lat = max(-89.9, min(89.9, lat0 + rng.uniform(-spread, spread)))
        props = {"valid_from": "2026-01-01T00:00:00Z", "valid_until": "2026-06-30T23:59:59Z"} if i % 10 == 0 else {}
        if i % 3 == 0:
            extra.append(circle(f"C{i:04d}", lon, lat, rng.uniform(20, 3000), **props))
        else:
            extra.append(polygon(f"P{i:04d}", lon, lat, rng.uniform(0.002, 0.05), rng, **props))
    gf("import", db, write_collection(work / "extra.geojson", extra))
    return db, sorted(features) + [f["properties"]["area_id"] for f in extra], Areas(connect(db))


def positions(rng, count):
    """Positions near each cluster, on both sides of ±180°, within a degree of
    the poles, far out at sea, and anywhere."""
    out = [(-17.8, 180.0), (-17.8, -180.0), (-17.8, 179.999), (89.99, 0.0), (-89.99, 45.0), (90.0, 0.0),
           (-90.0, 0.0), (0.0, -140.0), (-50.0, -120.0), (35.68, 139.76),
           (-35.68, -40.24), (-35.5, -40.0), (-40.7, 106.0), (0.0, 180.0)]   # near the antipodes of clusters
    for lon0, lat0, spread in CLUSTERS:
        for _ in range(3):
            out.append((max(-90.0, min(90.0, lat0 + rng.uniform(-3 * spread, 3 * spread))),
                        ((lon0 + rng.uniform(-3 * spread, 3 * spread) + 180) % 360) - 180))
    out += [(rng.uniform(-90, 90), rng.uniform(-180, 180)) for _ in range(count)]
    return out


def assert_reference_answer(conn, ranking, n, at=None):
    """gf_nearest's answer at the ranking's position has ranks 1, 2, ... and is
    one the reference accepts (nearest_reference.disagreements)."""
    got = conn.execute("SELECT rank, area_id, distance_m FROM gf_nearest(?, ?, ?, ?)",
                       (ranking.lat, ranking.lon, n, at)).fetchall()
    assert [r for r, _, _ in got] == list(range(1, len(got) + 1)), got
    problems = disagreements([(a, d) for _, a, d in got], ranking, n, at)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lat, lon", [pytest.param(lat, lon, id=f"{lat:.4f},{lon:.4f}")
                                      for lat, lon in positions(random.Random(5), 40)])
def test_nearest_is_the_reference_answer(world, lat, lon):
    db, _, areas = world
    conn = connect(db)
    ranking = Ranking(areas, lat, lon)
    for n, at in ((1, None), (7, None), (25, "2026-09-01T00:00:00Z"), (25, "2026-03-01T00:00:00Z")):
        assert_reference_answer(conn, ranking, n, at)


def test_a_null_argument_gives_no_rows_as_null_gives_null(world):
    conn = connect(world[0])
    for args in ((None, 0, 1), (0, None, 1), (0, 0, None)):
        assert conn.execute("SELECT count(*) FROM gf_nearest(?, ?, ?)", args).fetchone()[0] == 0
    assert conn.execute("SELECT gf_regions(NULL, 0, 3)").fetchone()[0] is None


def test_a_position_on_a_boundary_is_at_zero_not_minus_zero(tmp_path):
    db = tmp_path / "b.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "sq", "--geometry", '{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}')
    for fmt in ("--json", "--csv"):
        out = gf("nearest", db, "--lat", "0.5", "--lon", "1", "-n", "1", fmt).stdout
        assert "-0.0" not in out and "0.0" in out or '"distance_m":0' in out, out
    assert str(connect(db).execute("SELECT distance_m FROM gf_nearest(0.5, 1, 1)").fetchone()[0]) == "0.0"


def test_regions_name_the_reference_areas(world):
    """The payload's areas are the reference's nearest; their distances are
    given to the centimetre, so 5 mm of rounding is allowed on top of the bound."""
    db, _, areas = world
    conn = connect(db)
    for lat, lon in [(-17.8, 180.0), (88.9, 12.0), (10.0, -150.0), (35.7, 139.8)]:
        plan = json.loads(conn.execute("SELECT gf_regions(?, ?, 5)", (lat, lon)).fetchone()[0])
        got = [(a["area_id"], a["distance_m"]) for a in plan["areas"]]
        problems = disagreements(got, Ranking(areas, lat, lon), 5, None, rounding_m=0.005)
        assert not problems, "\n".join(problems)


def test_another_index_layout_gives_the_same_answer(world, tmp_path):
    """An R*Tree with an auxiliary column is not read node by node: the
    virtual table's box queries answer, the same."""
    src = world[0]
    db = tmp_path / "aux.db"
    shutil.copy(src, db)
    conn = connect(db)
    questions = [(lat, lon, 9) for lat, lon in positions(random.Random(8), 15)]
    before = [conn.execute("SELECT rank, area_id, distance_m FROM gf_nearest(?, ?, ?)", q).fetchall() for q in questions]
    conn.executescript("""
        CREATE TEMP TABLE boxes AS SELECT * FROM idx_gf_areas_geom;
        DROP TABLE idx_gf_areas_geom;
        CREATE VIRTUAL TABLE idx_gf_areas_geom USING rtree(pkid, xmin, xmax, ymin, ymax, +note);
        INSERT INTO idx_gf_areas_geom (pkid, xmin, xmax, ymin, ymax) SELECT * FROM boxes;
    """)
    conn.commit()
    after = [conn.execute("SELECT rank, area_id, distance_m FROM gf_nearest(?, ?, ?)", q).fetchall() for q in questions]
    assert after == before


def test_uncommitted_areas_are_seen(world, tmp_path):
    """Areas added and removed inside the caller's transaction count at once
    (the reference reads the areas through the same connection)."""
    src = world[0]
    db = tmp_path / "tx.db"
    shutil.copy(src, db)
    conn = connect(db)
    conn.execute("BEGIN")
    conn.execute("DELETE FROM gf_areas WHERE area_id IN ('C0000', 'Japan')")
    conn.execute("""INSERT INTO gf_areas (area_id, kind, geom) VALUES ('NEW', 'polygon',
                    GeomFromText('MULTIPOLYGON(((-140 -30, -139.99 -30, -139.99 -29.99, -140 -30)))', 4326))""")
    areas = Areas(conn)
    assert "NEW" in areas.ids and "Japan" not in areas.ids
    for lat, lon in [(-30.5, -140.2), (35.68, 139.76), (36.0, 138.0)]:
        assert_reference_answer(conn, Ranking(areas, lat, lon), 5)
    assert conn.execute("SELECT area_id FROM gf_nearest(-30.5, -140.2, 1)").fetchone()[0] == "NEW"
    conn.rollback()


@pytest.mark.parametrize("damage", ["truncate", "cycle", "missing-child", "root-says-leaf"])
def test_a_damaged_index_node_is_named(world, tmp_path, damage):
    src, _, areas = world
    db = tmp_path / "damaged.db"
    shutil.copy(src, db)
    raw = sqlite3.connect(db)
    depth = int.from_bytes(raw.execute("SELECT substr(data, 1, 2) FROM idx_gf_areas_geom_node WHERE nodeno = 1").fetchone()[0], "big")
    assert depth >= 1  # 4,000 areas need more than one node
    if damage == "truncate":
        raw.execute("UPDATE idx_gf_areas_geom_node SET data = substr(data, 1, 30) WHERE nodeno = 1")
    elif damage == "cycle":
        # The root's first cell points back at the root.
        raw.execute("UPDATE idx_gf_areas_geom_node SET data = substr(data, 1, 4) || zeroblob(7) || x'01' || substr(data, 13) "
                    "WHERE nodeno = 1")
    elif damage == "missing-child":
        child = int.from_bytes(raw.execute("SELECT substr(data, 5, 8) FROM idx_gf_areas_geom_node WHERE nodeno = 1").fetchone()[0], "big")
        raw.execute("DELETE FROM idx_gf_areas_geom_node WHERE nodeno = ?", (child,))
    else:
        # Depth 0: the root's child node numbers would be read as areas' row ids.
        raw.execute("UPDATE idx_gf_areas_geom_node SET data = zeroblob(2) || substr(data, 3) WHERE nodeno = 1")
    raw.commit()
    raw.close()
    conn = connect(db)
    # Every cell of the root is in reach of a worldwide question.
    with pytest.raises(sqlite3.Error) as e:
        for lat, lon in [(0.0, 0.0), (60.0, 100.0), (-40.0, -70.0), (35.68, 139.76)]:
            conn.execute("SELECT * FROM gf_nearest(?, ?, 10000)", (lat, lon)).fetchall()
    assert "idx_gf_areas_geom is damaged: node" in str(e.value)
    assert "CreateSpatialIndex" in str(e.value)
    # The connection is still usable.
    assert conn.execute("SELECT count(*) FROM gf_areas").fetchone()[0] > 3000
    p = gf("nearest", db, "--lat", "0", "--lon", "0", "-n", "10000", check=False)
    assert p.returncode != 0 and "idx_gf_areas_geom is damaged" in p.stderr
    # The rebuild docs/errors.md gives works (an empty root first, which SQLite can open), and the answers are right again.
    conn.executescript("UPDATE idx_gf_areas_geom_node SET data = zeroblob((SELECT max(length(data)) FROM idx_gf_areas_geom_node)) "
                       "WHERE nodeno = 1; SELECT DisableSpatialIndex('gf_areas', 'geom'); DROP TABLE idx_gf_areas_geom; "
                       "SELECT CreateSpatialIndex('gf_areas', 'geom');")
    conn.commit()
    assert_reference_answer(conn, Ranking(areas, 35.68, 139.76), 5)


def test_an_area_listed_twice_in_a_leaf_counts_once(world, tmp_path):
    src = world[0]
    db = tmp_path / "twice.db"
    shutil.copy(src, db)
    conn = connect(db)
    want = conn.execute("SELECT rank, area_id, distance_m FROM gf_nearest(35.7, 139.8, 6)").fetchall()
    row = conn.execute("SELECT id FROM gf_areas WHERE area_id = ?", (want[0][1],)).fetchone()[0]
    leaf = conn.execute("SELECT nodeno FROM idx_gf_areas_geom_rowid WHERE rowid = ?", (row,)).fetchone()[0]
    data = bytearray(conn.execute("SELECT data FROM idx_gf_areas_geom_node WHERE nodeno = ?", (leaf,)).fetchone()[0])
    cells = int.from_bytes(data[2:4], "big")
    at = [k for k in range(cells) if int.from_bytes(data[4 + 24 * k:12 + 24 * k], "big") == row][0]
    other = 0 if at else 1
    data[4 + 24 * other:28 + 24 * other] = data[4 + 24 * at:28 + 24 * at]
    conn.execute("UPDATE idx_gf_areas_geom_node SET data = ? WHERE nodeno = ?", (bytes(data), leaf))
    conn.commit()
    got = conn.execute("SELECT rank, area_id, distance_m FROM gf_nearest(35.7, 139.8, 6)").fetchall()
    assert len({a for _, a, _ in got}) == len(got) == 6
