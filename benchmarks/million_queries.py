"""Issue 22's single questions at a million fences, on the catalog million.py
built (--work/engine.db) and its fixes, each build in its own process:

  1. `gf_nearest` (n = 1, 5 or 20) then `gf_regions` (19) for --queries
     positions: half inside the catalog's extent, half anywhere on Earth
     (at sea, on other continents, near the poles): per-position latency
     p50 / p99 / max, the total, and a hash of every answer, which must be
     the same for every build measured;
  2. `gf_check` on an interleaved stream: the first 2 × --checks fixes of
     fixes.csv in time order, under new subject ids (so notifications are
     written), --checks warm-up calls then --checks timed, in one
     transaction rolled back at the end (the catalog is left as it was),
     with a 256 MiB page cache as a server would set: p50 / p99 / p999 and
     the notifications written.

  3. single CLI commands a user runs against the catalog and its state
     (`check` of a new subject, `notifications --subject`, `locate --fixes`
     of 10 fixes, `conditions list --area`, then `reset --subject
     --notifications` of the checked subject, which takes back its state and
     notifications; its gf_runs row stays): wall time and peak RSS from GNU
     time. The 10 fixes are written to --work/fixes-10.csv.

Peak RSS is the process's (Python, SQLite's page cache and the extension).

    .venv-test/bin/python benchmarks/million_queries.py --work /tmp/gf22 [--compare-dist OLD/dist]
"""
import argparse
import csv
import hashlib
import json
import random
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def connect(db, lib):
    c = sqlite3.connect(db)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(lib))
    return c


def percentiles(times, *ps):
    times = sorted(times)
    return [times[min(len(times) - 1, int(len(times) * p))] * 1e6 for p in ps]


def nearest(db, lib, queries):
    c = connect(db, lib)
    xmin, xmax, ymin, ymax = c.execute("SELECT min(xmin), max(xmax), min(ymin), max(ymax) FROM idx_gf_areas_geom").fetchone()
    rng = random.Random(22)
    positions = [(rng.uniform(ymin, ymax), rng.uniform(xmin, xmax)) if i % 2 == 0 else
                 (rng.uniform(-90, 90), rng.uniform(-180, 180)) for i in range(queries)]
    times, digest = [], hashlib.sha256()
    for i, (lat, lon) in enumerate(positions):
        t = time.perf_counter()
        rows = c.execute("SELECT rank, area_id, distance_m FROM gf_nearest(?, ?, ?)", (lat, lon, (1, 5, 20)[i % 3])).fetchall()
        plan = c.execute("SELECT gf_regions(?, ?, 19)", (lat, lon)).fetchone()[0]
        times.append(time.perf_counter() - t)
        digest.update(repr(rows).encode() + plan.encode())
    p50, p99 = percentiles(times, 0.5, 0.99)
    return {"queries": queries, "p50_us": p50, "p99_us": p99, "max_us": max(times) * 1e6, "total_s": sum(times),
            "answers": digest.hexdigest()[:16]}


def checks(db, lib, fixes_csv, n):
    rows = []
    with open(fixes_csv, newline="") as f:
        r = csv.reader(f)
        next(r)
        for i, x in enumerate(r):
            if i >= 2 * n:
                break
            rows.append(("Q" + x[0], x[1], float(x[2]), float(x[3]), float(x[4])))
    rows.sort(key=lambda x: float(x[1]))
    c = connect(db, lib)
    c.execute("PRAGMA cache_size = -262144")
    c.execute("BEGIN")
    before = c.execute("SELECT count(*) FROM gf_notifications").fetchone()[0]
    times = []
    for k, x in enumerate(rows):
        t = time.perf_counter()
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", x).fetchone()
        if k >= n:
            times.append(time.perf_counter() - t)
    written = c.execute("SELECT count(*) FROM gf_notifications").fetchone()[0] - before
    c.rollback()
    p50, p99, p999 = percentiles(times, 0.5, 0.99, 0.999)
    return {"calls": n, "subjects": len({x[0] for x in rows}), "p50_us": p50, "p99_us": p99, "p999_us": p999,
            "timed_s": sum(times), "notifications": written}


def commands(db, cli, fixes_csv, work, name):
    """Each command under GNU time: {label: (wall s, peak RSS MiB)}."""
    few = work / "fixes-10.csv"
    with open(fixes_csv) as f:
        few.write_text("".join(next(f) for _ in range(11)))
    subject = "BENCH-" + name.replace(" ", "-")
    area = subprocess.run(["sqlite3", db, "SELECT area_id FROM gf_areas ORDER BY id LIMIT 1"], capture_output=True,
                          text=True, check=True).stdout.strip()
    runs = [("check (a new subject)", ["check", db, "--subject", subject, "--lat", "35.68", "--lon", "139.76",
                                       "--accuracy", "10", "--time", "2026-11-26T00:00:00Z"]),
            ("notifications --subject", ["notifications", db, "--subject", "S00001", "--format", "csv"]),
            ("locate --fixes (10 fixes)", ["locate", db, "--fixes", few]),
            ("conditions list --area", ["conditions", "list", db, "--area", area]),
            ("reset --subject --notifications", ["reset", db, "--subject", subject, "--notifications"])]
    out = {}
    for label, argv in runs:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", cli, *argv], capture_output=True, text=True, check=True)
        wall, rss = p.stderr.strip().splitlines()[-1].split()
        out[label] = (float(wall), int(rss) / 1024)
    return out


def child(args):
    out = nearest(args.db, args.lib, args.queries) if args.child == "nearest" else checks(args.db, args.lib, args.fixes, args.checks)
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gf-million"), help="million.py's --work")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--compare-dist", type=Path, help="another build, measured the same way")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--checks", type=int, default=20_000)
    ap.add_argument("--child", choices=["nearest", "check"], help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--lib", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--fixes", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    db, fixes = args.work / "engine.db", args.work / "fixes.csv"
    builds = [("this build", args.dist)] + ([("compared build", args.compare_dist)] if args.compare_dist else [])
    report = {}
    for name, dist in builds:
        for phase in ("nearest", "check"):
            p = subprocess.run([sys.executable, __file__, "--child", phase, "--db", db, "--lib", dist / "libgeofence.so",
                                "--fixes", fixes, "--queries", str(args.queries), "--checks", str(args.checks)],
                               capture_output=True, text=True, check=True)
            report[(name, phase)] = json.loads(p.stdout)
            print(name, phase, p.stdout.strip(), flush=True)
        report[(name, "commands")] = commands(db, dist / "geofence", fixes, args.work, name)
        print(name, "commands", report[(name, "commands")], flush=True)
    answers = {report[(name, "nearest")]["answers"] for name, _ in builds}
    if len(answers) != 1:
        raise SystemExit(f"the builds' nearest answers differ: {answers}")
    print(f"\n| build | nearest + regions p50 / p99 / max | total ({args.queries} positions) | peak RSS "
          f"| gf_check p50 / p99 / p999 | notifications | peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, _ in builds:
        n, c = report[(name, "nearest")], report[(name, "check")]
        print(f"| {name} | {n['p50_us']:,.0f} / {n['p99_us']:,.0f} / {n['max_us']:,.0f} µs | {n['total_s']:.2f} s "
              f"| {n['rss_mib']:,.0f} MiB | {c['p50_us']:,.0f} / {c['p99_us']:,.0f} / {c['p999_us']:,.0f} µs "
              f"| {c['notifications']:,} | {c['rss_mib']:,.0f} MiB |")
    print("\n| command | " + " | ".join(name for name, _ in builds) + " |")
    print("|---|" + "---:|" * len(builds))
    for label in report[(builds[0][0], "commands")]:
        cells = [report[(name, "commands")][label] for name, _ in builds]
        print(f"| `{label}` | " + " | ".join(f"{wall:.2f} s, {rss:,.0f} MiB" for wall, rss in cells) + " |")


if __name__ == "__main__":
    main()
