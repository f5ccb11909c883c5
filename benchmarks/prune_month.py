"""A month of daily runs, then a prune (issue 40, "Prune of a month's rows").

The catalog is workload2.py's (100k fences over three cities, the default IN
and OUT conditions plus a filtered IN and a DWELL on 10 % of areas); each of
`--days` daily runs judges its 1M fixes moved on by one day per run (the
same walks, a day later: every fix is after the day before's, so none is
stale), with --explain. Then `geofence prune --before` the start of day
`--prune-days` + 1 removes the first days' notifications, explanations and
runs. Printed (and written as JSON): the month's rows and file size, the
prune's wall time and counts, the file size and free pages after it, after
one more daily run (which fills freed pages instead of growing the file),
and the VACUUM's time and the size after it.

    python benchmarks/workload2.py /tmp/m2              # once: fences.geojson, conditions.csv, fixes.csv
    nice -n 10 python benchmarks/prune_month.py /tmp/m2 --work /tmp/prune-month [--days 30 --prune-days 20]

The workload folder is only read; everything is written in --work.
"""
import argparse
import datetime
import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

CLI = str(Path(__file__).resolve().parent.parent / "dist" / "geofence")


def run(args):
    """Runs a geofence command, its output returned; a failure stops the benchmark with its stderr."""
    out = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{args} failed:\n{out.stderr}")
    return out.stdout


def shifted_fixes(source, target, days):
    """Writes source's fixes with every date moved on by `days` days (the
    time of day and the offset kept: the same instant `days` days later)."""
    moved = {}
    with open(source) as f, open(target, "w") as out:
        out.write(f.readline())
        for line in f:
            subject, ts, rest = line.split(",", 2)
            day = ts[:10]
            if day not in moved:
                moved[day] = (datetime.date.fromisoformat(day) + datetime.timedelta(days=days)).isoformat()
            out.write(f"{subject},{moved[day]}{ts[10:]},{rest}")


def counts(db):
    with sqlite3.connect(db) as c:
        return {name: c.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                for name in ("gf_notification_rows", "gf_explain", "gf_runs")}


def mib(path):
    """The catalog's size in MiB, its -wal included (what it takes on disk)."""
    wal = Path(str(path) + "-wal")
    return (Path(path).stat().st_size + (wal.stat().st_size if wal.exists() else 0)) / 2**20


def main():
    global CLI
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", type=Path, help="workload2.py's folder: fences.geojson, conditions.csv, fixes.csv")
    ap.add_argument("--work", type=Path, required=True, help="a folder for the catalog and the day's fixes")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--prune-days", type=int, default=20)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--geofence", default=CLI, help="the geofence to run (default: this checkout's dist/geofence)")
    a = ap.parse_args()
    CLI = a.geofence
    a.work.mkdir(parents=True, exist_ok=True)
    db = a.work / "month.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    run(["init", db])
    run(["import", db, a.workload / "fences.geojson", "--with-default-conditions"])
    run(["conditions", "import", db, a.workload / "conditions.csv"])

    with open(a.workload / "fixes.csv") as f:
        f.readline()
        first_day = min(line.split(",", 2)[1][:10] for line in f)
    day_fixes = a.work / "day.csv"
    judge_s = []
    for day in range(a.days):
        shifted_fixes(a.workload / "fixes.csv", day_fixes, day)
        t = time.monotonic()
        run(["judge", db, "--fixes", day_fixes, "--explain"])
        judge_s.append(time.monotonic() - t)
        print(f"day {day + 1}: judged in {judge_s[-1]:.1f} s", flush=True)

    month = {"rows": counts(db), "mib": mib(db)}
    # The start (UTC) of the first day kept: the fixes' first date, moved on by --prune-days.
    cutoff = (datetime.date.fromisoformat(first_day) + datetime.timedelta(days=a.prune_days)).isoformat()
    t = time.monotonic()
    out = run(["prune", db, "--before", cutoff])
    prune_s = time.monotonic() - t
    pruned = {"rows": counts(db), "mib": mib(db), "output": out.strip().splitlines()}
    # One more daily run: its rows go into the pages the prune freed, not onto the file's end.
    shifted_fixes(a.workload / "fixes.csv", day_fixes, a.days)
    run(["judge", db, "--fixes", day_fixes, "--explain"])
    day_fixes.unlink()
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        free = c.execute("PRAGMA freelist_count").fetchone()[0]
    next_day = {"mib": mib(db), "free_pages": free}
    t = time.monotonic()
    with sqlite3.connect(db) as c:
        c.execute("VACUUM")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    vacuum_s = time.monotonic() - t
    figures = {
        "days": a.days, "prune_before": cutoff, "judge_s_median": sorted(judge_s)[len(judge_s) // 2],
        "month": month, "prune_s": round(prune_s, 1), "after_prune": pruned, "after_next_day": next_day,
        "vacuum_s": round(vacuum_s, 1), "after_vacuum_mib": mib(db),
    }
    print(json.dumps(figures, indent=1))
    if a.json:
        a.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
