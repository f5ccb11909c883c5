"""Issue 39's import targets: `geofence import --with-default-conditions`
against ogr2ogr writing a GeoPackage of the same GeoJSON (GDAL's default
layer options), alternating (A B B A …, every contender into a fresh file),
and each file's size.

    .venv-test/bin/python benchmarks/import_gpkg.py FENCES.geojson --work W --rounds 3 [--also-dist OLD/dist]

Prints each run and, per contender, the median wall time, peak RSS and file
size, then ogr2ogr's median ÷ the engine's (≥ 1: the engine as fast) and the
engine's file ÷ the GeoPackage (≤ 1.2). Targets: benchmarks/results.md."""
import argparse
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd):
    """Wall seconds and peak RSS (KiB, GNU time's) of one command."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    return wall, int(p.stderr.strip().splitlines()[-1])


def engine(binary):
    def run(fences, out):
        subprocess.run([binary, "init", out], check=True, stdout=subprocess.DEVNULL)
        return timed([binary, "import", out, fences, "--with-default-conditions"])
    return run


def ogr2ogr(fences, out):
    return timed(["ogr2ogr", "-f", "GPKG", out, fences])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fences", type=Path)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--also-dist", type=Path, help="another build's dist/ to run beside this one")
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    contenders = {"engine": engine(str(ROOT / "dist" / "geofence")), "ogr2ogr GPKG": ogr2ogr}
    if a.also_dist:
        contenders["engine (other build)"] = engine(str(a.also_dist / "geofence"))
    names = list(contenders)
    walls = {n: [] for n in names}
    peaks = {n: [] for n in names}
    sizes = {}
    for r in range(a.rounds):
        for name in names if r % 2 == 0 else list(reversed(names)):
            out = a.work / (name.replace(" ", "_").replace("(", "").replace(")", "") + (".gpkg" if "GPKG" in name else ".db"))
            for leftover in out.parent.glob(out.name + "*"):
                leftover.unlink()
            wall, peak = contenders[name](a.fences, out)
            walls[name].append(wall)
            peaks[name].append(peak)
            sizes[name] = out.stat().st_size / 2**20
            print(f"round {r + 1} {name}: {wall:.2f} s, {sizes[name]:.1f} MiB", flush=True)
    medians = {n: statistics.median(walls[n]) for n in names}
    for n in names:
        print(f"{n}: median {medians[n]:.2f} s ({', '.join(f'{w:.2f}' for w in walls[n])}), "
              f"peak {max(peaks[n]) / 1024:.0f} MiB, file {sizes[n]:.1f} MiB")
    for n in names:
        if n.startswith("engine"):
            print(f"{n}: ogr2ogr ÷ engine {medians['ogr2ogr GPKG'] / medians[n]:.2f} (≥ 1), "
                  f"file ÷ GeoPackage {sizes[n] / sizes['ogr2ogr GPKG']:.3f} (≤ 1.2)")


if __name__ == "__main__":
    main()
