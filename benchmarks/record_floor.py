"""SQLite alone reading and rewriting one subject's record per call, as
gf_check does at every fix, by the record's length: what a layout that
keeps a subject's state as one text row costs before the engine does
anything (docs/write-path.md, the forty-fifth session's paragraph).

    python3 benchmarks/record_floor.py [--sizes 600,34000] [--calls 20000] [--db /tmp/record-floor.db]

1,000 records in a WITHOUT ROWID table (WAL, temp_store MEMORY, 64 MiB of
cache, as check_targets.py's tuned calls), then --calls calls in one
transaction, each on a random subject: reading its record; rewriting it in
a savepoint of its own (as a gf_check call inside a transaction) with only
its first 8 bytes changed, the length kept (SQLite then writes only the
pages whose bytes changed); and with every byte changed. Microseconds a call,
the second of two rounds. Plain sqlite3: no extension.
"""
import argparse
import os
import random
import sqlite3
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="600,34000")
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--db", default="/tmp/record-floor.db")
    a = ap.parse_args()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(a.db + suffix):
            os.remove(a.db + suffix)
    c = sqlite3.connect(a.db, isolation_level=None)
    for pragma in ("journal_mode = WAL", "temp_store = MEMORY", "cache_size = -65536"):
        c.execute(f"PRAGMA {pragma}")
    print("| record bytes | read | rewrite, first 8 bytes changed | rewrite, every byte changed |\n|---:|---:|---:|---:|")
    for size in (int(x) for x in a.sizes.split(",")):
        c.execute("DROP TABLE IF EXISTS records")
        c.execute("CREATE TABLE records (subject_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID")
        subjects = [f"S{i:05d}" for i in range(1000)]
        base = "".join(chr(97 + (i * 7) % 26) for i in range(size))
        c.executemany("INSERT INTO records VALUES (?, ?)", [(s, base) for s in subjects])
        rng = random.Random(1)
        order = [subjects[rng.randrange(len(subjects))] for _ in range(a.calls)]
        times = {}
        for _ in range(2):
            for kind in ("read", "head", "all"):
                values = [f"{i:08d}" + base[8:] if kind == "head" else ("y" if i % 2 else "z") * size for i in range(a.calls)]
                c.execute("BEGIN")
                t = time.perf_counter()
                for i, s in enumerate(order):
                    if kind == "read":
                        c.execute("SELECT record FROM records WHERE subject_id = ?", (s,)).fetchone()
                        continue
                    c.execute("SAVEPOINT call")
                    c.execute("UPDATE records SET record = ?2 WHERE subject_id = ?1", (s, values[i]))
                    c.execute("RELEASE call")
                times[kind] = (time.perf_counter() - t) / a.calls * 1e6
                c.execute("COMMIT")
        print(f"| {size:,} | {times['read']:.1f} µs | {times['head']:.1f} µs | {times['all']:.1f} µs |")
    c.close()


if __name__ == "__main__":
    main()
