"""Issue 39's containment target on any of the three generators: `geofence
locate --fixes` against DuckDB's spatial join, each from its own stored
catalog, end to end, in alternation.

    .venv-test/bin/python benchmarks/locate_duckdb.py --workload national --fences 100000 --work /tmp/ld-n100k
    .venv-test/bin/python benchmarks/locate_duckdb.py --workload city --fences 100000 --work /tmp/ld-c100k
    .venv-test/bin/python benchmarks/locate_duckdb.py --workload three-cities --fences 100000 --work /tmp/ld-t100k

Workloads: `national` (workload3.py: fences of realistic density over a
country, sparse at 100k), `city` (workload.py: one dense city) and
`three-cities` (workload2.py); `given`: the work folder's own
fences.geojson and fixes.csv (columns subject_id,ts,lat,lon,accuracy_m,
any area ids), made by someone else, --fences and --fixes ignored. The
fixes are asked with accuracy 0 (million.py's `write_points`). Both catalogs are made once per
work folder and not timed: the engine's by `geofence import`, DuckDB's by
benchmarks/duckdb_peer.py. Each round runs the engine's command, then
DuckDB's (a process of its own: open, load the extension, read the CSV,
join); the engine's pairs must equal DuckDB's (count and checksum) or the
script stops. Reported: each side's median wall time over --rounds, the
ratio of the medians, and the engine's own split (catalog loaded / located).
`--dist` names the build (default dist/); `--also-dist OLD/dist` runs a
second build in the same alternation, whose pairs must be byte-identical.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import million
import workload
import workload2
import workload3
import duckdb_peer

ROOT = Path(__file__).resolve().parents[1]


def write_workload(w, kind, fences, fixes, subjects):
    """fences.geojson and points.csv (accuracy 0) in `w`, unless made already for the same size."""
    if kind == "given":
        missing = [f for f in ("fences.geojson", "fixes.csv") if not (w / f).exists()]
        if missing:
            raise SystemExit(f"--workload given: {w} has no {' and no '.join(missing)}")
        if not (w / "points.csv").exists():
            million.write_points(w / "fixes.csv", w / "points.csv")
        return
    stamp = w / "workload.json"
    size = {"workload": kind, "fences": fences, "fixes": fixes, "subjects": subjects}
    if stamp.exists() and json.loads(stamp.read_text()) == size:
        return
    print(f"writing the {kind} workload into {w}", flush=True)
    for old in ("catalog.duckdb", "engine.db"):
        (w / old).unlink(missing_ok=True)
    if kind == "national":
        workload3.write_fences(w / "fences.geojson", fences)
        workload3.write_fixes(w / "fixes.csv", fixes, subjects)
    elif kind == "city":
        workload.write_fences(w / "fences.geojson", fences)
        workload.write_fixes_csv(w / "fixes.csv", workload.fixes(fixes, subjects))
    else:
        workload2.write_fences(w / "fences.geojson", fences)
        workload2.write_fixes(w / "fixes.csv", fixes, subjects)
    million.write_points(w / "fixes.csv", w / "points.csv")
    stamp.write_text(json.dumps(size))


def engine_run(dist, db, points, out):
    r, err = million.measured([dist / "geofence", "locate", db, "--fixes", points, "--out", out])
    m = re.search(r"catalog loaded in ([0-9.]+) s, fixes located in ([0-9.]+) s", err)
    r["load_s"], r["locating_s"] = float(m.group(1)), float(m.group(2))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", choices=("national", "city", "three-cities", "given"), default="national")
    ap.add_argument("--fences", type=int, default=100_000)
    ap.add_argument("--fixes", type=int, default=1_000_000)
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3, help="0: make the workload and the catalogs only")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--also-dist", type=Path, help="another build, run in the same alternation (its pairs must be identical)")
    args = ap.parse_args()
    w = args.work
    w.mkdir(parents=True, exist_ok=True)
    write_workload(w, args.workload, args.fences, args.fixes, args.subjects)
    db, points, duck = w / "engine.db", w / "points.csv", w / "catalog.duckdb"
    if not db.exists():
        subprocess.run([args.dist / "geofence", "init", db], check=True, capture_output=True)
        subprocess.run([args.dist / "geofence", "import", db, w / "fences.geojson"], check=True, capture_output=True)
    if not duck.exists():
        print("building DuckDB's catalog (not timed)", flush=True)
        duckdb_peer.build_catalog(duck, workload.read_features(w / "fences.geojson"))
    if args.rounds == 0:
        return   # the workload and both catalogs made, nothing timed
    builds = {"engine": args.dist} | ({"engine (also)": args.also_dist} if args.also_dist else {})
    runs = {name: [] for name in [*builds, "duckdb"]}
    # A given file's ids are the user's: each is its feature's index, as DuckDB's catalog numbers them.
    fence_of = ({f["properties"]["area_id"]: i for i, f in enumerate(workload.read_features(w / "fences.geojson"))}
                if args.workload == "given" else None)
    for k in range(args.rounds):
        for name, dist in builds.items():
            out = w / f"pairs-{len(runs[name]) % 2}-{name.replace(' ', '')}.csv"
            runs[name].append(engine_run(dist, db, points, out))
            if k == 0:
                want = million.checksum(*million.engine_pairs(out, fence_of))
                if name != "engine" and out.read_bytes() != (w / "pairs-0-engine.csv").read_bytes():
                    raise SystemExit(f"{dist}'s pairs differ from {args.dist}'s")
        r, err = million.measured([sys.executable, ROOT / "benchmarks" / "duckdb_peer.py", duck, points, w / "duckdb-pairs.npz"])
        r["query_s"] = float(re.search(r"query ([0-9.]+) s", err).group(1))
        runs["duckdb"].append(r)
        if k == 0:
            import numpy as np
            got = np.load(w / "duckdb-pairs.npz")
            if million.checksum(got["fi"], got["ai"]) != want:
                raise SystemExit(f"the engine and DuckDB disagree: {want} against {million.checksum(got['fi'], got['ai'])}")
        print(json.dumps({name: rs[-1] for name, rs in runs.items()}), flush=True)
    med = {name: statistics.median(r["s"] for r in rs) for name, rs in runs.items()}
    what = f"{w} (given)" if args.workload == "given" else f"{args.workload}, {args.fences:,} fences, {args.fixes:,} fixes"
    print(f"\n{what}: {want[1]:,} pairs, checksum equal")
    for name in builds:
        split = runs[name][len(runs[name]) // 2]
        print(f"| {name} `locate --fixes` | {med[name]:.2f} s (median of {args.rounds}) | loaded {split['load_s']:.2f} s, "
              f"located {split['locating_s']:.2f} s, peak {max(r['rss_mib'] for r in runs[name]):.0f} MiB | "
              f"DuckDB {med['duckdb']:.2f} s: **{med['duckdb'] / med[name]:.2f}×** |")
    print(f"| DuckDB 1.4.4 spatial join | {med['duckdb']:.2f} s | query {statistics.median(r['query_s'] for r in runs['duckdb']):.2f} s, "
          f"peak {max(r['rss_mib'] for r in runs['duckdb']):.0f} MiB | |")


if __name__ == "__main__":
    main()
