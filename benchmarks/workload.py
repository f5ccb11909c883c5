"""Deterministic workloads for the benchmarks: a city-like catalog of fences
(dense centre, sparse suburbs, 50 m – 2 km across, polygons of 3–200 vertices
some with holes, multipolygons, circles) over a 300 km × 300 km region, and
fixes as random-walk tracks of many subjects with realistic accuracy."""
import json
import math
import random

CENTRE = (139.767, 35.681)          # Tokyo Station
HALF_SPAN_KM = 150.0
KM_PER_DEG_LAT = 110.95
KM_PER_DEG_LON = 111.32 * math.cos(math.radians(CENTRE[1]))


def city_point(rng):
    """Dense centre, sparse suburbs: radius from an exponential, clipped to the region."""
    while True:
        r = rng.expovariate(1 / 20.0)   # km, mean 20
        if r <= HALF_SPAN_KM:
            a = rng.uniform(0, 2 * math.pi)
            return CENTRE[0] + r * math.cos(a) / KM_PER_DEG_LON, CENTRE[1] + r * math.sin(a) / KM_PER_DEG_LAT


def ring(lon, lat, radius_m, n, rng, reverse=False):
    # Jittered even angles: every gap below π, so the star is simple.
    angles = [2 * math.pi * (k + rng.uniform(0, 0.8)) / n for k in range(n)]
    if reverse:
        angles.reverse()
    pts = []
    for a in angles:
        r = radius_m * rng.uniform(0.55, 1)   # one radius per vertex: star-shaped, so simple
        pts.append([round(lon + r * math.cos(a) / (KM_PER_DEG_LON * 1000), 7),
                    round(lat + r * math.sin(a) / (KM_PER_DEG_LAT * 1000), 7)])
    pts.append(pts[0])
    return pts


def fence(i, rng, point=city_point):
    """One fence around `point(rng)` (the city's by default)."""
    lon, lat = point(rng)
    radius = math.exp(rng.uniform(math.log(25), math.log(1000)))   # 50 m – 2 km across
    kind = rng.random()
    props = {"area_id": f"F{i:07d}"}
    if kind < 0.25:
        props["radius_m"] = round(radius, 1)
        geometry = {"type": "Point", "coordinates": [lon, lat]}
    elif kind < 0.35:
        parts = []
        for k in range(2):
            parts.append([ring(lon + k * 2.5 * radius / (KM_PER_DEG_LON * 1000), lat, radius, rng.randint(3, 40), rng)])
        geometry = {"type": "MultiPolygon", "coordinates": parts}
    else:
        n = min(200, max(3, int(rng.lognormvariate(2.5, 0.9))))
        rings = [ring(lon, lat, radius, n, rng)]
        if rng.random() < 0.2 and n >= 8:
            rings.append(ring(lon, lat, radius * 0.3, 8, rng, reverse=True))
        geometry = {"type": "Polygon", "coordinates": rings}
    return {"type": "Feature", "properties": props, "geometry": geometry}


def write_collection(path, features):
    """Streams `features` into a GeoJSON FeatureCollection, one feature a line
    (every generator's fences.geojson)."""
    with open(path, "w") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        for i, feature in enumerate(features):
            if i:
                f.write(",\n")
            f.write(json.dumps(feature, separators=(",", ":")))
        f.write("\n]}\n")


def read_features(path):
    """The features of a GeoJSON FeatureCollection, without reading the file
    whole when it has a feature a line (as write_collection and GDAL's
    ogr2ogr write them, with or without spaces after the colons); any other
    layout (a feature over several lines) is read whole. A file with no
    feature at all is an error, not an empty catalog."""
    found = 0
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not (line.startswith("{") and '"Feature"' in line):
                continue
            try:
                feature = json.loads(line)
            except ValueError:
                continue        # the collection's opening line
            if isinstance(feature, dict) and feature.get("type") == "Feature":
                found += 1
                yield feature
    if found == 0:
        with open(path) as f:
            features = json.load(f).get("features") or []
        if not features:
            raise SystemExit(f"{path}: no GeoJSON feature found")
        yield from features


def write_fixes_csv(path, rows):
    """The fixes as judge reads them: subject_id, ts, lat, lon, accuracy_m."""
    import csv
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(rows)


def write_fences(path, count, seed=1, point=city_point):
    rng = random.Random(seed)
    write_collection(path, (fence(i, rng, point) for i in range(count)))


def accuracy(rng):
    """Mostly 3–50 m, with a tail to 1,000 m."""
    if rng.random() < 0.9:
        return round(rng.uniform(3, 50), 1)
    return round(math.exp(rng.uniform(math.log(50), math.log(1000))), 1)


def fixes(count, subjects, seed=2, point=city_point):
    """Random-walk tracks, walking (1.4 m/s) or driving (12 m/s), a fix every 10–60 s,
    interleaved by time, each starting at `point(rng)`. Yields (subject_id,
    unix_ts, lat, lon, accuracy_m)."""
    rng = random.Random(seed)
    state = []
    for s in range(subjects):
        lon, lat = point(rng)
        speed = 1.4 if rng.random() < 0.7 else 12.0
        state.append([lon, lat, rng.uniform(0, 2 * math.pi), speed, 1_763_600_000 + rng.uniform(0, 600)])
    per = count // subjects
    for step in range(per):
        for s in range(subjects):
            lon, lat, heading, speed, t = state[s]
            dt = rng.uniform(10, 60)
            heading += rng.gauss(0, 0.5)
            dist = speed * dt
            lon += dist * math.cos(heading) / (KM_PER_DEG_LON * 1000)
            lat += dist * math.sin(heading) / (KM_PER_DEG_LAT * 1000)
            t += dt
            state[s] = [lon, lat, heading, speed, t]
            yield (f"S{s:05d}", round(t, 3), round(lat, 7), round(lon, 7), accuracy(rng))
