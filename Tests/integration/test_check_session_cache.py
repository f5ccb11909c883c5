"""gf_check's session keeps the state it saved for each recent subject, so a
stream of many subjects interleaved in time does not read each subject's
stays and notified days back at every call. The state it keeps must be the
state the database holds: here calls are undone by ROLLBACK TO a savepoint
(one subject's, or several subjects' at once) in the middle of an
interleaved stream, with suppressing conditions in the catalog, and the
result must equal judging only the calls that were kept, each on a fresh
connection (which keeps nothing)."""
import random
import shutil
import sqlite3

from conftest import EXTENSION
from test_judgement import iso, notifications, scenario


def connect(db):
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    return c


def state_of(db):
    c = sqlite3.connect(db)
    out = (c.execute("SELECT * FROM gf_subjects ORDER BY subject_id").fetchall(),
           c.execute("SELECT * FROM gf_stays ORDER BY subject_id, area_id").fetchall(),
           c.execute("SELECT * FROM gf_last_notified ORDER BY subject_id, condition_id").fetchall())
    c.close()
    return out


def test_interleaved_subjects_with_undone_calls_match_fresh_connections(tmp_path):
    db, _, rows = scenario(tmp_path, subjects=6, per_subject=60, seed=5)
    fixes = [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]
    rng = random.Random(7)
    # Groups of 1-4 consecutive calls, each group kept or undone.
    groups, k = [], 0
    while k < len(fixes):
        n = rng.randint(1, 4)
        groups.append((fixes[k:k + n], rng.random() < 0.25))
        k += n
    assert sum(undone for _, undone in groups) >= 10

    cached = tmp_path / "cached.db"
    shutil.copy(db, cached)
    c = connect(cached)
    c.execute("BEGIN")
    for calls, undone in groups:
        c.execute("SAVEPOINT g")
        for f in calls:
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        c.execute("ROLLBACK TO g" if undone else "RELEASE g")
        if undone:
            c.execute("RELEASE g")
    c.execute("COMMIT")
    c.close()

    fresh = tmp_path / "fresh.db"
    shutil.copy(db, fresh)
    for calls, undone in groups:
        if undone:
            continue
        for f in calls:
            c = connect(fresh)
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
            c.close()

    assert len(notifications(fresh)) >= 20, "the scenario must notify"
    assert notifications(cached) == notifications(fresh)
    assert state_of(cached) == state_of(fresh)


# On the stored notification rows (transition 0 is IN), which gf_check writes.
SUBJECT = "(SELECT subject_id FROM gf_subject_keys WHERE subject_key = NEW.subject_key)"
TRIGGERS = {
    "a stay deleted on IN": "CREATE TRIGGER ut AFTER INSERT ON gf_notification_rows WHEN NEW.transition = 0 AND NEW.id % 3 = 0 "
                            f"BEGIN DELETE FROM gf_stays WHERE subject_id = {SUBJECT} "
                            "AND area_id = (SELECT area_id FROM gf_area_keys WHERE area_key = NEW.area_key); END;",
    # SQLite matches a trigger's table without regard to case (found by a new-user trial).
    "a stay deleted on IN, the table spelled otherwise": "CREATE TRIGGER ut AFTER INSERT ON GF_Notification_Rows WHEN NEW.transition = 0 "
                                                          f"BEGIN DELETE FROM gf_stays WHERE subject_id = {SUBJECT}; END;",
    # The days a suppression counts from live in the subject's record: emptied, they no longer suppress.
    "notified days cleared": "CREATE TRIGGER ut AFTER INSERT ON gf_notification_rows WHEN NEW.id % 2 = 0 "
                             f"BEGIN UPDATE gf_subject_state SET record = json_set(record, '$.days', json('[]')) WHERE subject_id = {SUBJECT}; END;",
    "a condition changed": "CREATE TRIGGER ut AFTER INSERT ON gf_notification_rows WHEN NEW.transition = 0 AND NEW.id % 7 = 0 "
                           "BEGIN UPDATE gf_conditions SET renotify_suppress_days = coalesce(renotify_suppress_days, 0) + 1 "
                           "WHERE condition_id = NEW.condition_id + 1; END;",
}


def test_a_users_trigger_that_changes_state_or_catalog_is_seen_by_the_next_call(tmp_path):
    """A trigger on the stored notifications may change the subjects' state or the
    catalog during a call: the next call on the same connection must see it,
    as a call on a fresh connection does."""
    db, _, rows = scenario(tmp_path, subjects=4, per_subject=50, seed=9)
    fixes = [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]
    for name, trigger in TRIGGERS.items():
        outcomes = []
        for fresh in (False, True):
            copy = tmp_path / f"{'fresh' if fresh else 'kept'}.db"
            shutil.copy(db, copy)
            c = sqlite3.connect(copy)
            c.executescript(trigger)
            c.close()
            c = None if fresh else connect(copy)
            for f in fixes:
                call = connect(copy) if fresh else c
                call.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
                if fresh:
                    call.close()
            if c:
                c.close()
            outcomes.append((notifications(copy), state_of(copy)))
        assert len(outcomes[1][0]) >= 10, name
        assert outcomes[0] == outcomes[1], name


def test_a_temp_trigger_made_between_calls_on_the_same_connection_is_seen(tmp_path):
    """A TEMP trigger changes only the temporary schema's version: the
    session must see it as it sees one in the database (new-user trial)."""
    db, _, rows = scenario(tmp_path, subjects=3, per_subject=40, seed=5)
    fixes = [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]
    trigger = ("CREATE TEMP TRIGGER ut AFTER INSERT ON gf_notification_rows WHEN NEW.transition = 0 "
               f"BEGIN DELETE FROM gf_stays WHERE subject_id = {SUBJECT}; END")
    outcomes = []
    for fresh in (False, True):
        copy = tmp_path / f"{'fresh' if fresh else 'kept'}.db"
        shutil.copy(db, copy)
        c = connect(copy)
        for k, f in enumerate(fixes):
            if fresh:
                c.close()
                c = connect(copy)
                if k >= 10:
                    c.execute(trigger)
            elif k == 10:
                c.execute(trigger)
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        c.close()
        outcomes.append((notifications(copy), state_of(copy)))
    assert len(outcomes[1][0]) >= 10
    assert outcomes[0] == outcomes[1]


def test_suppression_changed_between_calls_on_the_same_connection_is_seen(tmp_path):
    """The session remembers which conditions suppress (to keep their
    notified days); a change of those conditions between calls, on the same
    connection and inside its transaction, must be judged as a fresh
    connection judges it."""
    db, _, rows = scenario(tmp_path, subjects=3, per_subject=60, seed=11)
    fixes = [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]
    change = "UPDATE gf_conditions SET renotify_suppress_days = CASE WHEN renotify_suppress_days > 0 THEN NULL ELSE 1 END"
    outcomes = []
    for fresh in (False, True):
        copy = tmp_path / f"{'fresh' if fresh else 'kept'}.db"
        shutil.copy(db, copy)
        c = connect(copy)
        c.execute("BEGIN")
        for k, f in enumerate(fixes):
            if k == len(fixes) // 2:
                c.execute(change)
            if fresh:
                c.execute("COMMIT")
                c.close()
                c = connect(copy)
                c.execute("BEGIN")
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        c.execute("COMMIT")
        c.close()
        outcomes.append((notifications(copy), state_of(copy)))
    assert len(outcomes[1][0]) >= 10
    assert outcomes[0] == outcomes[1]
