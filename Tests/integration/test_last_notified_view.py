"""gf_last_notified (schema version 9) shows the days the suppression rules
read: for a condition with a suppression, the day kept in the subject's
record, whatever notifications are still stored (a stream-only run stores
none, and notifications may be deleted); for the others, the day of the
latest stored notification. A subject without state (reset, or deleted
from gf_subjects) has none, and its next notification is not suppressed."""
import csv
import datetime
import sqlite3

from conftest import gf
from prune_scenario import catalog as suppressed_catalog

T0 = datetime.datetime(2026, 11, 20, 8, 0, tzinfo=datetime.timezone.utc)
# A 300 m circle at A; B is 2 km away, outside it.
A, B = (35.68, 139.70), (35.70, 139.70)


def rows(db, query):
    con = sqlite3.connect(db)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def fixes_file(path, visits, start):
    """Each subject in and out of A `visits` times, 10 minutes a fix, from `start`."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for s in ("u1", "u2"):
            for k in range(visits * 2):
                lat, lon = A if k % 2 == 0 else B
                w.writerow([s, (start + datetime.timedelta(minutes=10 * k)).isoformat(), lat, lon, 5])
    return path


def catalog(tmp_path):
    """Area A, its default IN (1) and OUT (2), and 7: an IN suppressed for the rest of the day."""
    return suppressed_catalog(tmp_path, suppress_days=1)


def days(db, subject):
    return rows(db, f"SELECT condition_id, local_date FROM gf_last_notified WHERE subject_id = '{subject}' ORDER BY condition_id")


def notified(db, condition):
    return rows(db, f"SELECT subject_id, ts FROM gf_notifications WHERE condition_id = {condition} ORDER BY id")


def test_the_view_shows_the_days_the_suppression_reads(tmp_path):
    db = catalog(tmp_path)
    gf("judge", db, "--fixes", fixes_file(tmp_path / "f1.csv", 3, T0))
    assert days(db, "u1") == [(1, "2026-11-20"), (2, "2026-11-20"), (7, "2026-11-20")]
    assert len(notified(db, 7)) == 2, "condition 7 notified each subject once that day"

    # Deleting the notifications leaves the suppressing condition's day: the
    # suppression still holds (the next IN that day is not notified).
    sql_delete = sqlite3.connect(db)
    with sql_delete:
        sql_delete.execute("DELETE FROM gf_notifications WHERE subject_id = 'u2'")
    sql_delete.close()
    assert days(db, "u2") == [(7, "2026-11-20")]
    gf("judge", db, "--fixes", fixes_file(tmp_path / "f2.csv", 1, T0 + datetime.timedelta(hours=2)))
    assert [s for s, _ in notified(db, 7)] == ["u1"], "still suppressed for u2, and for u1"

    # A reset takes the subject's days with its state; its next IN is notified.
    gf("reset", db, "--subject", "u1")
    assert days(db, "u1") == []
    gf("judge", db, "--fixes", fixes_file(tmp_path / "f3.csv", 1, T0 + datetime.timedelta(hours=4)))
    assert [s for s, _ in notified(db, 7)] == ["u1", "u1"]
    assert days(db, "u1") == [(1, "2026-11-20"), (2, "2026-11-20"), (7, "2026-11-20")]

    # DELETE FROM gf_subjects takes them too.
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM gf_subjects WHERE subject_id = 'u1'")
    con.close()
    assert days(db, "u1") == []


def test_a_stream_only_run_shows_the_suppressing_days_only(tmp_path):
    db = catalog(tmp_path)
    gf("judge", db, "--fixes", fixes_file(tmp_path / "f1.csv", 2, T0), "--out", tmp_path / "o.csv", "--no-store-notifications")
    assert rows(db, "SELECT count(*) FROM gf_notifications") == [(0,)]
    assert days(db, "u1") == days(db, "u2") == [(7, "2026-11-20")]
