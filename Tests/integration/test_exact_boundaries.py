"""Right at the edges: points placed exactly on vertices and edges of real
shapes (outside, distance exactly 0, as GEOS's ST_Contains), both spellings
of the antimeridian (+180 and -180 give the same answers), the poles
(polar edges are not boundary) and seams with no partner across (boundary).

Exactness: a point is "on an edge" here only when it provably is. Vertices
are the stored doubles (read back from the catalog as WKB); points on edges
along a meridian or a parallel share the edge's constant coordinate; points
on other edges are built and then checked with Python fractions on the
float values (the cross product of (b - a) and (p - a) is exactly zero, and
p lies between a and b). Seam (+-180) and polar (+-90) edges and the
vertices on them are left out of the GEOS comparison: GEOS sees a plane,
where they are boundary; on the Earth they are not."""
# Longer than 300 lines: exact boundary points of real shapes through every path (SQL, locate, judgement), sharing the exact collinearity proofs.
import csv
import glob
import json
import math
import random
import subprocess
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import shapely

from conftest import CLI, ROOT, gf, run, write_collection
from reference import GEOD, connect, import_areas, natural_earth_countries, reference_boundary_distance


def TOLERANCE(d):
    """The contract's bound on a distance's error against GeographicLib (docs/sql.md, gf_distance_m)."""
    return 0.01 + 1e-6 * d


def nyc_boroughs(workdir):
    """NYC's five boroughs (the nybb_16a copy in geopandas 0.14's wheel),
    reprojected from New York State Plane to lon/lat by GDAL's ogr2ogr."""
    wheel = glob.glob(str(ROOT / ".venv-test" / "wheels" / "geopandas-0.14.4-*.whl"))[0]
    with zipfile.ZipFile(wheel) as z:
        (workdir / "nybb_16a.zip").write_bytes(z.read("geopandas/datasets/nybb_16a.zip"))
    with zipfile.ZipFile(workdir / "nybb_16a.zip") as z:
        z.extractall(workdir)
    out = workdir / "nyc.geojson"
    subprocess.run(["ogr2ogr", "-f", "GeoJSON", "-t_srs", "EPSG:4326", out, workdir / "nybb.shp", "-sql",
                    "SELECT BoroName AS area_id FROM nybb"], check=True, capture_output=True)
    return out


def stored_shapes(db):
    """The geometries exactly as the catalog holds them (WKB, no text round trip)."""
    conn = connect(db)
    return {a: shapely.from_wkb(bytes(w)) for a, w in conn.execute("SELECT area_id, AsBinary(geom) FROM gf_areas")}


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    work = tmp_path_factory.mktemp("edges")
    out = {}
    for name, path in (("countries", natural_earth_countries(work)), ("nyc", nyc_boroughs(work))):
        db = work / f"{name}.db"
        import_areas(db, path, "--make-valid", "--with-default-conditions")
        out[name] = (db, stored_shapes(db))
    return out


def rings(geom, holes=False):
    """Each ring's coordinates; with holes=True, (is_hole, coordinates)."""
    polys = list(geom.geoms) if geom.geom_type == "MultiPolygon" else [geom]
    for p in polys:
        for k, ring in enumerate([p.exterior, *p.interiors]):
            c = np.asarray(ring.coords)[:, :2]
            yield (k > 0, c) if holes else c


def on_the_seam_or_pole(lon, lat):
    return abs(lon) == 180 or abs(lat) == 90


def exactly_on(a, b, p):
    """Proof, in exact rationals, that p lies on the closed segment a-b."""
    ax, ay, bx, by, px, py = (Fraction(float(v)) for v in (*a, *b, *p))
    cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    return cross == 0 and min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by)


def representable(f):
    return Fraction(float(f)) == f


def points_on_edge(a, b):
    """Points strictly inside the edge a-b that are doubles and exactly on it.
    The midpoint when it is representable; and the lattice points of the
    edge: with dx, dy over a common power of two, Dx and Dy integers with
    g = gcd(Dx, Dy), a + j(dx, dy)/g for 0 < j < g is on the edge exactly."""
    ax, ay, bx, by = (Fraction(float(v)) for v in (*a, *b))
    out = []
    mid = ((ax + bx) / 2, (ay + by) / 2)
    if representable(mid[0]) and representable(mid[1]):
        out.append(mid)
    dx, dy = bx - ax, by - ay
    if dx != 0 and dy != 0:
        den = math.lcm(dx.denominator, dy.denominator)
        g = math.gcd(int(dx * den), int(dy * den))
        for j in sorted({1, g // 3, g - 1}):
            if 0 < j < g:
                p = (ax + j * dx / g, ay + j * dy / g)
                if representable(p[0]) and representable(p[1]):
                    out.append(p)
    pts = [(float(x), float(y)) for x, y in out]
    return [p for p in pts if p != tuple(map(float, a)) and p != tuple(map(float, b))]


def boundary_points(shapes, rng, vertices_per_area=80, edges_per_area=150):
    """(area_id, lon, lat, kind) with kind 'vertex', 'axis edge' or 'edge':
    a sample of each area's, and every vertex and edge of its holes."""
    out = []
    for name, geom in shapes.items():
        verts, edges = [], []
        for hole, c in rings(geom, holes=True):
            for (x, y) in c[:-1]:
                if not on_the_seam_or_pole(x, y):
                    (out.append((name, float(x), float(y), "vertex")) if hole else verts.append((float(x), float(y))))
            for a, b in zip(c[:-1], c[1:]):
                if on_the_seam_or_pole(*a) and on_the_seam_or_pole(*b):
                    continue
                if hole:
                    out += [(name, p[0], p[1], "edge") for p in points_on_edge(tuple(a), tuple(b)) if exactly_on(a, b, p)]
                else:
                    edges.append((tuple(a), tuple(b)))
        for v in rng.sample(verts, min(len(verts), vertices_per_area)):
            out.append((name, v[0], v[1], "vertex"))
        axis = [e for e in edges if e[0][0] == e[1][0] or e[0][1] == e[1][1]]
        others = [e for e in edges if not (e[0][0] == e[1][0] or e[0][1] == e[1][1])]
        for a, b in axis:
            for p in points_on_edge(a, b):
                # An edge along a meridian or parallel: the midpoint keeps its constant coordinate.
                assert exactly_on(a, b, p)
                out.append((name, p[0], p[1], "axis edge"))
        for a, b in rng.sample(others, min(len(others), edges_per_area)):
            for p in points_on_edge(a, b):
                assert exactly_on(a, b, p), (name, a, b, p)
                if not on_the_seam_or_pole(*p):
                    out.append((name, p[0], p[1], "edge"))
    return out


def sql_answers(db, points):
    """Per point, on its own area: gf_contains (p = 0 and p = 0.9 at 10 m),
    gf_distance_m, gf_area_contains, gf_area_distance_m, SpatiaLite's ST_Contains."""
    conn = connect(db)
    conn.execute("CREATE TEMP TABLE pts (i INTEGER PRIMARY KEY, area_id TEXT, lon REAL, lat REAL)")
    conn.executemany("INSERT INTO pts VALUES (?, ?, ?, ?)", [(i, a, x, y) for i, (a, x, y, _) in enumerate(points)])
    return conn.execute("""
        SELECT p.i, gf_contains(a.geom, p.lat, p.lon, 0), gf_contains(a.geom, p.lat, p.lon, 10, 0.9),
               gf_distance_m(a.geom, p.lat, p.lon), gf_area_contains(a.area_id, p.lat, p.lon, 0),
               gf_area_distance_m(a.area_id, p.lat, p.lon), ST_Contains(a.geom, MakePoint(p.lon, p.lat, 4326))
        FROM pts AS p JOIN gf_areas AS a ON a.area_id = p.area_id ORDER BY p.i""").fetchall()


@pytest.mark.parametrize("name", ["countries", "nyc"])
def test_points_exactly_on_vertices_and_edges_are_outside(datasets, name):
    db, shapes = datasets[name]
    points = boundary_points(shapes, random.Random(20))
    kinds = {k: sum(1 for p in points if p[3] == k) for k in ("vertex", "axis edge", "edge")}
    assert kinds["vertex"] >= 400 and kinds["edge"] > 150, kinds
    if name == "countries":
        assert kinds["axis edge"] > 20, kinds  # 49°N, 22°N, 20°E, ...
        # Lesotho, South Africa's hole: its vertices and points on its edges.
        assert sum(1 for p in points if p[0] == "South Africa" and 27 < p[1] < 29.5 and -30.7 < p[2] < -28.6) > 12
    wrong = []
    for i, c0, c90, d, ac, ad, geos in sql_answers(db, points):
        area, lon, lat, kind = points[i]
        # GEOS (through shapely and through SpatiaLite) agrees that the point is not contained.
        assert geos == 0 and not shapes[area].contains(shapely.Point(lon, lat)), points[i]
        if (c0, c90, d, ac, ad) != (0, None, 0.0, 0, 0.0):
            wrong.append((points[i], c0, c90, d, ac, ad))
    assert not wrong, f"{len(wrong)} of {len(points)} boundary points: {wrong[:5]}"
    # `geofence locate` at one position: outside, at distance 0.
    for area, lon, lat, _ in points[:: max(1, len(points) // 6)]:
        rows = gf("locate", db, f"--lat={lat!r}", f"--lon={lon!r}", "--csv").stdout.splitlines()
        assert f"{area},,outside,0.0,0.0" in [r.replace('"', "") for r in rows], (area, lon, lat, rows)


def locate_pairs(db, points, tmp_path, tag):
    fixes = tmp_path / f"{tag}.csv"
    with open(fixes, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for k, (_, x, y, _) in enumerate(points):
            w.writerow(["p", k, repr(y), repr(x), 0])
    out = tmp_path / f"{tag}-pairs.csv"
    run(CLI, "locate", db, "--fixes", fixes, "--out", out)
    with open(out) as f:
        return {(int(r["row"]) - 1, r["area_id"]) for r in csv.DictReader(f)}


def sql_pairs(db, points):
    """(point, area) for every area containing the point, by gf_contains and by ST_Contains."""
    conn = connect(db)
    conn.execute("CREATE TEMP TABLE q (i INTEGER PRIMARY KEY, lon REAL, lat REAL)")
    conn.executemany("INSERT INTO q VALUES (?, ?, ?)", [(i, x, y) for i, (_, x, y, _) in enumerate(points)])
    rows = conn.execute("""
        SELECT q.i, a.area_id, gf_contains(a.geom, q.lat, q.lon, 0), ST_Contains(a.geom, MakePoint(q.lon, q.lat, 4326))
        FROM q JOIN gf_areas AS a
          ON a.id IN (SELECT pkid FROM idx_gf_areas_geom WHERE xmin <= q.lon AND xmax >= q.lon AND ymin <= q.lat AND ymax >= q.lat)
        """).fetchall()
    return {(i, a) for i, a, v, _ in rows if v == 1}, {(i, a) for i, a, _, s in rows if s == 1}


@pytest.mark.parametrize("name", ["countries", "nyc"])
def test_locate_and_judgement_agree_on_boundary_points(datasets, name, tmp_path):
    """The batch paths (in-memory grid with its inside/outside masks, the
    judgement plan) give what gf_contains gives, and GEOS: a point on an
    area's boundary is never in that area."""
    db, shapes = datasets[name]
    points = boundary_points(shapes, random.Random(21), vertices_per_area=40, edges_per_area=80)
    ours, geos = sql_pairs(db, points)
    assert ours == geos
    assert not {(i, a) for i, a in ours if points[i][0] == a}
    assert locate_pairs(db, points, tmp_path, name) == ours
    # Judgement: each point is a subject standing there; an IN for exactly the areas that contain it.
    fixes = tmp_path / "still.csv"
    with open(fixes, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for k, (_, x, y, _) in enumerate(points):
            for t in ("2026-11-20T09:00:00Z", "2026-11-20T09:05:00Z"):
                w.writerow([f"s{k}", t, repr(y), repr(x), 0])
    judged = tmp_path / "judged.db"
    judged.write_bytes(Path(db).read_bytes())
    out = tmp_path / "notified.csv"
    gf("judge", judged, "--fixes", fixes, "--out", out)
    with open(out) as f:
        got = [(int(r["subject_id"][1:]), r["area_id"], r["transition"]) for r in csv.DictReader(f)]
    assert sorted(got) == sorted((i, a, "IN") for i, a in ours)


# ---- the antimeridian --------------------------------------------------------

SPLIT = ["Fiji", "Russia", "Antarctica"]


def seam_latitudes(geom, rng):
    """Latitudes on the shape's edges along +180 (ends and random inner points)."""
    lats = []
    for c in rings(geom):
        for a, b in zip(c[:-1], c[1:]):
            if a[0] == b[0] == 180:
                lo, hi = sorted((a[1], b[1]))
                lats += [lo, hi] + [rng.uniform(lo, hi) for _ in range(6)]
    return lats


def both_spellings(conn, area_id, lat):
    q = """SELECT gf_contains(geom, ?1, ?2, 0), gf_contains(geom, ?1, ?2, 50, 0.9), gf_distance_m(geom, ?1, ?2),
                  gf_inside_probability(geom, ?1, ?2, 30), gf_area_contains(area_id, ?1, ?2, 0),
                  gf_area_distance_m(area_id, ?1, ?2), gf_area_inside_probability(area_id, ?1, ?2, 30)
           FROM gf_areas WHERE area_id = ?3"""
    return [conn.execute(q, (lat, lon, area_id)).fetchone() for lon in (180.0, -180.0)]


def test_plus_and_minus_180_give_the_same_answers(datasets):
    db, shapes = datasets["countries"]
    conn = connect(db)
    rng = random.Random(30)
    checked = 0
    for name in SPLIT:
        for lat in seam_latitudes(shapes[name], rng):
            east, west = both_spellings(conn, name, lat)
            assert east == west, (name, lat, east, west)
            checked += 1
    assert checked > 30
    # The nearest areas and a phone's regions (less the echoed position) too.
    for lat in (66.0, 70.9, -16.3, -16.555216566639196, -86.0, -90.0):
        near = [conn.execute("SELECT rank, area_id, distance_m FROM gf_nearest(?, ?, 4)", (lat, lon)).fetchall() for lon in (180.0, -180.0)]
        assert near[0] == near[1], (lat, near)
        regions = [json.loads(conn.execute("SELECT gf_regions(?, ?, 4)", (lat, lon)).fetchone()[0]) for lon in (180.0, -180.0)]
        for r in regions:
            r.pop("position")
            r["ios"].pop("resync")
            r["android"].pop("resync")
        assert regions[0] == regions[1], lat


def test_inside_a_split_shape_on_the_meridian(datasets):
    """On the cut (well within both parts' seam) a point is inside, and its
    distance is to the real boundary, as GeographicLib measures it."""
    db, shapes = datasets["countries"]
    conn = connect(db)
    for name, lat in (("Fiji", -16.3), ("Russia", 66.0), ("Russia", 67.5), ("Russia", 71.2), ("Antarctica", -87.0)):
        ref = reference_boundary_distance(shapes[name], 180.0, lat)
        assert ref > 1000
        for lon in (180.0, -180.0):
            c, d = conn.execute("SELECT gf_area_contains(?1, ?2, ?3, 0), gf_area_distance_m(?1, ?2, ?3)", (name, lat, lon)).fetchone()
            assert c == 1, (name, lat, lon)
            assert abs(d - ref) <= TOLERANCE(ref), (name, lat, lon, d, ref)
        rows = [gf("locate", db, f"--lat={lat}", f"--lon={lon}", "--csv").stdout for lon in (180, -180)]
        assert rows[0] == rows[1] and f"{name},,inside," in rows[0].replace('"', ""), rows


def judge_rows(db, tmp_path, rows, tag):
    fixes = tmp_path / f"{tag}.csv"
    with open(fixes, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for r in rows:
            w.writerow(r)
    copy = tmp_path / f"{tag}.db"
    copy.write_bytes(Path(db).read_bytes())
    out = tmp_path / f"{tag}-out.csv"
    gf("judge", copy, "--fixes", fixes, "--out", out)
    with open(out) as f:
        return copy, [(r["subject_id"], r["area_id"], r["transition"]) for r in csv.DictReader(f)]


def test_judgement_across_the_antimeridian(datasets, tmp_path):
    """Standing still on the meridian written either way: one IN, no OUT.
    Walking across it inside Russia or Fiji: one IN, no OUT. The same fix
    by fix through gf_check."""
    db, _ = datasets["countries"]
    rows = []
    for k in range(8):
        t = f"2026-11-20T09:{k:02d}:00Z"
        rows.append(("still-ru", t, 66.0, 180.0 if k % 2 == 0 else -180.0, 5))
        rows.append(("still-fj", t, -16.3, -180.0 if k % 2 == 0 else 180.0, 20))
        rows.append(("walk-ru", t, 66.0, [179.9, 179.95, 179.999, 180.0, -180.0, -179.999, -179.95, -179.9][k], 5))
        rows.append(("walk-fj", t, -16.3, [-179.98, -179.99, -180.0, 180.0, 179.999, 179.995, 179.99, 179.985][k], 5))
        rows.append(("pole", t, -90.0, [0.0, 180.0, -180.0, 90.0, -45.0, 180.0, 0.0, -180.0][k], 30))
    _, got = judge_rows(db, tmp_path, rows, "batch")
    expected = [("still-ru", "Russia", "IN"), ("still-fj", "Fiji", "IN"), ("walk-ru", "Russia", "IN"), ("walk-fj", "Fiji", "IN"),
                ("pole", "Antarctica", "IN")]
    assert sorted(got) == sorted(expected)
    one = tmp_path / "one.db"
    one.write_bytes(Path(db).read_bytes())
    conn = connect(one)
    for r in rows:
        conn.execute("SELECT gf_check(?, ?, ?, ?, ?)", r).fetchall()
    conn.commit()
    got = conn.execute("SELECT subject_id, area_id, transition FROM gf_notifications").fetchall()
    assert sorted(got) == sorted(expected)


# ---- the poles -----------------------------------------------------------------

def test_south_pole_is_inside_antarctica(datasets):
    """Antarctica's edge along -90 is the pole, not boundary: the pole is
    ~490 km inside, whatever longitude it is written with; so are fixes
    within 3 km of it."""
    db, shapes = datasets["countries"]
    conn = connect(db)
    ant = shapes["Antarctica"]
    ref = reference_boundary_distance(ant, 0.0, -90.0)
    assert 480_000 < ref < 500_000
    at_pole = set()
    for lon in (-180.0, -90.0, 0.0, 45.5, 180.0):
        c, c95, d, ac = conn.execute(
            "SELECT gf_contains(geom, -90, ?1, 0), gf_contains(geom, -90, ?1, 1000, 0.95), gf_distance_m(geom, -90, ?1),"
            " gf_area_contains('Antarctica', -90, ?1, 1000) FROM gf_areas WHERE area_id = 'Antarctica'", (lon,)).fetchone()
        assert (c, c95, ac) == (1, 1, 1), lon
        at_pole.add(round(d, 3))
        assert abs(d - ref) <= TOLERANCE(ref), (lon, d, ref)
    assert len(at_pole) == 1
    for lon in (-180.0, -120.0, 0.0, 77.7, 180.0):
        lat = -89.975  # 2.8 km from the pole
        r = reference_boundary_distance(ant, lon, lat)
        c, d = conn.execute("SELECT gf_area_contains('Antarctica', ?, ?, 100), gf_area_distance_m('Antarctica', ?, ?)",
                            (lat, lon, lat, lon)).fetchone()
        assert c == 1 and abs(d - r) <= TOLERANCE(r), (lon, d, r)


def test_north_polar_cap(tmp_path):
    """A cap stored as a lon/lat rectangle up to +90 (seams at +-180 in one
    ring, an edge along +90): the North Pole is ~1,100 km inside, its
    distance the same from any longitude; within 3 km of it, inside."""
    db = tmp_path / "cap.db"
    cap = [[[-180, 80], [180, 80], [180, 90], [-180, 90], [-180, 80]]]
    feature = {"type": "Feature", "properties": {"area_id": "cap"}, "geometry": {"type": "Polygon", "coordinates": cap}}
    import_areas(db, write_collection(tmp_path / "cap.geojson", [feature]))
    conn = connect(db)
    ref = GEOD.inv(0, 90, 0, 80)[2]
    for lat, lon in ((90, 0), (90, 180), (90, -180), (90, 33.3), (89.975, -45), (89.975, 180)):
        c, d = conn.execute("SELECT gf_area_contains('cap', ?, ?, 50), gf_area_distance_m('cap', ?, ?)", (lat, lon, lat, lon)).fetchone()
        expected = GEOD.inv(lon, lat, lon, 80)[2]
        assert c == 1 and abs(d - expected) <= 0.01 + 1e-6 * expected, (lat, lon, d, expected)
    assert abs(conn.execute("SELECT gf_area_distance_m('cap', 90, 0)").fetchone()[0] - ref) < 0.01


# ---- seams with no partner -------------------------------------------------------

def meridian_distance(lon, lat, seg_lon, lat1, lat2):
    """GeographicLib distance from (lon, lat) to the meridian segment, by dense sampling and refinement."""
    lats = np.linspace(lat1, lat2, 20001)
    d = GEOD.inv(np.full_like(lats, lon), np.full_like(lats, lat), np.full_like(lats, seg_lon), lats)[2]
    k = int(np.argmin(d))
    lo, hi = lats[max(0, k - 1)], lats[min(len(lats) - 1, k + 1)]
    for _ in range(80):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if GEOD.inv(lon, lat, seg_lon, m1)[2] < GEOD.inv(lon, lat, seg_lon, m2)[2]:
            hi = m2
        else:
            lo = m1
    return min(d.min(), GEOD.inv(lon, lat, seg_lon, (lo + hi) / 2)[2])


def test_unmatched_seam_pieces_stay_boundary(tmp_path):
    """East part [170, 180] x [0, 10], west part [-180, -170] x [2, 8]: the
    cut is one area only over 2..8; the +180 edge's pieces over 0..2 and
    8..10 have no partner and are boundary. A shape touching only +180 has
    its whole +180 edge as boundary, in both spellings."""
    db = tmp_path / "seam.db"
    east = [[170, 0], [180, 0], [180, 10], [170, 10], [170, 0]]
    west = [[-180, 2], [-170, 2], [-170, 8], [-180, 8], [-180, 2]]
    only = [[170, 20], [180, 20], [180, 30], [170, 30], [170, 20]]
    features = [
        {"type": "Feature", "properties": {"area_id": "half"}, "geometry": {"type": "MultiPolygon", "coordinates": [[east], [west]]}},
        {"type": "Feature", "properties": {"area_id": "east-only"}, "geometry": {"type": "Polygon", "coordinates": [only]}},
        {"type": "Feature", "properties": {"area_id": "west-only"},
         "geometry": {"type": "Polygon", "coordinates": [[[-x, y] for x, y in only]]}},
    ]
    import_areas(db, write_collection(tmp_path / "seam.geojson", features))
    conn = connect(db)

    def ask(area, lat, lon):
        return conn.execute("SELECT gf_area_contains(?1, ?2, ?3, 0), gf_area_distance_m(?1, ?2, ?3)", (area, lat, lon)).fetchone()

    # On the unmatched pieces, and at the ends of the matched stretch: boundary, both spellings.
    for area, lat in (("half", 1.0), ("half", 9.5), ("half", 0.0), ("half", 10.0), ("half", 2.0), ("half", 8.0),
                      ("east-only", 25.0), ("east-only", 20.0)):
        for lon in (180.0, -180.0):
            assert ask(area, lat, lon) == (0, 0.0), (area, lat, lon)
    # On the matched stretch: inside, and the cut is not its nearest boundary.
    for lon in (180.0, -180.0):
        c, d = ask("half", 5.0, lon)
        assert c == 1 and abs(d - min(GEOD.inv(180, 5, 180, 8)[2], GEOD.inv(180, 5, 180, 2)[2])) < 0.01, (lon, d)
    # Near an unmatched piece its distance is to that piece.
    c, d = ask("half", 1.0, 179.999)
    ref = meridian_distance(179.999, 1.0, 180.0, 0.0, 2.0)
    assert c == 1 and abs(d - ref) <= 0.01, (d, ref)
    c, d = ask("half", 9.0, 179.99)
    ref = meridian_distance(179.99, 9.0, 180.0, 8.0, 10.0)
    assert c == 1 and abs(d - ref) <= 0.01, (d, ref)
    # Just across the meridian, west of an unmatched piece: outside, as near.
    c, d = ask("half", 1.0, -179.999)
    assert c == 0 and abs(-d - meridian_distance(-179.999, 1.0, 180.0, 0.0, 2.0)) <= 0.01, d
    # Two areas, one touching only +180 and one only -180: `locate` lists both
    # for either spelling (its window wraps), each on its boundary.
    outs = [gf("locate", db, "--lat=25", f"--lon={lon}", "--accuracy=10", "--csv").stdout for lon in (180, -180)]
    assert outs[0] == outs[1]
    assert "east-only,,outside,0.0," in outs[0].replace('"', "") and "west-only,,outside,0.0," in outs[0].replace('"', "")
    fixes = tmp_path / "meridian.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\np,1,25,180,10\np,2,25,-180,10\np,3,25,179.99999,10\n")
    pairs = gf("locate", db, "--fixes", fixes, "--confidence=0.9").stdout.splitlines()
    assert pairs[1:] == ["1,east-only,undecided", "1,west-only,undecided", "2,east-only,undecided", "2,west-only,undecided",
                         "3,east-only,undecided"], pairs
