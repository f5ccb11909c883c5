"""Issue 38's targets for gf_check: a stream of fixes of many subjects,
interleaved in time, checked one call at a time in one transaction, as a
service feeding every device's fix to SQLite would.

    .venv-test/bin/python benchmarks/check_targets.py WORK [--dist dist] [--calls 40000] [--rounds 3]

WORK is a folder as benchmarks/write_targets.py takes it (fences.geojson,
fixes.csv in time order, optionally conditions.csv), and the catalogs it
makes there: `cond.db` (conditions) and `plain.db` (none). Each round
checks the first --calls fixes of fixes.csv, on a fresh copy of each
catalog, the two in turns A B, B A:

- with conditions: p50 and p99 of one call (Python's clock around the
  statement; the first tenth of the calls, while the session meets its
  ground, not counted), and the sum of every call;
- without conditions: the same calls, nothing to notify;
- floor: SQLite alone (Python's sqlite3, `executemany`, one transaction)
  writing the rows those calls wrote: one state row per call (the
  subject's record, as long as the run left it on average) and the
  notifications as narrow integer rows with their index.

Targets: p99 ≤ 250 µs with conditions; (sum with − sum without) ≤ 1.5 ×
the floor. Medians of the rounds; ratios from this one run.

With `--temp-store memory` the calls' connection has `PRAGMA temp_store =
MEMORY`: each call is a savepoint inside the one transaction, and SQLite
journals every page a call changes into a sub-journal that, once one call
wrote more than 64 KiB to it, is a file for the rest of the transaction (two
writes per page); in memory it stays memory (docs/sql.md). The floor opens
no savepoint.
"""
import argparse
import csv
import json
import os
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from million import removed  # noqa: E402
from write_targets import FLOOR_SCHEMA, catalogs  # noqa: E402

# A record's size where the catalog keeps no records (the layout before
# issue 38): the average of docs/write-path.md's measured run.
RECORD_BYTES = 424


def read_calls(fixes, n):
    with open(fixes, newline="") as f:
        rows = csv.reader(f)
        next(rows)
        calls = []
        for r in rows:
            calls.append((r[0], r[1], float(r[2]), float(r[3]), float(r[4])))
            if len(calls) == n:
                break
    return calls


def session(db, dist):
    c = sqlite3.connect(str(db), isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(dist / "libgeofence.so"))
    return c


def checked(work, source, dist, calls, temp_store="default"):
    """Per-call seconds of every call, on a fresh copy of `source`."""
    db = work / f"check-{source.stem}.db"
    removed(db)
    shutil.copyfile(source, db)
    c = session(db, dist)
    if temp_store == "memory":
        c.execute("PRAGMA temp_store = MEMORY")
    c.execute("BEGIN")
    out = []
    for call in calls:
        t = time.perf_counter()
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", call).fetchone()
        out.append(time.perf_counter() - t)
    c.execute("COMMIT")
    c.close()
    return out, db


def written(db):
    """What the calls wrote, read back: (notification rows as the floor
    stores them, a record's average length in bytes)."""
    c = sqlite3.connect(str(db))
    rows = c.execute("""SELECT s.k, CAST(round((julianday(substr(n.ts, 1, 19)) - 2440587.5) * 86400) AS INTEGER) * 1000000,
                               a.id, n.condition_id, CASE n.transition WHEN 'IN' THEN 0 WHEN 'OUT' THEN 1 ELSE 2 END,
                               n.lat, n.lon, n.accuracy_m
                        FROM gf_notifications AS n JOIN gf_areas AS a USING (area_id)
                        JOIN (SELECT subject_id, row_number() OVER (ORDER BY subject_id) AS k FROM gf_subjects) AS s USING (subject_id)
                        ORDER BY n.id""").fetchall()
    has_records = c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'gf_subject_state'").fetchone()[0]
    size = c.execute("SELECT avg(length(record)) FROM gf_subject_state").fetchone()[0] if has_records else RECORD_BYTES
    c.close()
    return rows, int(size or RECORD_BYTES)


def floor(work, calls, notifications, record_bytes):
    """Seconds SQLite alone takes to write one record per call and the notifications."""
    path = work / "check-floor.db"
    removed(path)
    c = sqlite3.connect(str(path), isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.executescript(FLOOR_SCHEMA + "CREATE TABLE records (subject_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;")
    record = "x" * record_bytes
    upserts = [(call[0], record) for call in calls]
    rows = [(0, k, ts, a, cid, tr, lat, lon, acc, ts // 86_400_000_000) for k, ts, a, cid, tr, lat, lon, acc in notifications]
    started = time.perf_counter()
    c.execute("BEGIN")
    c.executemany("INSERT INTO records (subject_id, record) VALUES (?, ?) "
                  "ON CONFLICT (subject_id) DO UPDATE SET record = excluded.record", upserts)
    c.executemany("INSERT INTO rows (run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, local_day) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    c.execute("COMMIT")
    seconds = time.perf_counter() - started
    c.close()
    removed(path)
    return seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--calls", type=int, default=40_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--temp-store", choices=["default", "memory"], default="default",
                    help="memory: PRAGMA temp_store = MEMORY on the calls' connection (docs/sql.md: "
                         "each call's savepoint journal then stays in memory)")
    args = ap.parse_args()
    w, dist = args.work.resolve(), args.dist.resolve()
    catalogs(dist / "geofence", w)
    calls = read_calls(w / "fixes.csv", args.calls)
    subjects = len({c[0] for c in calls})
    skip = len(calls) // 10
    results = {"cond": [], "plain": [], "floor": []}
    notifications = None
    for r in range(args.rounds):
        for kind in (["cond", "plain"] if r % 2 == 0 else ["plain", "cond"]):
            times, db = checked(w, w / f"{kind}.db", dist, calls, args.temp_store)
            kept = sorted(times[skip:])
            results[kind].append({"p50_us": kept[len(kept) // 2] * 1e6, "p99_us": kept[int(len(kept) * 0.99)] * 1e6,
                                  "sum_s": sum(times)})
            if kind == "cond" and notifications is None:
                notifications, record_bytes = written(db)
            removed(db)
        results["floor"].append({"sum_s": floor(w, calls, notifications, record_bytes)})
        print(f"round {r + 1}: {json.dumps({k: v[-1] for k, v in results.items()})}", flush=True)

    med = {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in results.items()}
    above = med["cond"]["sum_s"] - med["plain"]["sum_s"]
    report = {"temp_store": args.temp_store, "calls": len(calls), "subjects": subjects, "notifications": len(notifications), "record_bytes": record_bytes,
              "median": med, "runs": results, "load": os.getloadavg(),
              "targets": {"p99 with conditions (µs)": med["cond"]["p99_us"], "above no conditions / floor": above / med["floor"]["sum_s"]}}
    (w / "check-targets.json").write_text(json.dumps(report, indent=1))
    print(f"\n{len(calls):,} calls of {subjects:,} subjects, {len(notifications):,} notifications, records of {record_bytes} bytes; "
          f"temp_store {args.temp_store}; load {', '.join(f'{x:.1f}' for x in report['load'])}\n")
    print("| calls | p50 | p99 | all calls |\n|---|---:|---:|---:|")
    for kind, label in (("cond", "with conditions"), ("plain", "without conditions")):
        m = med[kind]
        print(f"| {label} | {m['p50_us']:.0f} µs | {m['p99_us']:.0f} µs | {m['sum_s']:.3f} s |")
    print(f"| SQLite alone writing their rows | | | {med['floor']['sum_s']:.3f} s |\n")
    p99, ratio = report["targets"].values()
    print("| target | now | |\n|---|---:|---|")
    print(f"| p99 ≤ 250 µs | {p99:.0f} µs | {'met' if p99 <= 250 else 'not met'} |")
    print(f"| time above no conditions ≤ 1.5 × floor | {ratio:.2f} × | {'met' if ratio <= 1.5 else 'not met'} |")


if __name__ == "__main__":
    main()
