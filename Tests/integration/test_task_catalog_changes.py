"""A process's kept task (geofence.arrow.task) follows its catalog file: a
catalog changed after it was opened (its areas cleared, another file put in
its place) is opened again, so judging never reads an older copy than the
file holds (the red team's finding: the task kept the copy it opened)."""
import datetime

from conftest import gf
from task_scenario import use_this_build
from test_last_notified_view import catalog

T0 = datetime.datetime(2026, 11, 20, 8, 0, tzinfo=datetime.timezone.utc)


def test_a_changed_catalog_is_opened_again(tmp_path):
    use_this_build()
    import pyarrow as pa
    from geofence import arrow
    db = catalog(tmp_path)
    fixes = pa.table({"subject_id": ["u1", "u1"], "ts": [(T0 + datetime.timedelta(minutes=m)).isoformat() for m in (0, 10)],
                      "lat": [35.68, 35.70], "lon": [139.70, 139.70], "accuracy_m": [5.0, 5.0]})
    notes, _, _ = arrow.judge_batches(str(db), fixes, None)
    assert notes.num_rows > 0
    gf("clear", db)
    notes, _, _ = arrow.judge_batches(str(db), fixes, None)
    assert notes.num_rows == 0, "judged against the areas the catalog no longer has"
    t = arrow.task(str(db))
    t.close()
    notes, _, _ = arrow.judge_batches(str(db), fixes, None)   # a closed task is opened again
    assert notes.num_rows == 0
