"""geofence.spark.judge on Spark local[1] and local[2] against one `geofence
judge` process (issue 41), on the same catalog and fixes, with the same
output kept: the process stores its notifications and state in a copy of the
catalog; the Spark job reads the fixes CSV, judges, and writes the
notifications and the state as parquet. Fixes: benchmarks/workload2.py's
generator (1,000 subjects in three cities, three offsets). Each measure runs
once (a shared machine: the load average is printed with it); Spark's
session start is timed apart from the job.

Before the timed jobs, each session runs a first job of 2,000 fixes (the
catalog hashed, shipped and prepared in every Python worker), timed apart.
Also: the per-task overhead (a warm local[2] job of 2,000 fixes in 2 and in 34
partitions: the difference over 32 more tasks), and each side's fixed cost
and rate from the sizes run, from which where Spark starts to pay off and
what N machines would do are extrapolated (stated as such).

    .venv-test/bin/python benchmarks/spark_judge.py --work /tmp/gfspark \\
        --catalog /tmp/wt38/m2/cond.db [--fixes 200000,2000000]

Needs pyspark, pyarrow, pandas<3 and Java 17; the command and library are
this checkout's dist/ (GEOFENCE_DIST for another)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DIST = Path(os.environ.get("GEOFENCE_DIST", ROOT / "dist"))


def load() -> str:
    return "%.2f %.2f %.2f" % os.getloadavg()


def prepare(work: Path, catalog: Path, counts, subjects):
    """A copy of `catalog` with no subject state and no notifications, and a
    fixes CSV of each count (made once, kept in `work`)."""
    sys.path.insert(0, str(HERE))
    import workload2  # noqa: E402
    work.mkdir(parents=True, exist_ok=True)
    clean = work / "clean.db"
    if not clean.exists():
        shutil.copy(catalog, work / "building.db")
        subprocess.run([DIST / "geofence", "reset", work / "building.db", "--notifications"], check=True, capture_output=True)
        (work / "building.db").rename(clean)
    files = {}
    for n in counts:
        files[n] = work / f"fixes-{n}.csv"
        if not files[n].exists():
            workload2.write_fixes(work / "building.csv", n, subjects)
            (work / "building.csv").rename(files[n])
    return clean, files


def time_process(clean: Path, fixes: Path, work: Path):
    """`geofence judge` of `fixes` on a fresh copy of the clean catalog:
    (seconds, notifications stored)."""
    db = work / "process.db"
    shutil.copy(clean, db)
    start = time.perf_counter()
    subprocess.run([DIST / "geofence", "judge", db, "--fixes", fixes, "--quiet"], check=True, capture_output=True)
    seconds = time.perf_counter() - start
    import sqlite3
    conn = sqlite3.connect(db)
    notes = conn.execute("SELECT count(*) FROM gf_notifications").fetchone()[0]
    conn.close()
    return seconds, notes


def run_child(master: str, clean: Path, files, partitions: int, work: Path, overhead: bool):
    """One Spark session (its own JVM) running the child: its JSON lines."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               GEOFENCE_LIBRARY=str(DIST / "libgeofence.so"),
               PYTHONPATH=os.pathsep.join([str(ROOT / "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    args = [sys.executable, __file__, "--child", master, "--catalog", clean, "--work", work, "--partitions", str(partitions),
            "--fixes", ",".join(str(n) for n in files)] + (["--overhead"] if overhead else [])
    p = subprocess.run(list(map(str, args)), env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"the {master} child failed:\n{p.stderr[-3000:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def child(a) -> None:
    """In the child: a session on `a.child`, then per fixes file the job
    timed (read, judge, write notifications and state), then, if asked,
    the per-task overhead."""
    start = time.perf_counter()
    from pyspark.sql import SparkSession
    from geofence import spark as gs
    spark = (SparkSession.builder.master(a.child).appName("geofence-bench").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "6g").config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(json.dumps({"session_s": time.perf_counter() - start}), flush=True)
    # A first job on a few fixes: the catalog hashed, copied, shipped and
    # prepared in every Python worker; the jobs timed after it are warm.
    t = time.perf_counter()
    first = spark.read.csv(str(a.work / f"fixes-{a.fixes.split(',')[0]}.csv"), header=True).limit(2000)
    gs.judge(first, catalog=str(a.catalog), partitions=a.partitions)[2].collect()
    spark.catalog.clearCache()
    print(json.dumps({"cold_s": time.perf_counter() - t}), flush=True)
    for n in (int(x) for x in a.fixes.split(",")):
        out = a.work / f"spark-{a.child.replace('[', '').replace(']', '').replace(',', '-')}-{n}"
        shutil.rmtree(out, ignore_errors=True)
        before = load()
        t = time.perf_counter()
        fixes = spark.read.csv(str(a.work / f"fixes-{n}.csv"), header=True)
        notes, state, runs = gs.judge(fixes, catalog=str(a.catalog), partitions=a.partitions)
        notes.write.parquet(str(out / "notifications"))
        state.write.parquet(str(out / "state"))
        counts = runs.collect()[0].asDict()
        seconds = time.perf_counter() - t
        spark.catalog.clearCache()
        print(json.dumps({"fixes": n, "job_s": seconds, "notifications": counts["notifications"],
                          "load_before": before, "load_after": load()}), flush=True)
    if a.overhead:
        small = spark.read.csv(str(a.work / f"fixes-{a.fixes.split(',')[0]}.csv"), header=True).limit(2000).cache()
        small.count()
        timings = {}
        for parts in (2, 34, 2, 34):
            t = time.perf_counter()
            notes, state, runs = gs.judge(small, catalog=str(a.catalog), partitions=parts)
            runs.collect()
            timings.setdefault(parts, []).append(time.perf_counter() - t)
            spark.catalog.clearCache()
        per_task = (min(timings[34]) - min(timings[2])) / 32
        print(json.dumps({"overhead_2": min(timings[2]), "overhead_34": min(timings[34]), "per_task_s": per_task}), flush=True)
    spark.stop()


def fit(small, large):
    """(fixed seconds, seconds a fix) of the line through two (fixes, seconds)."""
    (n1, t1), (n2, t2) = small, large
    rate = (t2 - t1) / (n2 - n1)
    return t1 - rate * n1, rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--catalog", type=Path, default=Path("/tmp/wt38/m2/cond.db"))
    ap.add_argument("--fixes", default="200000,2000000", help="fixes counts, comma-separated, ascending")
    ap.add_argument("--subjects", type=int, default=1000)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--partitions", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--overhead", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a)
    counts = [int(x) for x in a.fixes.split(",")]
    clean, files = prepare(a.work, a.catalog, counts, a.subjects)
    rows, fits = [], {}
    process = []
    for n in counts:
        before = load()
        seconds, notes = time_process(clean, files[n], a.work)
        process.append((n, seconds))
        rows.append(("one `geofence judge`", n, seconds, notes, before, load()))
    fits["process"] = fit(process[0], process[-1]) if len(process) > 1 else None
    extra = {}
    for master, partitions in (("local[1]", 2), ("local[2]", 4)):
        lines = run_child(master, clean, files, partitions, a.work, overhead=master == "local[2]")
        extra[master] = (lines[0]["session_s"], lines[1]["cold_s"])
        jobs = [x for x in lines if "job_s" in x]
        for x in jobs:
            rows.append((f"Spark {master}, {partitions} partitions", x["fixes"], x["job_s"], x["notifications"],
                         x["load_before"], x["load_after"]))
        fits[master] = fit((jobs[0]["fixes"], jobs[0]["job_s"]), (jobs[-1]["fixes"], jobs[-1]["job_s"])) if len(jobs) > 1 else None
        extra.update({k: v for x in lines for k, v in x.items() if k.startswith(("overhead", "per_task"))})
    print("| run | fixes | seconds | fixes/s | notifications | load before → after |")
    print("|---|---:|---:|---:|---:|---|")
    for name, n, seconds, notes, before, after in rows:
        print(f"| {name} | {n:,} | {seconds:.1f} | {n / seconds:,.0f} | {notes:,} | {before} → {after} |")
    print()
    for master in ("local[1]", "local[2]"):
        print(f"Spark {master}: session start {extra[master][0]:.1f} s; first job of 2,000 fixes (catalog shipped and "
              f"prepared in each worker) {extra[master][1]:.1f} s; neither is in the times above")
    if "per_task_s" in extra:
        print(f"per-task overhead (warm local[2], 2,000 fixes in 2 then 34 partitions: {extra['overhead_2']:.2f} s, "
              f"{extra['overhead_34']:.2f} s): {extra['per_task_s'] * 1000:.0f} ms a task")
    for name, f in fits.items():
        if f:
            print(f"{name}: fixed {f[0]:.1f} s, {f[1] * 1e6:.2f} µs a fix ({1 / f[1]:,.0f} fixes/s at the margin)")
    for master in ("local[1]", "local[2]"):
        p, f = fits.get("process"), fits.get(master)
        if p and f and f[1] < p[1]:
            print(f"Spark {master} passes one process at {(f[0] - p[0]) / (p[1] - f[1]):,.0f} fixes (the lines' crossing)")
        elif p and f:
            print(f"Spark {master} costs more a fix than one process: it does not pay off on this machine")


if __name__ == "__main__":
    main()
