"""A second deterministic workload, shaped unlike workload.py: fences over
three cities (Tokyo, Nagoya, Osaka) and the country between them, numeric
area ids, and 1,000 subjects who mostly move around their home city (some
ride between cities), each fix with an ISO 8601 time carrying an offset
(+09:00 or the same instant written in UTC or -05:00). Conditions: the
default IN and OUT of `import --with-default-conditions`, plus, on 10 % of
areas, a filtered IN (weekdays and a time window) and a DWELL.

    python benchmarks/workload2.py OUT_DIR [--fences 100000] [--fixes 1000000] [--subjects 1000]

writes OUT_DIR/fences.geojson, conditions.csv (the extra conditions) and fixes.csv."""
import argparse
import csv
import datetime
import math
import random
from pathlib import Path

import workload

# (lon, lat, share of the fences, spread in km)
CITIES = [(139.767, 35.681, 0.40, 12.0), (136.882, 35.171, 0.22, 8.0), (135.496, 34.702, 0.28, 10.0)]
COUNTRY_SHARE = 0.10          # the rest: along and around the corridor between them
KM_PER_DEG_LAT = 110.95


def km_per_deg_lon(lat):
    return 111.32 * math.cos(math.radians(lat))


def city_point(rng, city):
    lon, lat, _, spread = city
    r = min(rng.expovariate(1 / spread), 6 * spread)
    a = rng.uniform(0, 2 * math.pi)
    return lon + r * math.cos(a) / km_per_deg_lon(lat), lat + r * math.sin(a) / KM_PER_DEG_LAT


def country_point(rng):
    """Somewhere within ~40 km of the line Osaka – Nagoya – Tokyo."""
    k = rng.randrange(2)
    (lon0, lat0, _, _), (lon1, lat1, _, _) = CITIES[2 - k], CITIES[1 - k]
    t = rng.random()
    lon, lat = lon0 + t * (lon1 - lon0), lat0 + t * (lat1 - lat0)
    off = rng.gauss(0, 15)
    return lon + off * 0.6 / km_per_deg_lon(lat), lat + off * 0.8 / KM_PER_DEG_LAT


def polygon(lon, lat, radius_m, n, rng):
    """A convex-ish polygon (regular with jitter), counter-clockwise."""
    pts = []
    for k in range(n):
        a = 2 * math.pi * (k + rng.uniform(-0.3, 0.3)) / n
        r = radius_m * rng.uniform(0.8, 1)
        pts.append([round(lon + r * math.cos(a) / (km_per_deg_lon(lat) * 1000), 7),
                    round(lat + r * math.sin(a) / (KM_PER_DEG_LAT * 1000), 7)])
    pts.append(pts[0])
    return pts


def fence(i, rng):
    u = rng.random()
    acc = 0.0
    for city in CITIES:
        acc += city[2]
        if u < acc:
            lon, lat = city_point(rng, city)
            radius = math.exp(rng.uniform(math.log(30), math.log(600)))   # shops, stations, blocks
            break
    else:
        lon, lat = country_point(rng)
        radius = math.exp(rng.uniform(math.log(200), math.log(3000)))   # towns, parks, sites
    props = {"area_id": 100000 + i, "name": f"site {i}"}
    if rng.random() < 0.3:
        props["radius_m"] = round(radius, 1)
        geometry = {"type": "Point", "coordinates": [round(lon, 7), round(lat, 7)]}
    else:
        geometry = {"type": "Polygon", "coordinates": [polygon(lon, lat, radius, rng.choice([4, 5, 6, 8, 12, 24]), rng)]}
    if rng.random() < 0.2:
        props["in_confirm_count"] = 2
    return {"type": "Feature", "properties": props, "geometry": geometry}


def write_fences(path, count, seed=11):
    rng = random.Random(seed)
    workload.write_collection(path, (fence(i, rng) for i in range(count)))


def write_conditions(path, area_ids, first_id, share=0.10, seed=12):
    """On `share` of the areas: an IN on weekdays 08:00–20:00 (Asia/Tokyo) and a
    DWELL of 5–30 minutes. Ids from `first_id` (after the default conditions)."""
    rng = random.Random(seed)
    cid = first_id
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition_id", "area_id", "timing", "dwell_s", "weekdays", "start_time", "end_time", "start_date", "end_date",
                    "renotify_suppress_days", "timezone"])
        for a in area_ids:
            if rng.random() < share:
                w.writerow([cid, a, "IN", "", "Mon,Tue,Wed,Thu,Fri", "08:00", "20:00", "", "", "", "Asia/Tokyo"]); cid += 1
                w.writerow([cid, a, "DWELL", rng.choice([300, 600, 1800]), "", "", "", "", "", "", ""]); cid += 1
    return cid - first_id


TZ = [datetime.timezone(datetime.timedelta(hours=9)), datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=-5))]


def fixes(count, subjects, seed=13):
    """Yields (subject_id, iso_ts, lat, lon, accuracy_m), interleaved in time.
    Subjects live in a city (by its share), walk (70 %) or drive; 3 % ride a
    train between cities at ~70 m/s."""
    rng = random.Random(seed)
    state = []
    shares = [c[2] for c in CITIES]
    for s in range(subjects):
        city = rng.choices(CITIES, weights=shares)[0]
        lon, lat = city_point(rng, city)
        kind = rng.random()
        speed = 70.0 if kind < 0.03 else (1.4 if kind < 0.73 else 11.0)
        state.append([lon, lat, rng.uniform(0, 2 * math.pi), speed, 1_795_000_000 + rng.uniform(0, 300), rng.randrange(3)])
    per = count // subjects
    for step in range(per):
        for s in range(subjects):
            lon, lat, heading, speed, t, tz = state[s]
            dt = rng.uniform(5, 30)
            if speed == 70.0:
                # Along the corridor, turning back at its ends.
                target = CITIES[0] if math.cos(heading) > 0 else CITIES[2]
                heading = math.atan2(target[1] - lat, (target[0] - lon) * math.cos(math.radians(lat))) if rng.random() < 0.05 else heading
                if abs(lon - target[0]) < 0.05:
                    heading += math.pi
            else:
                heading += rng.gauss(0, 0.4)
            d = speed * dt
            lon += d * math.cos(heading) / (km_per_deg_lon(lat) * 1000)
            lat += d * math.sin(heading) / (KM_PER_DEG_LAT * 1000)
            t += dt
            state[s] = [lon, lat, heading, speed, t, tz]
            acc = round(rng.uniform(3, 30), 1) if rng.random() < 0.9 else round(math.exp(rng.uniform(math.log(30), math.log(800))), 1)
            when = datetime.datetime.fromtimestamp(round(t, 3), TZ[tz]).isoformat(timespec="milliseconds")
            yield (f"u{s:04d}", when, round(lat, 7), round(lon, 7), acc)


def write_fixes(path, count, subjects):
    workload.write_fixes_csv(path, fixes(count, subjects))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--fences", type=int, default=100_000)
    ap.add_argument("--fixes", type=int, default=1_000_000)
    ap.add_argument("--subjects", type=int, default=1000)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    write_fences(a.out / "fences.geojson", a.fences)
    # Default conditions are numbered 1 … 2 × fences; these follow.
    write_conditions(a.out / "conditions.csv", [str(100000 + i) for i in range(a.fences)], 2 * a.fences + 1)
    write_fixes(a.out / "fixes.csv", a.fixes, a.subjects)


if __name__ == "__main__":
    main()
