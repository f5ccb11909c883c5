"""geofence.spark.judge on a local Spark (issue 41): the catalog shipped with
SparkContext.addFile and opened read-only in the executors' Python workers,
fixes and records partitioned by subject, each partition judged in process
through Arrow. In 1, 3 and 7 partitions, and in two runs split by event time
carrying the state, the notifications are those of one `geofence judge` on a
copy of the catalog (equal times in input order), the new state is `geofence
state export`'s byte for byte, and the catalog file is unchanged. One
SparkSession for the module (local[2]); Java 17 and pyspark come from
scripts/test.sh."""

import pytest

from task_scenario import canonical, digest, export_text, fixes_with_ties, reference, spark_session, use_this_build

use_this_build()
pyspark = pytest.importorskip("pyspark")  # listed in Tests/requirements.txt: missing means a broken venv
from geofence import spark as gs  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    session = spark_session("local[2]", "geofence-test")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """~50 subjects, ~4,400 fixes with ties; the rows in file order."""
    tmp = tmp_path_factory.mktemp("spark")
    db, rows = fixes_with_ties(tmp, subjects=50, per_subject=80, seed=43)
    return tmp, db, rows


def frame(spark, rows, start=0):
    """rows as a DataFrame with their file order in an `order` column."""
    return spark.createDataFrame([(*r, start + i) for i, r in enumerate(rows)],
                                 "subject_id string, ts string, lat double, lon double, accuracy_m double, order long")


def collected(notes, states):
    n = [tuple(r) for r in notes.collect()]
    s = sorted(((r.subject_id, r.record) for r in states.collect()), key=lambda x: x[0].encode())
    return canonical(n), export_text([x[0] for x in s], [x[1] for x in s])


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_partitions_give_one_judge(spark, data, partitions):
    tmp, db, rows = data
    expected, exported, counts = reference(tmp, db, [rows], name=f"p{partitions}")
    assert {n[4] for n in expected} == {"IN", "OUT", "DWELL"}
    before = digest(db)
    notes, states, runs = gs.judge(frame(spark, rows), catalog=db, partitions=partitions)
    got_notes, got_state = collected(notes, states)
    assert got_notes == canonical(expected)
    assert got_state == exported
    run = runs.collect()[0]
    assert {k: run[k] for k in counts} == counts and run["partitions"] == partitions
    assert digest(db) == before


def test_two_runs_split_by_event_time_carry_the_state(spark, data):
    tmp, db, rows = data
    cut = sorted(r[1] for r in rows)[len(rows) // 2]  # text order is time order: one offset throughout
    first = [r for r in rows if r[1] < cut]
    late = [r for r in first if r[0] == "dev-7"][-2]  # older than dev-7's state after the first run
    second = [r for r in rows if r[1] >= cut] + [late]
    expected, exported, counts = reference(tmp, db, [first, second], name="split")
    notes1, states1, runs1 = gs.judge(frame(spark, first), catalog=db, partitions=3)
    notes2, states2, runs2 = gs.judge(frame(spark, second, start=len(first)), catalog=db, state=states1, partitions=5)
    n1, _ = collected(notes1, states1)
    n2, state = collected(notes2, states2)
    assert canonical(n1 + n2) == canonical(expected)
    assert state == exported
    assert runs1.collect()[0]["stale"] + runs2.collect()[0]["stale"] == counts["stale"] >= 1
