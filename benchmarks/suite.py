"""The benchmark suite of issue 5, one command per catalog size:

    bash benchmarks/install-peers.sh                      # once: PostGIS, psycopg, matplotlib
    .venv-test/bin/python benchmarks/suite.py small       # 1k fences, 100k fixes
    .venv-test/bin/python benchmarks/suite.py medium      # 100k fences, 1M fixes
    .venv-test/bin/python benchmarks/suite.py large       # 1M fences, 10M fixes
    .venv-test/bin/python benchmarks/suite.py medium --fixes 100000 --runs 1   # a lighter medium

On one deterministic workload (benchmarks/workload.py) it measures, with
medians of --runs runs and every ratio from this one run:
  1. import: `geofence import` against GDAL's `ogr2ogr` into SpatiaLite, wall
     time, peak RSS, database size;
  2. the containment question against SpatiaLite SQL, shapely STRtree and
     PostGIS (benchmarks/peers.py; all must agree on pairs and checksum);
  3. the full judgement (`geofence judge --fixes`, rules and state, SQLite in
     and out): fixes per second and peak RSS;
  4. a single checkLocation (`gf_check`) on the warm catalog: p50 and p99.
It prints a Markdown section (for results.md), and writes
out/bench-<size>.json and out/bench-<size>.png.
"""
import argparse
import csv
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import workload  # noqa: E402
import check  # noqa: E402
from peers import ENGINE, ENGINE_BATCH_LOCATING, containment_peers  # noqa: E402

CLI = ROOT / "dist" / "geofence"
SIZES = {"small": (1_000, 100_000), "medium": (100_000, 1_000_000), "large": (1_000_000, 10_000_000)}


def timed_command(args):
    """(wall seconds, peak RSS in MiB) of one command, by GNU time."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{args} failed:\n{out.stderr}")
    wall, rss = out.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) / 1024


def median_of(runs, fn):
    results = [fn() for _ in range(runs)]
    return (statistics.median(r[0] for r in results), max(r[1] for r in results))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("size", choices=SIZES)
    ap.add_argument("--fences", type=int, help="override the size's fence count")
    ap.add_argument("--fixes", type=int, help="override the size's fix count")
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-postgis", action="store_true")
    ap.add_argument("--skip-containment", action="store_true", help="skip the peers (their slowest take hours on large)")
    ap.add_argument("--containment-fixes", type=int, help="ask the containment question of only the first N fixes (SpatiaLite SQL needs ~1 ms per fix on medium)")
    args = ap.parse_args()
    n_fences, n_fixes = SIZES[args.size]
    n_fences, n_fixes = args.fences or n_fences, args.fixes or n_fixes
    work = Path(tempfile.mkdtemp(prefix=f"gf-suite-{args.size}-"))
    report = {"size": args.size, "fences": n_fences, "fixes": n_fixes, "runs": args.runs,
              "date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores"}
    print(f"workload: {n_fences:,} fences, {n_fixes:,} fixes of {args.subjects:,} subjects in {work}", flush=True)
    fences = work / "fences.geojson"
    workload.write_fences(fences, n_fences)
    fixes = list(workload.fixes(n_fixes, args.subjects))
    fixes_csv = work / "fixes.csv"
    with open(fixes_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(fixes)

    # 1. Import.
    db = work / "engine.db"

    def engine_import():
        db.unlink(missing_ok=True)
        subprocess.run([CLI, "init", db], check=True, capture_output=True)
        return timed_command([CLI, "import", db, fences])
    ogr = work / "ogr.db"

    def ogr_import():
        ogr.unlink(missing_ok=True)
        # As a user would run it: the file's geometries as they are (circles stay points), with an R*Tree.
        return timed_command(["ogr2ogr", "-f", "SQLite", "-dsco", "SPATIALITE=YES", "-nln", "fences",
                              "-lco", "SPATIAL_INDEX=YES", ogr, fences])
    e_t, e_rss = median_of(args.runs, engine_import)
    o_t, o_rss = median_of(args.runs, ogr_import)
    subprocess.run(["sqlite3", db, "VACUUM;"], check=True)
    report["import"] = {"engine_s": e_t, "engine_rss_mib": e_rss, "engine_db_mib": db.stat().st_size / 2**20,
                        "ogr2ogr_s": o_t, "ogr2ogr_rss_mib": o_rss, "ogr2ogr_db_mib": ogr.stat().st_size / 2**20}
    print(json.dumps(report["import"]), flush=True)

    # 2. The containment question against the peers.
    if not args.skip_containment:
        asked = fixes[:args.containment_fixes] if args.containment_fixes else fixes
        report["containment_fixes"] = len(asked)
        peers = containment_peers(db, fences, asked, postgis=not args.no_postgis, runs=args.runs)
        report["containment"] = {name: {"s": t, "pairs": r[1], "checksum": str(r[0])} for name, (t, r) in peers.items()}

    # 3. Full judgement: fresh state each run (the reset is not timed).
    def judge():
        subprocess.run([CLI, "reset", db, "--notifications"], check=True, capture_output=True)
        return timed_command([CLI, "judge", db, "--fixes", fixes_csv, "--quiet"])
    j_t, j_rss = median_of(args.runs, judge)
    summary = subprocess.run(["sqlite3", db, "SELECT judged, transitions, notifications FROM gf_runs ORDER BY run_id DESC LIMIT 1"],
                             capture_output=True, text=True).stdout.strip()
    report["judgement"] = {"s": j_t, "fixes_per_s": n_fixes / j_t, "rss_mib": j_rss, "last_run": summary}
    print(json.dumps(report["judgement"]), flush=True)

    # 4. A single checkLocation, warm: one subject walking, one gf_check per fix (benchmarks/check.py).
    latencies = check.latencies(db, args.size, runs=max(3, args.runs))
    report["check"] = latencies
    print(json.dumps(latencies), flush=True)

    out_dir = ROOT / "out"
    out_dir.mkdir(exist_ok=True)
    (out_dir / f"bench-{args.size}.json").write_text(json.dumps(report, indent=1))
    print(markdown(report))
    chart(report, out_dir / f"bench-{args.size}.png")
    print(f"chart: out/bench-{args.size}.png (copy it to benchmarks/ with the results)")


def markdown(r):
    i = r["import"]
    lines = [f"### {r['size']}: {r['fences']:,} fences, {r['fixes']:,} fixes ({r['date']}, {r['machine']}, medians of {r['runs']})", "",
             "| measure | engine | peer | engine vs peer |", "|---|---:|---:|---:|",
             f"| import wall time | {i['engine_s']:.1f} s | ogr2ogr {i['ogr2ogr_s']:.1f} s | {i['ogr2ogr_s'] / i['engine_s']:.2f}× |",
             f"| import peak RSS | {i['engine_rss_mib']:.0f} MiB | ogr2ogr {i['ogr2ogr_rss_mib']:.0f} MiB | |",
             f"| database size | {i['engine_db_mib']:.0f} MiB | ogr2ogr {i['ogr2ogr_db_mib']:.0f} MiB | {i['engine_db_mib'] / i['ogr2ogr_db_mib']:.2f}× the size |"]
    if "containment" in r:
        c = r["containment"]
        # The locate phase is the figure comparable with peers timed with their data loaded.
        base_name = ENGINE_BATCH_LOCATING if ENGINE_BATCH_LOCATING in c else ENGINE
        base = c[base_name]["s"]
        for name, v in c.items():
            if name == base_name:
                continue
            if name.startswith("engine"):  # the engine's other paths: times, not ratios
                lines.append(f"| containment question, {name} | {v['s']:.2f} s | | |")
            else:
                lines.append(f"| containment question ({r['containment_fixes']:,} fixes, {c[ENGINE]['pairs']:,} pairs) | {base:.2f} s | {name} {v['s']:.2f} s | {v['s'] / base:.2f}× |")
    j = r["judgement"]
    lines.append(f"| full judgement | {j['fixes_per_s']:,.0f} fixes/s ({j['s']:.1f} s), peak RSS {j['rss_mib']:.0f} MiB | | |")
    for mode, v in r["check"].items():
        lines.append(f"| single gf_check, {mode} | p50 {v['p50_us']:.0f} µs, p99 {v['p99_us']:.0f} µs | | |")
    return "\n".join(lines)


def chart(r, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names, ratios = [], []
    i = r["import"]
    names.append("import vs ogr2ogr"); ratios.append(i["ogr2ogr_s"] / i["engine_s"])
    c = r.get("containment", {})
    base_name = ENGINE_BATCH_LOCATING if ENGINE_BATCH_LOCATING in c else ENGINE
    for name, v in c.items():
        if name != base_name and not name.startswith("engine"):
            names.append(f"containment vs {name.split(' (')[0]}"); ratios.append(v["s"] / c[base_name]["s"])
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(names) + 1.2))
    ax.barh(names, ratios, color=["tab:green" if x >= 1 else "tab:red" for x in ratios])
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    lo, hi = min(ratios + [1]) / 1.6, max(ratios + [1]) * 2.2
    ax.set_xlim(lo, hi)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}×" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("engine speed-up (peer time / engine time; > 1 = engine faster)")
    ax.set_title(f"{r['size']}: {r['fences']:,} fences, {r['fixes']:,} fixes")
    for y, x in enumerate(ratios):
        ax.text(x, y, f" {x:.0f}×" if x >= 10 else f" {x:.1f}×", va="center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
