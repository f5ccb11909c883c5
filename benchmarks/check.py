"""A single checkLocation (`gf_check`) on a warm catalog: p50 and p99 latency.

    .venv-test/bin/python benchmarks/check.py DB            # any judged or fresh engine database
    .venv-test/bin/python benchmarks/check.py DB --calls 3000

One subject walks from a point of the workload's dense centre (Gaussian steps
of ~20 m, the workload's accuracies), one `gf_check` per fix, timed from
Python around the statement: autocommit (a commit per call) and inside one
transaction. The first 200 calls warm the session (statements, prepared
areas) and are not counted. `suite.py` runs this as its step 4.
"""
import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workload  # noqa: E402
from containment import connect  # noqa: E402


def latencies(db, label, calls=3000):
    conn = connect(db)
    conn.execute("PRAGMA cache_size = -262144")
    rng = random.Random(9)
    lon, lat = workload.city_point(rng)
    fixes = []
    t0 = 1_900_000_000
    for k in range(calls):
        lon += rng.gauss(0, 0.0002); lat += rng.gauss(0, 0.0002)
        fixes.append((f"probe-{label}", t0 + k * 10, lat, lon, workload.accuracy(rng)))
    result = {}
    for mode in ("autocommit", "in one transaction"):
        conn.execute("DELETE FROM gf_subjects WHERE subject_id = ?", (fixes[0][0],))
        conn.execute("DELETE FROM gf_stays WHERE subject_id = ?", (fixes[0][0],))
        conn.commit()
        if mode != "autocommit":
            conn.execute("BEGIN")
        out = []
        for c in fixes:
            c = (c[0], c[1] + (0 if mode == "autocommit" else 100_000), *c[2:])
            t = time.perf_counter()
            conn.execute("SELECT gf_check(?, ?, ?, ?, ?)", c).fetchone()
            if mode == "autocommit":
                conn.commit()
            out.append(time.perf_counter() - t)
        if mode != "autocommit":
            conn.commit()
        out = sorted(out[200:])        # the first calls warm the session
        result[mode] = {"p50_us": out[len(out) // 2] * 1e6, "p99_us": out[int(len(out) * 0.99)] * 1e6}
    conn.close()
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db")
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--label", default="check")
    a = ap.parse_args()
    for mode, v in latencies(a.db, a.label, a.calls).items():
        print(f"gf_check, {mode}: p50 {v['p50_us']:.0f} µs, p99 {v['p99_us']:.0f} µs")
