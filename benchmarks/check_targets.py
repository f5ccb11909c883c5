"""Issue 38's targets for gf_check: a stream of fixes of many subjects,
interleaved in time, checked one call at a time in one transaction, as a
service feeding every device's fix to SQLite would.

    .venv-test/bin/python benchmarks/check_targets.py WORK [--dist dist] [--calls 40000] [--rounds 3]

WORK is a folder as benchmarks/write_targets.py takes it (fences.geojson,
fixes.csv with its subjects interleaved in time, or `--time-order` to sort
it, optionally conditions.csv), and the catalogs it
makes there: `cond.db` (conditions) and `plain.db` (none). A first pass of
the calls on a copy of `cond.db` finds what they write; then each round
checks the first --calls fixes of fixes.csv on fresh copies of both
catalogs, each in one transaction, and writes the floor's rows, all three
side by side in blocks of 1,000 calls (A B C, then B C A, …): this machine's
speed drifts by a quarter within a minute, and three runs one after another
would each meet another speed.

- with conditions: p50 and p99 of one call (Python's clock around the
  statement; the first tenth of the calls, while the session meets its
  ground, not counted), and the sum of every call and the COMMIT;
- without conditions: the same calls, nothing to notify;
- `--stream`: also gf_check_stream's calls on cond.db (notifications unstored);
- floor: SQLite alone (Python's sqlite3, `executemany`, one transaction)
  writing the rows those calls wrote: one state row per call (the
  subject's record, as long as the run left it on average) and the
  notifications as narrow integer rows with their index, and its COMMIT.

- the same rows from C (call_floor.py), after each round, each way thrice
  and its quickest kept: in blocks, and each call's rows in a savepoint of
  their own, as gf_check writes them (a call is all or nothing inside the
  caller's transaction): what that contract costs SQLite itself, reported
  beside the target.

Targets: p99 ≤ 250 µs with conditions; (sum with − sum without) ≤ 1.5 ×
the floor. Medians of the rounds (the ratio: of each round's); ratios from
this one run.

`--temp-store memory`: `PRAGMA temp_store = MEMORY` on the calls'
connection, so the sub-journal of each call's savepoint stays in memory
once one call wrote 64 KiB to it (docs/sql.md); `tuned` adds a 64 MiB page
cache (SQLite's default is 2 MiB). The floor opens no savepoint.
"""
import argparse
import csv
import datetime
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
from write_targets import FLOOR_SCHEMA, catalogs, cli_run  # noqa: E402
from call_floor import CallFloor  # noqa: E402

# A record's size where the catalog keeps no records (before issue 38): docs/write-path.md's run's average.
RECORD_BYTES = 424


def read_calls(fixes, n, time_order=False):
    """The first n fixes of `fixes` (with `time_order`, of its fixes sorted by
    time, ties in the file's order: a file grouped by subject), each
    (subject_id, ts, lat, lon, accuracy_m) found by the header's names, an
    empty value NULL: a feed as it comes, in its own column order."""
    with open(fixes, newline="") as f:
        rows = list(csv.DictReader(f))

    def when(r):
        t = r["ts"].strip()
        try:
            return float(t)
        except ValueError:
            pass
        try:
            return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return float("inf")   # gf_check refuses it; it stays a call

    def number(v):
        try:
            return float(v) if v.strip() else None
        except ValueError:
            return v   # as the feed has it: gf_check refuses it
    if time_order:
        rows.sort(key=when)
    return [(r["subject_id"], r["ts"], number(r["lat"]), number(r["lon"]), number(r["accuracy_m"])) for r in rows[:n]]


def session(db, dist):
    c = sqlite3.connect(str(db), isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(dist / "libgeofence.so"))
    return c


class Calls:
    """The calls on a fresh copy of `source`, in one transaction, block by block."""

    def __init__(self, work, source, dist, temp_store, name, function="gf_check"):
        self.db = work / f"check-{name}.db"
        self.sql = f"SELECT {function}(?, ?, ?, ?, ?)"
        removed(self.db)
        shutil.copyfile(source, self.db)
        self.c = session(self.db, dist)
        if temp_store in ("memory", "tuned"):
            self.c.execute("PRAGMA temp_store = MEMORY")
        if temp_store == "tuned":
            self.c.execute("PRAGMA cache_size = -65536")
        self.c.execute("BEGIN")
        self.times, self.results = [], []

    def block(self, calls):
        for call in calls:
            t = time.perf_counter()
            try:
                self.results.append(self.c.execute(self.sql, call).fetchone()[0])
            except sqlite3.OperationalError:
                self.results.append("[]")   # a fix gf_check refuses (a feed's negative accuracy, say): the call writes nothing
            self.times.append(time.perf_counter() - t)

    def commit(self):
        committed(self.c, self.times)


def committed(c, times):
    """COMMITs and closes `c`, the COMMIT's seconds appended to `times`."""
    t = time.perf_counter()
    c.execute("COMMIT")
    times.append(time.perf_counter() - t)
    c.close()


class Floor:
    """SQLite alone writing, block by block in one transaction, one record per call and the calls' notifications."""

    def __init__(self, work, record_bytes):
        self.path = work / "check-floor.db"
        removed(self.path)
        self.c = sqlite3.connect(str(self.path), isolation_level=None)
        self.c.execute("PRAGMA journal_mode = WAL")
        self.c.executescript(FLOOR_SCHEMA + "CREATE TABLE records (subject_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;")
        self.record = "x" * record_bytes
        self.c.execute("BEGIN")
        self.times = []

    def block(self, calls, rows):
        upserts = [(call[0], self.record) for call in calls]
        t = time.perf_counter()
        self.c.executemany("INSERT INTO records (subject_id, record) VALUES (?, ?) "
                           "ON CONFLICT (subject_id) DO UPDATE SET record = excluded.record", upserts)
        self.c.executemany("INSERT INTO rows (run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, "
                           "local_day) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self.times.append(time.perf_counter() - t)

    def commit(self):
        committed(self.c, self.times)
        removed(self.path)


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


def first_pass(work, dist, calls):
    """The floor's rows for each call (in call order) and a record's average length, from one pass on a copy of cond.db."""
    run = Calls(work, work / "cond.db", dist, "default", "first")
    run.block(calls)
    run.commit()
    rows, record_bytes = written(run.db)
    removed(run.db)
    rows = [(0, k, ts, a, cid, tr, lat, lon, acc, ts // 86_400_000_000) for k, ts, a, cid, tr, lat, lon, acc in rows]
    per_call, at = [], 0
    for result in run.results:
        n = len(json.loads(result))
        per_call.append(rows[at:at + n])
        at += n
    assert at == len(rows), "the notifications returned are the ones stored"
    return per_call, record_bytes


BLOCK = 1_000
# Each kind of calls: its catalog, its function, its name in the table.
KINDS = {"cond": ("cond.db", "gf_check", "with conditions"), "plain": ("plain.db", "gf_check", "without conditions"),
         "stream": ("cond.db", "gf_check_stream", "with conditions, gf_check_stream (notifications not stored)")}


def one_round(w, dist, calls, per_call, record_bytes, ways):
    """One round: every way's calls and the floor, side by side in blocks."""
    runs = {way: Calls(w, w / KINDS[way[0]][0], dist, way[1], f"{way[0]}-{way[1]}", KINDS[way[0]][1]) for way in ways}
    floor = Floor(w, record_bytes)
    turns = [*runs.values(), floor]
    for b, at in enumerate(range(0, len(calls), BLOCK)):
        block = calls[at:at + BLOCK]
        for turn in turns[b % len(turns):] + turns[:b % len(turns)]:
            if turn is floor:
                floor.block(block, [row for rows in per_call[at:at + BLOCK] for row in rows])
            else:
                turn.block(block)
    for turn in turns:
        turn.commit()
    skip = len(calls) // 10
    out = {}
    for (kind, store), run in runs.items():
        kept = sorted(run.times[skip:-1])
        out[f"{kind} {store}"] = {"p50_us": kept[len(kept) // 2] * 1e6, "p99_us": kept[int(len(kept) * 0.99)] * 1e6,
                                  "sum_s": sum(run.times)}
        removed(run.db)
    out["floor"] = {"sum_s": sum(floor.times)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--calls", type=int, default=40_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--temp-store", choices=["default", "memory", "tuned", "both", "all"], default="default",
                    help="memory: PRAGMA temp_store = MEMORY on the calls' connection (docs/sql.md: each call's "
                         "savepoint journal then stays in memory); tuned: that and PRAGMA cache_size = -65536; "
                         "both: default and memory side by side; all: the three")
    ap.add_argument("--stream", action="store_true", help="also gf_check_stream's calls on cond.db (no notification stored)")
    ap.add_argument("--time-order", action="store_true",
                    help="sort fixes.csv by time before taking the first --calls (a file grouped by subject, workload.py's)")
    args = ap.parse_args()
    w, dist = args.work.resolve(), args.dist.resolve()
    catalogs(dist / "geofence", w)
    for name in ("cond.db", "plain.db"):
        # write_targets.py leaves its last judgement's state here: the calls would all be stale.
        cli_run(dist / "geofence", "reset", w / name, "--notifications")
    calls = read_calls(w / "fixes.csv", args.calls, args.time_order)
    subjects = len({c[0] for c in calls})
    per_call, record_bytes = first_pass(w, dist, calls)
    notifications = sum(len(rows) for rows in per_call)
    stores = {"both": ["default", "memory"], "all": ["default", "memory", "tuned"]}.get(args.temp_store, [args.temp_store])
    ways = [(kind, store) for store in stores for kind in ("cond", "plain", "stream")[:3 if args.stream else 2]]
    call_floor = CallFloor(w, per_call, [c[0] for c in calls], record_bytes)
    results = {}
    for r in range(args.rounds):
        for k, v in one_round(w, dist, calls, per_call, record_bytes, ways).items():
            results.setdefault(k, []).append(v)
        # Each way thrice, alternating, its quickest kept: a single run of a third of a second meets the machine's drift.
        c_runs = {way: [] for way in ("block", "call")}
        for _ in range(3):
            for way in ("block", "call")[::1 if r % 2 == 0 else -1]:
                c_runs[way].append(call_floor.seconds(way))
        for way, seconds in c_runs.items():
            results.setdefault(f"C {way}", []).append({"sum_s": min(seconds)})
        print(f"round {r + 1}: {json.dumps({k: v[-1] for k, v in results.items()})}", flush=True)

    med = {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in results.items()}
    targets = {store: {"p99 with conditions (µs)": med[f"cond {store}"]["p99_us"],
                       "above no conditions / floor": statistics.median(
                           (c["sum_s"] - p["sum_s"]) / f["sum_s"]
                           for c, p, f in zip(results[f"cond {store}"], results[f"plain {store}"], results["floor"])),
                       "above no conditions / a savepoint a call (C)": statistics.median(
                           (c["sum_s"] - p["sum_s"]) / f["sum_s"]
                           for c, p, f in zip(results[f"cond {store}"], results[f"plain {store}"], results["C call"]))}
               for store in stores}
    report = {"calls": len(calls), "subjects": subjects, "notifications": notifications, "record_bytes": record_bytes,
              "median": med, "runs": results, "load": os.getloadavg(), "targets": targets}
    (w / "check-targets.json").write_text(json.dumps(report, indent=1))
    print(f"\n{len(calls):,} calls of {subjects:,} subjects, {notifications:,} notifications, records of {record_bytes} bytes; "
          f"load {', '.join(f'{x:.1f}' for x in report['load'])}\n")
    print("| calls | temp_store | p50 | p99 | all calls and COMMIT |\n|---|---|---:|---:|---:|")
    for kind, store in ways:
        m = med[f"{kind} {store}"]
        label = KINDS[kind][2]
        print(f"| {label} | {store} | {m['p50_us']:.0f} µs | {m['p99_us']:.0f} µs | {m['sum_s']:.3f} s |")
    print(f"| SQLite alone writing their rows | | | | {med['floor']['sum_s']:.3f} s |")
    print(f"| the same from C, in blocks / a savepoint a call (temp_store MEMORY, 64 MiB cache) | | | | "
          f"{med['C block']['sum_s']:.3f} / {med['C call']['sum_s']:.3f} s |\n")
    print("| target (medians of the rounds) | temp_store | now | |\n|---|---|---:|---|")
    for store, t in targets.items():
        p99, ratio, per_call_ratio = t.values()
        print(f"| p99 ≤ 250 µs | {store} | {p99:.0f} µs | {'met' if p99 <= 250 else 'not met'} |")
        print(f"| time above no conditions ≤ 1.5 × floor | {store} | {ratio:.2f} × | {'met' if ratio <= 1.5 else 'not met'} |")
        print(f"| the same against SQLite writing a call at a time, each in a savepoint (C) | {store} | {per_call_ratio:.2f} × | |")


if __name__ == "__main__":
    main()
