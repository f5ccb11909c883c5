# Longer than 300 lines: one benchmark of the whole issue, each engine timed as its own process, with the tables it reports.
"""Issue 22: a million fences over a country (benchmarks/workload3.py), each
command timed as a user runs it, process start to exit, with its peak RSS:

  1. `geofence import --with-default-conditions` (into a fresh `init`), and
     GDAL's `ogr2ogr` into a fresh SpatiaLite database as suite.py runs it
     (the file's geometries as they are, circles staying points, with an
     R*Tree): wall time, peak RSS and database size each;
  2. `geofence locate --fixes` on the containment question (the fixes with
     accuracy 0, so that every pair is "inside"), DuckDB's spatial join from
     its own stored catalog (benchmarks/duckdb_peer.py) and shapely's STRtree
     join from the GeoJSON (benchmarks/shapely_peer.py, as peers.py asks
     it), each peer as its own process; all must agree on the number of
     pairs and the checksum, or the script stops;
  3. `geofence judge --fixes` with the default IN and OUT of every area, at
     each count of --judge-fixes (by default --fixes and ten times as many):
     --fixes judges fixes.csv (--subjects subjects), any other count its own
     file of workload3's random walks of --judge-subjects subjects (by
     default ten times --subjects: 10,000, a day of a fleet, for 10M fixes).

    .venv-test/bin/python benchmarks/million.py [--work DIR] [--fences 1000000] [--fixes 1000000] [--judge-fixes 1000000,10000000]

Wall time, user and system CPU and peak RSS come from GNU time. The
workload is generated into --work once (fences.geojson, fixes.csv, the
other counts' fixes-N-of-S-subjects.csv) and kept, with the DuckDB catalog,
for the next run; the engine's and ogr2ogr's databases are made afresh by
every run. Prints a Markdown table of every figure, then the issue's
targets with this run's ratios, and writes --work/report.json.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

# The benchmarks time one process on a 2-core machine: OpenBLAS's own
# threads, spinning idle after numpy loads, would run beside it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import workload3  # noqa: E402
from workload import read_features  # noqa: E402
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


def write_points(fixes_csv, points_csv):
    """The containment question's fixes: the same positions, accuracy 0, ts = the fix's index."""
    with open(fixes_csv) as src, open(points_csv, "w") as dst:
        next(src)
        dst.write("subject_id,ts,lat,lon,accuracy_m\n")
        for i, line in enumerate(src):
            _, _, lat, lon, _ = line.split(",")
            dst.write(f"s,{i},{lat},{lon},0\n")


def removed(db):
    """Deletes a SQLite database and its WAL files, if there."""
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        p.unlink(missing_ok=True)


def conditions_of(db):
    """How many conditions the import wrote and the MiB of their table and
    indexes (SQLite's dbstat): ogr2ogr's database has none, so its size is
    compared with the whole and with the rest. {} if the shell has no dbstat."""
    out = subprocess.run(["sqlite3", db, "SELECT (SELECT count(*) FROM gf_conditions), sum(pgsize) FROM dbstat "
                          "WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'gf_conditions')"],
                         capture_output=True, text=True)
    if out.returncode != 0 or "|" not in out.stdout:
        return {}
    count, size = out.stdout.strip().split("|")
    return {"conditions": int(count), "conditions_mib": int(size or 0) / 2**20}


def engine_pairs(pairs_csv, fence_of=None):
    """(fix indices, fence indices) of `locate --fixes`'s CSV: row is the
    fix's 1-based row, area_id F0000123 is fence 123; with `fence_of` (area_id
    → its feature's index in the file), any ids."""
    if fence_of is not None:
        fi, ai = [], []
        with open(pairs_csv, newline="") as f:
            rows = csv.reader(f)
            next(rows)
            for r, a, _ in rows:
                fi.append(int(r) - 1); ai.append(fence_of[a])
        return np.array(fi), np.array(ai)
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


def counts(text):
    """--judge-fixes: positive fix counts, comma-separated."""
    try:
        values = [int(x.replace("_", "")) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of fix counts: {text!r}")
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"fix counts must be positive: {text!r}")
    return values


def judge_files(w, args):
    """[(fix count, subjects, CSV path)] of the judgement at each --judge-fixes
    count; a count other than --fixes gets its own file, written once (through
    a temporary name, so that an interrupted run leaves none) and kept."""
    files = []
    for n in args.judge_fixes:
        if n == args.fixes:
            files.append((n, args.subjects, w / "fixes.csv"))
            continue
        subjects = min(args.judge_subjects, n)
        path = w / f"fixes-{n}-of-{subjects}-subjects.csv"
        if not path.exists():
            print(f"writing {n:,} fixes of {subjects:,} subjects into {path}", flush=True)
            part = path.with_suffix(".part")
            workload3.write_fixes(part, n, subjects)
            part.rename(path)
        files.append((n, subjects, path))
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/gf-million"))
    ap.add_argument("--fences", type=int, default=1_000_000)
    ap.add_argument("--fixes", type=int, default=1_000_000)
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--judge-fixes", type=counts,
                    help="fix counts to judge, comma-separated (default: --fixes and ten times --fixes)")
    ap.add_argument("--judge-subjects", type=int,
                    help="subjects of the judged counts other than --fixes (default: ten times --subjects)")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="the build whose geofence is measured")
    ap.add_argument("--page-size", type=int, help="the catalogs' page size (`geofence init --page-size`; default SQLite's)")
    ap.add_argument("--skip-plain-import", action="store_true", help="skip `geofence import` without conditions")
    ap.add_argument("--skip-ogr2ogr", action="store_true")
    ap.add_argument("--skip-duckdb", action="store_true")
    ap.add_argument("--skip-shapely", action="store_true")
    ap.add_argument("--skip-judge", action="store_true")
    args = ap.parse_args()
    if args.judge_fixes is None:
        args.judge_fixes = [args.fixes, 10 * args.fixes]
    if args.judge_subjects is None:
        args.judge_subjects = 10 * args.subjects
    if min(args.fences, args.fixes, args.subjects, args.judge_subjects) <= 0:
        ap.error("--fences, --fixes, --subjects and --judge-subjects must be positive")
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
    judged = judge_files(w, args) if not args.skip_judge else []
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "dist": str(args.dist), **size}

    # 1. Import, with the default IN and OUT of every area.
    db = w / "engine.db"
    removed(db)
    paged = ["--page-size", str(args.page_size)] if args.page_size else []
    report["page_size"] = args.page_size or 4096
    subprocess.run([cli, "init", db, *paged], check=True, capture_output=True)
    report["import"], _ = measured([cli, "import", db, fences, "--with-default-conditions"])
    report["import"]["db_mib"] = db.stat().st_size / 2**20
    report["import"]["geojson_mib"] = fences.stat().st_size / 2**20
    report["import"].update(conditions_of(db))
    print("import", json.dumps(report["import"]), flush=True)
    if not args.skip_plain_import:
        # The areas alone, as suite.py imports them: the same content as ogr2ogr's database.
        plain = w / "engine-plain.db"
        removed(plain)
        subprocess.run([cli, "init", plain, *paged], check=True, capture_output=True)
        report["plain_import"], _ = measured([cli, "import", plain, fences])
        report["plain_import"]["db_mib"] = plain.stat().st_size / 2**20
        removed(plain)   # not used again: its space back
        print("plain import", json.dumps(report["plain_import"]), flush=True)
    if not args.skip_ogr2ogr:
        # As suite.py runs it, as a user would: the file's geometries as
        # they are (circles stay points), a SpatiaLite database with an R*Tree.
        ogr = w / "ogr2ogr.db"
        ogr.unlink(missing_ok=True)
        report["ogr2ogr"], _ = measured(["ogr2ogr", "-f", "SQLite", "-dsco", "SPATIALITE=YES", "-nln", "fences",
                                         "-lco", "SPATIAL_INDEX=YES", ogr, fences])
        report["ogr2ogr"]["db_mib"] = ogr.stat().st_size / 2**20
        report["ogr2ogr"]["version"] = subprocess.run(["ogr2ogr", "--version"], capture_output=True, text=True).stdout.split(",")[0].strip()
        print("ogr2ogr", json.dumps(report["ogr2ogr"]), flush=True)

    # 2. The containment question: the engine's command, then DuckDB's and shapely's.
    pairs_csv = w / "pairs.csv"
    report["locate"], err = measured([cli, "locate", db, "--fixes", points_csv, "--out", pairs_csv])
    m = re.search(r"catalog loaded in ([0-9.]+) s, fixes located in ([0-9.]+) s", err)
    report["locate"]["load_s"], report["locate"]["locating_s"] = float(m.group(1)), float(m.group(2))
    sums = {"engine": checksum(*engine_pairs(pairs_csv))}
    report["locate"]["pairs"], report["locate"]["checksum"] = sums["engine"][1], str(sums["engine"][0])
    print("locate", json.dumps(report["locate"]), flush=True)

    def agree(key, name, answer):
        """A peer's pairs (an .npz of fix and area indices): counted, summed, printed; the run stops unless they are the engine's."""
        got = np.load(answer)
        sums[key] = checksum(got["fi"], got["ai"])
        report[key]["pairs"], report[key]["checksum"] = sums[key][1], str(sums[key][0])
        print(key, json.dumps(report[key]), flush=True)
        if sums[key] != sums["engine"]:
            raise SystemExit(f"the engine and {name} disagree: {sums}")

    if duckdb_peer and not args.skip_duckdb:
        catalog = w / "catalog.duckdb"
        if not catalog.exists():
            print("building DuckDB's catalog (not timed)", flush=True)
            duckdb_peer.build_catalog(catalog, read_features(fences))
        answer = w / "duckdb-pairs.npz"
        report["duckdb"], err = measured([sys.executable, ROOT / "benchmarks" / "duckdb_peer.py", catalog, points_csv, answer])
        report["duckdb"]["query_s"] = float(re.search(r"query ([0-9.]+) s", err).group(1))
        agree("duckdb", "DuckDB", answer)
    if not args.skip_shapely:
        answer = w / "shapely-pairs.npz"
        report["shapely"], err = measured([sys.executable, ROOT / "benchmarks" / "shapely_peer.py", fences, points_csv, answer])
        m = re.search(r"fences loaded ([0-9.]+) s, fixes read ([0-9.]+) s, query ([0-9.]+) s", err)
        report["shapely"].update(load_s=float(m.group(1)), read_fixes_s=float(m.group(2)), query_s=float(m.group(3)))
        agree("shapely", "shapely", answer)

    # 3. The full judgement at each count, each from a fresh state.
    for n, subjects, path in judged:
        subprocess.run([cli, "reset", db, "--notifications"], check=True, capture_output=True)
        run, _ = measured([cli, "judge", db, "--fixes", path, "--quiet"])
        row = subprocess.run(["sqlite3", db, "SELECT judged, transitions, notifications FROM gf_runs ORDER BY run_id DESC LIMIT 1"],
                             capture_output=True, text=True, check=True).stdout.strip()
        judged_fixes, transitions, notes = (int(x) for x in row.split("|"))
        rows = n // subjects * subjects   # workload.fixes writes whole steps of every subject
        run.update(judged=judged_fixes, transitions=transitions, notifications=notes, fixes_per_s=rows / run["s"],
                   fixes=rows, subjects=subjects, db_mib=db.stat().st_size / 2**20)
        if path == fixes_csv:
            report["judge"] = run
        else:
            report.setdefault("judge_more", []).append(run)
        print("judge", json.dumps(run), flush=True)

    (w / "report.json").write_text(json.dumps(report, indent=1))
    print(markdown(report))


GIB = 1024  # MiB


def markdown(r):
    def row(name, v, extra=""):
        return (f"| {name} | {v['s']:.2f} s | {v['user_s']:.2f} + {v['sys_s']:.2f} s | {v['rss_mib']:,.0f} MiB | {extra} |")
    i, loc = r["import"], r["locate"]
    lines = [f"{r['fences']:,} fences, {r['fixes']:,} fixes of {r['subjects']:,} subjects ({r['date']}, build {r['dist']})", "",
             "| command | wall | user + sys CPU | peak RSS | |", "|---|---:|---:|---:|---|",
             row("`geofence import --with-default-conditions`", i,
                 f"{i['geojson_mib']:.0f} MiB GeoJSON → {i['db_mib']:.0f} MiB database"
                 + (f" ({i['conditions_mib']:.0f} MiB of it the {i['conditions']:,} conditions)" if "conditions" in i else ""))]
    if "plain_import" in r:
        lines.append(row("`geofence import` (the areas alone, as ogr2ogr; database deleted after)", r["plain_import"],
                         f"{r['plain_import']['db_mib']:.0f} MiB database"))
    if "ogr2ogr" in r:
        o = r["ogr2ogr"]
        lines.append(row(f"`ogr2ogr` ({o['version']}) into SpatiaLite, with an R*Tree", o,
                         f"{o['db_mib']:.0f} MiB database; engine's import {o['s'] / i['s']:.2f}× as fast, "
                         f"its database {i['db_mib'] / o['db_mib']:.2f}× the size"))
    lines.append(row("`geofence locate --fixes` (containment, accuracy 0)", loc,
                     f"catalog loaded in {loc['load_s']:.2f} s, located in {loc['locating_s']:.2f} s; {loc['pairs']:,} pairs"))
    def peer(key, name, label, timing):
        if key in r:
            p = r[key]
            lines.append(row(label, p, f"{timing(p)}; {p['pairs']:,} pairs, checksum "
                             + ("equal" if p["checksum"] == loc["checksum"] else "DIFFERENT")
                             + f"; engine {p['s'] / loc['s']:.2f}× {name} end to end"))
    peer("duckdb", "DuckDB", "DuckDB 1.4.4 spatial join, own stored catalog (Python process)",
         lambda p: f"query {p['query_s']:.2f} s")
    peer("shapely", "shapely", "shapely 2 STRtree join from the GeoJSON (Python process)",
         lambda p: f"fences loaded {p['load_s']:.2f} s, query {p['query_s']:.2f} s")
    judges = ([r["judge"]] if "judge" in r else []) + r.get("judge_more", [])
    for j in judges:
        label = "`geofence judge --fixes` (default IN and OUT)"
        if j is not r.get("judge"):
            label += f", {j['fixes']:,} fixes of {j['subjects']:,} subjects"
        lines.append(row(label, j, f"{j['fixes_per_s']:,.0f} fixes/s; {j['transitions']:,} transitions, {j['notifications']:,} notifications"))
    lines += ["", targets(r, judges)]
    return "\n".join(lines)


def targets(r, judges):
    """Issue 22's targets (set for 1,000,000 fences) against this run's figures."""
    def met(ok):
        return "met" if ok else "**not met**"
    i, loc = r["import"], r["locate"]
    lines = ["| issue 22 target (at 1,000,000 fences) | this run | |", "|---|---|---|"]
    if "ogr2ogr" in r:
        o = r["ogr2ogr"]
        lines.append(f"| import no slower than ogr2ogr | ogr2ogr {o['s']:.2f} s / engine {i['s']:.2f} s = {o['s'] / i['s']:.2f}× | {met(i['s'] <= o['s'])} |")
        if "plain_import" in r:
            p = r["plain_import"]
            lines.append(f"| (the same, the areas alone: `geofence import` without conditions) | ogr2ogr {o['s']:.2f} s / engine {p['s']:.2f} s = {o['s'] / p['s']:.2f}× | {met(p['s'] <= o['s'])} |")
        lines.append(f"| database ≤ 1.5× ogr2ogr's | {i['db_mib']:.0f} / {o['db_mib']:.0f} MiB = {i['db_mib'] / o['db_mib']:.2f}× | {met(i['db_mib'] <= 1.5 * o['db_mib'])} |")
        # The areas alone: the plain import's database, or this one less its conditions.
        rest = r["plain_import"]["db_mib"] if "plain_import" in r else i["db_mib"] - i["conditions_mib"] if "conditions" in i else None
        if rest is not None:
            lines.append(f"| (the same, the areas alone: ogr2ogr writes no conditions) | {rest:.0f} / {o['db_mib']:.0f} MiB = {rest / o['db_mib']:.2f}× | {met(rest <= 1.5 * o['db_mib'])} |")
    if "duckdb" in r:
        d = r["duckdb"]
        lines.append(f"| containment ≥ 3× DuckDB end to end | DuckDB {d['s']:.2f} s / engine {loc['s']:.2f} s = {d['s'] / loc['s']:.2f}× | {met(d['s'] >= 3 * loc['s'])} |")
    lines.append(f"| containment peak RSS ≤ 2 GiB | {loc['rss_mib']:,.0f} MiB | {met(loc['rss_mib'] <= 2 * GIB)} |")
    for j in judges:
        lines.append(f"| judgement ≥ 300,000 fixes/s, {j['fixes']:,} fixes | {j['fixes_per_s']:,.0f} fixes/s | {met(j['fixes_per_s'] >= 300_000)} |")
        lines.append(f"| judgement peak RSS ≤ 2 GiB, {j['fixes']:,} fixes | {j['rss_mib']:,.0f} MiB | {met(j['rss_mib'] <= 2 * GIB)} |")
    # Beside the targets: the peers' query phases against the engine's locating, each with its data loaded.
    for name, key in (("DuckDB", "duckdb"), ("shapely", "shapely")):
        if key in r:
            v = r[key]
            lines.append(f"| (no target) containment, query phase: {name}'s query / engine's locating | "
                         f"{v['query_s']:.2f} s / {loc['locating_s']:.2f} s = {v['query_s'] / loc['locating_s']:.2f}× | |")
    if "shapely" in r:
        sh = r["shapely"]
        lines.append(f"| (no target) containment end to end: shapely / engine | {sh['s']:.2f} s / {loc['s']:.2f} s = {sh['s'] / loc['s']:.2f}× | |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
