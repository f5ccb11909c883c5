"""geofence.spark.judge on a local Spark (issue 41): the catalog shipped with
SparkContext.addFile and opened read-only in the executors' Python workers,
fixes and records partitioned by subject, each partition judged in process
through Arrow. Over the issue's size (task_scenario.AT_SCALE: ~305,000 fixes
of 1,100 subjects, conditions of every kind, equal times), read by Spark
from a parquet file, in 1, 3 and 7 partitions and in two runs split by event
time carrying the state, the notifications are those of one `geofence judge`
on a copy of the catalog (equal times in input order), the new state is
`geofence state export`'s byte for byte (and so is the state written as
parquet and imported into a catalog with geofence.import_state), and the
catalog file is unchanged. What is shipped is the catalog as a reader sees
it now (a -wal's committed pages included), and the copies are kept for the
live session alone.
One SparkSession and one data set for the module (local[2]); Java 17 and
pyspark come from scripts/test.sh."""

import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from task_scenario import (AT_SCALE, canonical, digest, fixes_with_ties, gf, reference, spark_collected, spark_session,
                           use_this_build, write_parquet)

use_this_build()
pyspark = pytest.importorskip("pyspark")  # listed in Tests/requirements.txt: missing means a broken venv
import geofence  # noqa: E402
from geofence import spark as gs  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    session = spark_session("local[2]", "geofence-test")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The catalog, the rows in file order and one `geofence judge` over all of them."""
    tmp = tmp_path_factory.mktemp("spark")
    db, rows = fixes_with_ties(tmp, seed=43, **AT_SCALE)
    write_parquet(tmp / "all.parquet", rows)
    return tmp, db, rows, reference(tmp, db, [rows], name="all")


def frame(spark, path, rows, start=0):
    """rows as a DataFrame Spark reads from a parquet file, their file order (from ``start``) in an `order` column."""
    return spark.read.parquet(str(write_parquet(path, rows, start)))


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_partitions_give_one_judge(spark, data, partitions):
    tmp, db, rows, (expected, exported, counts) = data
    assert {n[4] for n in expected} == {"IN", "OUT", "DWELL"}
    assert len(rows) > 300_000 and counts["stale"] > 0  # the size; ties judged in input order
    before = digest(db)
    notes, states, runs = gs.judge(spark.read.parquet(str(tmp / "all.parquet")), catalog=db, partitions=partitions)
    got_notes, got_state = spark_collected(notes, states)
    assert got_notes == canonical(expected)
    assert got_state == exported
    run = runs.collect()[0]
    assert {k: run[k] for k in counts} == counts and run["partitions"] == partitions
    assert digest(db) == before
    # The job's state written as parquet and imported into a catalog (geofence.import_state)
    # is the state `geofence judge` leaves, byte for byte.
    states.write.parquet(str(tmp / f"state-{partitions}"))
    other = shutil.copy(db, tmp / f"imported-{partitions}.db")
    assert geofence.import_state(other, tmp / f"state-{partitions}") == 1100
    assert gf("state", "export", other).stdout == exported


def test_two_runs_split_by_event_time_carry_the_state(spark, data):
    tmp, db, rows, _ = data
    cut = sorted(r[1] for r in rows)[len(rows) // 2]  # text order is time order: one offset throughout
    first = [r for r in rows if r[1] < cut]
    late = [r for r in first if r[0] == "dev-7"][-2]  # older than dev-7's state after the first run
    second = [r for r in rows if r[1] >= cut] + [late]
    expected, exported, counts = reference(tmp, db, [first, second], name="split")
    notes1, states1, runs1 = gs.judge(frame(spark, tmp / "first.parquet", first), catalog=db, partitions=3)
    notes2, states2, runs2 = gs.judge(frame(spark, tmp / "second.parquet", second, start=len(first)), catalog=db,
                                      state=states1, partitions=5)
    n1, _ = spark_collected(notes1, states1)
    n2, state = spark_collected(notes2, states2)
    assert canonical(n1 + n2) == canonical(expected)
    assert state == exported
    assert runs1.collect()[0]["stale"] + runs2.collect()[0]["stale"] == counts["stale"] >= 1


def test_a_catalog_another_connection_wrote_and_holds_is_judged_as_it_now_is(spark, tmp_path):
    # A connection that wrote the catalog and is still open leaves its pages in
    # the -wal (no checkpoint): what is shipped must be what a reader sees now.
    db, rows = fixes_with_ties(tmp_path, subjects=8, per_subject=40, seed=67)
    held = sqlite3.connect(db, isolation_level=None)
    try:
        held.execute("PRAGMA wal_autocheckpoint = 0")
        held.execute("INSERT INTO gf_conditions (condition_id, area_id, timing) SELECT 1000 + rowid, area_id, 'IN' FROM gf_areas")
        assert os.path.getsize(f"{db}-wal") > 0
        now = tmp_path / "now.db"  # the catalog as it now is, for the reference
        with sqlite3.connect(now) as copy:
            held.backup(copy)
        expected, exported, _ = reference(tmp_path, now, [rows])
        assert any(n[3] > 1000 for n in expected)  # the new conditions notify
        notes, states, _ = gs.judge(frame(spark, tmp_path / "fixes.parquet", rows), catalog=db, partitions=2)
        assert spark_collected(notes, states) == (canonical(expected), exported)
    finally:
        held.close()


def test_shipped_copies_are_kept_for_the_live_session_alone(spark, tmp_path):
    db, rows = fixes_with_ties(tmp_path, subjects=3, per_subject=10, seed=71)
    # Copies are made under geofence-spark-UID, a folder PID-SESSION per session (docs/spark.md).
    base = Path(tempfile.gettempdir()) / f"geofence-spark-{os.getuid()}"
    gone = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True).stdout.strip()  # a process that ended
    stale = [base / f"{gone}-local-1", base / f"{os.getpid()}-local-2"]
    base.mkdir(exist_ok=True)
    for path in stale:
        path.mkdir()
        (path / "scenario-0123456789abcdef.db").write_bytes(b"an earlier copy")
    gs.judge(frame(spark, tmp_path / "fixes.parquet", rows), catalog=db, partitions=1)[0].count()
    live = base / f"{os.getpid()}-{spark.sparkContext.applicationId}"
    assert [p for p in stale if p.exists()] == []
    assert any(p.name.startswith("scenario-") for p in live.iterdir())
