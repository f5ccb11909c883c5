"""What integer keys would save on gf_inside's writes, SQLite alone: the
rows gf_check changes when stays start or end being INSIDE, stored as
today (area_id, subject_id as text), as integer keys (area_key,
subject_key), both WITHOUT ROWID with that primary key, and as one integer
rowid, the area's key above the subject's (an area's subjects one range).

    python3 benchmarks/inside_keys.py [--rows 30000] [--calls 20000] [--changes 9] [--rounds 3]

The pattern is the city workload's (workload.py, gf_check in time order):
~30,000 rows over 1,000 subjects (35 a subject on average, up to ~900),
and each call one subject whose stays leave and enter about nine areas:
one DELETE per row that goes (as SubjectRows.leave) and one multi-row
INSERT for those that come (SubjectRows.enter), each call a savepoint in
one transaction, WAL, `temp_store = MEMORY` and a 64 MiB cache (as
check_targets.py's tuned runs). Ids as the city's: 'F0001234', 'S00042'.
The layouts run the same calls, their order reversed each round; the number to read
is the ratio, not the microseconds.
"""
import argparse
import os
import random
import sqlite3
import tempfile
import time
from pathlib import Path

LAYOUTS = {
    "text": ("CREATE TABLE inside (area_id TEXT NOT NULL, subject_id TEXT NOT NULL, "
             "PRIMARY KEY (area_id, subject_id)) WITHOUT ROWID",
             lambda a, s: (f"F{a:07d}", f"S{s:05d}")),
    "integer": ("CREATE TABLE inside (area_key INTEGER NOT NULL, subject_key INTEGER NOT NULL, "
                "PRIMARY KEY (area_key, subject_key)) WITHOUT ROWID",
                lambda a, s: (a, s)),
    # One integer, the area's key above the subject's, as the rowid: a row is
    # one cell of SQLite's integer B-tree, and an area's subjects one range.
    "rowid": ("CREATE TABLE inside (area_subject INTEGER PRIMARY KEY)",
              lambda a, s: (a << 32 | s,)),
}


def plan(rows, calls, changes, seed=7):
    """The starting rows and each call's (subject, areas left, areas entered), as integers."""
    rnd = random.Random(seed)
    inside = {s: set() for s in range(1000)}
    # Skewed, as the city's: a few subjects inside hundreds of areas.
    weights = [1 / (1 + s) ** 0.7 for s in range(1000)]
    while sum(len(v) for v in inside.values()) < rows:
        s = rnd.choices(range(1000), weights)[0]
        inside[s].add(rnd.randrange(100_000))
    start = [(a, s) for s in range(1000) for a in sorted(inside[s])]
    steps = []
    for _ in range(calls):
        s = rnd.choices(range(1000), weights)[0]
        k = min(len(inside[s]), rnd.randint(0, 2 * changes))
        left = rnd.sample(sorted(inside[s]), k)
        entered = set()
        while len(entered) < k:
            a = rnd.randrange(100_000)
            if a not in inside[s]:
                entered.add(a)
        inside[s].difference_update(left)
        inside[s].update(entered)
        steps.append((s, left, sorted(entered)))
    return start, steps


def run(layout, start, steps, workdir):
    """Seconds for all the calls' row changes (the savepoints included), and the rows changed."""
    schema, key = LAYOUTS[layout]
    path = Path(workdir) / f"inside-{layout}.db"
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    c = sqlite3.connect(str(path), isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA synchronous = NORMAL")
    c.execute(schema)
    names = [r[1] for r in c.execute("PRAGMA table_info(inside)")]
    delete = "DELETE FROM inside WHERE " + " AND ".join(f"{n} = ?" for n in names)
    row = "(" + ", ".join("?" * len(names)) + ")"
    c.executemany(f"INSERT INTO inside VALUES {row}", sorted(key(a, s) for a, s in start))
    c.execute("PRAGMA temp_store = MEMORY")
    c.execute("PRAGMA cache_size = -65536")
    c.execute("BEGIN")
    # Every call's parameters made before the clock starts: only SQLite's work is timed.
    inserts = {n: "INSERT INTO inside VALUES " + ", ".join([row] * n) for n in {len(e) for _, _, e in steps}}
    calls = [([key(a, s) for a in left], inserts[len(entered)], [v for a in entered for v in key(a, s)])
             for s, left, entered in steps]
    changed = sum(len(left) + len(entered) for _, left, entered in steps)
    t = time.perf_counter()
    for deleted, insert, values in calls:
        c.execute("SAVEPOINT call")
        c.executemany(delete, deleted)
        if values:
            c.execute(insert, values)
        c.execute("RELEASE call")
    seconds = time.perf_counter() - t
    c.execute("COMMIT")
    c.close()
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    return seconds, changed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--changes", type=int, default=9, help="average rows a call deletes, and as many it inserts")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    start, steps = plan(a.rows, a.calls, a.changes)
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as work:
        print("| round | text: µs a row | integer: µs a row | rowid: µs a row | integer / text | rowid / text |\n"
              "|---:|---:|---:|---:|---:|---:|")
        for r in range(a.rounds):
            order = list(LAYOUTS) if r % 2 == 0 else list(reversed(LAYOUTS))
            got = {layout: run(layout, start, steps, work) for layout in order}
            per = {k: v[0] / v[1] * 1e6 for k, v in got.items()}
            print(f"| {r + 1} | {per['text']:.2f} | {per['integer']:.2f} | {per['rowid']:.2f} | "
                  f"{per['integer'] / per['text']:.2f} | {per['rowid'] / per['text']:.2f} |")


if __name__ == "__main__":
    main()
