"""Issue 22: a million fences over a country (benchmarks/workload3.py), each
command timed as a user runs it, process start to exit, with its peak RSS:

  1. `geofence import --with-default-conditions` (into a fresh `init`);
  2. `geofence locate --fixes` on the containment question (the fixes with
     accuracy 0, so that every pair is "inside"), and DuckDB's spatial join
     from its own stored catalog (benchmarks/duckdb_peer.py, run as its own
     process); the two must agree on the number of pairs and the checksum;
  3. `geofence judge --fixes` with the default IN and OUT of every area.

    .venv-test/bin/python benchmarks/million.py [--work DIR] [--fences 1000000] [--fixes 1000000]

Wall time, user and system CPU and peak RSS come from GNU time. The
workload is generated into --work once (fences.geojson, fixes.csv) and kept,
with the DuckDB catalog, for the next run; the engine's database is imported
afresh by every run. Prints a Markdown table and writes --work/report.json.
"""
import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import workload3  # noqa: E402
from peers import checksum  # noqa: E402

try:  # benchmarks/install-peers.sh puts it in .venv-test
    import duckdb_peer
except ImportError:
    duckdb_peer = None


def measured(args):
    """Runs a command under GNU time: (wall s, peak RSS MiB, user s, sys s, its stderr)."""
    out = subprocess.run(["/usr/bin/time", "-f", "GNUTIME %e %M %U %S", *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{args} failed:\n{out.stderr}")
    line = [x for x in out.stderr.splitlines() if x.startswith("GNUTIME ")][-1]
    wall, rss, user, sys_s = line.split()[1:]
    return {"s": float(wall), "rss_mib": int(rss) / 1024, "user_s": float(user), "sys_s": float(sys_s)}, out.stderr


def features(path):
    """The fences of a file written by workload.write_fences, one per line, without reading it whole."""
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line.startswith('{"type":"Feature"'):
                yield json.loads(line)


def write_points(fixes_csv, points_csv):
    """The containment question's fixes: the same positions, accuracy 0, ts = the fix's index."""
    with open(fixes_csv) as src, open(points_csv, "w") as dst:
        next(src)
        dst.write("subject_id,ts,lat,lon,accuracy_m\n")
        for i, line in enumerate(src):
            _, _, lat, lon, _ = line.split(",")
            dst.write(f"s,{i},{lat},{lon},0\n")


def engine_pairs(pairs_csv):
    """(fix indices, fence indices) of `locate --fixes`'s CSV: row is the
    fix's 1-based row, area_id F0000123 is fence 123."""
    if duckdb_peer:
        con = duckdb_peer.duckdb.connect()
        res = con.execute("""SELECT "row" - 1 AS fi, CAST(substr(area_id, 2) AS BIGINT) AS ai
                             FROM read_csv(?, header = true, columns = {'row': 'BIGINT', 'area_id': 'VARCHAR', 'verdict': 'VARCHAR'})""",
                          [str(pairs_csv)]).fetchnumpy()
        con.close()
        return np.asarray(res["fi"]), np.asarray(res["ai"])
    fi, ai = [], []
    with open(pairs_csv) as f:
        next(f)
        for line in f:
            r, a, _ = line.split(",")
            fi.append(int(r) - 1); ai.append(int(a[1:]))
    return np.array(fi), np.array(ai)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/gf-million"))
    ap.add_argument("--fences", type=int, default=1_000_000)
    ap.add_argument("--fixes", type=int, default=1_000_000)
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="the build whose geofence is measured")
    ap.add_argument("--skip-duckdb", action="store_true")
    ap.add_argument("--skip-judge", action="store_true")
    args = ap.parse_args()
    cli = args.dist / "geofence"
    w = args.work
    w.mkdir(parents=True, exist_ok=True)
    fences, fixes_csv, points_csv = w / "fences.geojson", w / "fixes.csv", w / "points.csv"
    stamp = w / "workload.json"
    size = {"fences": args.fences, "fixes": args.fixes, "subjects": args.subjects}
    if not stamp.exists() or json.loads(stamp.read_text()) != size:
        print(f"writing the workload into {w}", flush=True)
        workload3.write_fences(fences, args.fences)
        workload3.write_fixes(fixes_csv, args.fixes, args.subjects)
        write_points(fixes_csv, points_csv)
        (w / "catalog.duckdb").unlink(missing_ok=True)
        stamp.write_text(json.dumps(size))
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "dist": str(args.dist), **size}

    # 1. Import, with the default IN and OUT of every area.
    db = w / "engine.db"
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        p.unlink(missing_ok=True)
    subprocess.run([cli, "init", db], check=True, capture_output=True)
    report["import"], _ = measured([cli, "import", db, fences, "--with-default-conditions"])
    report["import"]["db_mib"] = db.stat().st_size / 2**20
    report["import"]["geojson_mib"] = fences.stat().st_size / 2**20
    print("import", json.dumps(report["import"]), flush=True)

    # 2. The containment question: the engine's command, then DuckDB's.
    pairs_csv = w / "pairs.csv"
    report["locate"], err = measured([cli, "locate", db, "--fixes", points_csv, "--out", pairs_csv])
    m = re.search(r"catalog loaded in ([0-9.]+) s, fixes located in ([0-9.]+) s", err)
    report["locate"]["load_s"], report["locate"]["locating_s"] = float(m.group(1)), float(m.group(2))
    sums = {"engine": checksum(*engine_pairs(pairs_csv))}
    report["locate"]["pairs"], report["locate"]["checksum"] = sums["engine"][1], str(sums["engine"][0])
    print("locate", json.dumps(report["locate"]), flush=True)
    if duckdb_peer and not args.skip_duckdb:
        catalog = w / "catalog.duckdb"
        if not catalog.exists():
            print("building DuckDB's catalog (not timed)", flush=True)
            duckdb_peer.build_catalog(catalog, features(fences))
        answer = w / "duckdb-pairs.npz"
        report["duckdb"], err = measured([sys.executable, ROOT / "benchmarks" / "duckdb_peer.py", catalog, points_csv, answer])
        report["duckdb"]["query_s"] = float(re.search(r"query ([0-9.]+) s", err).group(1))
        got = np.load(answer)
        sums["duckdb"] = checksum(got["fi"], got["ai"])
        report["duckdb"]["pairs"], report["duckdb"]["checksum"] = sums["duckdb"][1], str(sums["duckdb"][0])
        print("duckdb", json.dumps(report["duckdb"]), flush=True)
        if sums["duckdb"] != sums["engine"]:
            raise SystemExit(f"the engine and DuckDB disagree: {sums}")

    # 3. The full judgement, from a fresh state.
    if not args.skip_judge:
        subprocess.run([cli, "reset", db, "--notifications"], check=True, capture_output=True)
        report["judge"], _ = measured([cli, "judge", db, "--fixes", fixes_csv, "--quiet"])
        row = subprocess.run(["sqlite3", db, "SELECT judged, transitions, notifications FROM gf_runs ORDER BY run_id DESC LIMIT 1"],
                             capture_output=True, text=True, check=True).stdout.strip()
        judged, transitions, notes = (int(x) for x in row.split("|"))
        report["judge"].update(judged=judged, transitions=transitions, notifications=notes,
                               fixes_per_s=args.fixes / report["judge"]["s"])
        print("judge", json.dumps(report["judge"]), flush=True)

    (w / "report.json").write_text(json.dumps(report, indent=1))
    print(markdown(report))


def markdown(r):
    def row(name, v, extra=""):
        return (f"| {name} | {v['s']:.2f} s | {v['user_s']:.2f} + {v['sys_s']:.2f} s | {v['rss_mib']:,.0f} MiB | {extra} |")
    i, loc = r["import"], r["locate"]
    lines = [f"{r['fences']:,} fences, {r['fixes']:,} fixes of {r['subjects']:,} subjects ({r['date']}, build {r['dist']})", "",
             "| command | wall | user + sys CPU | peak RSS | |", "|---|---:|---:|---:|---|",
             row("`geofence import --with-default-conditions`", i,
                 f"{i['geojson_mib']:.0f} MiB GeoJSON → {i['db_mib']:.0f} MiB database"),
             row("`geofence locate --fixes` (containment, accuracy 0)", loc,
                 f"catalog loaded in {loc['load_s']:.2f} s, located in {loc['locating_s']:.2f} s; {loc['pairs']:,} pairs")]
    if "duckdb" in r:
        d = r["duckdb"]
        lines.append(row("DuckDB 1.4.4 spatial join, own stored catalog (Python process)", d,
                         f"query {d['query_s']:.2f} s; {d['pairs']:,} pairs, checksum "
                         + ("equal" if d["checksum"] == loc["checksum"] else "DIFFERENT")
                         + f"; engine {d['s'] / loc['s']:.2f}× DuckDB end to end"))
    if "judge" in r:
        j = r["judge"]
        lines.append(row("`geofence judge --fixes` (default IN and OUT)", j,
                         f"{j['fixes_per_s']:,.0f} fixes/s; {j['transitions']:,} transitions, {j['notifications']:,} notifications"))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
