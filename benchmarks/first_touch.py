"""Issue 39, "on demand everywhere": what the SQL functions read and keep on
a large catalog, each figure from a fresh Python process (sqlite3, SQLite's
default 2 MiB page cache, no mmap; mod_spatialite and the extension loaded
before anything is measured):

  1. the first call on a cold catalog of `gf_check` (a new subject at the
     centre of an area in the densest 0.1° cell: a fix in a dense cluster,
     whose conditions notify; in a transaction rolled back, so no commit is
     timed), `gf_nearest` (n = 5), `gf_regions` (n = 19), `gf_area_contains`
     and `gf_positioning`: its wall time and RSS before and after. Cold: the
     catalog's files and the extension's evicted from the page cache before
     each process (posix_fadvise DONTNEED, checked with `fincore`), or with
     --drop-caches `echo 1 > /proc/sys/vm/drop_caches` where root may (it
     empties everyone's cache, so it is not the default); the output says which.
  2. --calls calls of `gf_check`, `gf_nearest`, `gf_regions` and
     `gf_area_contains` at points in the boxes of random areas, `clustered`
     (areas inside a --cluster-km box at that cell) and `spread` (the whole
     catalog): RSS and heap (RssAnon) growth after, and the distinct areas
     touched: for gf_check those whose index box holds a fix, else those the
     answers name. Memory that follows the areas touched grows by about the
     same KiB per area from one placement to the other, on either catalog.
     The gf_check calls (100 new subjects) run in one transaction rolled
     back after; the notifications they wrote are counted.

    .venv-test/bin/python benchmarks/first_touch.py [--catalog DB ...] [--calls 10000] [--dist DIST] [--drop-caches]

--catalog (million.py's --work/engine.db by default; repeat it for more) is
an engine catalog with conditions, only read. Prints a Markdown table per
catalog, and each figure as a JSON line on stderr.
"""
import argparse
import json
import math
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUBJECTS = 100


from million_queries import connect   # `db` with mod_spatialite and the extension `lib` loaded


def memory():
    """This process's (VmRSS, RssAnon) in MiB, from /proc/self/status."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["RssAnon"].split()[0]) / 1024


# MARK: The workload (read in the parent with plain sqlite3)


def read(db, sql, args=()):
    """The rows of `sql` on `db`, through a plain connection closed after."""
    c = sqlite3.connect(db)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


def densest_cell(db):
    """(lat, lon) of the centre of the 0.1° cell holding the most area boxes' centres."""
    return read(db, """SELECT round((ymin + ymax) / 2, 1) AS la, round((xmin + xmax) / 2, 1) AS lo FROM idx_gf_areas_geom
                       GROUP BY la, lo ORDER BY count(*) DESC LIMIT 1""")[0]


def cluster_box(centre, km):
    """(min lon, min lat, max lon, max lat) of a box `km` across around `centre` (lat, lon)."""
    half_lat = km / 2 / 111.32
    half_lon = half_lat / math.cos(math.radians(centre[0]))
    return centre[1] - half_lon, centre[0] - half_lat, centre[1] + half_lon, centre[0] + half_lat


def area_boxes(db, box=(-180, -90, 180, 90)):
    """[(row id, area_id, xmin, xmax, ymin, ymax)] of the areas whose box lies inside `box` (default: all)."""
    return read(db, """SELECT r.pkid, a.area_id, r.xmin, r.xmax, r.ymin, r.ymax FROM idx_gf_areas_geom AS r JOIN gf_areas AS a
                       ON a.id = r.pkid WHERE r.xmin >= ? AND r.ymin >= ? AND r.xmax <= ? AND r.ymax <= ?""", box)


def positions(areas, calls, seed):
    """`calls` (lat, lon, area_id): a point drawn in the box of an area drawn from `areas`, and that area's id."""
    rng = random.Random(seed)
    out = []
    for _ in range(calls):
        _, area_id, xmin, xmax, ymin, ymax = areas[rng.randrange(len(areas))]
        out.append((rng.uniform(ymin, ymax), rng.uniform(xmin, xmax), area_id))
    return out


def areas_holding(db, points):
    """How many distinct areas have an index box holding one of `points` (what gf_check judges)."""
    c = sqlite3.connect(db)
    seen = set()
    for lat, lon, _ in points:
        seen.update(r[0] for r in c.execute(
            "SELECT pkid FROM idx_gf_areas_geom WHERE xmin <= ?1 AND xmax >= ?1 AND ymin <= ?2 AND ymax >= ?2", (lon, lat)))
    c.close()
    return len(seen)


# MARK: Cold cache


def evict(paths, drop_caches):
    """Makes the catalog cold: returns how ("drop_caches", or "evicted" with the bytes still resident per fincore)."""
    if drop_caches:
        try:
            Path("/proc/sys/vm/drop_caches").write_text("1\n")
            return "cold: /proc/sys/vm/drop_caches"
        except OSError as e:
            print(f"drop_caches refused ({e}); evicting the files instead", file=sys.stderr)
    for p in filter(Path.exists, paths):
        with open(p, "rb") as f:
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    return "cold: files evicted, " + resident(paths)


def resident(paths):
    """What `fincore` says is still in the page cache of `paths`, or that it could not tell."""
    if not shutil.which("fincore"):
        return "resident bytes unknown (no fincore)"
    present = [str(p) for p in paths if p.exists()]
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", *present], capture_output=True, text=True)
    total = sum(int(x) for x in out.stdout.split() if x.isdigit())
    return f"{total / 1024:,.0f} KiB resident after"


# MARK: The children


FIRST_SQL = {
    "gf_check": "SELECT gf_check('first-touch-new', '2026-11-30T00:00:00Z', :lat, :lon, 10)",
    "gf_nearest": "SELECT group_concat(area_id) FROM gf_nearest(:lat, :lon, 5)",
    "gf_regions": "SELECT json_array_length(gf_regions(:lat, :lon, 19), '$.areas')",
    "gf_area_contains": "SELECT gf_area_contains(:area, :lat, :lon, 10)",
    "gf_positioning": "SELECT gf_positioning(3.0, 80)",
}


def first_call(c, name, spot):
    """Runs one first call of `name` at `spot` (lat, lon, area_id), in a transaction; returns what it answered."""
    lat, lon, area_id = spot
    c.execute("BEGIN")
    return c.execute(FIRST_SQL[name], {"lat": lat, "lon": lon, "area": area_id}).fetchone()[0]


def child_first(args):
    """One first call in this fresh process: its time and RSS before and after."""
    c = connect(args.db, args.lib)
    before, t = memory(), time.perf_counter()
    answer = first_call(c, args.fn, json.loads(args.spot))
    seconds, after = time.perf_counter() - t, memory()
    c.rollback()
    return {"fn": args.fn, "s": seconds, "rss_before": before[0], "rss_after": after[0], "anon_after": after[1],
            "answer": str(answer)[:120]}


MANY_SQL = {  # each row's first column names an area the call touched
    "gf_nearest": "SELECT area_id FROM gf_nearest(:lat, :lon, 5)",
    "gf_regions": "SELECT json_extract(value, '$.area_id') FROM json_each(gf_regions(:lat, :lon, 19), '$.areas')",
    "gf_area_contains": "SELECT :area, gf_area_contains(:area, :lat, :lon, 10)",
}


def many_calls(c, name, points, named):
    """Calls `name` once per point, writing each area an answer names to `named`, a line each (nothing for gf_check,
    whose areas are counted apart): kept in a file, not in this process, whose memory is what is measured."""
    if name == "gf_check":
        c.execute("BEGIN")
        for i, (lat, lon, _) in enumerate(points):
            ts = f"2026-11-30T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
            c.execute("SELECT gf_check(?, ?, ?, ?, 10)", (f"first-touch-{i % SUBJECTS}", ts, lat, lon)).fetchone()
        return
    for lat, lon, area_id in points:
        rows = c.execute(MANY_SQL[name], {"lat": lat, "lon": lon, "area": area_id}).fetchall()
        named.write("".join(r[0] + "\n" for r in rows))


def child_many(args):
    """The calls of one function at the positions of --points: time, RSS after; the areas named go to --named."""
    points = json.loads(Path(args.points).read_text())
    c = connect(args.db, args.lib)
    last = c.execute("SELECT coalesce(max(id), 0) FROM gf_notification_rows").fetchone()[0]
    with open(args.named, "w") as named:
        before, t = memory(), time.perf_counter()
        many_calls(c, args.fn, points, named)
        seconds, after = time.perf_counter() - t, memory()
    written = c.execute("SELECT count(*) FROM gf_notification_rows WHERE id > ?", (last,)).fetchone()[0]
    c.rollback()
    return {"fn": args.fn, "calls": len(points), "s": seconds, "rss_before": before[0], "rss_after": after[0],
            "anon_before": before[1], "anon_after": after[1], "notifications": written}


def run_child(args, **options):
    """Runs this script as a child with `options`; returns its JSON answer."""
    argv = [sys.executable, __file__, "--db", args.db_now, "--lib", args.dist / "libgeofence.so"]
    for key, value in options.items():
        argv += [f"--{key}", value]
    p = subprocess.run([str(x) for x in argv], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{options} failed:\n{p.stderr}")
    return json.loads(p.stdout)


# MARK: The report


def measure(args, db):
    """Every figure for one catalog: {"first": [...], "many": {(placement, fn): {...}}, ...}."""
    args.db_now = db
    centre = densest_cell(db)
    spread_areas, cluster_areas = area_boxes(db), area_boxes(db, cluster_box(centre, args.cluster_km))
    near = min(cluster_areas, key=lambda a: abs((a[4] + a[5]) / 2 - centre[0]) + abs((a[2] + a[3]) / 2 - centre[1]))
    spot = ((near[4] + near[5]) / 2, (near[2] + near[3]) / 2, near[1])
    files = [Path(db), Path(f"{db}-wal"), Path(f"{db}-shm"), args.dist / "libgeofence.so"]
    report = {"db": str(db), "areas": len(spread_areas), "centre": centre, "cluster_areas": len(cluster_areas), "first": [], "many": {}}
    for fn in FIRST_SQL:
        how = evict(files, args.drop_caches)
        report["first"].append({**run_child(args, child="first", fn=fn, spot=json.dumps(spot)), "cold": how})
        r = report["first"][-1]
        print(json.dumps(r), file=sys.stderr, flush=True)
    for placement, areas in (("clustered", cluster_areas), ("spread", spread_areas)):
        points = positions(areas, args.calls, seed=39)
        path = args.work / f"points-{placement}.json"
        path.write_text(json.dumps(points))
        held = areas_holding(db, points)
        for fn in ["gf_check", *MANY_SQL]:
            named = args.work / f"named-{placement}-{fn}.txt"
            r = run_child(args, child="many", fn=fn, points=path, named=named)
            r["touched"] = held if fn == "gf_check" else len(set(named.read_text().splitlines()))
            report["many"][(placement, fn)] = r
            print(json.dumps({"placement": placement, **r}), file=sys.stderr, flush=True)
    return report


def print_report(report, args):
    """The Markdown table of one catalog's figures."""
    print(f"\n{report['areas']:,} areas ({report['db']}); densest 0.1° cell at {report['centre']}, "
          f"{report['cluster_areas']:,} areas inside its {args.cluster_km:g} km box; {report['first'][0]['cold']}\n")
    print(f"| function | first call (cold) | RSS before → after | {args.calls:,} clustered: areas, RSS (heap) "
          f"| {args.calls:,} spread: areas, RSS (heap) | heap KiB per extra area |")
    print("|---|---:|---:|---:|---:|---:|")
    for first in report["first"]:
        fn = first["fn"]
        cells = [f"`{fn}`", f"{first['s']:.3f} s", f"{first['rss_before']:.0f} → {first['rss_after']:.0f} MiB"]
        if ("spread", fn) in report["many"]:
            c, s = report["many"][("clustered", fn)], report["many"][("spread", fn)]
            for r in (c, s):
                cells.append(f"{r['touched']:,}, {r['rss_after']:.0f} MiB ({r['anon_after'] - r['anon_before']:+.0f})")
            extra = s["touched"] - c["touched"]
            grown = (s["anon_after"] - s["anon_before"]) - (c["anon_after"] - c["anon_before"])
            cells.append(f"{grown * 1024 / extra:.1f}" if extra > 0 else "–")
        else:
            cells += ["–", "–", "–"]
        print("| " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog", type=Path, action="append", help="an engine catalog (default: /tmp/gf-million/engine.db)")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--cluster-km", type=float, default=3.0, help="side of the clustered box (default 3 km)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/gf-first-touch"), help="where the positions are written")
    ap.add_argument("--drop-caches", action="store_true", help="empty the whole machine's page cache instead of evicting files")
    ap.add_argument("--child", choices=["first", "many"], help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    ap.add_argument("--fn", help=argparse.SUPPRESS)
    ap.add_argument("--spot", help=argparse.SUPPRESS)
    ap.add_argument("--points", help=argparse.SUPPRESS)
    ap.add_argument("--named", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child_first(args) if args.child == "first" else child_many(args)))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    for db in args.catalog or [Path("/tmp/gf-million/engine.db")]:
        print_report(measure(args, db), args)
    print("\nTarget (issue 39): the first gf_check and gf_nearest on a cold million-fence catalog ≤ 1 s each; "
          "memory after 10k calls proportional to the areas touched.")


if __name__ == "__main__":
    main()
