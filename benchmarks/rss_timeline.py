"""How a command's resident memory grows over its run: samples VmRSS (split
into anonymous memory and file-backed pages, such as a database read through
mmap, which the peak RSS of GNU time also counts) and VmHWM, the peak so far, of the process from /proc every --every seconds and
prints one line per --step seconds, then the peak and the wall time. Used to
see which phase of a command (catalog load, locating, writing) holds the
memory, with the phase times the command reports itself.

    .venv-test/bin/python benchmarks/rss_timeline.py [--every 0.05] [--step 0.5] -- dist/geofence locate DB --fixes F.csv --out /dev/null
"""
import argparse
import subprocess
import sys
import time


def sample(pid):
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                    k, v = line.split(":")
                    fields[k] = int(v.split()[0]) / 1024
    except FileNotFoundError:
        pass
    return fields


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=float, default=0.05)
    ap.add_argument("--step", type=float, default=0.5)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    start = time.perf_counter()
    p = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    next_print, last = 0.0, {}
    while p.poll() is None:
        s = sample(p.pid)
        if s:
            last = s
        t = time.perf_counter() - start
        if t >= next_print and s:
            print(f"{t:7.2f} s  RSS {s.get('VmRSS', 0):6.0f} MiB (anonymous {s.get('RssAnon', 0):6.0f}, file-backed {s.get('RssFile', 0):6.0f})"
                  f"  peak so far {s.get('VmHWM', 0):6.0f} MiB", flush=True)
            next_print += a.step
        time.sleep(a.every)
    wall = time.perf_counter() - start
    err = p.stderr.read()
    sys.stderr.write(err)
    print(f"exit {p.returncode} after {wall:.2f} s; last sampled peak {last.get('VmHWM', 0):.0f} MiB")


if __name__ == "__main__":
    main()
