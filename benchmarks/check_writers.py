"""gf_check from many writer processes at once on one WAL catalog (issue
40): throughput and per-call latency at 1, 2, 4 and 8 processes.

    .venv-test/bin/python benchmarks/check_writers.py WORK [--dist dist] [--calls 40000] [--processes 1,2,4,8] [--batch 100]
                                                           [--synchronous NORMAL]

WORK is a folder as benchmarks/check_targets.py takes it (fences.geojson,
fixes.csv in time order, conditions.csv; `cond.db` is made there once).
The first --calls fixes of fixes.csv, a stream of many subjects interleaved
in time, are dealt out by subject: with N processes, process k calls
gf_check for the subjects whose rank (in order of first appearance) is k
modulo N, in the stream's order. So every N judges the same fixes of the
same subjects and must store the same notifications (checked).

Two series, each N on a fresh copy of cond.db:

- autocommit: one `SELECT gf_check(…)` per fix, each its own transaction;
- batched: `BEGIN IMMEDIATE`, --batch calls, `COMMIT` (--batch 0: none).

Every process connects with Python's `timeout=60` (the documented busy
timeout) and `PRAGMA synchronous` as --synchronous says (NORMAL, as
docs/sql.md advises a service: a WAL commit then waits for no disk flush;
FULL, SQLite's default, flushes at every commit), and makes its first call
before the start (the session reads the
catalog then: not what is measured). The processes start together when
all are ready (a line on each one's stdin) and report their calls' times;
a busy error is not retried, it fails the run. Throughput is all calls
over the time from the start to the last process's end; p50 and p99 are of
every call of every process (Python's clock around the statement; in the
batched series the BEGIN's wait and the COMMIT are not in a call's time
but in its batch's, reported beside it).
"""
import argparse
import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from check_targets import read_calls  # noqa: E402
from million import removed  # noqa: E402
from write_targets import catalogs  # noqa: E402

# How long a process may take to get ready, and a run to finish, before the run fails.
READY_SECONDS = 300
RUN_SECONDS = 3_600


def connected(db, extension, catalog):
    """A writer's connection: to the catalog, or (`catalog` given) to a state
    database with the catalog attached read-only (docs/state.md)."""
    c = sqlite3.connect(db, timeout=60, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(extension)
    if catalog:
        c.execute("ATTACH ? AS catalog", (f"file:{catalog}?mode=ro",))
    return c


def worker(db, extension, calls_path, batch, synchronous, catalog=""):
    """One writer: waits for the start line, judges its calls, prints its times as JSON."""
    calls = json.loads(Path(calls_path).read_text())
    c = connected(db, extension, catalog)
    c.execute(f"PRAGMA synchronous = {synchronous}")
    c.execute("SELECT gf_check(?, ?, ?, ?, ?)", calls[0]).fetchone()
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.perf_counter()
    each, batches = [], []
    rest = calls[1:]
    step = batch or 1
    for i in range(0, len(rest), step):
        b = time.perf_counter()
        if batch:
            c.execute("BEGIN IMMEDIATE")
        for call in rest[i:i + step]:
            t = time.perf_counter()
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", call).fetchone()
            each.append(time.perf_counter() - t)
        if batch:
            c.execute("COMMIT")
            batches.append(time.perf_counter() - b)
    ended = time.perf_counter()
    c.close()
    print(json.dumps({"started": started, "ended": ended, "calls": each, "batches": batches}), flush=True)


def dealt(calls, n):
    """The calls of each of `n` processes: subjects dealt out in order of first appearance."""
    rank = {}
    for call in calls:
        rank.setdefault(call[0], len(rank))
    out = [[] for _ in range(n)]
    for call in calls:
        out[rank[call[0]] % n].append(call)
    return out


def ready(procs):
    """Waits until every process has said it is ready; fails past the deadline."""
    deadline = time.monotonic() + READY_SECONDS
    waiting = {p.stdout.fileno(): p for p in procs}
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SystemExit(f"{len(waiting)} writer(s) not ready within {READY_SECONDS} s")
        readable, _, _ = select.select(list(waiting), [], [], left)
        for fd in readable:
            p = waiting.pop(fd)
            line = p.stdout.readline()
            if line.strip() != "ready":
                raise SystemExit(f"a writer failed before the start: {line}{p.stderr.read()}")


def measured(work, dist, calls, n, how):
    """One run of `n` processes on a fresh copy of WORK/cond.db, each
    `how` = (calls per transaction, 0 for autocommit; synchronous; apart:
    the state in a state database of its own): its figures."""
    batch, synchronous, apart = how
    source = work / "cond.db"
    db = work / "writers.db"
    state = work / "writers-state.db"
    removed(db)
    removed(state)
    shutil.copyfile(source, db)
    catalog = str(db) if apart else ""
    if apart:
        made = connected(str(state), str(dist / "libgeofence.so"), "")
        made.execute("PRAGMA journal_mode = WAL")   # as docs/state.md says, and geofence init makes a catalog
        made.execute("ATTACH ? AS catalog", (f"file:{catalog}?mode=ro",))
        made.execute("SELECT gf_state_init()").fetchall()
        made.close()
        db = state
    procs = []
    for k, mine in enumerate(dealt(calls, n)):
        path = work / f"writer{k}.json"
        path.write_text(json.dumps(mine))
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker", str(db), str(dist / "libgeofence.so"), str(path),
                                       str(batch), synchronous, catalog], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    ready(procs)
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=RUN_SECONDS)
        if p.returncode != 0:
            raise SystemExit(f"a writer failed (exit {p.returncode}): {err.strip()[-2000:]}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    wall = max(r["ended"] for r in reports) - min(r["started"] for r in reports)
    each = sorted(t for r in reports for t in r["calls"])
    batches = sorted(t for r in reports for t in r["batches"])
    check = sqlite3.connect(str(db))
    stored = check.execute("SELECT count(*), coalesce(max(id) - min(id) + 1, 0) FROM gf_notification_rows").fetchone()
    check.close()
    removed(work / "writers.db")
    removed(state)

    def pct(xs, q):
        return xs[min(len(xs) - 1, int(len(xs) * q))] * 1e6 if xs else None
    return {"processes": n, "batch": batch, "synchronous": synchronous, "apart": apart, "calls": len(each), "wall_s": wall, "calls_per_s": len(each) / wall,
            "p50_us": pct(each, 0.5), "p99_us": pct(each, 0.99),
            "batch_p50_ms": (pct(batches, 0.5) or 0) / 1e3, "batch_p99_ms": (pct(batches, 0.99) or 0) / 1e3,
            "notifications": stored[0], "id_span": stored[1], "load": os.getloadavg()}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        db, extension, calls_path, batch, synchronous, catalog = sys.argv[2:8]
        return worker(db, extension, calls_path, int(batch), synchronous, catalog)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--calls", type=int, default=40_000)
    ap.add_argument("--processes", default="1,2,4,8")
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--synchronous", choices=["NORMAL", "FULL"], default="NORMAL")
    ap.add_argument("--apart", action="store_true", help="each writer's state in one state database, the catalog attached read-only")
    args = ap.parse_args()
    w, dist = args.work.resolve(), args.dist.resolve()
    catalogs(dist / "geofence", w)
    calls = read_calls(w / "fixes.csv", args.calls)
    counts = [int(x) for x in args.processes.split(",")]
    results = []
    for batch in [0] + ([args.batch] if args.batch else []):
        for n in counts:
            r = measured(w, dist, calls, n, (batch, args.synchronous, args.apart))
            results.append(r)
            print(json.dumps(r), flush=True)
    (w / "check-writers.json").write_text(json.dumps(results, indent=1))
    first = {r["batch"]: r for r in results if r["processes"] == counts[0]}
    expected = first[0]["notifications"]
    print(f"\n{len(calls):,} calls of {len({c[0] for c in calls}):,} subjects, synchronous = {args.synchronous}; "
          f"notifications {expected:,} in every run: "
          f"{all(r['notifications'] == expected and r['id_span'] == expected for r in results)}\n")
    print("| series | processes | calls/s | × 1 process | p50 | p99 | batch p50 / p99 | load (1 min) after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        base = first[r["batch"]]["calls_per_s"]
        series = f"{r['batch']} calls per BEGIN IMMEDIATE" if r["batch"] else "autocommit"
        per_batch = f"{r['batch_p50_ms']:.1f} / {r['batch_p99_ms']:.1f} ms" if r["batch"] else ""
        print(f"| {series} | {r['processes']} | {r['calls_per_s']:,.0f} | {r['calls_per_s'] / base:.2f} | "
              f"{r['p50_us']:.0f} µs | {r['p99_us']:.0f} µs | {per_batch} | {r['load'][0]:.1f} |")


if __name__ == "__main__":
    main()
