"""What schema 11's id floor costs a prune: 2 M narrow notification rows (the
engine's columns and index), 1 M of them deleted as `geofence prune` deletes
them (chunks of 50,000 by id window, each its own transaction, with its
WHERE), once into a table with AUTOINCREMENT and no trigger (schema 10), once
with the floor's AFTER DELETE trigger and the floor raised to the greatest
id first (schema 11). Alternating, three rounds each; in memory, so the
trigger's own cost is not hidden by the disk.

    python3 benchmarks/id_floor_prune.py
"""
import sqlite3
import statistics
import time

TRIGGER = """CREATE TRIGGER gf_notification_rows_floor AFTER DELETE ON gf_notification_rows
WHEN OLD.id > coalesce((SELECT id FROM gf_notification_floor WHERE singleton = 1), 0)
BEGIN
    INSERT OR REPLACE INTO gf_notification_floor (singleton, id) VALUES (1, OLD.id);
END"""
RAISE = """INSERT OR REPLACE INTO gf_notification_floor (singleton, id)
SELECT 1, max(coalesce((SELECT id FROM gf_notification_floor WHERE singleton = 1), 0),
              coalesce((SELECT max(id) FROM gf_notification_rows), 0))"""


def prune_seconds(floor):
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute(f"""CREATE TABLE gf_notification_rows (id INTEGER PRIMARY KEY {'' if floor else 'AUTOINCREMENT'}, run_id INTEGER,
                   subject_key INTEGER, ts_us INTEGER, area_key INTEGER, condition_id INTEGER, transition INTEGER, lat REAL,
                   lon REAL, accuracy_m REAL, local_day INTEGER)""")
    db.execute("CREATE INDEX gf_notification_rows_by_subject ON gf_notification_rows (subject_key, ts_us)")
    db.execute("CREATE TABLE gf_runs (run_id INTEGER PRIMARY KEY, status TEXT)")
    db.execute("INSERT INTO gf_runs VALUES (1, 'done')")
    db.execute("CREATE TABLE gf_notification_floor (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), id INTEGER NOT NULL)")
    db.execute("INSERT INTO gf_notification_floor VALUES (1, 0)")
    if floor:
        db.execute(TRIGGER)
    db.execute("BEGIN")
    db.executemany("INSERT INTO gf_notification_rows (run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, "
                   "accuracy_m, local_day) VALUES (1, ?, ?, ?, 1, 0, 35.1, 139.2, 10.0, 20000)",
                   ((i % 1000, i, i % 5000) for i in range(2_000_000)))
    db.execute("COMMIT")
    t = time.perf_counter()
    for lo in range(0, 1_000_000, 50_000):
        db.execute("BEGIN")
        if floor and lo == 0:
            db.execute(RAISE)
        db.execute("DELETE FROM gf_notification_rows WHERE id > ? AND id <= ? AND ts_us < 1500000 "
                   "AND run_id NOT IN (SELECT run_id FROM gf_runs WHERE status = 'running')", (lo, lo + 50_000))
        db.execute("COMMIT")
    return time.perf_counter() - t


if __name__ == "__main__":
    times = {"AUTOINCREMENT, no trigger (schema 10)": [], "the floor's trigger (schema 11)": []}
    for _ in range(3):
        for name, floor in zip(times, (False, True)):
            times[name].append(prune_seconds(floor))
    for name, t in times.items():
        print(f"{name}: {' '.join(f'{x:.3f}' for x in t)}; median {statistics.median(t):.3f} s for 1,000,000 rows")
