# Longer than 300 lines: one scenario generator, three ways of judging it and one comparison, which share its state.
"""The engine against rules_reference.py, an independent model of the
behaviour contract, on random scenarios (seeded, so a failure reproduces).

Each seed builds a catalog through the real CLI (`init`, `settings`, two
`import`s of GeoJSON, one with `--group`, `areas add --circle`, `conditions
import` of a CSV, `conditions add`): circles, star polygons, polygons with
holes, multipolygons, a rectangle and a circle cut at ±180, a cap closing
along -90 and circles round the South Pole, overlapping, in five places,
with accuracy limits, confirmation counts up to 3, validity periods ending
exactly on fixes, confidences and time zones; conditions of every timing and
filter (weekdays, windows plain, wrapping, all-day and one-sided, date
periods, suppression), some with an edge exactly on a transition, in zones
whose daylight saving changes within the scenario. 26 subjects walk among
the areas with accuracies from 0 m to 1.2 km (some exactly at a limit), with
invalid rows, equal times in other spellings, fractions past the
microsecond, Unix seconds, leap seconds and rows out of time order.

The same fixes are judged as one `geofence judge` run; as three runs (CSV,
NDJSON on one thread, the gf_fixes inbox) with conditions added, removed and
a subject reset between them; fix by fix through gf_check from Debian's
python3 (half in autocommit, the rest in one transaction, with 4,200
passers-by in between for one seed); and in runs of a few fixes and through
`geofence check` against 600 more areas. The model judges the same sequence
and everything a user can read is compared: each run's `--out` rows in
order, each gf_check answer, gf_notifications, gf_stays, gf_subjects,
gf_last_notified and gf_runs. A mismatch prints the first differing
notification and the model's account of the subject's fixes around it.

No fix is placed where the model's polygon distance is not exact enough to
decide (within its error bound of a threshold): boundaries themselves are
test_exact_boundaries.py's."""
import csv
import datetime as dt
import json
import math
import random
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from conftest import EXTENSION, gf, run, write_collection
from rules_reference import (GEOD, Area, Circle, Condition, Fix, InvalidFix, Model, PolarCap, PolygonArea, WEEKDAYS,
                             k_factor, local_time, parse_time, stored_time, to_micros, validate)

SEEDS = (11, 23, 37, 52)
# 2026-10-31T23:59:59Z: where a leap second's 23:59:60 is read (§8 "Second 60").
LEAP = to_micros(dt.datetime(2026, 10, 31, 23, 59, 59, tzinfo=dt.timezone.utc))
LEAP_SPELLINGS = ("2026-10-31T23:59:60{}Z", "2026-11-01T08:59:60{}+09:00", "2026-10-31 18:59:60{}-05:00")
START = to_micros(dt.datetime(2026, 10, 24, tzinfo=dt.timezone.utc))
ZONES = ("Asia/Tokyo", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Chatham",
         "Asia/Kolkata", "UTC")
CLUSTERS = (("tokyo", 35.68, 139.76), ("tromso", 69.65, 18.95), ("fiji", -16.5, 180.0), ("sydney", -33.87, 151.21),
            ("pole", -90.0, 0.0))
ACCURACIES = (0, 2, 5, 8, 10, 12.5, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1200)
ACCURACY_WEIGHTS = (3, 4, 8, 8, 10, 3, 8, 8, 6, 6, 4, 5, 3, 3, 2, 2, 1)
STEPS_S = (0, 1, 30, 60, 300, 600, 1800, 3600, 7200, 4 * 3600, 11 * 3600, 23 * 3600, 2 * 86400)
STEP_WEIGHTS = (3, 3, 6, 6, 10, 10, 10, 10, 8, 6, 4, 3, 1)
ID_STEMS = ("park", "Station", "station", "zone_é", "Zürich", "Ω-omega", "a b", "0042", "mall", "Mall", "pier")


def metres_to_degrees(lat, north_m, east_m):
    """A small offset in metres as degrees (approximate: positions need not be exact)."""
    return north_m / 111_320.0, east_m / (111_320.0 * math.cos(math.radians(lat)))


def wrap(lon):
    """A longitude back into [-180, 180]."""
    return lon - 360.0 if lon > 180 else (lon + 360.0 if lon < -180 else lon)


def star(rng, lat, lon, radius_m, vertices):
    """A simple star-shaped ring round (lat, lon): valid by construction."""
    ring = []
    for i in range(vertices):
        angle = 2 * math.pi * i / vertices
        r = radius_m * rng.uniform(0.6, 1.0)
        dlat, dlon = metres_to_degrees(lat, r * math.cos(angle), r * math.sin(angle))
        ring.append([round(lon + dlon, 7), round(lat + dlat, 7)])
    return ring + [ring[0]]


def clear_of_thresholds(areas, confidence, points):
    """For each point (lat, lon, accuracy): whether every area's verdict is
    clear, by the model's distance error bound plus 0.5 m, of each threshold
    of §3 (d = ±k·accuracy), so that the model decides it. Areas far from
    every point are skipped (another cluster: d is tens of km below
    −k·accuracy there)."""
    lats, lons, accs = (np.array(column, float) for column in zip(*points))
    ok = np.ones(len(points), bool)
    centres = np.array([(a.shape.lat, a.shape.lon) if isinstance(a.shape, Circle) else (a.shape.lat0, a.shape.lon0)
                        for a in areas])
    near = ((np.abs(lats[None, :] - centres[:, :1]) < 0.5)
            & ((np.abs((lons[None, :] - centres[:, 1:] + 540) % 360 - 180) < 1.0)
               | (np.abs(centres[:, :1]) > 85))).any(axis=1)
    for area in (a for a, n in zip(areas, near) if n):
        d, bound = area.shape.signed_distances(lats, lons)
        ka = k_factor(confidence(area)) * accs
        ok &= np.minimum(np.abs(d - ka), np.abs(d + ka)) > bound + 0.5
    return ok


class Scenario:
    """One seed's catalog and fixes, and the model's view of the catalog."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.default_timezone = self.rng.choice((None, "Asia/Tokyo", "America/New_York"))
        self.default_confidence = self.rng.choice((None, 0.0, 0.68, 0.9))
        self.areas = []       # rules_reference.Area
        self.centres = []     # (cluster, lat, lon, reach_m) per area, for walking to it
        self.features = ([], [])   # GeoJSON features of the plain file and of the --group Z file
        self.added_circle = None   # the area given to `areas add`
        self.distances = {}        # the models' shared distance cache
        self.make_areas()
        self.fixes = self.make_fixes()
        self.set_validity()
        self.conditions = self.make_conditions()
        self.added_conditions = self.conditions[-2:]

    # ---- areas

    def area_fields(self, area_id, shape):
        """An area of this shape with random limits, counts, confidence and zone (§1)."""
        rng = self.rng
        return Area(area_id=area_id, shape=shape,
                    in_accuracy_max_m=rng.choice((None, None, None, 30, 50, 100, 200)),
                    out_accuracy_max_m=rng.choice((None, None, None, 50, 100, 300)),
                    in_confirm_count=rng.choice((1, 1, 1, 2, 3)),
                    out_confirm_count=rng.choice((1, 1, 1, 2, 3)),
                    confidence=rng.choice((None, None, 0.0, 0.5, 0.9, 0.95)),
                    timezone=rng.choice((None, None) + ZONES))

    def make_areas(self):
        """The areas of each cluster, and their GeoJSON features: ids plain,
        with a `group_id` property, or in the file imported with `--group
        Z` (one already written as `Z#…`, kept as it is, §1)."""
        rng = self.rng
        n = 0
        for cluster, clat, clon in CLUSTERS:
            kinds = ["circle", "circle", "star", "holed", "multi", rng.choice(("circle", "star"))]
            if cluster == "fiji":
                kinds = ["seam_rectangle", "seam_circle", "circle", "star"]
            if cluster == "pole":
                kinds = ["polar_cap", "pole_circle", "near_pole_circle"]
            for kind in kinds:
                n += 1
                stem = rng.choice(ID_STEMS)
                local_id = f"{stem}-{n}"
                shape, centres = self.shape(kind, clat, clon)
                group = rng.choice((None, None, "G", "east"))
                target = 1 if rng.random() < 0.25 else 0
                if target == 1:
                    area_id = f"Z#{local_id}" if rng.random() < 0.3 else local_id
                    stored = area_id if area_id.startswith("Z#") else f"Z#{area_id}"
                    group = None
                else:
                    area_id = local_id
                    stored = f"{group}#{local_id}" if group else local_id
                area = self.area_fields(stored, shape)
                self.areas.append(area)
                self.centres.extend((cluster, lat, lon, reach, stored) for lat, lon, reach in centres)
                props = {"area_id": area_id}
                if group:
                    props["group_id"] = group
                if isinstance(shape, Circle):
                    props["radius_m"] = shape.radius_m
                for name in ("in_accuracy_max_m", "out_accuracy_max_m", "in_confirm_count", "out_confirm_count",
                             "confidence", "timezone"):
                    value = getattr(area, name)
                    if value is not None and not (name.endswith("count") and value == 1 and rng.random() < 0.5):
                        props[name] = value
                props["note"] = f"free property {n}"
                feature = {"type": "Feature", "properties": props, "geometry": shape.geojson()}
                self.features[target].append((feature, stored))
        # One more circle through `areas add`, in Tokyo.
        lat, lon = 35.68 + rng.uniform(-0.01, 0.01), 139.76 + rng.uniform(-0.01, 0.01)
        shape = Circle(round(lat, 6), round(lon, 6), rng.choice((250.0, 400.0)))
        area = self.area_fields("added#circle", shape)
        self.areas.append(area)
        self.centres.append(("tokyo", shape.lat, shape.lon, shape.radius_m, area.area_id))
        self.added_circle = area

    def shape(self, kind, clat, clon):
        """A shape of the given kind near the cluster, and the points (lat,
        lon, reach in metres) a walker aims at to enter it."""
        rng = self.rng
        if kind == "seam_rectangle":
            south, north = -16.515, -16.505
            parts = [[[[179.994, south], [180.0, south], [180.0, north], [179.994, north], [179.994, south]]],
                     [[[-180.0, south], [-179.995, south], [-179.995, north], [-180.0, north], [-180.0, south]]]]
            return PolygonArea(parts), [(-16.51, 180.0, 700.0)]
        if kind == "seam_circle":
            return Circle(-16.52, 179.999, 350.0), [(-16.52, 179.999, 350.0)]
        if kind == "polar_cap":
            return PolarCap(-89.95), [(-90.0, 0.0, 5600.0)]
        if kind == "pole_circle":
            return Circle(-90.0, 0.0, 3000.0), [(-90.0, 0.0, 3000.0)]
        if kind == "near_pole_circle":
            lon = rng.choice((60.0, -120.0, 180.0))
            return Circle(-89.98, lon, 2500.0), [(-89.98, lon, 2500.0)]
        spread = 1500 if clon != 180.0 else 1000
        dlat, dlon = metres_to_degrees(clat, rng.uniform(-spread, spread), rng.uniform(-spread, spread))
        lat = clat + dlat
        lon = clon + dlon
        if clon == 180.0:
            # Keep ordinary shapes off the seam: 1.5 to 3.5 km east or west of it.
            lon = rng.choice((1, -1)) * (180.0 - rng.uniform(0.014, 0.033))
        lat, lon = round(lat, 6), round(lon, 6)
        if kind == "circle":
            r = float(rng.choice((150, 300, 450, 700, 900)))
            return Circle(lat, lon, r), [(lat, lon, r)]
        r = rng.uniform(300, 900 if clon == 180.0 else 1200)
        if kind == "star":
            return PolygonArea([[star(rng, lat, lon, r, rng.randint(6, 14))]]), [(lat, lon, r)]
        if kind == "holed":
            return PolygonArea([[star(rng, lat, lon, r, 12), star(rng, lat, lon, r * 0.45, 7)]]), [(lat, lon, r)]
        # multi: two stars side by side, far enough apart not to touch.
        r2 = r * 0.6
        dlat2, dlon2 = metres_to_degrees(lat, 0, (r + r2) * 1.3)
        lat2, lon2 = round(lat + dlat2, 6), round(lon + dlon2, 6)
        parts = [[star(rng, lat, lon, r, 10)], [star(rng, lat2, lon2, r2, 8)]]
        return PolygonArea(parts), [(lat, lon, r), (lat2, lon2, r2)]

    # ---- fixes

    def confidence(self, area):
        """§3: the area's p, else the catalog's default."""
        if area.confidence is not None:
            return area.confidence
        return self.default_confidence or 0.0

    def decidable(self, candidates):
        """clear_of_thresholds() for this catalog."""
        return clear_of_thresholds(self.areas, self.confidence, candidates)

    def position(self, cluster, previous):
        """A position in the cluster: near an area (in it, near its edge or
        just out), lingering near the last one, or anywhere round about."""
        rng = self.rng
        mode = rng.random()
        if previous is not None and mode < 0.35:
            target_lat, target_lon, reach = previous
            scale = rng.choice((0.1, 0.3, 0.6))
        elif mode < 0.85:
            choices = [c for c in self.centres if c[0] == cluster]
            _, target_lat, target_lon, reach, _ = rng.choice(choices)
            scale = rng.uniform(0, 1.6)
        else:
            name, target_lat, target_lon = next(c for c in CLUSTERS if c[0] == cluster)
            reach, scale = 3000.0, rng.random()
        angle = rng.uniform(0, 2 * math.pi)
        dist = reach * scale * (rng.random() if previous is not None and mode < 0.35 else 1.0)
        if cluster == "pole":
            # Near a pole only a geodesic step is a step: pyproj's forward problem.
            lon, lat, _ = GEOD.fwd(target_lon, target_lat, math.degrees(angle), dist)
            lat, lon = round(lat, 7), round(wrap(lon), 7)
            if rng.random() < 0.06:
                lat = -90.0   # the pole itself, at any longitude
        else:
            dlat, dlon = metres_to_degrees(target_lat, dist * math.cos(angle), dist * math.sin(angle))
            lat, lon = round(target_lat + dlat, 7), round(wrap(target_lon + dlon), 7)
        if cluster in ("fiji", "pole") and rng.random() < 0.12:
            lon = rng.choice((180.0, -180.0))   # on the seam, written either way
        return lat, lon, (target_lat, target_lon, reach)

    def time_text(self, micros):
        """One spelling of a time (§6): ISO with various offsets, a space or
        T, fractions (some past the microsecond, cut), or Unix seconds."""
        rng = self.rng
        r = rng.random()
        if r < 0.12 and micros % 1_000_000 == 0:
            s = micros // 1_000_000
            return rng.choice((str(s), f"{s}.0", f"{str(s)[0]}.{str(s)[1:]}e{len(str(s)) - 1}"))
        if r < 0.17:
            return f"{micros // 1_000_000}.{micros % 1_000_000:06d}{rng.randint(0, 999)}"
        zone = rng.choice(("Z", "+09:00", "-05:00", "+05:30", "+13:45", "-00:30"))
        if zone == "Z":
            offset = dt.timedelta(0)
        else:
            sign = 1 if zone[0] == "+" else -1
            offset = sign * dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        moment = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros) + offset
        sep = " " if rng.random() < 0.15 else "T"
        text = moment.strftime(f"%Y-%m-%d{sep}%H:%M:%S")
        if micros % 1_000_000 or rng.random() < 0.1:
            frac = f"{moment.microsecond:06d}"
            if rng.random() < 0.4:
                frac += str(rng.randint(0, 999))   # past the microsecond: cut
            text += "." + frac
        return text + zone

    def make_fixes(self):
        """Every subject's walk, as the rows of one fixes file: in time
        order but for some rows moved later, with invalid rows, leap seconds
        and equal times among them."""
        rng = self.rng
        subjects = [f"s{i:02d}" for i in range(1, 21)] + ["7", "7.0", "Ünï-8", "u 9", " e10 ", 'q,"11"']
        rows = []   # (micros for ordering the file, Fix)
        for subject in subjects:
            cluster = rng.choice(CLUSTERS)[0]
            # Half the subjects keep to whole minutes, so that some of their
            # transitions fall exactly on a window's or a period's edge.
            aligned = rng.random() < 0.5
            t = START + rng.randint(0, 3 * 1440) * 60_000_000
            previous = None
            for _ in range(rng.randint(30, 48)):
                step = rng.choices(STEPS_S, STEP_WEIGHTS)[0]
                if aligned:
                    step = max(60, step - step % 60) if step else 0
                t += step * 1_000_000 + (rng.randint(1, 999_999) if rng.random() < 0.1 and not aligned else 0)
                if rng.random() < 0.05:
                    cluster = rng.choice(CLUSTERS)[0]
                    previous = None
                attempts = [(*self.position(cluster, previous), rng.choices(ACCURACIES, ACCURACY_WEIGHTS)[0])
                            for _ in range(6)]
                ok = self.decidable([(lat, lon, acc) for lat, lon, _, acc in attempts])
                if not ok.any():
                    continue
                lat, lon, target, accuracy = attempts[int(np.argmax(ok))]
                previous = target
                if t - step * 1_000_000 < LEAP <= t and rng.random() < 0.7:
                    # A leap second here, at the same place (§8 "Second 60").
                    fraction = rng.choice(("", ".25"))
                    leap = LEAP + (250_000 if fraction else 0)
                    text = rng.choice(LEAP_SPELLINGS).format(fraction)
                    rows.append((leap, Fix(subject, text, repr(lat), repr(lon), str(accuracy))))
                text = self.time_text(t)
                assert parse_time(text) == t, (text, t)
                written = repr(accuracy) if accuracy % 1 else str(int(accuracy))
                rows.append((t, Fix(subject, text, repr(lat), repr(lon), written)))
                if rng.random() < 0.06:
                    # An invalid row at the same time, before or after the
                    # valid one: it changes nothing, so neither is stale.
                    invalid = (t, self.invalid_fix(subject, t, lat, lon))
                    rows.insert(len(rows) - (rng.random() < 0.5), invalid)
        rows.sort(key=lambda r: r[0])   # stable: an invalid row keeps its side
        fixes = [f for _, f in rows]
        # Some rows move later in the file: one run sorts them back, the
        # split runs and gf_check see them as stale (§2).
        for _ in range(len(fixes) // 25):
            i = rng.randrange(len(fixes) - 1)
            j = min(len(fixes) - 1, i + rng.randint(5, 200))
            fixes.insert(j, fixes.pop(i))
        return fixes

    def invalid_fix(self, subject, t, lat, lon):
        """A row §2 calls invalid, of one of its kinds."""
        rng = self.rng
        text = self.time_text(t)
        kind = rng.randrange(9)
        return [Fix(subject, text, "91.5", repr(lon), "10"),
                Fix(subject, text, repr(lat), "180.25", "10"),
                Fix(subject, text, "NaN", repr(lon), "10"),
                Fix(subject, text, repr(lat), repr(lon), "-1"),
                Fix(subject, text, repr(lat), repr(lon), ""),
                Fix(subject, "", repr(lat), repr(lon), "10"),
                # No offset: invalid in a catalog without a zone. With one, the command line reads it
                # as local time there and gf_check refuses it (§6), which this model does not follow:
                # a month 13 stands in.
                Fix(subject, stored_time(t)[:19] if not self.default_timezone else "2026-13-01T00:00:00Z",
                    repr(lat), repr(lon), "10"),
                Fix(subject, text, "", repr(lon), "5"),
                Fix(subject, "2026-10-30T23:59:60Z", repr(lat), repr(lon), "5")][kind]

    def set_validity(self):
        """Validity periods (§1), about a third of the areas, with ends on
        some fix's exact time (both ends are included)."""
        rng = self.rng
        times = sorted({parse_time(f.ts) for f in self.fixes if self.valid(f)})
        for area in self.areas:
            if rng.random() < 0.35:
                a, b = sorted(rng.sample(times, 2))
                if rng.random() < 0.5:
                    a += rng.choice((0, 1))
                area.valid_from = a if rng.random() < 0.8 else None
                area.valid_until = b if rng.random() < 0.7 else None

    @staticmethod
    def valid(fix):
        """Whether §2 calls the fix valid."""
        try:
            validate(fix)
            return True
        except InvalidFix:
            return False

    # ---- conditions

    def filters(self):
        """Random filters of §5 for a condition, as Condition's keywords."""
        rng = self.rng
        f = {}
        if rng.random() < 0.3:
            chosen = set(rng.sample(WEEKDAYS, rng.randint(2, 5)))
            f["weekdays"] = tuple(d for d in WEEKDAYS if d in chosen)
        if rng.random() < 0.4:
            a = f"{rng.randint(0, 23):02d}:{rng.choice((0, 15, 30, 45)):02d}"
            b = f"{rng.randint(0, 23):02d}:{rng.choice((0, 30)):02d}"
            kind = rng.randrange(4)
            f["start_time"], f["end_time"] = [(a, b), (a, a), (a, None), (None, b)][kind]
        if rng.random() < 0.25:
            day = dt.date(2026, 10, 24) + dt.timedelta(days=rng.randint(0, 10))
            end = day + dt.timedelta(days=rng.randint(0, 5))
            kind = rng.randrange(3)
            f["start_date"], f["end_date"] = [(day.isoformat(), end.isoformat()), (day.isoformat(), None),
                                              (None, end.isoformat())][kind]
        if rng.random() < 0.4:
            f["renotify_suppress_days"] = rng.choice((0, 1, 1, 2, 3))
        if rng.random() < 0.3:
            f["timezone"] = rng.choice(ZONES)
        return f

    def model(self, conditions):
        """A model of this catalog with these conditions; all models of a
        scenario share one distance cache, filled by the first."""
        model = Model(self.areas, conditions, self.default_timezone, self.default_confidence, self.distances)
        if not self.distances:
            model.prime([validate(f)[1:3] for f in self.fixes if self.valid(f)])
        return model

    def edges(self):
        """Each (area, ENTER or EXIT) at whole minutes of one run over the
        fixes: transitions do not depend on conditions (§5: the stay changes
        either way), so a condition's window or period can be made to begin
        or end exactly there."""
        outcomes, _ = self.model([]).judge_batch(self.fixes)
        edges = {}
        for o in outcomes:
            for area_id, kind in o.transitions:
                if o.micros % 60_000_000 == 0:
                    edges.setdefault((area_id, kind), []).append(o.micros)
        return edges

    def on_edge(self, cond, area, moments):
        """Moves one end of the condition's window or period onto the local
        minute or date of one of these transitions (§5: start and first
        date included, end excluded, last date included)."""
        rng = self.rng
        zone = cond.timezone or area.timezone or self.default_timezone
        local = local_time(rng.choice(moments), zone)
        hhmm, day = local.strftime("%H:%M"), local.date().isoformat()
        kind = rng.randrange(4)
        if kind == 0:
            cond.start_time, cond.end_time = hhmm, rng.choice((None, f"{(local.hour + 2) % 24:02d}:00"))
        elif kind == 1:
            cond.start_time, cond.end_time = rng.choice((None, f"{(local.hour + 21) % 24:02d}:30")), hhmm
        elif kind == 2:
            cond.start_date = day
            if cond.end_date is not None and cond.end_date < day:
                cond.end_date = None
        else:
            cond.end_date = day
            if cond.start_date is not None and cond.start_date > day:
                cond.start_date = None

    def make_conditions(self):
        """IN, OUT and DWELL conditions for every area, most with filters,
        ids scattered (notifications order by them as numbers, §8)."""
        rng = self.rng
        ids = rng.sample(range(1, 400), 8 * len(self.areas))
        edges = self.edges()
        conditions = []
        for area in self.areas:
            wanted = []
            if rng.random() < 0.85:
                wanted.append(("IN", None))
            if rng.random() < 0.7:
                wanted.append(("OUT", None))
            if rng.random() < 0.5:
                wanted.append((rng.choice(("IN", "OUT")), None))
            for _ in range(rng.choice((0, 1, 1, 2))):
                wanted.append(("DWELL", rng.choice((0, 60, 600, 1800, 3600, 4 * 3600))))
            for timing, dwell in wanted:
                plain = timing in ("IN", "OUT") and rng.random() < 0.5
                cond = Condition(ids.pop(), area.area_id, timing, dwell, **({} if plain else self.filters()))
                moments = edges.get((area.area_id, {"IN": "ENTER", "OUT": "EXIT"}.get(timing)))
                if moments and not plain and rng.random() < 0.6:
                    self.on_edge(cond, area, moments)
                conditions.append(cond)
        return conditions


# ---------------------------------------------------------------- the real catalog

def feature_time(rng, micros):
    """A validity time as import reads it: stored form or Unix seconds."""
    return stored_time(micros) if rng.random() < 0.7 else f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


def build_catalog(scn, folder):
    """The scenario's catalog, made through the CLI as a user would."""
    db = folder / "fences.db"
    gf("init", db)
    if scn.default_timezone:
        gf("settings", db, "default_timezone", scn.default_timezone)
    if scn.default_confidence is not None:
        gf("settings", db, "default_confidence", str(scn.default_confidence))
    rng = random.Random(scn.seed * 7)
    by_id = {a.area_id: a for a in scn.areas}
    for target, features in enumerate(scn.features):
        for feat, stored in features:
            props = feat["properties"]
            area = by_id[stored]
            if area.valid_from is not None:
                props["valid_from"] = feature_time(rng, area.valid_from)
            if area.valid_until is not None:
                props["valid_until"] = feature_time(rng, area.valid_until)
        path = write_collection(folder / f"areas{target}.geojson", [feat for feat, _ in features])
        gf("import", db, path, *(["--group", "Z"] if target else []))
    a = scn.added_circle
    options = ["--id", "circle", "--group", "added", "--circle", f"{a.shape.lat},{a.shape.lon},{a.shape.radius_m}",
               "--in-confirm-count", str(a.in_confirm_count), "--out-confirm-count", str(a.out_confirm_count)]
    for name, value in (("--in-accuracy-max", a.in_accuracy_max_m), ("--out-accuracy-max", a.out_accuracy_max_m),
                        ("--confidence", a.confidence), ("--timezone", a.timezone),
                        ("--valid-from", a.valid_from and stored_time(a.valid_from)),
                        ("--valid-until", a.valid_until and stored_time(a.valid_until))):
        if value is not None:
            options += [name, str(value)]
    gf("areas", "add", db, *options)
    columns = ["condition_id", "area_id", "timing", "dwell_s", "weekdays", "start_time", "end_time", "start_date",
               "end_date", "renotify_suppress_days", "timezone"]
    with open(folder / "conditions.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for c in scn.conditions:
            if c in scn.added_conditions:
                continue
            w.writerow(["" if v is None else (",".join(v) if k == "weekdays" else v)
                        for k, v in ((k, getattr(c, k)) for k in columns)])
    gf("conditions", "import", db, folder / "conditions.csv")
    for c in scn.added_conditions:
        options = ["--id", str(c.condition_id), "--area", c.area_id, "--timing", c.timing]
        for name, value in (("--dwell-s", c.dwell_s), ("--weekdays", c.weekdays and ",".join(c.weekdays)),
                            ("--start-time", c.start_time), ("--end-time", c.end_time),
                            ("--start-date", c.start_date), ("--end-date", c.end_date),
                            ("--renotify-suppress-days", c.renotify_suppress_days), ("--timezone", c.timezone)):
            if value is not None:
                options += [name, str(value)]
        gf("conditions", "add", db, *options)
    return db


def write_fixes(path, fixes):
    """The fixes as a CSV file with a header, as written."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for fix in fixes:
            w.writerow([fix.subject_id, fix.ts, fix.lat, fix.lon, fix.accuracy_m])
    return path


def json_number(text):
    """A number field as NDJSON writes it: the number as written, null when missing or NaN."""
    return "null" if text in ("", "NaN") else text


def write_ndjson(path, fixes):
    """The fixes as NDJSON: numbers as JSON numbers (Unix times too, as
    written), text as strings, a missing or NaN field as null."""
    with open(path, "w", encoding="utf-8") as f:
        for fix in fixes:
            unix = fix.ts != "" and not any(ch in fix.ts for ch in ":")
            ts = fix.ts if unix else json.dumps(fix.ts)
            f.write(f'{{"subject_id": {json.dumps(fix.subject_id)}, "ts": {ts or "null"}, "lat": {json_number(fix.lat)}, '
                    f'"lon": {json_number(fix.lon)}, "accuracy_m": {json_number(fix.accuracy_m)}}}\n')
    return path


def fill_inbox(db, fixes):
    """The fixes as rows of the gf_fixes inbox, in order: times as text,
    numbers as REAL, an empty field as NULL."""
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany("INSERT INTO gf_fixes (subject_id, ts, lat, lon, accuracy_m) VALUES (?, ?, ?, ?, ?)",
                         [(f.subject_id, f.ts or None, typed(f.lat), typed(f.lon), typed(f.accuracy_m)) for f in fixes])
    conn.close()


def read_out(path):
    """A judge --out CSV as comparable tuples."""
    with open(path, newline="", encoding="utf-8") as f:
        return [(r["subject_id"], parse_time(r["ts"]), r["area_id"], int(r["condition_id"]), r["transition"],
                 float(r["lat"]), float(r["lon"]), float(r["accuracy_m"])) for r in csv.DictReader(f)]


def as_tuple(n):
    """A model notification as the tuple the engine's rows are read into."""
    return (n.subject_id, n.ts, n.area_id, n.condition_id, n.transition, n.lat, n.lon, n.accuracy_m)


CHECK_SCRIPT = r"""
import json, sqlite3, sys
db, extension, fixes, begin_at = sys.argv[1:]
conn = sqlite3.connect(db, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(extension)
conn.execute("PRAGMA synchronous = NORMAL")
answers = []
for i, row in enumerate(json.load(open(fixes))):
    if i == int(begin_at):
        conn.execute("BEGIN IMMEDIATE")
    try:
        answers.append({"ok": json.loads(conn.execute("SELECT gf_check(?, ?, ?, ?, ?)", row).fetchone()[0])})
    except sqlite3.Error as e:
        answers.append({"error": str(e)})
if conn.in_transaction:
    conn.execute("COMMIT")
print(json.dumps(answers))
"""


def typed(value):
    """A fixes-file field as gf_check gets it from a typed program: numbers as REAL, empty as NULL."""
    if value == "":
        return None
    try:
        return float(value)
    except ValueError:
        return value


def check_fix_by_fix(db, fixes, folder, begin_at):
    """Every fix through gf_check, in file order, from Debian's python3: one
    transaction per call up to fix `begin_at`, then all the rest inside one
    BEGIN IMMEDIATE … COMMIT (where a refused fix rolls back only its own
    savepoint, docs/sql.md)."""
    (folder / "check.py").write_text(CHECK_SCRIPT)
    rows = [[f.subject_id, f.ts, typed(f.lat), typed(f.lon), typed(f.accuracy_m)] for f in fixes]
    (folder / "fixes.json").write_text(json.dumps(rows, allow_nan=True))
    p = run("/usr/bin/python3", folder / "check.py", db, EXTENSION, folder / "fixes.json", begin_at)
    return json.loads(p.stdout)


# ---------------------------------------------------------------- reading the catalog's state

def read_state(db):
    """What the catalog's tables say: stays (INSIDE or not, streaks,
    entered_at, DWELL spent), subjects, last-notified dates, notifications
    in written order and the judge runs' counts."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        stays = {(s, a): (state == "INSIDE", i, o, e, frozenset(int(x) for x in (spent or "").split(",") if x))
                 for s, a, state, i, o, e, spent in conn.execute(
                     "SELECT subject_id, area_id, state, in_streak, out_streak, entered_at, dwell_spent FROM gf_stays")}
        subjects = {s: (t, la, lo, acc, n) for s, t, la, lo, acc, n in conn.execute(
            "SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes FROM gf_subjects")}
        notified = {(s, c): d for s, c, d in conn.execute(
            "SELECT subject_id, condition_id, local_date FROM gf_last_notified")}
        notes = [(s, parse_time(t), a, c, tr, la, lo, acc) for s, t, a, c, tr, la, lo, acc in conn.execute(
            "SELECT subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m"
            " FROM gf_notifications ORDER BY id")]
        runs = [r for r in conn.execute(
            "SELECT fixes, judged, stale, invalid, transitions, notifications, filtered"
            " FROM gf_runs WHERE kind = 'judge' ORDER BY run_id")]
    finally:
        conn.close()
    return dict(stays=stays, subjects=subjects, notified=notified, notes=notes, runs=runs)


def model_state(model):
    """The model's state in read_state()'s terms."""
    stays = {}
    for key, (inside, i, o, entered, spent) in model.visible_stays().items():
        stays[key] = (inside, i, o, entered, spent)
    subjects = {s: (stored_time(v["last_ts"]), v["lat"], v["lon"], v["accuracy"], v["judged"])
                for s, v in model.subjects.items()}
    # gf_last_notified (schema 9): a subject with state; a suppressing
    # condition's day as the state keeps it, another's from the log.
    suppressing = {c.condition_id for cs in model.conditions.values() for c in cs if (c.renotify_suppress_days or 0) > 0}
    notified = {k: d.isoformat() for k, d in model.shown_notified.items() if k[0] in model.subjects and k[1] not in suppressing}
    notified.update({k: d.isoformat() for k, d in model.last_notified.items() if k[1] in suppressing})
    return dict(stays=stays, subjects=subjects, notified=notified)


# ---------------------------------------------------------------- explaining a mismatch

def history(outcomes, subject, around=None, engine=()):
    """The model's account of one subject's fixes in time order, each with
    its per-area verdicts, streaks, transitions and conditions: the eight
    fixes before `around` (a time) to four after, or the last forty. The
    engine's notifications of the subject in that stretch follow."""
    mine = [o for o in outcomes if o.fix.subject_id == subject]
    mine.sort(key=lambda o: (o.micros is None, o.micros or 0))
    if around is None:
        shown = mine[-40:]
    else:
        at = next((i for i, o in enumerate(mine) if o.micros is not None and o.micros >= around), len(mine))
        shown = mine[max(0, at - 8):at + 4]
    lines = [f"fix history of subject {subject!r} as the model judged it"
             f" ({len(shown)} of its {len(mine)} fixes):"]
    for o in shown:
        when = stored_time(o.micros) if o.micros is not None else o.fix.ts
        lines.append(f"  {when} (written {o.fix.ts!r}) lat={o.fix.lat} lon={o.fix.lon} acc={o.fix.accuracy_m}:"
                     f" {o.status} {o.reason}")
        lines += [f"      {t}" for t in o.trace]
        lines += [f"      => {n.transition} area {n.area_id} condition {n.condition_id}" for n in o.notifications]
    times = [o.micros for o in shown if o.micros is not None]
    if engine and times:
        lines.append("the engine's notifications of this subject in that stretch:")
        lines += [f"  {stored_time(n[1])} {n[4]} area {n[2]} condition {n[3]}" for n in engine
                  if n[0] == subject and times[0] <= n[1] <= times[-1]]
    return "\n".join(lines)


def first_difference(expected, actual):
    """The index of the first differing item (or where the shorter ends)."""
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            return i
    return None if len(expected) == len(actual) else min(len(expected), len(actual))


def describe(label, expected, actual, outcomes):
    """A readable account of the first differing notification."""
    i = first_difference(expected, actual)
    e = expected[i] if i < len(expected) else None
    a = actual[i] if i < len(actual) else None
    first = min((n for n in (e, a) if n is not None), key=canonical)
    return (f"{label}: {len(expected)} notifications expected, {len(actual)} written; first difference at #{i}:\n"
            f"  model:  {readable(e)}\n  engine: {readable(a)}\n" + history(outcomes, first[0], first[1], actual))


def readable(note):
    """A notification tuple with its time in the stored form."""
    return None if note is None else (note[0], stored_time(note[1]), *note[2:])


def compare_notifications(label, expected, actual, outcomes):
    """Equal lists of notification tuples, or a readable account of the first difference."""
    assert expected == actual, describe(label, expected, actual, outcomes)


def compare_state(model, db, outcomes):
    """The catalog's subjects, last-notified dates and stays against the
    model's; returns what was read."""
    real = read_state(db)
    mine = model_state(model)
    for name in ("subjects", "notified", "stays"):
        want, got = mine[name], real[name]
        if want != got:
            keys = sorted(set(want) | set(got), key=lambda k: str(k))
            diff = [k for k in keys if want.get(k) != got.get(k)]
            subject = diff[0][0] if isinstance(diff[0], tuple) else diff[0]
            lines = [f"  {k}: model {want.get(k)} engine {got.get(k)}" for k in diff[:8]]
            raise AssertionError(f"{name} differ in {len(diff)} entries:\n" + "\n".join(lines) + "\n"
                                 + history(outcomes, subject))
    return real


# ---------------------------------------------------------------- the tests

SCENARIOS = {}
CATALOGS = {}


def scenario_only(seed):
    """One seed's scenario, made once per session."""
    if seed not in SCENARIOS:
        SCENARIOS[seed] = Scenario(seed)
    return SCENARIOS[seed]


def scenario(seed, tmp_path_factory):
    """One seed's scenario and its built catalog (built once, copied per test)."""
    if seed not in CATALOGS:
        CATALOGS[seed] = build_catalog(scenario_only(seed), tmp_path_factory.mktemp(f"seed{seed}"))
    return SCENARIOS[seed], CATALOGS[seed]


def new_model(scn):
    """A fresh model of the scenario's catalog, with no state."""
    return scn.model(scn.conditions)


def copy_catalog(db, folder):
    """A copy of a built catalog (no process has it open) for one test."""
    target = folder / "fences.db"
    shutil.copyfile(db, target)
    for suffix in ("-wal",):
        if Path(str(db) + suffix).exists():
            shutil.copyfile(str(db) + suffix, str(target) + suffix)
    return target


def judge_runs(scn, db, folder, batches, model, *, options=None, between=None):
    """Runs `geofence judge` on each batch and compares each run with the
    model's: its --out file (in order), the state it left, and its gf_runs
    counts. `options[n]` are extra options of run n; "ndjson" among them
    writes that run's fixes as NDJSON, "inbox" puts them in the gf_fixes
    table (typed, as a program would) and judges that; `between(n)` runs
    after run n."""
    outcomes = []
    expected_counts = []
    for n, batch in enumerate(batches):
        extra = list((options or {}).get(n, ()))
        if "ndjson" in extra:
            extra.remove("ndjson")
            source = ["--fixes", write_ndjson(folder / f"fixes{n}.ndjson", batch)]
        elif "inbox" in extra:
            extra.remove("inbox")
            fill_inbox(db, batch)
            source = []
        else:
            source = ["--fixes", write_fixes(folder / f"fixes{n}.csv", batch)]
        out = folder / f"out{n}.csv"
        gf("judge", db, *source, "--out", out, "--quiet", *extra)
        results, counts = model.judge_batch(batch)
        outcomes.extend(results)
        expected = sorted((n for r in results if r.status == "judged" for n in r.notifications), key=lambda n: n.key())
        compare_notifications(f"seed {scn.seed}, run {n + 1} of {len(batches)} (--out)",
                              [as_tuple(x) for x in expected], read_out(out), outcomes)
        compare_state(model, db, outcomes)
        expected_counts.append((counts.fixes, counts.judged, counts.stale, counts.invalid, counts.transitions,
                                counts.notifications, counts.filtered))
        if between:
            between(n)
    return outcomes, expected_counts


def canonical(note):
    """§5's order of a notification tuple: subject, time, area_id,
    condition_id (ids by their UTF-8 bytes, §8 "Ids")."""
    return note[0].encode(), note[1], note[2].encode(), note[3]


def compare_whole(seed, model, db, outcomes, counts):
    """After the last run: the state, every notification in
    gf_notifications, and each run's counts in gf_runs."""
    real = compare_state(model, db, outcomes)
    expected = sorted((as_tuple(n) for o in outcomes if o.status == "judged" for n in o.notifications), key=canonical)
    compare_notifications(f"seed {seed}: gf_notifications", expected, sorted(real["notes"], key=canonical), outcomes)
    assert real["runs"] == counts, ("gf_runs (fixes, judged, stale, invalid, transitions, notifications, filtered):"
                                    f" engine {real['runs']} model {counts}")


@pytest.mark.parametrize("seed", SEEDS)
def test_one_run(seed, tmp_path_factory, tmp_path):
    """The whole file as one `geofence judge` run: sorted by time (§2), so
    only equal times are stale."""
    scn, built = scenario(seed, tmp_path_factory)
    db = copy_catalog(built, tmp_path)
    model = new_model(scn)
    outcomes, counts = judge_runs(scn, db, tmp_path, [scn.fixes], model)
    assert not model.ambiguous, f"the scenario placed a fix the model cannot decide: {model.ambiguous[:3]}"
    compare_whole(seed, model, db, outcomes, counts)


class CatalogChanges:
    """What a user changes between runs (§7), in the catalog and the model
    alike: after run 1, DWELL conditions added to areas (a stay under way
    meets its new DWELL at its next fix) and an IN condition removed; after
    run 2, one subject reset (its next fix is not stale, its stays start
    afresh, its suppressions are lifted)."""

    def __init__(self, scn, db, model, rng):
        self.scn, self.db, self.model, self.rng = scn, db, model, rng

    def __call__(self, n):
        """The changes after run n (0-based)."""
        rng, model = self.rng, self.model
        if n == 0:
            for i, area in enumerate(rng.sample(self.scn.areas, 4)):
                cond = Condition(900 + i, area.area_id, "DWELL", rng.choice((0, 600, 3600)),
                                 weekdays=("Mon", "Tue", "Wed", "Thu", "Fri") if i == 3 else None)
                options = ["--id", str(cond.condition_id), "--area", cond.area_id, "--timing", "DWELL",
                           "--dwell-s", str(cond.dwell_s)]
                if cond.weekdays:
                    options += ["--weekdays", ",".join(cond.weekdays)]
                gf("conditions", "add", self.db, *options)
                model.add_condition(cond)
            gone = rng.choice([c for c in self.scn.conditions if c.timing == "IN"])
            gf("conditions", "remove", self.db, str(gone.condition_id))
            model.remove_condition(gone.condition_id)
        elif n == 1:
            inside = sorted({s for (s, _), stay in model.stays.items() if stay.state == "INSIDE"})
            subject = rng.choice(inside or sorted(model.subjects))
            gf("reset", self.db, "--subject", subject)
            model.reset(subject)


@pytest.mark.parametrize("seed", SEEDS)
def test_three_runs(seed, tmp_path_factory, tmp_path):
    """The file cut in three runs (CSV; NDJSON on one thread; the gf_fixes
    inbox), with the catalog changed between them: rows that moved across a
    cut are stale (§2), state carries over (§4)."""
    scn, built = scenario(seed, tmp_path_factory)
    db = copy_catalog(built, tmp_path)
    model = new_model(scn)
    rng = random.Random(seed + 1)
    cuts = sorted(rng.sample(range(1, len(scn.fixes)), 2))
    batches = [scn.fixes[:cuts[0]], scn.fixes[cuts[0]:cuts[1]], scn.fixes[cuts[1]:]]
    between = CatalogChanges(scn, db, model, rng)
    options = {1: ("ndjson", "--threads", "1"), 2: ("inbox",)}
    outcomes, counts = judge_runs(scn, db, tmp_path, batches, model, options=options, between=between)
    compare_whole(seed, model, db, outcomes, counts)


@pytest.mark.parametrize("seed", SEEDS)
def test_fix_by_fix(seed, tmp_path_factory, tmp_path):
    """gf_check fix by fix in file order (rows out of time order are stale
    here). For the first seed, 4,200 passers-by, far from every area, come
    between the halves: more subjects than a connection keeps in its cache
    (docs/behaviour.md §8), so the walkers' state must come back from the
    database (§4)."""
    scn, built = scenario(seed, tmp_path_factory)
    db = copy_catalog(built, tmp_path)
    model = new_model(scn)
    fixes = list(scn.fixes)
    half = len(fixes) // 2
    if seed == SEEDS[0]:
        rng = random.Random(seed)
        passers = [Fix(f"passer-{i:04d}", stored_time(START + i * 1_000_000), repr(round(rng.uniform(0, 30), 5)),
                       repr(round(rng.uniform(-150, -130), 5)), "10") for i in range(4200)]
        model.prime([(float(f.lat), float(f.lon)) for f in passers])
        fixes[half:half] = passers
    answers = check_fix_by_fix(db, fixes, tmp_path, begin_at=len(fixes) - half // 2)
    outcomes = []
    for fix, answer in zip(fixes, answers):
        (result,), _ = model.judge_batch([fix])
        outcomes.append(result)
        if result.status == "invalid":
            assert "error" in answer, f"gf_check took the invalid fix {fix} ({result.reason}): {answer}"
            continue
        assert "ok" in answer, f"gf_check refused the valid fix {fix}: {answer}"
        got = [(n["subject_id"], parse_time(n["ts"]), n["area_id"], n["condition_id"], n["transition"],
                n["lat"], n["lon"], n["accuracy_m"]) for n in answer["ok"]]
        want = [as_tuple(n) for n in result.notifications]
        compare_notifications(f"seed {seed}: gf_check of {fix}", want, got, outcomes)
    compare_state(model, db, outcomes)


def test_polygon_distance_bound():
    """The model's flat-frame polygon distance is within its error bound of
    a brute-force geodesic minimum, on this suite's own shapes and places."""
    scn = scenario_only(SEEDS[0])
    rng = random.Random(5)
    polygons = [a.shape for a in scn.areas if isinstance(a.shape, PolygonArea)]
    for shape in polygons[:6]:
        lat0, lon0 = shape.lat0, shape.lon0
        lats = [lat0 + rng.uniform(-0.03, 0.03) for _ in range(3)]
        lons = [wrap(lon0 + rng.uniform(-0.03, 0.03)) for _ in range(3)]
        d, bound = shape.signed_distances(lats, lons)
        for lat, lon, di, bi in zip(lats, lons, d, bound):
            exact = shape.exact_signed_distance(lat, lon)
            assert abs(exact - di) <= bi, (lat, lon, exact, di, bi)


def decidable_fixes(fixes, areas, confidence):
    """The fixes whose every verdict on these areas the model can decide
    (invalid fixes are kept: they have no verdict)."""
    valid = [(f, validate(f)) for f in fixes if Scenario.valid(f)]
    ok = clear_of_thresholds(areas, confidence, [(lat, lon, acc) for _, (_, lat, lon, acc) in valid])
    refused = {id(f) for (f, _), fine in zip(valid, ok) if not fine}
    return [f for f in fixes if id(f) not in refused]


def filler(scn, rng, count):
    """Many small circles in the scenario's clusters, each with an IN and an
    OUT condition: a catalog far larger than a run of a few fixes."""
    areas, conditions, features = [], [], []
    for i in range(count):
        _, clat, clon = CLUSTERS[i % len(CLUSTERS)]
        if clon == 180.0:
            clon = rng.choice((1, -1)) * 179.98
        lon, lat, _ = GEOD.fwd(clon, clat, rng.uniform(0, 360), rng.uniform(0, 2500))
        shape = Circle(round(lat, 6), round(wrap(lon), 6), float(rng.choice((60, 120, 250))))
        area = Area(f"filler-{i:03d}", shape, in_confirm_count=rng.choice((1, 1, 2)),
                    in_accuracy_max_m=rng.choice((None, 50)))
        areas.append(area)
        props = {"area_id": area.area_id, "radius_m": shape.radius_m, "in_confirm_count": area.in_confirm_count}
        if area.in_accuracy_max_m is not None:
            props["in_accuracy_max_m"] = area.in_accuracy_max_m
        features.append({"type": "Feature", "properties": props, "geometry": shape.geojson()})
        conditions += [Condition(1000 + 2 * i, area.area_id, "IN"), Condition(1001 + 2 * i, area.area_id, "OUT")]
    return areas, conditions, features


def test_small_runs(tmp_path_factory, tmp_path):
    """Runs of one to six fixes, and `geofence check` fix by fix, against a
    catalog of some 600 areas (where an engine may ask its spatial index for
    each fix rather than prepare every area), give the model's answers."""
    seed = SEEDS[1]
    scn, built = scenario(seed, tmp_path_factory)
    db = copy_catalog(built, tmp_path)
    rng = random.Random(seed * 3)
    areas, conditions, features = filler(scn, rng, 600)
    gf("import", db, write_collection(tmp_path / "filler.geojson", features))
    with open(tmp_path / "filler.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition_id", "area_id", "timing"])
        w.writerows([c.condition_id, c.area_id, c.timing] for c in conditions)
    gf("conditions", "import", db, tmp_path / "filler.csv")
    chosen = set(rng.sample(sorted({f.subject_id for f in scn.fixes}), 4))
    fixes = decidable_fixes([f for f in scn.fixes if f.subject_id in chosen], areas, scn.confidence)
    model = Model(scn.areas + areas, scn.conditions + conditions, scn.default_timezone, scn.default_confidence,
                  scn.distances)
    model.prime([validate(f)[1:3] for f in fixes if Scenario.valid(f)])
    outcomes = []
    position = 0
    while position < 25:
        size = rng.randint(1, 6)
        batch = fixes[position:position + size]
        position += size
        outcomes += judge_runs(scn, db, tmp_path, [batch], model)[0]
    for fix in fixes[position:position + 6]:
        (result,), _ = model.judge_batch([fix])
        outcomes.append(result)
        p = gf("check", db, "--subject", fix.subject_id, "--lat", fix.lat, "--lon", fix.lon, "--accuracy",
               fix.accuracy_m, "--time", fix.ts, "--json", check=False)
        if result.status == "invalid":
            assert p.returncode != 0, f"geofence check took the invalid fix {fix} ({result.reason})"
            continue
        assert p.returncode == 0, f"geofence check refused {fix}: {p.stderr}"
        got = [(n["subject_id"], parse_time(n["ts"]), n["area_id"], n["condition_id"], n["transition"],
                n["lat"], n["lon"], n["accuracy_m"]) for n in json.loads(p.stdout)]
        compare_notifications(f"seed {seed}: geofence check of {fix}", [as_tuple(n) for n in result.notifications],
                              got, outcomes)
    outcomes += judge_runs(scn, db, tmp_path, [fixes[position + 6:]], model)[0]
    assert not model.ambiguous, f"a fix the model cannot decide: {model.ambiguous[:3]}"
    compare_state(model, db, outcomes)
    filler_notes = [n for o in outcomes for n in o.notifications if n.area_id.startswith("filler")]
    assert len(filler_notes) >= 5, "the filler areas should be met"
