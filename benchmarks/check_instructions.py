"""gf_check's cost above its floor in instructions, by function: the first
--calls fixes of WORK/fixes.csv checked in one transaction on a copy of
WORK/cond.db and of WORK/plain.db (as benchmarks/check_targets.py makes
them), each under `valgrind --tool=callgrind`, the two runs side by side
on two cores; then every function's inclusive count with conditions minus
without.

    .venv-test/bin/python benchmarks/check_instructions.py WORK [--dist dist] [--calls 20000] [--top 40] [--only GeofenceSQL]

Why instructions: this machine's speed drifts by a quarter within a minute,
and a change worth 5 % of a call cannot be told from that in time; a count
of instructions is the same on every run and every machine. It is not
time (a cache miss costs more than an instruction), so a change found here
is confirmed side by side in time (check_targets.py) before it is kept.
The first line is the calls' own total (the extension's function entry);
Python's and the setup's instructions are in both runs alike.
"""
import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "GeofenceSQL10trampoline"   # the SQL function entry every call goes through

ONE_RUN = """
import sys
sys.path.insert(0, {bench!r})
from pathlib import Path
import check_targets as ct
w, which = Path({work!r}), {which!r}
calls = ct.read_calls(w / 'fixes.csv', {calls})
run = ct.Calls(w, w / (which + '.db'), Path({dist!r}), 'tuned', 'instructions-' + which)
run.block(calls)
run.commit()
ct.removed(run.db)
"""


def counted(work, dist, which, calls):
    """Starts one callgrind run of the calls on `which` (cond or plain); returns (process, output file)."""
    out = work / f"callgrind-{which}.out"
    code = ONE_RUN.format(bench=str(ROOT / "benchmarks"), work=str(work), which=which, calls=calls, dist=str(dist))
    p = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", code],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, out


def inclusive(out):
    """Function name -> inclusive instructions (the largest figure a name is listed with)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
                          capture_output=True, text=True, check=True).stdout
    counts = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if not m:
            continue
        name = re.sub(r"\s*\[[^\]]*\]$", "", m.group(2))
        name = name.split(":", 1)[1] if ":" in name else name
        counts[name] = max(counts[name], int(m.group(1).replace(",", "")))
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="the build whose libgeofence.so is loaded (unstripped names read best)")
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=40, help="how many functions to list")
    ap.add_argument("--only", default="Geofence", help="list only functions whose (mangled) name holds this")
    a = ap.parse_args()
    runs = {which: counted(a.work, a.dist, which, a.calls) for which in ("cond", "plain")}
    for which, (p, _) in runs.items():
        if p.wait() != 0:
            sys.exit(f"the callgrind run on {which}.db failed (exit {p.returncode})")
    cond, plain = (inclusive(runs[w][1]) for w in ("cond", "plain"))
    entry = max((n for n in cond if ENTRY in n), key=lambda n: cond[n])
    print(f"{a.calls} calls: {cond[entry] / 1e6:,.1f} M instructions with conditions, {plain[entry] / 1e6:,.1f} M without, "
          f"{(cond[entry] - plain[entry]) / 1e6:,.1f} M above ({cond[entry] / a.calls:,.0f} and {plain[entry] / a.calls:,.0f} a call)\n")
    print("| above (M) | with | without | function |\n|---:|---:|---:|---|")
    diff = {n: cond[n] - plain[n] for n in set(cond) | set(plain) if a.only in n}
    top = sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:a.top]
    for (n, d), name in zip(top, readable([n for n, _ in top])):
        print(f"| {d / 1e6:,.1f} | {cond[n] / 1e6:,.1f} | {plain[n] / 1e6:,.1f} | `{name[:110]}` |")


def readable(names):
    """Swift's mangled names demangled by the toolchain (`swift demangle`), as they are without one."""
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(names),
                             capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return names
    return out if len(out) == len(names) else names


if __name__ == "__main__":
    main()
