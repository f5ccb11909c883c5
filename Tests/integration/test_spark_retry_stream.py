"""geofence.spark beyond one clean batch (issue 41): a task that fails once
and is retried (`local[2,2]` allows a task one failure) leaves the
notifications and state of one `geofence judge`; the Structured Streaming
example (examples/spark_streaming.py) run as written over three files, one
micro-batch each, gives those of one `geofence judge` over all of them, and a
micro-batch replayed changes nothing; the README's "Scaling out with Spark"
example runs as written. The retry and the stream judge the issue's size
(task_scenario.AT_SCALE: ~305,000 fixes of 1,100 subjects), one data set and
one reference for the module. The scripts run in their own Python (a Spark of
their own, in the folder they are written for); the retry in this module's
SparkSession."""
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES
from task_scenario import (AT_SCALE, canonical, fixes_with_ties, gf, reference, spark_collected, spark_session,
                           this_build_env, use_this_build, write_parquet, write_rows)

use_this_build()
pyspark = pytest.importorskip("pyspark")  # listed in Tests/requirements.txt: missing means a broken venv
from geofence import spark as gs  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    session = spark_session("local[2,2]", "geofence-retry")
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


def python(*args, cwd):
    """Runs a script with this Python and this build's library, as a user would; its output."""
    # Four shuffle partitions, as a user of a small machine sets them: Spark's default 200 are
    # 200 tasks a job (judge's result is cached, so adaptive execution does not merge them)
    # and 200 parquet files a write, which cost minutes on the shared 2-core machine.
    env = dict(this_build_env(), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_SUBMIT_ARGS="--conf spark.sql.shuffle.partitions=4 pyspark-shell")
    p = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]
    return p.stdout


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The catalog, the rows in file order, and one `geofence judge` over all of them."""
    tmp = tmp_path_factory.mktemp("retry-stream")
    db, rows = fixes_with_ties(tmp, seed=47, **AT_SCALE)
    return tmp, db, rows, reference(tmp, db, [rows])


def test_a_task_that_fails_once_is_retried_and_changes_nothing(spark, data, tmp_path):
    tmp, db, rows, (expected, exported, counts) = data
    marker = tmp_path / "failed-once"
    spark.conf.set(gs.TEST_HOOK_FAIL_ONCE, str(marker))
    try:
        frame = spark.read.parquet(str(write_parquet(tmp_path / "fixes.parquet", rows)))
        notes, states, runs = gs.judge(frame, catalog=db, partitions=3)
        got_notes, got_state = spark_collected(notes, states)
        run = runs.collect()[0]
    finally:
        spark.conf.unset(gs.TEST_HOOK_FAIL_ONCE)
    assert marker.exists()  # a task did fail, after handing over its rows
    assert got_notes == canonical(expected)
    assert got_state == exported
    assert {k: run[k] for k in counts} == counts and run["partitions"] == 3


def test_catalogs_of_one_name_in_one_session_are_each_judged(spark, tmp_path):
    # Spark ships a file by its base name: a catalog changed between runs, or
    # another of the same name, must still be the one judged.
    for k, seed in enumerate((59, 61)):
        (tmp_path / str(k)).mkdir()
        db, rows = fixes_with_ties(tmp_path / str(k), subjects=6, per_subject=30, seed=seed)
        expected, exported, _ = reference(tmp_path / str(k), db, [rows])
        frame = spark.createDataFrame(rows, "subject_id string, ts string, lat double, lon double, accuracy_m double")
        assert spark_collected(*gs.judge(frame, catalog=db, partitions=2)[:2]) == (canonical(expected), exported), seed


def stream_files(tmp_path, rows):
    """Three fixes files of ``rows`` split by event time (ties kept in one
    file, so the three in turn are ``rows`` in an order `geofence judge`
    judges alike), their modification times in that order (the file
    source's order)."""
    times = sorted(r[1] for r in rows)  # text order is time order: one offset throughout
    cuts = [times[len(times) // 3], times[2 * len(times) // 3]]
    parts = [[r for r in rows if r[1] < cuts[0]], [r for r in rows if cuts[0] <= r[1] < cuts[1]],
             [r for r in rows if r[1] >= cuts[1]]]
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for k, part in enumerate(parts):
        write_rows(inbox / f"fixes-{k}.csv", part)
        os.utime(inbox / f"fixes-{k}.csv", (1_800_000_000 + k * 60,) * 2)
    return inbox


def test_the_streaming_example_gives_one_judge_and_a_replay_changes_nothing(spark, data, tmp_path):
    _, db, rows, (expected, exported, counts) = data
    inbox = stream_files(tmp_path, rows)
    out = tmp_path / "out"
    python(ROOT / "examples" / "spark_streaming.py", db, inbox, out, cwd=tmp_path)
    example = {}
    exec(compile((ROOT / "examples" / "spark_streaming.py").read_text(), "spark_streaming.py", "exec"), example)
    assert example["committed"](str(out)) == [0, 1, 2]

    def results():
        notes = spark.read.parquet(str(out / "notifications")).drop("batch_id")
        state = spark.read.parquet(str(out / "state" / "batch_id=2"))
        runs = spark.read.parquet(str(out / "runs")).groupBy().sum("fixes", "judged", "stale", "invalid").collect()[0]
        return (*spark_collected(notes, state), dict(zip(counts, runs)))

    first = results()
    assert first == (canonical(expected), exported, counts)
    # A replay of the last micro-batch: skipped when its state is committed;
    # judged again from batch 1's state when its commit was lost.
    judge = example["judge_micro_batch"](str(db), str(out))
    last = spark.read.schema(example["FIXES_SCHEMA"]).option("header", True).csv(str(inbox / "fixes-2.csv"))
    judge(last, 2)
    assert results() == first
    shutil.rmtree(out / "state" / "batch_id=2")
    judge(last, 2)
    assert results() == first


def readme_spark_example():
    """The README's ```python block under "Scaling out with Spark"."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("\n## Scaling out with Spark\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_spark_example_runs_as_written(tmp_path):
    # The catalog of the README's Python example, in a folder holding samples/ alone.
    shutil.copytree(SAMPLES, tmp_path / "samples")
    db = tmp_path / "fences.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--group", "AREA_GROUPID_001", "--with-default-conditions")
    copy = shutil.copy(db, tmp_path / "copy.db")
    gf("judge", copy, "--fixes", SAMPLES / "fixes.csv")
    with sqlite3.connect(copy) as conn:
        notes = sorted(",".join(map(str, r)) for r in conn.execute("SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications"))
    shown = "\nfor r in notes.collect(): print(','.join(str(r[c]) for c in gs.NOTIFICATION_COLUMNS[:5]))\n"
    (tmp_path / "example.py").write_text(readme_spark_example() + shown + "print('state', state.count())\n")
    lines = python(tmp_path / "example.py", cwd=tmp_path).splitlines()
    subjects = {line.split(",")[0] for line in (SAMPLES / "fixes.csv").read_text().splitlines()[1:]}
    assert sorted(lines[-len(notes) - 1:-1]) == notes and lines[-1] == f"state {len(subjects)}", lines
    assert (tmp_path / "state").is_dir()
