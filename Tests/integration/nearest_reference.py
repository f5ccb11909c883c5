"""An independent reference for gf_nearest and gf_regions: every valid area's
geodesic distance to its boundary (0 inside), ranked nearest first, ties by
area_id. Inside/outside is GEOS's (shapely), distances are GeographicLib's
(pyproj, WGS 84) through reference.py's sampled-and-refined edge distance;
no function of the engine is called. The shapes are the catalog's own, read
as plain columns and SpatiaLite's AsBinary, so the reference ranks exactly
what the engine was given.

Computing the exact reference for all 3,000+ areas at every position would
take minutes, so each position first gets a cheap lower bound for every
area (exact for circles; for a polygon, the least over its edges of a
bound on the distance to the edge's lon/lat box) and exact distances are
computed nearest bound first, only as far as a question needs them. The
bound is proved, not estimated: see box_lower_bound_m."""
import datetime

import numpy as np
import shapely

from reference import GEOD, cut_edges, edges, reference_edge_distance


def tolerance_m(d):
    """The contract's bound on a distance (docs/sql.md, gf_distance_m): 0.01 m + 1e-6 × distance."""
    return 0.01 + 1e-6 * d


def parse_time(text):
    """A catalog or question time (ISO 8601 with Z or an offset) as an aware datetime; None stays None."""
    return None if text is None else datetime.datetime.fromisoformat(text)


def geocentric_rad(lat_deg):
    """Geocentric latitude (radians) of WGS 84 geodetic latitudes (degrees):
    the latitude of the ray from the Earth's centre through the surface point."""
    phi = np.radians(lat_deg)
    return np.arctan2((1 - GEOD.es) * np.sin(phi), np.cos(phi))


def box_lower_bound_m(lon, lat, boxes):
    """For each row (lon_min, lat_min, lon_max, lat_max) of `boxes`, a number
    never above the WGS 84 geodesic distance (m) from (lon, lat) to any point
    whose longitude lies in [lon_min, lon_max] and latitude in [lat_min,
    lat_max]. A straight lon/lat edge lies in the box of its endpoints, so the
    least over a polygon's edges bounds its distance to its boundary.

    Why it holds: every point of the ellipsoid is at least b (the semi-minor
    axis) from the centre, and the nearest-point map onto the ball of radius b
    never lengthens a curve; so a geodesic from P to Q is at least b times the
    angle between P's and Q's rays, i.e. their great-circle distance on a
    sphere of radius b at geocentric latitudes (same longitudes; the map is
    monotone in latitude, so the box stays a box). On that sphere, at a fixed
    latitude the distance grows with the longitude difference up to 180°, so
    the nearest point of the box has the box's longitude nearest P's (taken
    round the circle, so ±180 needs no special case) and, there, cos d =
    R cos(ψ − θ) is largest at the box latitude nearest θ or at an end of the
    latitude range (a pole is just latitude ±90 with any longitude). The
    haversine form keeps metres accurate; 1 mm and 1e-9 are taken off for
    rounding."""
    lon_min, lat_min, lon_max, lat_max = boxes.T
    span = lon_max - lon_min
    east_of_min = np.mod(lon - lon_min, 360.0)
    dlam = np.radians(np.where(east_of_min <= span, 0.0, np.minimum(east_of_min - span, 360.0 - east_of_min)))
    psi = geocentric_rad(lat)
    lo, hi = geocentric_rad(lat_min), geocentric_rad(lat_max)
    theta = np.arctan2(np.sin(psi), np.cos(psi) * np.cos(dlam))
    best = None
    for psi2 in (lo, hi, np.clip(theta, lo, hi)):
        h = np.sin((psi2 - psi) / 2) ** 2 + np.cos(psi) * np.cos(psi2) * np.sin(dlam / 2) ** 2
        angle = 2 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
        best = angle if best is None else np.minimum(best, angle)
    return np.maximum(0.0, GEOD.b * best * (1 - 1e-9) - 1e-3)


def boundary_edges(geom):
    """The shape's boundary edges as the contract draws them (docs/sql.md,
    "Boundaries, ±180 and the poles"), rows of (lon1, lat1, lon2, lat2):
    reference.edges(), which leaves out every ±180 edge of a shape with parts
    on both sides, plus the stretches along ±180 that the other side does not
    match exactly, which are boundary. (Natural Earth's Russia has some, a few
    1e-13° at the ends of its seam, where its two sides' latitudes differ in
    the last digits.)"""
    e = edges(geom)
    if not cut_edges(geom):
        return e
    sides = {180.0: [], -180.0: []}
    polys = list(geom.geoms) if geom.geom_type == "MultiPolygon" else [geom]
    for p in polys:
        for ring in [p.exterior, *p.interiors]:
            c = np.asarray(ring.coords)[:, :2]
            for a, b in zip(c[:-1], c[1:]):
                if a[0] == b[0] and abs(a[0]) == 180 and a[1] != b[1]:
                    sides[float(a[0])].append((min(a[1], b[1]), max(a[1], b[1])))
    seam = intersection(merged(sides[180.0]), merged(sides[-180.0]))
    lone = [(lon, lo, lon, hi) for lon, stretches in sides.items()
            for lo, hi in difference(merged(stretches), seam)]
    return np.concatenate([e, np.array(lone).reshape(-1, 4)]) if lone else e


def merged(intervals):
    """Sorted closed intervals with touching or overlapping ones joined."""
    out = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [tuple(i) for i in out]


def intersection(xs, ys):
    """The common stretches of two merged interval lists, of positive length."""
    return [(max(a, c), min(b, d)) for a, b in xs for c, d in ys if max(a, c) < min(b, d)]


def difference(xs, ys):
    """The stretches of merged intervals xs outside merged intervals ys, of positive length."""
    out = []
    for lo, hi in xs:
        for c, d in ys:
            if d <= lo or c >= hi:
                continue
            if c > lo:
                out.append((lo, c))
            lo = d
        if lo < hi:
            out.append((lo, hi))
    return [(a, b) for a, b in out if a < b]


class Areas:
    """A catalog's areas as the reference reads them: ids, validity windows,
    circles (centre, radius) and polygons (shapely geometry, a spatial tree
    of them for inside tests, and their boundary edges as boundary_edges()
    gives them, all polygons' edges in one array, each polygon's a slice)."""

    def __init__(self, conn):
        """Reads every row of gf_areas through `conn` (so a caller's uncommitted
        writes count) with plain SQL and SpatiaLite's AsBinary."""
        rows = conn.execute("SELECT area_id, kind, center_lon, center_lat, radius_m, valid_from, valid_until, "
                            "AsBinary(geom) FROM gf_areas").fetchall()
        self.ids = [r[0] for r in rows]
        self.valid_from = [parse_time(r[5]) for r in rows]
        self.valid_until = [parse_time(r[6]) for r in rows]
        self.circles = np.array([k for k, r in enumerate(rows) if r[1] == "circle"], dtype=int)
        self.centres = np.array([(r[2], r[3], r[4]) for r in rows if r[1] == "circle"], dtype=float).reshape(-1, 3)
        self.polygons = np.array([k for k, r in enumerate(rows) if r[1] == "polygon"], dtype=int)
        self.geoms = [shapely.from_wkb(rows[k][7]) for k in self.polygons]
        self.tree = shapely.STRtree(self.geoms)
        parts, starts = [], [0]
        for k, g in zip(self.polygons, self.geoms):
            e = boundary_edges(g)
            assert len(e), f"{self.ids[k]}: no boundary edge"
            parts.append(e)
            starts.append(starts[-1] + len(e))
        self.edges = np.concatenate(parts) if parts else np.zeros((0, 4))
        self.edge_starts = np.array(starts, dtype=int)
        self.edge_boxes = np.column_stack([np.minimum(self.edges[:, 0], self.edges[:, 2]),
                                           np.minimum(self.edges[:, 1], self.edges[:, 3]),
                                           np.maximum(self.edges[:, 0], self.edges[:, 2]),
                                           np.maximum(self.edges[:, 1], self.edges[:, 3])])

    def valid(self, at):
        """Whether each area exists at time `at` (text; None: every area):
        valid_from ≤ at ≤ valid_until, both ends included, a missing end open."""
        if at is None:
            return np.ones(len(self.ids), dtype=bool)
        t = parse_time(at)
        return np.array([(f is None or f <= t) and (u is None or u >= t)
                         for f, u in zip(self.valid_from, self.valid_until)])

    def covering(self, lon, lat):
        """Positions in self.polygons of the polygons that hold the point or have
        it on their boundary (GEOS covers), the meridian written both as +180
        and as -180 (a shape cut there holds it on one side)."""
        spellings = {lon, 180.0, -180.0} if abs(lon) == 180 else {lon}
        hits = [self.tree.query(shapely.Point(x, lat), predicate="covered_by") for x in spellings]
        return set(np.concatenate(hits).tolist())


class Ranking:
    """One position's reference distances: exact for circles and for polygons
    that hold the point (0), a lower bound for the rest until distance(k)
    computes the exact one (remembered)."""

    def __init__(self, areas, lat, lon):
        self.areas, self.lat, self.lon = areas, lat, lon
        n = len(areas.ids)
        self.exact = {}
        self.bound = np.zeros(n)
        if len(areas.circles):
            c = areas.centres
            to_centre = GEOD.inv(c[:, 0], c[:, 1], np.full(len(c), lon), np.full(len(c), lat))[2]
            d = np.maximum(0.0, to_centre - c[:, 2])
            self.bound[areas.circles] = d
            self.exact.update(zip(areas.circles.tolist(), d.tolist()))
        if len(areas.polygons):
            self.edge_bound = box_lower_bound_m(lon, lat, areas.edge_boxes)
            poly_bound = np.minimum.reduceat(self.edge_bound, areas.edge_starts[:-1])
            for j in areas.covering(lon, lat):
                poly_bound[j] = 0.0
                self.exact[int(areas.polygons[j])] = 0.0
            self.bound[areas.polygons] = poly_bound
        self.slot = {int(k): j for j, k in enumerate(areas.polygons)}
        self.order = np.argsort(self.bound, kind="stable")

    def distance(self, k):
        """Area k's reference distance (m) to its boundary, 0 when it holds the
        point. For a polygon: the nearest of its edges' endpoints gives an upper
        bound, edges whose lower bound exceeds it cannot hold the nearest point
        and are left out, and reference.py measures the rest."""
        if k not in self.exact:
            j = self.slot[k]
            s, t = self.areas.edge_starts[j], self.areas.edge_starts[j + 1]
            e = self.areas.edges[s:t]
            ends = np.concatenate([e[:, 0:2], e[:, 2:4]])
            upper = GEOD.inv(np.full(len(ends), self.lon), np.full(len(ends), self.lat), ends[:, 0], ends[:, 1])[2].min()
            near = e[self.edge_bound[s:t] <= upper]
            self.exact[k] = min(upper, reference_edge_distance(near, self.lon, self.lat))
        return self.exact[k]

    def up_to(self, limit_m, valid):
        """Every valid area whose reference distance is at most limit_m, as
        {area index: distance}; only areas whose bound is within it are measured."""
        out = {}
        for k in self.order:
            if self.bound[k] > limit_m:
                break
            if valid[k] and self.distance(int(k)) <= limit_m:
                out[int(k)] = self.exact[int(k)]
        return out

    def nearest(self, n, valid):
        """The reference's answer: the n nearest valid areas as (area_id,
        distance), by (distance, area_id)."""
        found = []
        for k in self.order:
            if len(found) >= n and self.bound[k] > found[n - 1][0]:
                break
            if valid[k]:
                found.append((self.distance(int(k)), self.areas.ids[k]))
                found.sort()
        return [(a, d) for d, a in found[:n]]


def must_precede(z, x):
    """Whether an answer must rank area z before area x, given (area_id,
    reference distance) of each: when both hold the point (exactly 0, a
    tie broken by area_id), or when z is nearer by more than both distances'
    bounds together (the engine may be off by each). Otherwise the two are a
    tie or near-tie and either order is right."""
    (za, zd), (xa, xd) = z, x
    if zd == 0.0 and xd == 0.0:
        return za < xa
    return zd + tolerance_m(zd) < xd - tolerance_m(xd)


def disagreements(got, ranking, n, at, rounding_m=0.0):
    """What is wrong with an engine answer `got`, a list of (area_id, distance
    or None), to "the n nearest areas valid at `at`" at the ranking's position:
    not the expected count, an area twice or unknown or not valid, a distance
    off the reference by more than the contract's bound (plus rounding_m for a
    rounded payload), an order the reference forbids, or a nearer area left
    out. Each as text naming the position, the areas and both distances."""
    areas = ranking.areas
    where = f"at lat {ranking.lat}, lon {ranking.lon}, n {n}, at {at}"
    valid = areas.valid(at)
    index = {a: k for k, a in enumerate(areas.ids)}
    problems = []
    want = min(n, int(valid.sum()))
    if len(got) != want:
        problems.append(f"{where}: {len(got)} areas, expected {want}")
    ids = [a for a, _ in got]
    if len(set(ids)) != len(ids):
        problems.append(f"{where}: an area listed twice: {ids}")
    for a in ids:
        if a not in index or not valid[index[a]]:
            problems.append(f"{where}: {a} is not an area valid then")
    if problems:
        return problems
    ref = [(a, ranking.distance(index[a])) for a in ids]
    for (a, d), (_, r) in zip(got, ref):
        if d is not None and abs(d - r) > tolerance_m(r) + rounding_m:
            problems.append(f"{where}: {a} at {d!r} m, reference {r!r} m")
    for i, x in enumerate(ref):
        for z in ref[i + 1:]:
            if must_precede(z, x):
                problems.append(f"{where}: {x[0]} ({x[1]!r} m) ranked before {z[0]} ({z[1]!r} m)")
    farthest = max((r for _, r in ref), default=0.0)
    listed = set(ids)
    for k, d in ranking.up_to(farthest, valid).items():
        z = (areas.ids[k], d)
        if z[0] in listed:
            continue
        for x in ref:
            if must_precede(z, x):
                problems.append(f"{where}: {z[0]} ({d!r} m) left out, but {x[0]} ({x[1]!r} m) listed")
                break
    return problems
