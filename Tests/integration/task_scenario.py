"""What the tests of in-process judgement share (test_task_arrow.py,
test_spark_*.py): a scenario of many subjects with IN, OUT, DWELL and
suppressions and fixes of equal times, the reference (one `geofence judge`
on a copy of the catalog, and `geofence state export` of it), the Python
package pointed at this build's libgeofence, and for Spark the issue's size
of input (`AT_SCALE`) as a parquet file Spark reads."""
import hashlib
import json
import os
import shutil
import sqlite3
import sys

from conftest import EXTENSION, ROOT, run
from test_judgement import scenario, write_fixes

NOTIFICATION_COLUMNS = "subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m"

# The Spark tests' size (issue 41: "a few hundred thousand fixes of many
# subjects"): 1,100 subjects of 250 fixes, and ties, 305,556 fixes.
AT_SCALE = dict(subjects=1100, per_subject=250)


def use_this_build():
    """Imports in this process come from python/, and geofence.arrow calls
    DIST's libgeofence. PYTHONPATH is not set for the whole session: other
    tests' subprocesses (a venv with the wheel installed) would import
    python/ instead of what they installed; processes of this build get
    `this_build_env()`, a SparkSession `spark_session`."""
    os.environ["GEOFENCE_LIBRARY"] = str(EXTENSION)
    path = str(ROOT / "python")
    if path not in sys.path:
        sys.path.insert(0, path)


def this_build_env():
    """The environment a subprocess (or Spark's JVM and its Python workers)
    needs to import python/ and call DIST's libgeofence."""
    path = str(ROOT / "python")
    return dict(os.environ, GEOFENCE_LIBRARY=str(EXTENSION), PYSPARK_PYTHON=sys.executable,
                PYTHONPATH=os.pathsep.join([path] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def spark_session(master, name):
    """A local SparkSession whose Python workers import this build: its JVM
    is started with `this_build_env()` (the workers inherit the JVM's
    environment), which is then taken back from this process."""
    from pyspark.sql import SparkSession
    saved = dict(os.environ)
    os.environ.update(this_build_env())
    try:
        session = (SparkSession.builder.master(master).appName(name)
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
                   # Loopback throughout: a large task result is fetched from the block manager at
                   # driver.host, which otherwise names the machine's address the bind does not serve.
                   .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
                   .getOrCreate())
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return session


def fixes_with_ties(tmp_path, subjects, per_subject, seed=41):
    """The catalog and rows of test_judgement.scenario, with a second fix at
    the very time of every 9th fix of a subject (another position), so that
    input order decides ties; the rows are in file order, each a tuple
    (subject_id, ts text, lat, lon, accuracy_m)."""
    from test_judgement import iso
    db, _, rows = scenario(tmp_path, subjects=subjects, per_subject=per_subject, seed=seed)
    out = []
    for i, (s, t, lat, lon, acc) in enumerate(rows):
        out.append((s, iso(t), lat, lon, acc))
        if i % 9 == 4:
            out.append((s, iso(t), round(lat + 0.004, 6), round(lon - 0.003, 6), 8.0))
    return db, out


def write_parquet(path, rows, start=0):
    """rows (tuples of fixes_with_ties) as a parquet file of a fixes frame,
    their position from ``start`` in an ``order`` column: what Spark reads
    (a frame of Python tuples would cost more than judging them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    columns = list(zip(*rows)) if rows else [[]] * 5
    table = pa.table({"subject_id": pa.array(columns[0], pa.string()), "ts": pa.array(columns[1], pa.string()),
                      "lat": pa.array(columns[2], pa.float64()), "lon": pa.array(columns[3], pa.float64()),
                      "accuracy_m": pa.array(columns[4], pa.float64()),
                      "order": pa.array(range(start, start + len(rows)), pa.int64())})
    pq.write_table(table, path)
    return path


def spark_collected(notes, states):
    """A Spark job's notifications and new state (geofence.spark.judge's
    frames), fetched as Arrow: (the notifications as tuples of
    NOTIFICATION_COLUMNS in canonical order, the state as `state export` text)."""
    columns = [c.strip() for c in NOTIFICATION_COLUMNS.split(",")]
    n = notes.select(*columns).toArrow().to_pydict()
    s = states.select("subject_id", "record").toArrow().to_pydict()
    pairs = sorted(zip(s["subject_id"], s["record"]), key=lambda x: x[0].encode())
    return canonical(list(zip(*[n[c] for c in columns]))), export_text([x[0] for x in pairs], [x[1] for x in pairs])


def write_rows(path, rows):
    """rows (ts already text) as a fixes CSV."""
    import csv
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(rows)


# The reference is this checkout's own CLI, so that GEOFENCE_DIST (another
# build) swaps only the library under test.
REFERENCE_CLI = ROOT / "dist" / "geofence"


def gf(*args):
    return run(REFERENCE_CLI, *args)


def reference(tmp_path, db, batches, name="reference"):
    """One `geofence judge` per batch of rows on a copy of `db`: (its
    notifications as tuples in id order, its `state export` text, the runs'
    counts summed)."""
    copy = tmp_path / f"{name}.db"
    shutil.copy(db, copy)
    for k, rows in enumerate(batches):
        path = tmp_path / f"{name}-{k}.csv"
        write_rows(path, rows)
        gf("judge", copy, "--fixes", path)
    conn = sqlite3.connect(copy)
    notes = [tuple(r) for r in conn.execute(f"SELECT {NOTIFICATION_COLUMNS} FROM gf_notifications ORDER BY id")]
    counts = conn.execute("SELECT sum(fixes), sum(judged), sum(stale), sum(invalid) FROM gf_runs").fetchone()
    conn.close()
    return notes, gf("state", "export", copy).stdout, dict(zip(("fixes", "judged", "stale", "invalid"), counts))


def export_text(subjects, records):
    """State records as `geofence state export` writes them (ASCII subject ids)."""
    return "".join('{"subject_id":' + json.dumps(s) + ',"record":' + r + "}\n" for s, r in zip(subjects, records))


def canonical(notes):
    """Notifications (tuples of NOTIFICATION_COLUMNS) in canonical order: subject and area by their bytes."""
    return sorted(notes, key=lambda n: (n[0].encode(), n[1], n[2].encode(), n[3]))


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()
