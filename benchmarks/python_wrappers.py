"""What the Python wrappers cost over the command they run: geofence.judge and
geofence.locate on a DataFrame of 300,000 fixes, against `geofence judge
--fixes F --out O` and `geofence locate --fixes F --out O` on the same fixes as
a CSV file (the file's reading by pandas is not counted: a caller has the
frame already). Each judgement runs on a fresh copy of the catalog; the runs
alternate (command, wrapper, command, …) and the medians are printed with
their ratio. Needs a Python with pandas and the wheel installed
(pip install dist/geofence-*.whl pandas); the command is the wheel's own.
    VENV/bin/python benchmarks/python_wrappers.py --work /tmp/gfpy [--fixes 300000] [--runs 5]"""
import argparse
import datetime
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workload  # noqa: E402

import geofence  # noqa: E402
import pandas  # noqa: E402
from geofence._results import read_csv  # noqa: E402

TOKYO = datetime.timezone(datetime.timedelta(hours=9))


def prepare(work: Path, fences: int, fixes: int):
    """A catalog of `fences` city fences with default conditions, and
    `fixes` fixes of 3,000 subjects with ISO 8601 times in +09:00, as a CSV
    file and as the DataFrame pandas reads from it."""
    work.mkdir(parents=True, exist_ok=True)
    catalog, fixes_csv = work / "catalog.db", work / "fixes.csv"
    if not catalog.exists():
        workload.write_fences(work / "fences.geojson", fences)
        geofence.run("init", work / "building.db")
        geofence.run("import", work / "building.db", work / "fences.geojson", "--with-default-conditions")
        (work / "building.db").rename(catalog)
    rows = ((s, datetime.datetime.fromtimestamp(t, TOKYO).isoformat(timespec="milliseconds"), lat, lon, acc)
            for s, t, lat, lon, acc in workload.fixes(fixes, 3000))
    workload.write_fixes_csv(fixes_csv, rows)
    frame = pandas.read_csv(fixes_csv, dtype={"subject_id": str, "ts": str})
    return catalog, fixes_csv, frame


def timed(job) -> float:
    start = time.perf_counter()
    job()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--fences", type=int, default=2000)
    ap.add_argument("--fixes", type=int, default=300_000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    catalog, fixes_csv, frame = prepare(a.work, a.fences, a.fixes)
    fresh, out = a.work / "run.db", a.work / "out.csv"
    command = geofence.binary_path()

    def cli_judge():
        subprocess.run([command, "judge", fresh, "--fixes", fixes_csv, "--out", out], check=True, capture_output=True)

    def cli_locate():
        subprocess.run([command, "locate", catalog, "--fixes", fixes_csv, "--out", out], check=True, capture_output=True)

    times = {name: [] for name in ("judge command", "judge()", "locate command", "locate()")}
    given = {}

    def wrapper_judge():
        given["judge"] = geofence.judge(fresh, frame)

    def wrapper_locate():
        given["locate"] = geofence.locate(catalog, frame)

    for _ in range(a.runs):
        for name, job in (("judge command", cli_judge), ("judge()", wrapper_judge)):
            shutil.copy(catalog, fresh)
            times[name].append(timed(job))
        times["locate command"].append(timed(cli_locate))
        times["locate()"].append(timed(wrapper_locate))
    # The wrappers give what the command gives, row for row (the speed is worth nothing otherwise).
    shutil.copy(catalog, fresh)
    cli_judge()
    assert given["judge"].reset_index(drop=True).equals(read_csv(out)), "judge() differs from the command"
    cli_locate()
    assert given["locate"].reset_index(drop=True).equals(read_csv(out)), "locate() differs from the command"
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"{len(frame):,} fixes, {a.fences:,} fences, {a.runs} runs each, the same rows as the command's, medians:")
    for verb in ("judge", "locate"):
        cli, wrapper = median[f"{verb} command"], median[f"{verb}()"]
        print(f"  {verb}: command {cli:.2f} s, {verb}() {wrapper:.2f} s, ratio {wrapper / cli:.2f}")


if __name__ == "__main__":
    main()
