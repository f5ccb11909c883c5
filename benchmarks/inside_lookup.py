"""'Who is inside area A now' on schema version 8 (issue 38's target: at most
10 ms for an area with 10,000 subjects inside, among 1,000,000 subjects).

    python3 benchmarks/inside_lookup.py /tmp/inside.db [--subjects 1000000] [--inside 10000] [--rounds 9]

Builds gf_subject_state and gf_inside as sql/008_subject_records.sql makes
them (1,000,000 subjects, each INSIDE one of 100 areas and area 'A' holding
10,000 of them), then times the documented question, warm, and prints the
median and the slowest of the rounds. Plain sqlite3: the tables need no
extension to be read. The gf_stays view's answer (a scan of every record)
is timed once beside it with --through-view."""
import argparse
import os
import re
import sqlite3
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tables_sql():
    """The CREATE TABLE statements of migration 8, above its `-- @convert` line."""
    text = (ROOT / "sql" / "008_subject_records.sql").read_text()
    return text.split("\n-- @convert\n")[0]


def build(path, subjects, inside):
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript(tables_sql())
    con.execute("CREATE TABLE gf_areas (id INTEGER PRIMARY KEY, area_id TEXT NOT NULL UNIQUE)")
    con.executemany("INSERT INTO gf_areas (area_id) VALUES (?)", [("A",)] + [(f"B{k:02d}",) for k in range(99)])
    record = ('{"v":1,"last":{"ts":"2026-11-20T09:00:00.000000Z","lat":35.7,"lon":139.7,"acc":10.0},"judged":5,'
              '"stays":[{"area":"%s","phase":"INSIDE","in":5,"out":0,"entered":"2026-11-20T08:00:00.000000Z"}],"days":[]}')
    rows = []
    for i in range(subjects):
        area = "A" if i % (subjects // inside) == 0 else f"B{i % 99:02d}"
        rows.append((f"s{i:07d}", area))
    con.executemany("INSERT INTO gf_subject_state VALUES (?, ?)", ((s, record % a) for s, a in rows))
    con.executemany("INSERT INTO gf_inside VALUES (?, ?)", ((a, s) for s, a in sorted(rows, key=lambda r: (r[1], r[0]))))
    con.commit()
    return con


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--subjects", type=int, default=1_000_000)
    ap.add_argument("--inside", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--through-view", action="store_true", help="also time the gf_stays view's answer once")
    a = ap.parse_args()
    con = build(a.db, a.subjects, a.inside)
    # Every id read in place by SQLite (what docs/write-path.md measured), then every row fetched into Python.
    in_place = "SELECT count(*), total(length(subject_id)) FROM gf_inside WHERE area_id = ?"
    fetched = "SELECT subject_id FROM gf_inside WHERE area_id = ?"
    assert len(con.execute(fetched, ("A",)).fetchall()) == a.inside  # warm
    times = {in_place: [], fetched: []}
    for _ in range(a.rounds):
        for query in times:
            t = time.perf_counter()
            n = len(con.execute(query, ("A",)).fetchall())
            times[query].append((time.perf_counter() - t) * 1000)
            assert n == (1 if query == in_place else a.inside)
    print(f"sqlite {sqlite3.sqlite_version}: {a.inside} subjects inside 'A' among {a.subjects}, {a.rounds} rounds:")
    for query, ms in times.items():
        print(f"  median {statistics.median(ms):.2f} ms, slowest {max(ms):.2f} ms: {query}")
    if a.through_view:
        view = re.search(r"CREATE VIEW gf_stays AS.*?;\n", (ROOT / "sql" / "008_subject_records.sql").read_text(), re.S).group(0)
        con.executescript(view)
        t = time.perf_counter()
        n = len(con.execute("SELECT subject_id FROM gf_stays WHERE area_id = 'A' AND state = 'INSIDE'").fetchall())
        print(f"through the gf_stays view: {n} rows in {(time.perf_counter() - t) * 1000:.0f} ms (a scan of every record)")


if __name__ == "__main__":
    main()
