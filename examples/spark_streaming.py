"""Judging a stream of fixes files with Spark Structured Streaming, the state
carried between micro-batches (docs/spark.md, "Streaming").

    python examples/spark_streaming.py fences.db inbox/ out/

Every fixes CSV that lands in inbox/ (subject_id, ts, lat, lon, accuracy_m;
ts as `geofence judge` reads it) is judged by geofence.spark.judge in a
micro-batch (foreachBatch) with the state the previous micro-batch left, and
out/ gets, per micro-batch k:

    out/notifications/batch_id=k/   its notifications (parquet)
    out/runs/batch_id=k/            its counts
    out/state/batch_id=k/           every subject's record after it: the commit

Read together (spark.read.parquet("out/notifications")), the notifications are
those of one `geofence judge` over all the files, provided each file's fixes
are not older than the files before them for the same subject (an older fix
is stale and counted, as in `geofence judge`).

Replays: foreachBatch runs at least once per batch id (a micro-batch that
failed, or whose end the checkpoint did not record, runs again with the same
id and the same files). Each folder is written under a name Spark's readers
skip (`_k.tmp`) and renamed into place, so a reader sees all of it or none;
the state's rename comes last and commits the batch. A batch whose state is
committed already is skipped; one that is not is judged again from the state
before it, replacing whatever of its output a failed attempt renamed into
place. So a replay changes nothing. Renames are atomic on a local file system
and on HDFS, not on an object store (there, write through a table format with
transactions, keyed by batch id).

By default the stream reads what inbox/ holds, one file per micro-batch
(`availableNow`, `maxFilesPerTrigger` 1), then stops; `--follow` keeps
waiting for new files.
"""
import argparse
import os
import shutil

from pyspark.sql import SparkSession

from geofence import spark as gs

FIXES_SCHEMA = "subject_id string, ts string, lat double, lon double, accuracy_m double"


def committed(out):
    """The batch ids whose state out/state holds, in ascending order."""
    folder = os.path.join(out, "state")
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return sorted(int(n.split("=", 1)[1]) for n in names if n.startswith("batch_id="))


def write_atomically(frame, out, kind, batch_id):
    """``frame`` as parquet at out/KIND/batch_id=BATCH_ID, written beside it
    under a name readers skip and renamed into place (replacing the folder
    a failed attempt of the same batch left)."""
    parent = os.path.join(out, kind)
    final, temporary = os.path.join(parent, f"batch_id={batch_id}"), os.path.join(parent, f"_{batch_id}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    frame.write.parquet(temporary)
    shutil.rmtree(final, ignore_errors=True)
    os.rename(temporary, final)


def judge_micro_batch(catalog, out):
    """The foreachBatch function: judges a micro-batch's fixes with the state
    of the last committed batch before it, then writes its notifications,
    counts and state (the state last: the commit). A batch committed already
    is skipped (a replay)."""
    def judge(fixes, batch_id):
        done = committed(out)
        if batch_id in done:
            return
        spark = fixes.sparkSession
        before = [b for b in done if b < batch_id]
        state = spark.read.parquet(os.path.join(out, "state", f"batch_id={before[-1]}")) if before else None
        notes, new_state, runs = gs.judge(fixes, catalog=catalog, state=state)
        write_atomically(notes, out, "notifications", batch_id)
        write_atomically(runs, out, "runs", batch_id)
        write_atomically(new_state, out, "state", batch_id)
        # judge's result stays cached until freed: a stream would keep every batch's.
        spark.catalog.clearCache()
    return judge


def main(argv=None):
    args = argparse.ArgumentParser(description="Judge fixes files as they land in a folder, with Spark Structured Streaming.")
    args.add_argument("catalog", help="the catalog (read-only; shipped to the executors)")
    args.add_argument("inbox", help="the folder fixes CSVs land in")
    args.add_argument("out", help="notifications/, runs/, state/ (and the stream's checkpoint/)")
    args.add_argument("--follow", action="store_true", help="keep waiting for new files")
    a = args.parse_args(argv)
    spark = SparkSession.builder.appName("geofence-stream").getOrCreate()
    stream = (spark.readStream.schema(FIXES_SCHEMA).option("header", True).option("maxFilesPerTrigger", 1)
              .csv(a.inbox))
    writer = (stream.writeStream.foreachBatch(judge_micro_batch(a.catalog, a.out))
              .option("checkpointLocation", os.path.join(a.out, "checkpoint")))
    query = (writer if a.follow else writer.trigger(availableNow=True)).start()
    query.awaitTermination()


if __name__ == "__main__":
    main()
