"""gf_check's calls in one transaction begun by a deferred `BEGIN` and by
`BEGIN IMMEDIATE`, alternating, three rounds each, on fresh copies of
WORK/cond.db (as check_targets.py makes it), with check_targets.py's `tuned`
connection. Inside `BEGIN IMMEDIATE` the first call finds a write
transaction already open, so the session cannot tell that nothing is
pending and trusts no dictionary key for the transaction (RunOutput.begin):
this measures what that costs.

    .venv-test/bin/python benchmarks/check_begin.py WORK [--dist dist] [--calls 40000]
"""
import argparse
import csv
import shutil
import sqlite3
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seconds(work, lib, calls, begin):
    db = work / "check-begin.db"
    shutil.copy(work / "cond.db", db)
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(lib))
    c.execute("PRAGMA temp_store = MEMORY")
    c.execute("PRAGMA cache_size = -65536")
    t = time.perf_counter()
    c.execute(begin)
    for call in calls:
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", call).fetchall()
    c.execute("COMMIT")
    took = time.perf_counter() - t
    c.close()
    db.unlink()
    return took


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("work", type=Path)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--calls", type=int, default=40_000)
    a = ap.parse_args()
    with (a.work / "fixes.csv").open() as f:
        calls = [(r["subject_id"], r["ts"], float(r["lat"]), float(r["lon"]), float(r["accuracy_m"])) for r in csv.DictReader(f)]
    calls = calls[:a.calls]
    times = {"BEGIN": [], "BEGIN IMMEDIATE": []}
    for _ in range(3):
        for begin in times:
            times[begin].append(seconds(a.work, a.dist / "libgeofence", calls, begin))
    for begin, t in times.items():
        print(f"{begin}: {' '.join(f'{x:.3f}' for x in t)}; median {statistics.median(t):.3f} s for {len(calls):,} calls")
