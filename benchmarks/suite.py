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
out/bench-<size>.json and out/bench-<size>.png (suite_report.py).
"""
import argparse
import csv
import hashlib
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
import workload2  # noqa: E402
import check  # noqa: E402
from peers import containment_peers  # noqa: E402
from suite_report import chart, markdown  # noqa: E402

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
    ap.add_argument("--no-sql-peers", action="store_true",
                    help="leave out the two SQL joins (engine's gf_contains, SpatiaLite's ST_Contains), which take ~1 ms a fix on medium")
    ap.add_argument("--workload", choices=("city", "three-cities"), default="city",
                    help="city: workload.py (one dense city); three-cities: workload2.py (three cities and the country between)")
    ap.add_argument("--condition-share", type=float, default=0.10,
                    help="share of areas with a filtered IN and a DWELL condition besides the default IN and OUT")
    ap.add_argument("--skip-import-peer", action="store_true", help="skip ogr2ogr")
    ap.add_argument("--skip-check", action="store_true", help="skip the single-subject gf_check walks (the interleaved stream still runs)")
    ap.add_argument("--batch-page-size", type=int, default=32768,
                    help="judge again on catalogs made with `init --page-size N`, as docs/operations.md advises for batch work (0: skip)")
    ap.add_argument("--compare-dist", type=Path, help="another build's dist/: its judgement's output hashes are reported beside")
    args = ap.parse_args()
    n_fences, n_fixes = SIZES[args.size]
    n_fences, n_fixes = args.fences or n_fences, args.fixes or n_fixes
    work = Path(tempfile.mkdtemp(prefix=f"gf-suite-{args.size}-{args.workload}-"))
    report = {"size": args.size, "workload": args.workload, "fences": n_fences, "fixes": n_fixes, "runs": args.runs,
              "date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores"}
    print(f"workload ({args.workload}): {n_fences:,} fences, {n_fixes:,} fixes of {args.subjects:,} subjects in {work}", flush=True)
    fences = work / "fences.geojson"
    generator = workload if args.workload == "city" else workload2
    generator.write_fences(fences, n_fences)
    fixes = list(generator.fixes(n_fixes, args.subjects))
    area_ids = [f"F{i:07d}" for i in range(n_fences)] if args.workload == "city" else [str(100000 + i) for i in range(n_fences)]
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
    o_t, o_rss = median_of(args.runs, ogr_import) if not args.skip_import_peer else (float("nan"), float("nan"))
    subprocess.run(["sqlite3", db, "VACUUM;"], check=True)
    report["import"] = {"engine_s": e_t, "engine_rss_mib": e_rss, "engine_db_mib": db.stat().st_size / 2**20,
                        "ogr2ogr_s": o_t, "ogr2ogr_rss_mib": o_rss,
                        "ogr2ogr_db_mib": ogr.stat().st_size / 2**20 if ogr.exists() else float("nan")}
    print(json.dumps(report["import"]), flush=True)

    # 2. The containment question against the peers.
    if not args.skip_containment:
        asked = fixes[:args.containment_fixes] if args.containment_fixes else fixes
        report["containment_fixes"] = len(asked)
        peers = containment_peers(db, fences, asked, postgis=not args.no_postgis, runs=args.runs, sql_peers=not args.no_sql_peers)
        report["containment"] = {name: {"s": t, "pairs": r[1], "checksum": str(r[0])} for name, (t, r) in peers.items()}

    # 3. Full judgement: fresh state each run (the reset is not timed), on the
    # catalog without conditions and on the same catalog with the default IN
    # and OUT per area plus a filtered IN and a DWELL on a share of areas,
    # which writes notifications. The two alternate, run after run.
    extra = work / "conditions.csv"
    n_extra = workload2.write_conditions(extra, area_ids, 2 * n_fences + 1, share=args.condition_share)
    report["conditions"] = {"default_in_out": 2 * n_fences, "filtered_and_dwell": n_extra}

    def with_conditions(target, *init_args):
        subprocess.run([CLI, "init", target, *init_args], check=True, capture_output=True)
        subprocess.run([CLI, "import", target, fences, "--with-default-conditions"], check=True, capture_output=True)
        subprocess.run([CLI, "conditions", "import", target, extra], check=True, capture_output=True)
        return target
    cond_db = with_conditions(work / "engine-conditions.db")

    def judge(target, *extra_args, cli=CLI):
        subprocess.run([cli, "reset", target, "--notifications"], check=True, capture_output=True)
        t, rss = timed_command([cli, "judge", target, "--fixes", fixes_csv, "--quiet", *extra_args])
        row = subprocess.run(["sqlite3", target, "SELECT judged, transitions, notifications FROM gf_runs ORDER BY run_id DESC LIMIT 1"],
                             capture_output=True, text=True).stdout.strip()
        return t, rss, row

    def summary(runs):
        t = statistics.median(r[0] for r in runs)
        judged, transitions, notes = (int(x) for x in runs[-1][2].split("|"))
        return {"s": t, "runs_s": [round(r[0], 2) for r in runs], "fixes_per_s": n_fixes / t, "rss_mib": max(r[1] for r in runs),
                "transitions": transitions, "notifications": notes, "notifications_per_s": notes / t, "notifications_per_fix": notes / n_fixes}

    def judgement(plain_db, conditions_db):
        plain, conditioned = [], []
        for _ in range(args.runs):
            plain.append(judge(plain_db))
            conditioned.append(judge(conditions_db))
        j = {"no_conditions": summary(plain), "with_conditions": summary(conditioned)}
        j["marginal_us_per_notification"] = (j["with_conditions"]["s"] - j["no_conditions"]["s"]) / max(1, j["with_conditions"]["notifications"]) * 1e6
        return j
    report["judgement"] = judgement(db, cond_db)
    j = report["judgement"]
    # One run each with --out and with --explain (their own output paths).
    out_csv = work / "notifications.csv"
    j["with_out_csv_s"] = judge(cond_db, "--out", out_csv)[0]
    j["output_hashes"] = output_hashes(cond_db, out_csv)
    j["with_explain_s"] = judge(cond_db, "--explain")[0]
    j["explain_rows"] = int(subprocess.run(["sqlite3", cond_db, "SELECT count(*) FROM gf_explain"], capture_output=True, text=True).stdout)
    if args.compare_dist:
        other_csv = work / "notifications-compared.csv"
        judge(cond_db, "--out", other_csv, cli=args.compare_dist / "geofence")
        j["compared_dist"] = str(args.compare_dist)
        j["compared_output_hashes"] = output_hashes(cond_db, other_csv)
    print(json.dumps(report["judgement"]), flush=True)
    # The same judgement on catalogs with larger pages (`init --page-size`), each
    # catalog made afresh; its output must be the default catalog's, byte for byte.
    if args.batch_page_size:
        n = str(args.batch_page_size)
        big_plain, big_cond = work / f"engine-{n}.db", work / f"engine-conditions-{n}.db"
        subprocess.run([CLI, "init", big_plain, "--page-size", n], check=True, capture_output=True)
        subprocess.run([CLI, "import", big_plain, fences], check=True, capture_output=True)
        b = judgement(big_plain, with_conditions(big_cond, "--page-size", n))
        big_csv = work / f"notifications-{n}.csv"
        judge(big_cond, "--out", big_csv)
        b["page_size"] = args.batch_page_size
        b["output_hashes"] = output_hashes(big_cond, big_csv)
        report["judgement_batch_pages"] = b
        print(json.dumps(b), flush=True)

    # 4. A single checkLocation, warm: one subject walking, one gf_check per fix (benchmarks/check.py);
    # and an interleaved stream of every subject's fixes in time order, with conditions.
    if not args.skip_check:
        report["check"] = check.latencies(db, args.size, runs=max(3, args.runs))
        print(json.dumps(report["check"]), flush=True)
    subprocess.run([CLI, "reset", cond_db, "--notifications"], check=True, capture_output=True)
    report["check_interleaved"] = check.interleaved(cond_db, fixes)
    print(json.dumps(report["check_interleaved"]), flush=True)

    out_dir = ROOT / "out"
    out_dir.mkdir(exist_ok=True)
    name = f"bench-{args.size}" + ("" if args.workload == "city" else f"-{args.workload}")
    (out_dir / f"{name}.json").write_text(json.dumps(report, indent=1))
    print(markdown(report))
    try:
        chart(report, out_dir / f"{name}.png")
        print(f"chart: out/{name}.png (copy it to benchmarks/ with the results)")
    except ImportError:
        print("no chart: matplotlib is not installed (benchmarks/install-peers.sh installs it)")


def output_hashes(db, out_csv):
    """SHA-256 (first 16 hex digits) of the notifications through the
    documented SQL in canonical order, and of the --out file."""
    rows = subprocess.run(["sqlite3", db, "SELECT subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m "
                           "FROM gf_notifications ORDER BY subject_id, ts, area_id, condition_id"],
                          capture_output=True, check=True).stdout
    return {"notifications_sql": hashlib.sha256(rows).hexdigest()[:16],
            "out_csv": hashlib.sha256(Path(out_csv).read_bytes()).hexdigest()[:16]}


if __name__ == "__main__":
    main()
