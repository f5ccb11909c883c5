# Longer than 300 lines: the whole contract (§1-§6) as one model, to be read beside behaviour.md section by section.
"""A second, independent model of the engine's judgement rules, written from
the behaviour contract (docs/behaviour.md, cited as §n) and docs/outputs.md and
docs/sql.md for the tables' layout, without reading the engine. It is slow on
purpose and does everything the plain way: every fix is judged against every
area of the catalog (the contract defines a verdict for each; the engine's
index only saves work; the one shortcut, far areas a subject never met, is
shown to change nothing where it is taken), streaks are plain counters, and
times are Python datetimes in zoneinfo's zones. Where it and the engine disagree, one of them
has misread the contract; test_rules_reference.py says which.

Geometry comes from independent references: pyproj's Geod (GeographicLib,
WGS 84) for a circle's distance, shapely for polygon containment. A polygon's
signed distance is computed in a flat frame at the area (exact containment,
approximate distance) and carries an error bound; a verdict that the bound
cannot decide is reported as ambiguous, and the scenarios place no fix there
(the exact boundary rules are tested elsewhere, in test_exact_boundaries.py).
"""
import datetime as dt
import functools
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation, ROUND_FLOOR
from typing import Optional
from zoneinfo import ZoneInfo

import numpy as np
import pyproj
import shapely
import shapely.affinity
from shapely.geometry import MultiPolygon, Polygon

GEOD = pyproj.Geod(ellps="WGS84")
FAR_M = 50_000   # farther than any accuracy the scenarios use can reach (k·accuracy)
UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

# ---------------------------------------------------------------- time (§6)

ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$")
UNIX = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class InvalidFix(Exception):
    """A fix the contract calls invalid (§2): it changes nothing and is counted."""


@functools.lru_cache(maxsize=None)
def parse_time(text):
    """§6: a time as integer microseconds since 1970 UTC. ISO 8601 needs an
    offset (`Z`, `+09:00`), `T` or a space between date and time, any number
    of fraction digits; Unix seconds are any decimal. Digits past the
    microsecond are cut towards the earlier time, in both forms. A missing
    time, or one without an offset, is an invalid fix (§2). Second 60 is a
    leap second only at 23:59:60 UTC on a month's last day, read as 23:59:59
    plus its fraction; any other is an error (§8 "Second 60")."""
    if text is None or str(text).strip() == "":
        raise InvalidFix("time missing")
    text = str(text).strip()
    m = ISO.match(text)
    if m:
        year, month, day, hour, minute, second, frac, offset = m.groups()
        if offset is None:
            raise InvalidFix(f"time {text!r} has no offset")
        micro = int((frac or "0")[:6].ljust(6, "0"))
        leap = second == "60"
        try:
            local = dt.datetime(int(year), int(month), int(day), int(hour), int(minute), 59 if leap else int(second), micro)
        except ValueError as e:  # month 13, February 30th: no time at all
            raise InvalidFix(f"time {text!r}: {e}") from None
        if offset == "Z":
            delta = dt.timedelta(0)
        else:
            sign = 1 if offset[0] == "+" else -1
            delta = sign * dt.timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
        moment = local.replace(tzinfo=UTC) - delta
        if leap and not (moment.hour == 23 and moment.minute == 59 and (moment + dt.timedelta(days=1)).day == 1):
            raise InvalidFix(f"time {text!r}: second 60 is only 23:59:60 UTC on a month's last day")
        return to_micros(moment)
    if UNIX.match(text):
        try:
            seconds = Decimal(text)
        except InvalidOperation:
            raise InvalidFix(f"time {text!r} is not a number")
        return int((seconds * 1_000_000).to_integral_value(rounding=ROUND_FLOOR))
    raise InvalidFix(f"time {text!r} is not ISO 8601 nor Unix seconds")


def to_micros(moment):
    """An aware datetime as integer microseconds since the epoch (exact)."""
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def utc_datetime(micros):
    """Microseconds since the epoch as an aware UTC datetime."""
    return EPOCH + dt.timedelta(microseconds=micros)


def stored_time(micros):
    """The stored form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (docs/outputs.md, tables)."""
    return utc_datetime(micros).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def local_time(micros, zone_name):
    """§6: the wall-clock time of an instant in an IANA zone (UTC when None)."""
    return utc_datetime(micros).astimezone(ZoneInfo(zone_name) if zone_name else UTC)


# ------------------------------------------------------------ geometry (§1, §3)

def k_factor(p):
    """§3: k(p) = sqrt(ln(1 - p) / ln(1 - 0.68)), scaling a CEP68 radius to
    confidence p; k(0) = 0 (plain containment)."""
    if p == 0:
        return 0.0
    return math.sqrt(math.log(1 - p) / math.log(1 - 0.68))


def unwrap(lon, lon_ref):
    """The same meridian written within 180° of lon_ref, so that a shape cut
    at ±180 (§1) is one piece in the unwrapped frame."""
    return lon + 360.0 * round((lon_ref - lon) / 360.0)


class Circle:
    """§1: a centre and a radius in metres; §3: d = radius − the WGS 84
    geodesic distance to the centre (pyproj's GeographicLib, exact to nm)."""

    def __init__(self, lat, lon, radius_m):
        self.lat, self.lon, self.radius_m = lat, lon, radius_m

    def geojson(self):
        """The feature geometry `import` reads as a circle (with radius_m)."""
        return {"type": "Point", "coordinates": [self.lon, self.lat]}

    def signed_distances(self, lats, lons):
        """(d, error bound) for arrays of positions; the bound is 0 (exact)."""
        lats, lons = np.asarray(lats, float), np.asarray(lons, float)
        _, _, dist = GEOD.inv(np.full_like(lons, self.lon), np.full_like(lats, self.lat), lons, lats)
        return self.radius_m - np.asarray(dist), np.zeros_like(lats)


class PolygonArea:
    """§1: a Polygon or MultiPolygon with holes, edges straight in lon/lat.
    `parts` is the GeoJSON MultiPolygon coordinate list. A shape cut at the
    antimeridian is unwrapped round its centre, where its matched seam edges
    disappear in the union (§1: they are not boundary).

    Containment is shapely's on the unwrapped lon/lat (an affine image of the
    contract's shape, so exact); the distance to the boundary is measured in
    a flat frame with the WGS 84 meridian and prime-vertical scales at the
    centre, plus a bound on that frame's error."""

    def __init__(self, parts):
        self.parts = parts
        lons = [x for part in parts for ring in part for x, _ in ring]
        lats = [y for part in parts for ring in part for _, y in ring]
        self.lat0 = (min(lats) + max(lats)) / 2
        # The reference meridian: the middle of the parts as written, or 180 when cut there.
        self.lon0 = 180.0 if (max(lons) == 180 and min(lons) == -180) else (min(lons) + max(lons)) / 2
        polys = [Polygon([(unwrap(x, self.lon0), y) for x, y in part[0]],
                         [[(unwrap(x, self.lon0), y) for x, y in hole] for hole in part[1:]]) for part in parts]
        self.shape = shapely.unary_union(polys)
        a, f = 6378137.0, 1 / 298.257223563
        e2 = f * (2 - f)
        s = math.sin(math.radians(self.lat0))
        n = a / math.sqrt(1 - e2 * s * s)
        m = a * (1 - e2) / (1 - e2 * s * s) ** 1.5
        self.mx = math.radians(1) * n * math.cos(math.radians(self.lat0))
        self.my = math.radians(1) * m
        to_metres = [self.mx, 0, 0, self.my, -self.lon0 * self.mx, -self.lat0 * self.my]
        self.frame = shapely.affinity.affine_transform(self.shape, to_metres)
        self.boundary = self.frame.boundary
        for g in (self.shape, self.frame, self.boundary):
            shapely.prepare(g)

    def geojson(self):
        """The shape as a GeoJSON Polygon or MultiPolygon geometry."""
        if len(self.parts) == 1:
            return {"type": "Polygon", "coordinates": self.parts[0]}
        return {"type": "MultiPolygon", "coordinates": self.parts}

    def signed_distances(self, lats, lons):
        """(d, error bound) for arrays of positions: d positive inside (§3),
        0 on the boundary, which counts as outside."""
        lats, lons = np.asarray(lats, float), np.asarray(lons, float)
        ulons = lons + 360.0 * np.round((self.lon0 - lons) / 360.0)   # unwrap(), for arrays
        inside = shapely.contains_xy(self.shape, ulons, lats)
        x, y = (ulons - self.lon0) * self.mx, (lats - self.lat0) * self.my
        # The distance to the boundary, inside as outside.
        dist = shapely.distance(self.boundary, shapely.points(x, y))
        d = np.where(inside, dist, -dist)
        # The frame's scale is exact at the centre and drifts by about
        # tan(lat)·Δlat away from it: measured against exact_signed_distance
        # the error stays below a sixth of this bound. Far away (other
        # clusters) only the sign matters.
        reach = np.hypot(x, y)
        tilt = 1 + abs(math.tan(math.radians(self.lat0)))
        bound = 0.2 + np.abs(d) * (2e-4 + 2 * reach / 6.371e6 * tilt)
        bound = np.where(np.abs(d) > 20_000, np.abs(d) * 0.5, bound)
        return d, bound

    def exact_signed_distance(self, lat, lon):
        """The signed distance by brute force, for checking the frame: the
        sign from containment, the size as the smallest WGS 84 geodesic
        distance to points of the edges (straight in lon/lat), found by
        repeated refinement of a sampled parameter."""
        ulon = unwrap(lon, self.lon0)
        inside = bool(shapely.contains_xy(self.shape, ulon, lat))
        rings = []
        geoms = self.shape.geoms if isinstance(self.shape, MultiPolygon) else [self.shape]
        for g in geoms:
            rings.append(list(g.exterior.coords))
            rings.extend(list(h.coords) for h in g.interiors)
        best = math.inf
        for ring in rings:
            for (x1, y1), (x2, y2) in zip(ring, ring[1:]):
                lo, hi = 0.0, 1.0
                for _ in range(6):
                    t = np.linspace(lo, hi, 41)
                    px, py = x1 + (x2 - x1) * t, y1 + (y2 - y1) * t
                    _, _, dd = GEOD.inv(np.full_like(t, ulon), np.full_like(t, lat), px, py)
                    i = int(np.argmin(dd))
                    step = (hi - lo) / 40
                    lo, hi = max(0.0, t[i] - step), min(1.0, t[i] + step)
                best = min(best, float(np.min(dd)))
        return best if inside else -best


class PolarCap:
    """§1: the polygon between a parallel and the pole, written as GeoJSON
    writes it (a lon/lat rectangle from −180 to 180 closing along ±90, as
    Natural Earth's Antarctica does). Its edges along ±180 are a matched seam
    and its edge along ±90 is the pole: neither is boundary, so the only
    boundary is the parallel, and d is the meridian arc to it (the shortest
    way to a parallel on an ellipsoid of revolution), exact through pyproj."""

    def __init__(self, edge_lat):
        self.edge_lat = edge_lat
        self.pole = -90.0 if edge_lat < 0 else 90.0
        self.lat0, self.lon0 = self.pole, 0.0

    def geojson(self):
        """The cap as GeoJSON writes it."""
        e, p = self.edge_lat, self.pole
        return {"type": "Polygon", "coordinates": [[[-180.0, p], [180.0, p], [180.0, e], [-180.0, e], [-180.0, p]]]}

    def signed_distances(self, lats, lons):
        """(d, error bound 0) for arrays of positions."""
        lats = np.asarray(lats, float)
        _, _, arc = GEOD.inv(np.zeros_like(lats), lats, np.zeros_like(lats), np.full_like(lats, self.edge_lat))
        inside = (lats < self.edge_lat) if self.pole < 0 else (lats > self.edge_lat)
        return np.where(inside, arc, -np.asarray(arc)), np.zeros_like(lats)


@dataclass
class Area:
    """One row of the catalog (§1). Times are microseconds; None = open."""
    area_id: str
    shape: object
    in_accuracy_max_m: Optional[float] = None
    out_accuracy_max_m: Optional[float] = None
    in_confirm_count: int = 1
    out_confirm_count: int = 1
    valid_from: Optional[int] = None
    valid_until: Optional[int] = None
    confidence: Optional[float] = None
    timezone: Optional[str] = None

    def valid_at(self, micros):
        """§1: both ends of the validity period are included."""
        return (self.valid_from is None or micros >= self.valid_from) and \
            (self.valid_until is None or micros <= self.valid_until)


@dataclass
class Verdict:
    """§3: `candidate` is 'inside', 'outside' or None (undecided); `ambiguous`
    when the distance's error bound straddles a threshold, so this model cannot
    say (a scenario must not place a fix there)."""
    candidate: Optional[str]
    d: float
    k_accuracy: float
    ambiguous: bool
    why: str


def verdict(area, d, bound, accuracy, p):
    """§3: inside candidate when d ≥ k·accuracy and the accuracy is within the
    entry limit (§1: a larger accuracy never counts, equal counts); outside
    candidate when d ≤ −k·accuracy within the exit limit; else undecided. With
    k·accuracy = 0 a point on the boundary (d = 0) is outside."""
    ka = k_factor(p) * accuracy
    ambiguous = abs(d - ka) <= bound or abs(d + ka) <= bound
    in_ok = area.in_accuracy_max_m is None or accuracy <= area.in_accuracy_max_m
    out_ok = area.out_accuracy_max_m is None or accuracy <= area.out_accuracy_max_m
    if ka == 0:
        geometric = "inside" if d > 0 else "outside"
    elif d >= ka:
        geometric = "inside"
    elif d <= -ka:
        geometric = "outside"
    else:
        geometric = None
    if geometric == "inside" and not in_ok:
        return Verdict(None, d, ka, ambiguous, f"inside but accuracy {accuracy} > IN limit {area.in_accuracy_max_m}")
    if geometric == "outside" and not out_ok:
        return Verdict(None, d, ka, ambiguous, f"outside but accuracy {accuracy} > OUT limit {area.out_accuracy_max_m}")
    return Verdict(geometric, d, ka, ambiguous, geometric or "straddles")


# ------------------------------------------------------------ conditions (§5)

@dataclass
class Condition:
    """A notification condition (§5; fields as docs/inputs.md names them)."""
    condition_id: int
    area_id: str
    timing: str                      # IN, OUT or DWELL
    dwell_s: Optional[int] = None
    weekdays: Optional[tuple] = None  # e.g. ("Mon", "Fri"); None = every day
    start_time: Optional[str] = None  # "HH:MM"
    end_time: Optional[str] = None
    start_date: Optional[str] = None  # "YYYY-MM-DD"
    end_date: Optional[str] = None
    renotify_suppress_days: Optional[int] = None
    timezone: Optional[str] = None


def minutes(hhmm):
    """'HH:MM' as minutes after midnight."""
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def in_window(cond, local):
    """§5: start included, end excluded; start after end wraps midnight;
    start equal to end is all day; with one end only, open on the other."""
    if cond.start_time is None and cond.end_time is None:
        return True
    t = local.hour * 60 + local.minute + (local.second + local.microsecond / 1e6) / 60
    if cond.end_time is None:
        return t >= minutes(cond.start_time)
    if cond.start_time is None:
        return t < minutes(cond.end_time)
    start, end = minutes(cond.start_time), minutes(cond.end_time)
    if start == end:
        return True
    if start < end:
        return start <= t < end
    return t >= start or t < end


def filter_failure(cond, local, last_date):
    """§5: why the condition may not fire at this local time, or None when
    every filter passes: the fix's own weekday, the daily window, the date
    period (both ends included) and suppression (silent until D + N)."""
    if cond.weekdays is not None and WEEKDAYS[local.weekday()] not in cond.weekdays:
        return f"weekday {WEEKDAYS[local.weekday()]} not in {','.join(cond.weekdays)}"
    if not in_window(cond, local):
        return f"{local.strftime('%H:%M:%S')} outside {cond.start_time}-{cond.end_time}"
    today = local.date()
    if cond.start_date is not None and today < dt.date.fromisoformat(cond.start_date):
        return f"{today} before {cond.start_date}"
    if cond.end_date is not None and today > dt.date.fromisoformat(cond.end_date):
        return f"{today} after {cond.end_date}"
    n = cond.renotify_suppress_days
    if n and last_date is not None and today < last_date + dt.timedelta(days=n):
        return f"suppressed until {last_date + dt.timedelta(days=n)}"
    return None


# ------------------------------------------------------------ fixes (§2)

@dataclass
class Fix:
    """One fix as its source wrote it (text, or numbers from a typed source)."""
    subject_id: str
    ts: object
    lat: object
    lon: object
    accuracy_m: object


def number(value, name):
    """A fix's number field as a float, or InvalidFix when missing, not a number or NaN (§2)."""
    if value is None or (isinstance(value, str) and value.strip() == ""):
        raise InvalidFix(f"{name} missing")
    try:
        x = float(value)
    except ValueError:
        raise InvalidFix(f"{name} {value!r} is not a number")
    if math.isnan(x):
        raise InvalidFix(f"{name} is NaN")
    return x


def validate(fix):
    """§2: (micros, lat, lon, accuracy) of a valid fix, or InvalidFix:
    latitude outside [−90, 90], longitude outside [−180, 180], NaN, a negative
    or missing accuracy, a missing time or one without an offset."""
    lat, lon, acc = number(fix.lat, "lat"), number(fix.lon, "lon"), number(fix.accuracy_m, "accuracy")
    if not -90 <= lat <= 90:
        raise InvalidFix(f"lat {lat} out of range")
    if not -180 <= lon <= 180:
        raise InvalidFix(f"lon {lon} out of range")
    if acc < 0:
        raise InvalidFix(f"accuracy {acc} negative")
    return parse_time(fix.ts), lat, lon, acc


# ------------------------------------------------------------ stays (§4) and judgement

@dataclass
class Stay:
    """§4: the stay of one subject in one area."""
    state: str = "UNKNOWN"
    in_streak: int = 0
    out_streak: int = 0
    entered_at: Optional[int] = None
    dwell_spent: set = field(default_factory=set)


@dataclass
class Notification:
    """§5: what a notification carries (times as microseconds)."""
    subject_id: str
    ts: int
    area_id: str
    condition_id: int
    transition: str
    lat: float
    lon: float
    accuracy_m: float

    def key(self):
        """§5's order: subject, time, area_id, condition_id (ids by their
        UTF-8 bytes, §8 "Ids"; Python's str order is the same)."""
        return (self.subject_id.encode(), self.ts, self.area_id.encode(), self.condition_id)


@dataclass
class FixOutcome:
    """What one fix did, for comparing fix by fix and for explaining a diff."""
    fix: Fix
    status: str                     # judged, stale, invalid
    reason: str = ""
    micros: Optional[int] = None
    notifications: list = field(default_factory=list)
    trace: list = field(default_factory=list)   # per-area lines
    transitions: list = field(default_factory=list)   # (area_id, ENTER or EXIT)


@dataclass
class RunCounts:
    """A run's counts, as gf_runs keeps them (docs/commands.md, "the summary line"):
    `filtered` counts due conditions whose filters failed."""
    fixes: int = 0
    judged: int = 0
    stale: int = 0
    invalid: int = 0
    transitions: int = 0
    notifications: int = 0
    filtered: int = 0


@dataclass
class Judging:
    """One valid fix being judged: its values, what it did so far, and the
    run's counts."""
    fix: Fix
    micros: int
    lat: float
    lon: float
    accuracy: float
    outcome: FixOutcome
    counts: RunCounts


class Model:
    """The whole engine state (§4: in the database; here in dicts): per
    subject its last judged fix and count, per (subject, area) its stay, per
    (subject, condition) the local date last notified."""

    def __init__(self, areas, conditions, default_timezone=None, default_confidence=0.0, distances=None):
        self.areas = sorted(areas, key=lambda a: a.area_id.encode())
        self.conditions = {}
        for c in sorted(conditions, key=lambda c: c.condition_id):
            self.conditions.setdefault(c.area_id, []).append(c)
        self.by_id = {a.area_id: a for a in self.areas}
        self.default_timezone = default_timezone
        self.default_confidence = default_confidence or 0.0
        self.subjects = {}      # subject -> dict(last_ts, lat, lon, accuracy, judged)
        self.stays = {}         # (subject, area_id) -> Stay
        self.last_notified = {}  # (subject, condition_id) -> date, as a suppression reads it
        # (subject, condition_id) -> the date of its latest notification, what the
        # gf_last_notified view shows for a condition without a suppression:
        # read from the log, which a reset keeps.
        self.shown_notified = {}
        self.ambiguous = []     # (fix, area_id, verdict) a scenario should have avoided
        # (area_id, lat, lon) -> (d, bound), filled by prime(); models of one
        # catalog may share it.
        self.distances = {} if distances is None else distances

    def prime(self, positions):
        """Computes every area's signed distance to each (lat, lon) at once
        (vectorised), so judging does not call the geometry per fix."""
        positions = sorted(set(positions))
        if not positions:
            return
        lats, lons = zip(*positions)
        for area in self.areas:
            d, bound = area.shape.signed_distances(lats, lons)
            for (lat, lon), di, bi in zip(positions, d, bound):
                self.distances[(area.area_id, lat, lon)] = (float(di), float(bi))

    def distance(self, area, lat, lon):
        """(d, error bound) of the area at (lat, lon), from the cache when primed."""
        key = (area.area_id, lat, lon)
        if key not in self.distances:
            d, bound = area.shape.signed_distances([lat], [lon])
            self.distances[key] = (float(d[0]), float(bound[0]))
        return self.distances[key]

    def add_condition(self, cond):
        """§7: a condition added between runs watches its area from the next fix on."""
        self.conditions.setdefault(cond.area_id, []).append(cond)
        self.conditions[cond.area_id].sort(key=lambda c: c.condition_id)

    def remove_condition(self, condition_id):
        """§7: a removed condition no longer notifies."""
        for area_id, conds in self.conditions.items():
            self.conditions[area_id] = [c for c in conds if c.condition_id != condition_id]

    def reset(self, subject_id):
        """§7 `reset` of one subject: its last known fix, its stays and its
        last-notified dates go (the notification log stays, §8)."""
        self.subjects.pop(subject_id, None)
        for key in [k for k in self.stays if k[0] == subject_id]:
            del self.stays[key]
        for key in [k for k in self.last_notified if k[0] == subject_id]:
            del self.last_notified[key]

    def zone(self, cond):
        """§6: the condition's zone, else its area's, else the catalog's default, else UTC."""
        return cond.timezone or self.by_id[cond.area_id].timezone or self.default_timezone

    def confidence(self, area):
        """§3: p from the area, else the catalog's default."""
        return area.confidence if area.confidence is not None else self.default_confidence

    def judge_batch(self, fixes):
        """§2: one run. Sorts by time (ties keep input order) and judges each
        fix; invalid fixes are counted, not judged, and sort nowhere in
        particular (they change nothing). Returns (outcomes in input order,
        RunCounts)."""
        counts = RunCounts(fixes=len(fixes))
        outcomes = [None] * len(fixes)
        timed = []
        for i, fix in enumerate(fixes):
            try:
                micros, lat, lon, acc = validate(fix)
            except InvalidFix as e:
                outcomes[i] = FixOutcome(fix, "invalid", str(e))
                counts.invalid += 1
                continue
            timed.append((micros, i, lat, lon, acc))
        timed.sort(key=lambda t: (t[0], t[1]))
        for micros, i, lat, lon, acc in timed:
            outcomes[i] = self.judge_valid(fixes[i], (micros, lat, lon, acc), counts)
        return outcomes, counts

    def judge_valid(self, fix, values, counts):
        """§2 staleness, then §3–§5 for every area valid at the fix's time;
        `values` are the fix's (micros, lat, lon, accuracy)."""
        micros, lat, lon, acc = values
        subject = self.subjects.get(fix.subject_id)
        if subject is not None and micros <= subject["last_ts"]:
            counts.stale += 1
            return FixOutcome(fix, "stale", f"not after {stored_time(subject['last_ts'])}", micros)
        judged = (subject or {}).get("judged", 0) + 1
        self.subjects[fix.subject_id] = dict(last_ts=micros, lat=lat, lon=lon, accuracy=acc, judged=judged)
        counts.judged += 1
        outcome = FixOutcome(fix, "judged", "", micros)
        judging = Judging(fix, micros, lat, lon, acc, outcome, counts)
        for area in self.areas:
            if not area.valid_at(micros):
                # §1: outside its validity the area does not exist for judgement.
                continue
            if (fix.subject_id, area.area_id) not in self.stays and self.distance(area, lat, lon)[0] < -FAR_M:
                # A shortcut, not a rule: judging a far area the subject has
                # never met would leave an UNKNOWN or OUTSIDE stay with no
                # inside streak, which behaves as no stay at all for every
                # later fix (§4: ENTER needs an inside streak, which zeroes
                # the outside one; EXIT and DWELL need INSIDE).
                continue
            self.judge_area(area, judging)
        counts.notifications += len(outcome.notifications)
        return outcome

    def judge_area(self, area, j):
        """§4 streaks and transitions of one stay, then §5 conditions."""
        d, bound = self.distance(area, j.lat, j.lon)
        v = verdict(area, d, bound, j.accuracy, self.confidence(area))
        if v.ambiguous:
            self.ambiguous.append((j.fix, area.area_id, v))
        stay = self.stays.setdefault((j.fix.subject_id, area.area_id), Stay())
        if v.candidate == "inside":
            stay.in_streak += 1
            stay.out_streak = 0
        elif v.candidate == "outside":
            stay.out_streak += 1
            stay.in_streak = 0
        transition = None
        if stay.in_streak >= area.in_confirm_count and stay.state != "INSIDE":
            stay.state, stay.entered_at, stay.dwell_spent = "INSIDE", j.micros, set()
            transition = "ENTER"
        elif stay.out_streak >= area.out_confirm_count and stay.state != "OUTSIDE":
            # §4: INSIDE -> OUTSIDE is an EXIT; UNKNOWN -> OUTSIDE is silent.
            transition = "EXIT" if stay.state == "INSIDE" else None
            stay.state, stay.entered_at, stay.dwell_spent = "OUTSIDE", None, set()
        if transition:
            j.counts.transitions += 1
            j.outcome.transitions.append((area.area_id, transition))
        if transition or stay.state == "INSIDE" or stay.in_streak or v.d > -5000:
            # Only what can explain a notification: far areas without a stay stay quiet.
            j.outcome.trace.append(f"{area.area_id}: d={v.d:.1f} k*acc={v.k_accuracy:.1f} {v.why}"
                                 f" -> {stay.state} in={stay.in_streak} out={stay.out_streak}"
                                 + (f" {transition}" if transition else ""))
        if transition is None and stay.state != "INSIDE":
            return   # §5: no timing can match (IN needs an ENTER, OUT an EXIT, DWELL a stay INSIDE)
        for cond in self.conditions.get(area.area_id, []):
            self.consider(cond, stay, transition, j)

    def consider(self, cond, stay, transition, j):
        """§5: IN on ENTER, OUT on EXIT; §4: DWELL at the first judged fix at
        least T after the ENTER, once per stay, looked at after the fix's own
        transition (so never at an EXIT: the stay is no longer INSIDE). A
        due DWELL whose filters fail is spent (§8)."""
        if cond.timing == "IN":
            due = transition == "ENTER"
        elif cond.timing == "OUT":
            due = transition == "EXIT"
        else:
            due = (stay.state == "INSIDE" and cond.condition_id not in stay.dwell_spent
                   and j.micros - stay.entered_at >= cond.dwell_s * 1_000_000)
            if due:
                stay.dwell_spent.add(cond.condition_id)
        if not due:
            return
        local = local_time(j.micros, self.zone(cond))
        key = (j.fix.subject_id, cond.condition_id)
        failure = filter_failure(cond, local, self.last_notified.get(key))
        if failure:
            j.counts.filtered += 1
            j.outcome.trace.append(f"  condition {cond.condition_id} {cond.timing}: not sent, {failure}")
            return
        # §5: only a notification actually sent sets D.
        self.last_notified[key] = local.date()
        self.shown_notified[key] = local.date()
        j.outcome.notifications.append(Notification(
            subject_id=j.fix.subject_id, ts=j.micros, area_id=cond.area_id, condition_id=cond.condition_id,
            transition=cond.timing, lat=j.lat, lon=j.lon, accuracy_m=j.accuracy))
        j.outcome.trace.append(f"  condition {cond.condition_id} {cond.timing}: sent ({local.isoformat()})")

    def visible_stays(self):
        """§8 "OUTSIDE is not stored": the stays a user sees in gf_stays,
        those INSIDE or with an inside streak under way, as
        {(subject, area): (inside?, in_streak, out_streak, entered_at, dwell_spent)}."""
        out = {}
        for key, s in self.stays.items():
            if s.state == "INSIDE" or s.in_streak > 0:
                out[key] = (s.state == "INSIDE", s.in_streak, s.out_streak,
                            stored_time(s.entered_at) if s.state == "INSIDE" else None,
                            frozenset(s.dwell_spent) if s.state == "INSIDE" else frozenset())
        return out
