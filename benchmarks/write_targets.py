"""Issue 38's targets for a batch, as ratios from one run: what storing a
run's notifications and state adds to judging, against what SQLite alone
takes to store the same notifications.

    .venv-test/bin/python benchmarks/write_targets.py WORK [--dist dist] [--rounds 3] [--shapely]

WORK holds fences.geojson and fixes.csv (subject_id, ts, lat, lon,
accuracy_m), and may hold conditions.csv (more conditions, as workload2.py
writes them); any generator's output, or files a user made. The script
makes two catalogs once: `cond.db` (the areas with their default IN and OUT
and conditions.csv) and `plain.db` (the same areas, no condition: the same
judgement with nothing to notify). Then, round after round, in turns A B C
D, D C B A, each from a reset state (the reset is not timed):

- judge:        `geofence judge cond.db --fixes fixes.csv`, wall time;
- judge --out:  the same, the notifications also written to a CSV file;
- stream-only:  the same with --out and the notifications not stored, when
                the build has the option;
- no conditions: `geofence judge plain.db --fixes fixes.csv`;
- floor:        SQLite alone (Python's sqlite3, one INSERT … SELECT from an
                attached file, BEGIN to COMMIT, WAL, the engine's cache and
                page size) storing the run's notifications as narrow integer
                rows with their (subject_key, ts_us) index into an empty
                table: the fewest bytes and index entries that can hold them.

Targets (the issue's): judge ≤ 1.25 × (no conditions + floor); a
notification's marginal cost ((judge − no conditions) / notifications) ≤
1.3 × the floor's per row; with --shapely, judge ≥ 5 × as fast as shapely's
STRtree containment-only join of the same fixes (one run, its own process).
Every judge run must store the same number of notifications. Medians;
ratios are of medians from this one run: never compare absolute times
across machines.
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from million import measured, removed, write_points  # noqa: E402

# The floor's table: the narrow layout of docs/write-path.md (its "b").
FLOOR_SCHEMA = """
CREATE TABLE rows (
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_key INTEGER NOT NULL, ts_us INTEGER NOT NULL,
    area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL, transition INTEGER NOT NULL CHECK (transition BETWEEN 0 AND 2),
    lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL, local_day INTEGER NOT NULL);
CREATE INDEX rows_by_subject ON rows (subject_key, ts_us);
"""
FLOOR_INSERT = """INSERT INTO rows (run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, local_day)
    SELECT run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, local_day FROM src.narrow ORDER BY rowid"""


def cli_run(cli, *args):
    return subprocess.run([str(cli), *map(str, args)], check=True, capture_output=True, text=True).stdout


def catalogs(cli, work):
    """cond.db and plain.db, made once (kept between runs of the script);
    kept ones are opened once by `cli`, which upgrades them to its schema
    (gf_check, in check_targets.py, does not upgrade behind a query)."""
    fences, conditions = work / "fences.geojson", work / "conditions.csv"
    for name, with_conditions in (("cond.db", True), ("plain.db", False)):
        db = work / name
        if db.exists():
            cli_run(cli, "settings", db)
            continue
        part = work / (name + ".part")
        removed(part)
        cli_run(cli, "init", part)
        cli_run(cli, "import", part, fences, *(["--with-default-conditions"] if with_conditions else []))
        if with_conditions and conditions.exists():
            cli_run(cli, "conditions", "import", part, conditions)
        part.rename(db)


def floor_source(work, judged):
    """WORK/floor-source.db: the judged run's notifications as narrow rows in
    id order (subjects keyed in byte order, areas by gf_areas.id, the time in
    microseconds, the day as UTC days: the values do not change the cost),
    read through the documented gf_notifications."""
    src = work / "floor-source.db"
    removed(src)
    db = sqlite3.connect(str(src), isolation_level=None)
    db.execute(f"ATTACH 'file:{judged}?mode=ro' AS cat")
    db.executescript("""
        CREATE TABLE subj (subject_key INTEGER PRIMARY KEY, subject_id TEXT NOT NULL UNIQUE);
        INSERT INTO subj (subject_id) SELECT DISTINCT subject_id FROM cat.gf_notifications ORDER BY 1;
        CREATE TABLE narrow AS SELECT n.run_id, s.subject_key,
            CAST(round((julianday(substr(n.ts, 1, 19)) - 2440587.5) * 86400) AS INTEGER) * 1000000
              + CAST(substr(n.ts || '.000000', 21, 6) AS INTEGER) AS ts_us,
            a.id AS area_key, n.condition_id, CASE n.transition WHEN 'IN' THEN 0 WHEN 'OUT' THEN 1 ELSE 2 END AS transition,
            n.lat, n.lon, n.accuracy_m, CAST(julianday(substr(n.ts, 1, 10)) - 2440587.5 AS INTEGER) AS local_day
            FROM cat.gf_notifications AS n JOIN subj AS s USING (subject_id) JOIN cat.gf_areas AS a USING (area_id) ORDER BY n.id;
    """)
    count = db.execute("SELECT count(*) FROM narrow").fetchone()[0]
    db.close()
    return src, count


def floor_once(work, src):
    """Seconds SQLite alone takes to store the rows, BEGIN to COMMIT."""
    path = work / "floor.db"
    removed(path)
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA cache_size = -262144")
    db.executescript(FLOOR_SCHEMA)
    db.execute(f"ATTACH 'file:{src}?mode=ro' AS src")
    db.execute("SELECT count(*) FROM src.narrow").fetchone()   # its pages warm, as the engine's fixes are
    started = time.perf_counter()
    db.execute("BEGIN")
    db.execute(FLOOR_INSERT)
    db.execute("COMMIT")
    seconds = time.perf_counter() - started
    db.close()
    removed(path)
    return {"s": seconds}


def stored_notifications(db):
    return int(subprocess.run(["sqlite3", str(db), "SELECT notifications FROM gf_runs ORDER BY run_id DESC LIMIT 1"],
                              capture_output=True, text=True, check=True).stdout.strip() or 0)


def stream_only_flag(cli):
    """The option that keeps notifications out of the catalog, if this build has one."""
    help_text = subprocess.run([str(cli), "judge", "--help"], capture_output=True, text=True).stdout
    for flag in ("--no-store-notifications", "--stream-only", "--no-store"):
        if flag in help_text:
            return flag
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path, help="folder with fences.geojson, fixes.csv and optionally conditions.csv")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="the build measured")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapely", action="store_true", help="also time shapely's STRtree join (fences one feature a line)")
    args = ap.parse_args()
    cli, w = args.dist / "geofence", args.work.resolve()
    fixes, out_csv = w / "fixes.csv", w / "out.csv"
    catalogs(cli, w)
    cond, plain = w / "cond.db", w / "plain.db"
    cli_run(cli, "reset", cond, "--notifications")
    cli_run(cli, "judge", cond, "--fixes", fixes, "--quiet")
    src, rows = floor_source(w, cond)
    stream = stream_only_flag(cli)

    def judge(db, *more):
        def once():
            cli_run(cli, "reset", db, "--notifications")
            result, _ = measured([cli, "judge", db, "--fixes", fixes, "--quiet", *more])
            result["notifications"] = stored_notifications(db)
            return result
        return once

    variants = {"judge": judge(cond), "judge --out": judge(cond, "--out", out_csv),
                "no conditions": judge(plain), "floor": lambda: floor_once(w, src)}
    if stream:
        variants["stream-only"] = judge(cond, "--out", out_csv, stream)
    times = {k: [] for k in variants}
    for r in range(args.rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for k in order:
            result = variants[k]()
            times[k].append(result)
            print(f"round {r + 1} {k}: {json.dumps(result)}", flush=True)
    for k in ("judge", "judge --out"):
        counts = {t["notifications"] for t in times[k]}
        if counts != {rows}:
            raise SystemExit(f"{k} stored {counts} notifications, the first run {rows}")

    med = {k: statistics.median(t["s"] for t in v) for k, v in times.items()}
    rss = {k: max(t.get("rss_mib", 0) for t in v) for k, v in times.items()}
    report = {"work": str(w), "dist": str(args.dist), "notifications": rows, "fixes": sum(1 for _ in open(fixes)) - 1,
              "median_s": med, "peak_rss_mib": rss, "runs": times, "load": os.getloadavg()}
    floor_per_row = med["floor"] / rows
    marginal = (med["judge"] - med["no conditions"]) / rows
    report["targets"] = {
        "whole / (no conditions + floor)": med["judge"] / (med["no conditions"] + med["floor"]),
        "with --out / (no conditions + floor)": med["judge --out"] / (med["no conditions"] + med["floor"]),
        "marginal per notification / floor per row": marginal / floor_per_row,
    }
    if args.shapely:
        points = w / "points.csv"
        if not points.exists():
            write_points(fixes, points)
        shapely, _ = measured([sys.executable, ROOT / "benchmarks" / "shapely_peer.py", w / "fences.geojson", points, w / "shapely.npz"])
        report["shapely_s"] = shapely["s"]
        report["targets"]["shapely join / whole"] = shapely["s"] / med["judge"]
    (w / "write-targets.json").write_text(json.dumps(report, indent=1))

    print(f"\n{rows:,} notifications, {report['fixes']:,} fixes; load {', '.join(f'{x:.1f}' for x in report['load'])}\n")
    print("| run | median wall | peak RSS |\n|---|---:|---:|")
    for k in variants:
        print(f"| {k} | {med[k]:.2f} s | {rss[k]:,.0f} MiB |" if rss[k] else f"| {k} | {med[k]:.2f} s | |")
    print(f"\nmarginal {marginal * 1e6:.2f} µs a notification; floor {floor_per_row * 1e6:.2f} µs a row\n")
    limits = {"whole / (no conditions + floor)": ("≤", 1.25), "marginal per notification / floor per row": ("≤", 1.3),
              "shapely join / whole": ("≥", 5.0)}
    print("| target | now | |\n|---|---:|---|")
    for name, value in report["targets"].items():
        op, limit = limits.get(name, ("", None))
        verdict = "" if limit is None else ("met" if (value <= limit if op == "≤" else value >= limit) else "not met")
        print(f"| {name} {op} {limit or ''} | {value:.2f} | {verdict} |")


if __name__ == "__main__":
    main()
