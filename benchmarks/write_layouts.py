"""What each candidate layout for a run's notifications and state costs SQLite
itself to write and to read back (issue 38, "measure the alternatives before
choosing"), replayed from a catalog `geofence judge` filled, with no engine in
the way:

    python3 benchmarks/write_layouts.py JUDGED.db [--rounds 6] [--inside-subjects 1000000] [--work /tmp]

The rows the run stored are laid out once in every shape the candidates
take (layout_sources.py); each candidate (layout_notifications.py: notifications
a, a2, a3, b, c, d, e; layout_state.py: today, json_all, json, blob) is written as the
engine would into an empty WAL catalog (run 1) and into a copy of the
catalog holding that run (run 2: the same rows a day later), each write one
transaction of INSERT … SELECT statements, timed from BEGIN through COMMIT
(the checkpoint SQLite runs at that commit included). The candidates take
turns round after round, A B C … then … C B A, so a slow stretch of this
shared machine falls on all of them alike; each figure is the median of its
rounds and each ratio the median of the rounds' own ratios to today's
layout. Every connection has the engine's settings (64 MiB page cache, 2 GiB
mmap) and the judged catalog's page size.

Before any timing each candidate's views are checked against the judged
catalog (the same rows of gf_notifications, gf_last_notified, gf_subjects and
gf_stays, compared with EXCEPT both ways); then the reads are timed the same
way, warm: every row through the documented columns, a consumer's
incremental read (`WHERE id > ?` for the last 1 %), one subject's
notifications, and "who is inside area A now". With --inside-subjects the
state is also built at that many subjects (copies of the judged ones) and
"who is inside A" is timed for the area with the number of subjects inside
nearest --inside-area-subjects.

It prints Markdown tables (and with --report, every figure round by round
and the query plans as JSON); its scratch folder is a new one under --work,
removed at the end unless --keep.
"""
import argparse
import json
import math
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import layout_notifications as lc  # noqa: E402
import layout_state  # noqa: E402
import layout_sources  # noqa: E402
from layout_checks import verify  # noqa: E402
from layout_report import markdown_reads, markdown_writes  # noqa: E402
from layout_timing import Bench, file_mib, query_plans, read_phase, write_phase  # noqa: E402

TODAY_OBJECTS = ("gf_notifications", "gf_notifications_by_subject", "gf_subjects", "gf_stay_rows", "gf_stay_rows_by_area",
                 "gf_stays", "gf_last_notified", "gf_stays_delete", "gf_subjects_remove_stays")


def scaled_inside(bench, today_ddl, subjects, area_subjects, rounds):
    """"Who is inside A now" at `subjects` subjects: the state built (untimed)
    from copies of the judged subjects, today's and compact, then each way
    of asking timed in turn for the area whose subjects inside come nearest
    `area_subjects`; returns the figures and whether every way gave the
    same answer."""
    base = bench_scalar(bench, "SELECT count(*) FROM src.subj")
    copies = max(1, math.ceil(subjects / base))
    hot = bench_row(bench, f"""SELECT a.area_id, count(*) * {copies} FROM src.inside1 AS i JOIN src.areas AS a USING (area_key)
                              GROUP BY i.area_key ORDER BY abs(count(*) * {copies} - {area_subjects}), i.area_key LIMIT 1""")
    catalogs, built = {}, {}
    for name, (schema, statements) in layout_state.scaled_state(today_ddl, copies).items():
        path = bench.work / f"scaled-{name}.db"
        db = bench.open(path)
        db.executescript(schema)
        started = time.perf_counter()
        db.execute("BEGIN")
        for s in statements:
            db.execute(s)
        db.execute("COMMIT")
        built[name] = time.perf_counter() - started
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        catalogs[name] = path
        print(f"  built {name} state of {copies * base:,} subjects in {built[name]:.1f} s ({file_mib(path):.0f} MiB)", flush=True)
    answers = set()
    for label, (name, sql) in layout_state.SCALED_INSIDE.items():
        db = sqlite3.connect(str(catalogs[name]))
        answers.add(tuple(db.execute(sql, {"area": hot[0]}).fetchone()))
        db.close()
    reads_of = {label: {label: sql} for label, (name, sql) in layout_state.SCALED_INSIDE.items()}
    paths = {label: catalogs[name] for label, (name, sql) in layout_state.SCALED_INSIDE.items()}
    times = read_phase(paths, reads_of, {"area": hot[0]}, rounds)
    return {"subjects": copies * base, "area": hot[0], "inside": hot[1], "same_answer": len(answers) == 1,
            "build_s": built, "ms": {label: statistics.median(times[(label, label)]) * 1000 for label in layout_state.SCALED_INSIDE},
            "plans": {label: query_plans(paths[label], {label: sql}, {"area": hot[0]})[label]
                      for label, (name, sql) in layout_state.SCALED_INSIDE.items()}}


def bench_scalar(bench, sql):
    """The first column of `bench_row`."""
    return bench_row(bench, sql)[0]


def bench_row(bench, sql):
    """The first row `sql` gives over the sources (attached as `src`)."""
    db = sqlite3.connect(":memory:", uri=True)
    db.execute(f"ATTACH 'file:{bench.sources}?mode=ro' AS src")
    row = db.execute(sql).fetchone()
    db.close()
    return row


def read_params(bench, base_catalog):
    """The reads' parameters: the cursor 1 % of the rows before the last id,
    the subject in the middle of the key order, and the area with the most
    subjects inside in the judged catalog."""
    db = sqlite3.connect(str(base_catalog))
    last, count = db.execute("SELECT max(id), count(*) FROM gf_notifications").fetchone()
    db.close()
    subject = bench_scalar(bench, "SELECT subject_id FROM src.subj ORDER BY subject_key LIMIT 1 OFFSET (SELECT count(*) / 2 FROM src.subj)")
    area = bench_scalar(bench, """SELECT a.area_id FROM src.inside1 AS i JOIN src.areas AS a USING (area_key)
                                  GROUP BY i.area_key ORDER BY count(*) DESC, i.area_key LIMIT 1""")
    return {"cursor": last - max(1, count // 100), "subject": subject, "area": area}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("catalog", type=Path, help="a catalog `geofence judge` filled (read only)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()), help="parent of the scratch folder (default /tmp)")
    ap.add_argument("--rounds", type=int, default=6, help="write rounds (A…Z then Z…A counts two)")
    ap.add_argument("--read-rounds", type=int, default=5)
    ap.add_argument("--inside-subjects", type=int, default=1_000_000, help="subjects of the scaled state (0: skip)")
    ap.add_argument("--inside-area-subjects", type=int, default=10_000, help="subjects inside the area asked of the scaled state")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--report", type=Path, help="write every figure, round by round, and the query plans as JSON here")
    args = ap.parse_args()
    catalog = args.catalog.resolve()
    if not catalog.is_file():
        raise SystemExit(f"{args.catalog}: no such catalog file")
    work = Path(tempfile.mkdtemp(prefix="gf-write-layouts-", dir=args.work))
    report = {"catalog": str(catalog), "sqlite": sqlite3.sqlite_version, "cpus": os.cpu_count(), "load_start": os.getloadavg()}
    try:
        print(f"sources in {work} (load {os.getloadavg()[0]:.1f})", flush=True)
        started = time.perf_counter()
        facts = layout_sources.build(work / "sources.db", catalog)
        report["sources"] = facts
        print(f"  {json.dumps(facts)} in {time.perf_counter() - started:.0f} s", flush=True)
        bench = Bench(work, work / "sources.db", facts["page_size"])
        db = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
        today_ddl = {name: sql for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE name IN (%s)"
                                                           % ",".join("?" * len(TODAY_OBJECTS)), TODAY_OBJECTS)}
        db.close()
        notes, states = lc.notification_layouts(today_ddl), layout_state.state_layouts(today_ddl)

        print("notifications: writes", flush=True)
        note_rows, note_bases = write_phase(bench, notes, args.rounds, "a")
        print("state: writes", flush=True)
        state_rows, state_bases = write_phase(bench, states, args.rounds, "today")
        report["writes"] = {"notifications": note_rows, "state": state_rows}
        report["checks"] = {key: verify(path, catalog) for key, path in {**note_bases, **state_bases}.items()}
        print(f"  views against the judged catalog: {json.dumps(report['checks'])}", flush=True)

        params = read_params(bench, note_bases["a"])
        report["read_params"] = params
        print("reads", flush=True)
        catalogs = {**note_bases, **{f"state {k}": p for k, p in state_bases.items() if k != "blob"}}
        reads_of = {layout.key: layout.reads for layout in notes}
        reads_of.update({f"state {layout.key}": layout.reads for layout in states if layout.key != "blob"})
        read_values = read_phase(catalogs, reads_of, params, args.read_rounds)
        report["reads"] = {f"{k} / {n}": statistics.median(v) for (k, n), v in read_values.items()}
        report["plans"] = {key: query_plans(path, reads_of[key], params) for key, path in catalogs.items()}

        if args.inside_subjects:
            print(f"who is inside A among {args.inside_subjects:,} subjects", flush=True)
            report["scaled_inside"] = scaled_inside(bench, today_ddl, args.inside_subjects, args.inside_area_subjects, args.read_rounds)
        report["load_end"] = os.getloadavg()

        note_base = {"gf_last_notified": ("state today", "gf_last_notified"), "all rows, stored integers": ("a", "all rows")}
        print(f"\n{facts['notifications']:,} notifications, {facts['subj']:,} subjects, {facts['stays1']:,} stays, "
              f"{facts['notified1']:,} last-notified rows; page size {facts['page_size']}, SQLite {sqlite3.sqlite_version}, "
              f"medians of {args.rounds} write rounds; load {report['load_start'][0]:.1f} → {report['load_end'][0]:.1f}\n")
        print(markdown_writes("notifications", notes, note_rows, "a"), "\n")
        print(markdown_writes("state", states, state_rows, "today"), "\n")
        print(markdown_reads("reads (warm)", [n.key for n in notes], list(lc.NARROW_READS), read_values,
                             lambda name: note_base.get(name, ("a", name))), "\n")
        print(markdown_reads("state reads (warm)", [f"state {s.key}" for s in states if s.key != "blob"],
                             ["gf_subjects", "gf_stays", "gf_last_notified", "inside A"], read_values,
                             lambda name: ("state today", name)), "\n")
        if args.inside_subjects:
            s = report["scaled_inside"]
            print(f"who is inside area {s['area']} ({s['inside']:,} subjects inside among {s['subjects']:,}; same answer: "
                  f"{s['same_answer']}):")
            for label, ms in s["ms"].items():
                print(f"  {label}: {ms:.3g} ms   [{s['plans'][label]}]")
        if args.report:
            args.report.write_text(json.dumps(report, indent=1, default=str))
        if args.keep:
            print(f"\nkept {work}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
