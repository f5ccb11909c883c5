"""A country-sized workload (issue 22): the city workload's fences
(workload.py: the same shapes, sizes and kinds) at its density, spread over
ten times its area: ten cities of different sizes, each a dense centre and
sparse suburbs as workload.py's one city, over a region of 950 km x 950 km,
and a tenth of the fences scattered over the country between them. Fixes are
workload.py's random walks, each subject starting in a city (by its share)
or, one in ten, in the country.

    python benchmarks/workload3.py OUT_DIR [--fences 1000000] [--fixes 1000000] [--subjects 1000]

writes OUT_DIR/fences.geojson and fixes.csv."""
import argparse
import math
from pathlib import Path

import workload

HALF_SPAN_KM = 475.0   # 950 km across: ten times the city workload's 300 km x 300 km
# (east km, north km from workload.CENTRE, share of the fences); the shares of
# the cities sum to 0.9, the country takes the rest.
CITIES = [(0, 0, 0.20), (-300, -120, 0.14), (-420, -200, 0.11), (250, 300, 0.09), (-150, 250, 0.08),
          (380, -100, 0.07), (100, -350, 0.06), (-350, 350, 0.05), (420, 380, 0.05), (-50, -420, 0.05)]
COUNTRY_SHARE = 1 - sum(c[2] for c in CITIES)


def at_km(east, north):
    return (workload.CENTRE[0] + east / workload.KM_PER_DEG_LON, workload.CENTRE[1] + north / workload.KM_PER_DEG_LAT)


def point(rng):
    """A city (by share; its suburbs' mean radius grows with the square root of
    its share, 20 km for a tenth, so every city is about as dense as
    workload.py's), or anywhere in the region."""
    u = rng.random()
    acc = 0.0
    for east, north, share in CITIES:
        acc += share
        if u < acc:
            mean_km = 20.0 * math.sqrt(share / 0.1)
            r = min(rng.expovariate(1 / mean_km), 6 * mean_km)
            a = rng.uniform(0, 2 * math.pi)
            east, north = east + r * math.cos(a), north + r * math.sin(a)
            break
    else:
        east, north = rng.uniform(-HALF_SPAN_KM, HALF_SPAN_KM), rng.uniform(-HALF_SPAN_KM, HALF_SPAN_KM)
    east = max(-HALF_SPAN_KM, min(HALF_SPAN_KM, east))
    north = max(-HALF_SPAN_KM, min(HALF_SPAN_KM, north))
    return at_km(east, north)


def write_fences(path, count, seed=21):
    workload.write_fences(path, count, seed=seed, point=point)


def fixes(count, subjects, seed=22):
    return workload.fixes(count, subjects, seed=seed, point=point)


def write_fixes(path, count, subjects, seed=22):
    workload.write_fixes_csv(path, fixes(count, subjects, seed))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--fences", type=int, default=1_000_000)
    ap.add_argument("--fixes", type=int, default=1_000_000)
    ap.add_argument("--subjects", type=int, default=1000)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    write_fences(a.out / "fences.geojson", a.fences)
    write_fixes(a.out / "fixes.csv", a.fixes, a.subjects)


if __name__ == "__main__":
    main()
