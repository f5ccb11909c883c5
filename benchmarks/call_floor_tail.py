"""The tail of gf_check's floor: SQLite alone writing, one call at a time,
what each call of a stream writes that the issue counts (the subject's
record and the call's notifications as narrow rows with their index), and
the p50 and p99 of those per-call times, beside the engine's p99 that
check_targets.py reports for the same calls.

    .venv-test/bin/python benchmarks/call_floor_tail.py WORK [--dist dist] [--calls 20000] [--rounds 2]

WORK is a folder as check_targets.py takes it (its cond.db made there). A
first pass of the calls on a copy of cond.db finds each call's rows
(check_targets.first_pass); then each round writes them with Python's
sqlite3 into an empty floor table in one transaction, WAL, a 64 MiB cache
(as the engine's tuned runs), timing each call's record upsert and
`executemany` of its rows, the first tenth of the calls not counted (as
check_targets.py). A call that must notify 190 subjects' transitions costs
SQLite alone what it costs, whatever the engine does: when the floor's p99
is near the engine's target, the target is at the floor.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import check_targets as ct  # noqa: E402


def round_times(w, calls, per_call, record_bytes):
    """One call's floor seconds each, in call order."""
    floor = ct.Floor(w, record_bytes)
    floor.c.execute("PRAGMA cache_size = -65536")
    for call, rows in zip(calls, per_call):
        floor.block([call], rows)
    times = floor.times[:len(calls)]
    floor.commit()
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    calls = ct.read_calls(a.work / "fixes.csv", a.calls)
    per_call, record_bytes = ct.first_pass(a.work, a.dist, calls)
    skip = len(calls) // 10
    counts = sorted(len(rows) for rows in per_call[skip:])
    print(f"{len(calls)} calls, {sum(len(r) for r in per_call)} notifications, records of {record_bytes} bytes on average; "
          f"notifications a call p50 {counts[len(counts) // 2]}, p99 {counts[int(len(counts) * 0.99)]}, most {counts[-1]}")
    print("| round | floor p50 µs | floor p99 µs | notifications of the floor's slowest 1 %: p50 |\n|---:|---:|---:|---:|")
    for r in range(a.rounds):
        timed = sorted(zip(round_times(a.work, calls, per_call, record_bytes)[skip:], (len(x) for x in per_call[skip:])))
        slow = sorted(n for _, n in timed[int(len(timed) * 0.99):])
        print(f"| {r + 1} | {timed[len(timed) // 2][0] * 1e6:.0f} | {timed[int(len(timed) * 0.99)][0] * 1e6:.0f} | "
              f"{slow[len(slow) // 2]} |")


if __name__ == "__main__":
    main()
