"""How write_layouts.py times the candidates: each write into a fresh
catalog (or a copy of one holding the previous run) as one transaction, the
candidates in turn round after round (A B C, then C B A) so that a slow
stretch of a shared machine falls on all of them, and reads warm, repeated
until they add up to 50 ms as timeit's autorange does."""
import os
import shutil
import sqlite3
import statistics
import time
from pathlib import Path


class Bench:
    """The scratch folder, the sources and the settings every connection of
    a run shares."""

    def __init__(self, work, sources, page_size):
        self.work, self.sources, self.page_size = work, sources, page_size

    def open(self, path):
        """A connection to the catalog at `path` (made if missing, with the
        page size, in WAL) with the engine's cache settings and the sources
        attached read-only as `src`; autocommit, transactions by hand."""
        db = sqlite3.connect(str(path), isolation_level=None, uri=True)
        db.execute(f"PRAGMA page_size = {self.page_size}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA cache_size = -65536")
        db.execute("PRAGMA mmap_size = 2147483648")
        db.execute(f"ATTACH 'file:{self.sources}?mode=ro' AS src")
        return db

    def write(self, layout, run, path, start_from=None):
        """Writes `layout`'s run `run` into a new catalog at `path` (a copy of
        `start_from` for run 2) and returns the seconds from BEGIN through
        COMMIT; the schema and what an import fills are made before the clock."""
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            p.unlink(missing_ok=True)
        if start_from:
            shutil.copyfile(start_from, path)
        db = self.open(path)
        if not start_from:
            db.executescript(layout.schema)
            db.executescript(layout.fill)
        params = {"base": db.execute(layout.base_sql).fetchone()[0] if layout.base_sql else 0, "run": run}
        started = time.perf_counter()
        db.execute("BEGIN")
        for statement in layout.write[run]:
            db.execute(statement.format(run=run), params)
        db.execute("COMMIT")
        seconds = time.perf_counter() - started
        db.close()
        return seconds

    def base_catalog(self, layout):
        """Run 1 of `layout` written once, untimed, checkpointed into its
        file: where run 2 starts from and what the reads ask."""
        path = self.work / f"{layout.key}-run1.db"
        self.write(layout, 1, path)
        db = sqlite3.connect(str(path), isolation_level=None)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        return path


def alternate(items, rounds, measure):
    """{item: [value per round]}: `measure(item)` for every item, round after
    round, in order in even rounds and reversed in odd ones (A B C, C B A, …)."""
    values = {item: [] for item in items}
    for r in range(rounds):
        for item in items if r % 2 == 0 else list(reversed(items)):
            values[item].append(measure(item))
        print(f"  round {r + 1}/{rounds} done (load {os.getloadavg()[0]:.1f})", flush=True)
    return values


def ratio(values, item, base):
    """The median over rounds of `item`'s value over `base`'s in the same round."""
    return statistics.median(a / b for a, b in zip(values[item], values[base]))


class ReadTimer:
    """Times a read statement warm: the first call counts how many runs in
    a row make up at least `at_least` seconds (as timeit's autorange), and
    every call returns the average over that many runs."""

    def __init__(self, at_least=0.05):
        self.at_least, self.repeats = at_least, {}

    def __call__(self, key, db, sql, params):
        n = self.repeats.get(key)
        if n is None:
            n, elapsed = 0, 0.0
            started = time.perf_counter()
            while elapsed < self.at_least:
                db.execute(sql, params).fetchall()
                n += 1
                elapsed = time.perf_counter() - started
            self.repeats[key] = n
        started = time.perf_counter()
        for _ in range(n):
            db.execute(sql, params).fetchall()
        return (time.perf_counter() - started) / n


def query_plans(path, reads, params):
    """EXPLAIN QUERY PLAN of each read, one line per step."""
    db = sqlite3.connect(str(path))
    plans = {name: " / ".join(r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)) for name, sql in reads.items()}
    db.close()
    return plans


def file_mib(path):
    """The size of the file at `path` in MiB."""
    return path.stat().st_size / 2**20


def write_phase(bench, layouts, rounds, base_key):
    """Every layout's run 1 and run 2 (where it differs) timed in turn;
    returns the rows of the report: median seconds and ratio to `base_key`'s
    same run, and the base catalogs made for the reads."""
    bases = {layout.key: bench.base_catalog(layout) for layout in layouts}
    items = [(layout.key, run) for run in (1, 2) for layout in layouts if layout.write.get(run)]
    by_key = {layout.key: layout for layout in layouts}

    def measure(item):
        key, run = item
        target = bench.work / f"{key}-timed.db"
        return bench.write(by_key[key], run, target, start_from=bases[key] if run == 2 else None)

    times = alternate(items, rounds, measure)
    rows = {}
    for key, run in items:
        rows.setdefault(key, {})[run] = {"s": statistics.median(times[(key, run)]), "x": ratio(times, (key, run), (base_key, run)),
                                         "rounds": times[(key, run)]}
    for key in rows:
        rows[key]["mib"] = file_mib(bases[key])
    return rows, bases


def read_phase(catalogs, reads_of, params, rounds):
    """Every (layout, read) timed warm, layouts in turn round after round;
    {(layout, read): [seconds per round]}."""
    timer = ReadTimer()
    conns = {key: sqlite3.connect(str(path), uri=True) for key, path in catalogs.items()}
    for db in conns.values():
        db.execute("PRAGMA cache_size = -65536")
        db.execute("PRAGMA mmap_size = 2147483648")
    keys = list(catalogs)
    values = {}

    def measure(key):
        for name, sql in reads_of[key].items():
            values.setdefault((key, name), []).append(timer((key, name), conns[key], sql, params))
        return 0

    alternate(keys, rounds, measure)
    for db in conns.values():
        db.close()
    return values
