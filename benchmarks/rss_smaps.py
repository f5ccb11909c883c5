"""Which mappings hold a command's resident memory, and in which phase of its
run: samples /proc/PID/status (VmRSS split into RssAnon, RssFile and
RssShmem; VmHWM, the peak so far) and /proc/PID/smaps (per mapping: Rss and
its Private/Shared Clean/Dirty parts, summed per file, anonymous mappings
together) every --every seconds, prints one line per sample with the
largest file mappings, then the breakdown at the sample of highest RSS and
the wall time. The command's standard error is a terminal (a pty), so its
progress bar is drawn and read back: each line says how far the run was
("judging 41%"; after 100%, what follows the judging: writing, COMMIT,
checkpoint).

    .venv-test/bin/python benchmarks/rss_smaps.py [--every 1] [--top 3] -- dist/geofence judge DB --fixes F.csv

RssShmem counts shared memory mappings, such as a WAL database's -shm
file; RssFile counts pages of mapped files, such as a catalog read
through mmap. Both count in VmRSS and in GNU time's peak RSS.
"""
import argparse
import os
import pty
import re
import select
import subprocess
import sys
import time

MIB = 1024.0
STATUS = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem")
PARTS = ("Rss", "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty")
HEADER = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def status(pid):
    """The process's STATUS fields in MiB ({} once it is gone)."""
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in STATUS:
                    fields[key] = int(line.split()[1]) / MIB
    except (FileNotFoundError, ProcessLookupError):
        return {}
    return fields


def mappings(pid):
    """Resident memory per mapped file in MiB, {name: {part: MiB}}; anonymous
    mappings (heap, thread stacks, malloc arenas) are summed as "[anon]"."""
    totals = {}
    name = None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                if HEADER.match(line):
                    fields = line.split(None, 5)
                    path = fields[5].strip() if len(fields) > 5 else ""
                    name = path if path.startswith("/") else "[anon]"
                    totals.setdefault(name, dict.fromkeys(PARTS, 0.0))
                    continue
                key = line.split(":", 1)[0]
                if key in PARTS and name is not None:
                    totals[name][key] += int(line.split()[1]) / MIB
    except (FileNotFoundError, ProcessLookupError):
        return {}
    return totals


def largest_files(maps, top):
    """The `top` largest file mappings as "name Rss" text."""
    files = sorted(((m["Rss"], n) for n, m in maps.items() if n != "[anon]"), reverse=True)[:top]
    return ", ".join(f"{os.path.basename(n)} {r:.0f}" for r, n in files if r >= 1)


def progress(fd, last):
    """The newest progress text on the pty `fd` (or `last` when nothing new)."""
    while select.select([fd], [], [], 0)[0]:
        try:
            chunk = os.read(fd, 65536).decode(errors="replace")
        except OSError:
            break
        if not chunk:
            break
        parts = [p for p in re.split(r"[\r\n]", re.sub(r"\x1b\[K", "", chunk)) if p.strip()]
        if parts:
            last = parts[-1].strip()
    return last


def phase(text):
    """A short phase name from the progress text."""
    m = re.search(r"(\w+)\s+[\d,.]+ / [\d,.]+ \w+\s+(\d+)%", text)
    if not m:
        return text[:30] or "start"
    return f"{m.group(1)} {m.group(2)}%" + (" done" if " in " in text else "")


def print_breakdown(maps):
    print(f"{'mapping':<44}" + "".join(f"{p:>15}" for p in PARTS))
    for n, m in sorted(maps.items(), key=lambda kv: -kv[1]["Rss"]):
        if m["Rss"] >= 1:
            print(f"{n[-44:]:<44}" + "".join(f"{m[p]:>15.0f}" for p in PARTS))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=float, default=1.0)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    master, slave = pty.openpty()
    start = time.perf_counter()
    p = subprocess.Popen(command, stderr=slave, stdout=subprocess.DEVNULL)
    os.close(slave)
    text, peak, hwm = "", (0.0, {}, {}, 0.0, ""), 0.0
    while p.poll() is None:
        s, maps = status(p.pid), mappings(p.pid)
        text = progress(master, text)
        t = time.perf_counter() - start
        if s:
            print(f"{t:7.1f} s {phase(text):<18} RSS {s.get('VmRSS', 0):5.0f} (anon {s.get('RssAnon', 0):5.0f}, "
                  f"file {s.get('RssFile', 0):5.0f}, shmem {s.get('RssShmem', 0):4.0f}) HWM {s.get('VmHWM', 0):5.0f}"
                  f"  {largest_files(maps, a.top)}", flush=True)
            hwm = s.get("VmHWM", hwm)
            if s.get("VmRSS", 0) > peak[0]:
                peak = (s["VmRSS"], s, maps, t, phase(text))
        time.sleep(a.every)
    wall = time.perf_counter() - start
    text = progress(master, text)
    rss, s, maps, t, where = peak
    print(f"\nhighest sampled RSS {rss:.0f} MiB at {t:.1f} s ({where}): anon {s.get('RssAnon', 0):.0f}, "
          f"file {s.get('RssFile', 0):.0f}, shmem {s.get('RssShmem', 0):.0f} MiB")
    print_breakdown(maps)
    print(f"exit {p.returncode} after {wall:.1f} s; peak RSS (VmHWM, last sampled) {hwm:.0f} MiB; last progress: {text}")


if __name__ == "__main__":
    main()
