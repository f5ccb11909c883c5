"""Where gf_check's slowest calls come from: the first --calls fixes of
WORK/fixes.csv checked one call at a time in one transaction (tuned, as
check_targets.py does) on a fresh copy of WORK/cond.db and then of
WORK/plain.db, each call's time taken; then the p50/p90/p99 of the calls
in windows of the stream (a session warms up: areas met for the first time,
the index read whole), and of the calls grouped by how many notifications
they return, with the same calls' time without conditions beside.

    .venv-test/bin/python benchmarks/check_tail.py WORK [--dist dist] [--calls 40000] [--windows 4000,40000,80000]

WORK as check_targets.py makes it (run that first: it builds cond.db and
plain.db). One run each, one after the other: a drifting machine moves
both; read the shape, not the microseconds.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_targets as ct  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def timed(work, which, calls, dist):
    """(microseconds, notifications) of each call on a fresh copy of WORK/which.db, timed as check_targets.py times them."""
    run = ct.Calls(work, work / f"{which}.db", dist, "tuned", f"tail-{which}")
    run.block(calls)
    out = [(t * 1e6, len(json.loads(r))) for t, r in zip(run.times, run.results)]
    run.commit()
    ct.removed(run.db)
    return out


def quantiles(values):
    v = sorted(values)
    return tuple(v[min(len(v) - 1, int(len(v) * q))] for q in (0.5, 0.9, 0.99))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--calls", type=int, default=40_000)
    ap.add_argument("--windows", default="", help="where the stream's windows start (default: its tenths)")
    a = ap.parse_args()
    calls = ct.read_calls(a.work / "fixes.csv", a.calls)
    cond, plain = timed(a.work, "cond", calls, a.dist), timed(a.work, "plain", calls, a.dist)
    n = len(calls)
    starts = [int(x) for x in a.windows.split(",")] if a.windows else [n * k // 10 for k in range(1, 10)]
    print("| calls | with: p50 / p90 / p99 µs | without | notifications |\n|---|---:|---:|---:|")
    for lo, hi in zip(starts, starts[1:] + [n]):
        if lo >= hi:
            continue
        w, wo = quantiles(c[0] for c in cond[lo:hi]), quantiles(p[0] for p in plain[lo:hi])
        print(f"| {lo:,}–{hi:,} | {w[0]:.0f} / {w[1]:.0f} / {w[2]:.0f} | {wo[0]:.0f} / {wo[1]:.0f} / {wo[2]:.0f} "
              f"| {sum(c[1] for c in cond[lo:hi]):,} |")
    counted = range(n // 10, n)   # the first tenth warms the session up, as check_targets.py leaves it out
    print("\n| notifications a call | calls | with: p50 µs | without: p50 µs | with − without: p50 / p90 µs |\n|---:|---:|---:|---:|---:|")
    groups = {}
    for i in counted:
        groups.setdefault(min(cond[i][1], 10), []).append(i)
    for k in sorted(groups):
        ix = groups[k]
        d = quantiles(cond[i][0] - plain[i][0] for i in ix)
        print(f"| {k}{'+' if k == 10 else ''} | {len(ix):,} | {quantiles(cond[i][0] for i in ix)[0]:.0f} "
              f"| {quantiles(plain[i][0] for i in ix)[0]:.0f} | {d[0]:.0f} / {d[1]:.0f} |")


if __name__ == "__main__":
    main()
