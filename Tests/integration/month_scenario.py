"""A month of daily fixes for test_month_of_operation.py and its fixture
(Tests/fixtures/month/make.py): the areas and conditions of the catalog
versions' fixtures (a polygon, a multipolygon, a circle with confirmation
counts; IN suppressed for a day, DWELL suppressed for two, a weekday window
in Asia/Tokyo), 40 subjects each moving between those places through every
day of November 2026, some staying inside across midnight.

    rows = day_rows(7)            # day 7's fixes: [subject_id, ts, lat, lon, accuracy_m], time order
    write_day(folder, 7)          # folder/day07.csv, the file a daily run judges

The rows depend only on the day's number (a seeded random.Random), so the
fixture's old build and this build judge the same bytes."""
import csv
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AREAS = FIXTURES / "catalog_versions" / "areas.geojson"
CONDITIONS = FIXTURES / "catalog_versions" / "conditions.csv"
DAYS = 30
SUBJECTS = [f"dev-{n:02d}" for n in range(40)]
HEAD = ["subject_id", "ts", "lat", "lon", "accuracy_m"]
# Where a subject can be: (lat, lon, accuracy_m); "far" is outside every area.
PLACES = {"far": (35.670, 139.690, 10), "P": (35.685, 139.705, 10), "Pcoarse": (35.686, 139.706, 300),
          "M1": (35.6825, 139.7225, 10), "M2": (35.6825, 139.7325, 10), "C": (35.700, 139.750, 10)}
FIRST = datetime(2026, 11, 1, tzinfo=timezone.utc)


def day_rows(day):
    """Day `day`'s (1-based) fixes of every subject, ordered by time then
    subject: each subject reports every 3–9 minutes for part of the day,
    hopping between places and staying a while at each."""
    rng = random.Random(4000 + day)
    rows = []
    for subject in SUBJECTS:
        t = FIRST + timedelta(days=day - 1, minutes=rng.randrange(0, 600))
        end = t + timedelta(hours=rng.randrange(2, 14))
        place = rng.choice(list(PLACES))
        while t < end:
            if rng.random() < 0.2:
                place = rng.choice(list(PLACES))
            lat, lon, acc = PLACES[place]
            rows.append([subject, t.strftime("%Y-%m-%dT%H:%M:%SZ"), lat, lon, acc])
            t += timedelta(minutes=rng.randrange(3, 10))
    rows.sort(key=lambda r: (r[1], r[0]))
    return rows


def day_name(day):
    return f"day{day:02d}.csv"


def write_day(folder, day):
    """Writes day `day`'s fixes as folder/dayNN.csv and returns its path."""
    path = Path(folder) / day_name(day)
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEAD)
        w.writerows(day_rows(day))
    return path


def day_start(day):
    """The first instant (UTC) of day `day`, as an ISO text."""
    return (FIRST + timedelta(days=day - 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
