"""geofence.spark: judgement on Apache Spark, the same notifications and
state as one ``geofence judge`` over all the fixes.

    from geofence import spark as gs
    notes, new_state, runs = gs.judge(fixes_df, catalog="fences.db", state=state_df)

How: a consistent snapshot of the catalog file (_shipping.py: the pages its
-wal holds included) is shipped to every executor (``SparkContext.addFile``)
and opened there read-only (``geofence.arrow.task``: once per Python worker,
which Spark reuses between tasks); fixes and state records are partitioned by
subject_id and sorted within partitions by subject_id, ts and the order
column; each partition is judged in one call of the engine in the worker's
process through Arrow batches (``mapInArrow``), its subjects' records given
and the new ones returned. Tasks have no side effect: a retried task gives
the same rows. docs/spark.md says what is exact and what is not yet.
"""
import os

from . import GeofenceError
from ._shipping import shipped_copy

# The rows one partition gives, of three kinds told apart by `kind`:
# "n" a notification, "s" a subject's new state record, "c" the partition's counters.
_OUT_SCHEMA = ("kind string, subject_id string, ts string, area_id string, condition_id long, transition string, "
               "lat double, lon double, accuracy_m double, record string, fixes long, judged long, stale long, "
               "invalid long, transitions long, notifications long, filtered long")
_COUNTERS = ("fixes", "judged", "stale", "invalid", "transitions", "notifications", "filtered")
NOTIFICATION_COLUMNS = ("subject_id", "ts", "area_id", "condition_id", "transition", "lat", "lon", "accuracy_m")

# A test hook, not an API: when the session's conf names a file under this
# key, the first task to create that file fails after handing over its rows,
# so that Spark retries it (a test proves a retried task changes nothing).
TEST_HOOK_FAIL_ONCE = "spark.geofence.testHook.failOnceMarker"


def judge(fixes_df, catalog, state=None, *, order=None, partitions=None):
    """Judges ``fixes_df`` (columns subject_id, ts, lat, lon, accuracy_m; ts a
    string as ``geofence judge`` reads it, or a timestamp) against the
    catalog file ``catalog`` with the subjects' state ``state`` (a DataFrame
    of subject_id, record as ``geofence state export`` writes them, or
    None); returns (notifications_df, new_state_df, runs_df):

    - notifications_df: gf_notifications' columns without id and run_id;
    - new_state_df: subject_id, record for every subject given a record or
      judged (a subject given a record and no fix keeps it unchanged), the
      records byte for byte those ``geofence state export`` gives after the
      same judgement in one catalog;
    - runs_df: one row of the counts (fixes, judged, stale, invalid,
      transitions, notifications, filtered) and the partitions judged.

    Fixes of one subject with equal times are judged in input order: the
    column named ``order`` (int64) when given, else a column called
    ``order`` if the frame has one, else ``monotonically_increasing_id()``
    taken before any shuffle, which is the input's order for a frame read
    from files but not for one whose partitions come from a shuffle (give
    such a frame its own order column). ``partitions``: how many tasks
    (default: spark.sql.shuffle.partitions). The three frames share one
    persisted result: the job runs once, at the first action."""
    from pyspark import SparkFiles  # noqa: F401  (imported here so the package works without pyspark)
    from pyspark.sql import functions as F

    spark = fixes_df.sparkSession
    path = os.path.abspath(os.fspath(catalog))
    if not os.path.isfile(path):
        raise GeofenceError(f"{path}: no such catalog file")
    shipped = shipped_copy(path, spark.sparkContext.applicationId)
    spark.sparkContext.addFile(shipped)
    shipped = os.path.basename(shipped)

    order_column = order or ("order" if "order" in fixes_df.columns else None)
    fixes = fixes_df
    if order_column is None:
        order_column = "order"
        fixes = fixes.withColumn(order_column, F.monotonically_increasing_id())
    fixes = fixes.select(F.col("subject_id"), F.col("ts"), F.col("lat").cast("double"), F.col("lon").cast("double"),
                         F.col("accuracy_m").cast("double"), F.col(order_column).cast("long").alias("order"),
                         F.lit(None).cast("string").alias("record"))
    rows = fixes
    if state is not None:
        records = state.select(F.col("subject_id"), F.lit(None).cast(fixes.schema["ts"].dataType).alias("ts"),
                               *[F.lit(None).cast("double").alias(c) for c in ("lat", "lon", "accuracy_m")],
                               F.lit(None).cast("long").alias("order"), F.col("record").cast("string"))
        rows = rows.unionByName(records)
    rows = rows.repartition(partitions, "subject_id") if partitions else rows.repartition("subject_id")
    rows = rows.sortWithinPartitions("subject_id", "ts", "order")
    fail_once = spark.conf.get(TEST_HOOK_FAIL_ONCE, None) or None
    out = rows.mapInArrow(lambda batches: _judge_partition(shipped, batches, fail_once), _OUT_SCHEMA).persist()

    notes = out.where(F.col("kind") == "n").select(*NOTIFICATION_COLUMNS)
    new_state = out.where(F.col("kind") == "s").select("subject_id", "record")
    runs = out.where(F.col("kind") == "c").agg(*[F.sum(c).cast("long").alias(c) for c in _COUNTERS],
                                               F.count(F.lit(1)).alias("partitions"))
    return notes, new_state, runs


def _judge_partition(shipped, batches, fail_once=None):
    """One partition judged (run on an executor): every batch gathered, the
    state records told from the fixes by a non-null record, one engine call
    (``geofence.arrow.task`` of the shipped catalog), and the rows of
    ``_OUT_SCHEMA`` yielded as one batch. ``fail_once`` (``TEST_HOOK_FAIL_ONCE``):
    the path of a marker file; the task that creates it raises after its rows."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark import SparkFiles
    from . import arrow

    batches = list(batches)
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    is_state = pc.is_valid(table["record"])
    fixes = table.filter(pc.invert(is_state)).drop_columns(["record"])
    states = table.filter(is_state).select(["subject_id", "record"])
    notes, new_states, counters = arrow.task(SparkFiles.get(shipped)).judge(fixes, states)
    yield _rows(notes, new_states, counters)
    if fail_once and _created(fail_once):
        raise RuntimeError(f"{TEST_HOOK_FAIL_ONCE}: this task fails once, as asked ({fail_once} made)")


def _created(path):
    """Whether this call made the file at ``path`` (False: it was there already)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _rows(notes, states, counters):
    """The partition's output as one RecordBatch of ``_OUT_SCHEMA``: the
    notifications' rows, then the records', then the counters' row, each
    column null where its kind has no value."""
    import pyarrow as pa
    n, s = notes.num_rows, states.num_rows

    def column(kind, of_notes=None, of_states=None, of_counters=None):
        parts = [of_notes.combine_chunks() if of_notes is not None else pa.nulls(n, kind),
                 of_states.combine_chunks() if of_states is not None else pa.nulls(s, kind),
                 pa.array([of_counters], kind)]
        return pa.concat_arrays([p.cast(kind) for p in parts])

    columns = {"kind": pa.array(["n"] * n + ["s"] * s + ["c"], pa.string()),
               "subject_id": column(pa.string(), notes["subject_id"], states["subject_id"]),
               "condition_id": column(pa.int64(), notes["condition_id"]),
               "record": column(pa.string(), None, states["record"])}
    for c in ("ts", "area_id", "transition"):
        columns[c] = column(pa.string(), notes[c])
    for c in ("lat", "lon", "accuracy_m"):
        columns[c] = column(pa.float64(), notes[c])
    for c in _COUNTERS:
        columns[c] = column(pa.int64(), None, None, counters[c])
    names = [f.split(" ")[0] for f in _OUT_SCHEMA.split(", ")]
    return pa.RecordBatch.from_arrays([columns[k] for k in names], names=names)
