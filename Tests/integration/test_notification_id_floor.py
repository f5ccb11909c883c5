"""Notification ids are never handed out twice (schema version 11: no
AUTOINCREMENT, a floor every delete raises, docs/sql.md's cursor read).

A stream of gf_check calls, cut into groups that are kept, undone by
ROLLBACK TO a savepoint or undone with their whole transaction, with the
newest notifications deleted between groups (directly, through the
gf_notifications view, by this connection inside the group's transaction,
or by another connection): every id a commit makes visible must be above
every id any commit made visible before, which a cursor (`WHERE id >
:last_seen`) needs. Both with the state in the catalog and in a state
database. Then the doors around it: the upgrade of a version-10 catalog
whose newest rows were deleted (the AUTOINCREMENT counter becomes the floor,
a user's trigger on the table stays), a batch after `reset --notifications`
and after a direct delete, the floor's trigger dropped (gf_check refuses,
the command-line tool re-creates it), and ids at SQLite's largest."""
import gzip
import random
import sqlite3

import pytest

from conftest import ROOT, gf, run
from test_check_kept_keys import check, connect, small_catalog, start
from test_judgement import iso, scenario

V10 = ROOT / "Tests" / "fixtures" / "catalog_versions" / "v10" / "catalog.db.gz"


def ids(db, catalog=None):
    c = sqlite3.connect(db)
    if catalog:
        c.execute(f"ATTACH 'file:{catalog}?mode=ro' AS catalog")
    got = [r[0] for r in c.execute("SELECT id FROM gf_notification_rows ORDER BY id")]
    c.close()
    return got


DELETES = {
    "direct": "DELETE FROM gf_notification_rows WHERE id IN (SELECT id FROM gf_notification_rows ORDER BY id DESC LIMIT ?)",
    "view": "DELETE FROM gf_notifications WHERE id IN (SELECT id FROM gf_notification_rows ORDER BY id DESC LIMIT ?)",
}


def plan(fixes, rng):
    """Groups of 1-6 calls: (fate, calls, the newest rows deleted before them: (how, by whom, how many) or None)."""
    steps, k = [], 0
    while k < len(fixes):
        n = rng.randint(1, 6)
        fate = rng.choices(["keep", "savepoint", "transaction"], [5, 1, 1])[0]
        delete = (rng.choice(list(DELETES)), rng.choice(["same", "inside", "other"]), rng.randint(1, 3)) if rng.random() < 0.4 else None
        steps.append((fate, fixes[k:k + n], delete))
        k += n
    return steps


@pytest.mark.parametrize("apart", [False, True], ids=["state-in-catalog", "state-database"])
def test_no_id_is_handed_out_twice_across_deletes_and_rollbacks(tmp_path, apart):
    db, _, rows = scenario(tmp_path, subjects=5, per_subject=70, seed=11)
    fixes = [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]
    steps = plan(fixes, random.Random(11))
    session, catalog = start(tmp_path / "session.db", db, apart)
    c = connect(session, catalog)
    seen = set(ids(session, catalog))
    deleted_newest = 0
    for fate, calls, delete in steps:
        if delete and delete[1] != "inside":
            how, by, n = delete
            d = c if by == "same" else connect(session, catalog)
            deleted_newest += d.execute(DELETES[how], (n,)).rowcount > 0
            if d is not c:
                d.close()
        c.execute("BEGIN")
        if delete and delete[1] == "inside":
            c.execute(DELETES[delete[0]], (delete[2],))
        c.execute("SAVEPOINT g")
        for f in calls:
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        if fate == "savepoint":
            c.execute("ROLLBACK TO g")
        c.execute("RELEASE g")
        c.execute("ROLLBACK" if fate == "transaction" else "COMMIT")
        now = ids(session, catalog)
        new = [i for i in now if i not in seen]
        assert not new or not seen or min(new) > max(seen), f"an id handed out again: {sorted(set(new) & set(range(max(seen) + 1)))}"
        seen |= set(now)
    c.close()
    assert deleted_newest >= 10 and len(seen) >= 60, "the scenario must notify and delete the newest rows"


def test_a_deleted_newest_id_is_not_given_again_by_the_next_call_or_run(tmp_path):
    db = small_catalog(tmp_path)
    c = connect(db)
    check(c, "s1", 1, 0)                                   # id 1
    check(c, "s1", 2)                                      # id 2 (OUT)
    c.execute(DELETES["direct"], (2,))
    assert c.execute("SELECT id FROM gf_notification_floor").fetchall() == [(2,)]
    check(c, "s1", 3, 1)
    assert ids(db) == [3]
    c.close()
    gf("reset", db, "--notifications")
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\ns2,2026-11-21T00:00:00Z,35.0,139.0,5\n")
    gf("judge", db, "--fixes", fixes)
    assert ids(db) == [4]


@pytest.mark.parametrize("apart", [False, True], ids=["state-in-catalog", "state-database"])
def test_calls_above_the_floor_rolled_back_do_not_let_the_next_one_below_it(tmp_path, apart):
    """The first call of a transaction puts its row above the floor, the next
    finds the greatest id above it; both are rolled back, and the call after
    them must still go above the floor, not trust what the rolled-back call saw."""
    session, catalog = start(tmp_path / "session.db", small_catalog(tmp_path), apart)
    c = connect(session, catalog)
    check(c, "s1", 1, 0)
    check(c, "s1", 2)
    check(c, "s1", 3, 1)                                   # ids 1, 2, 3
    c.execute(DELETES["direct"], (2,))                     # the floor: 3, the greatest id: 1
    c.execute("BEGIN")
    assert check(c, "s2", 4, 2) and check(c, "s2", 5)      # ids 4 and 5, rolled back
    c.execute("ROLLBACK")
    assert check(c, "s3", 6, 3)
    assert ids(session, catalog) == [1, 4]
    c.close()


def test_a_version_10_catalog_whose_newest_rows_were_deleted_keeps_its_counter_and_the_users_trigger(tmp_path):
    db = tmp_path / "v10.db"
    db.write_bytes(gzip.decompress(V10.read_bytes()))
    with sqlite3.connect(db) as c:
        before = [r[0] for r in c.execute("SELECT id FROM gf_notification_rows ORDER BY id")]
        c.execute("DELETE FROM gf_notification_rows WHERE id > ?", (before[-3],))
        c.executescript("CREATE TABLE my_queue (id INTEGER); CREATE TRIGGER my_copy AFTER INSERT ON gf_notification_rows "
                        "BEGIN INSERT INTO my_queue VALUES (NEW.id); END;")
        counter = c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'gf_notification_rows'").fetchone()[0]
    assert counter == before[-1]
    gf("settings", db)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT id FROM gf_notification_floor").fetchall() == [(counter,)]
        assert "AUTOINCREMENT" not in c.execute("SELECT sql FROM sqlite_master WHERE name = 'gf_notification_rows'").fetchone()[0]
        assert c.execute("SELECT count(*) FROM sqlite_sequence WHERE name = 'gf_notification_rows'").fetchone()[0] == 0
        assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    gf("judge", db, "--fixes", ROOT / "Tests" / "fixtures" / "catalog_versions" / "next.csv")
    with sqlite3.connect(db) as c:
        new = [r[0] for r in c.execute("SELECT id FROM gf_notification_rows WHERE id > ? ORDER BY id", (before[-3],))]
        queued = [r[0] for r in c.execute("SELECT id FROM my_queue ORDER BY id")]
    assert new and new[0] == counter + 1 and new == list(range(counter + 1, counter + 1 + len(new)))
    assert queued == new


def as_version_10_state(path, counter):
    """A state database of this build turned back into version 10's layout (AUTOINCREMENT ids, `counter`
    its sqlite_sequence value, no floor), as a version-10 build's gf_state_init made it."""
    c = sqlite3.connect(path, isolation_level=None)
    version = c.execute("PRAGMA schema_version").fetchone()[0]
    c.executescript("DROP TRIGGER gf_notification_rows_floor; DROP TRIGGER gf_notification_rows_floor_update; DROP TABLE gf_notification_floor;"
                    "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT); DROP TABLE t;"
                    "UPDATE gf_state_meta SET value = '10' WHERE key = 'schema_version';")
    c.execute("PRAGMA writable_schema = ON")
    c.execute("UPDATE sqlite_master SET sql = replace(sql, 'id           INTEGER PRIMARY KEY,', 'id           INTEGER PRIMARY KEY AUTOINCREMENT,') "
              "WHERE name = 'gf_notification_rows'")
    c.execute(f"PRAGMA schema_version = {version + 10}")
    c.execute("PRAGMA writable_schema = OFF")
    c.close()
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('gf_notification_rows', ?)", (counter,))
    c.close()


def test_a_version_10_state_database_is_upgraded_by_gf_state_upgrade_keeping_its_ids(tmp_path):
    session, catalog = start(tmp_path / "state.db", small_catalog(tmp_path), True)
    c = connect(session, catalog)
    check(c, "s1", 1, 0)
    check(c, "s1", 2)
    c.close()
    as_version_10_state(session, 5)                        # ids 1 and 2 stored, 3 to 5 given and deleted
    c = connect(session, catalog)
    with pytest.raises(sqlite3.OperationalError, match=r"state database of schema version 10, .* upgrade it in place with "
                                                       r"SELECT gf_state_upgrade\(\)"):
        check(c, "s1", 3, 1)
    assert c.execute("SELECT gf_state_upgrade()").fetchall() == [(1,)]
    assert c.execute("SELECT gf_state_upgrade()").fetchall() == [(0,)]
    check(c, "s1", 3, 1)
    assert ids(session, catalog) == [1, 2, 6]
    assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    c.close()


def test_a_version_11_state_database_is_upgraded_by_gf_state_upgrade(tmp_path):
    """Version 12 changed only a catalog's conditions: a state database of
    version 11 holds exactly version 12's objects, so gf_state_upgrade takes
    it (only its stamp moves) and its ids go on, where it was refused as too
    old to upgrade and sent to an export that restarts the ids at 1."""
    session, catalog = start(tmp_path / "state.db", small_catalog(tmp_path), True)
    c = connect(session, catalog)
    check(c, "s1", 1, 0)
    check(c, "s1", 2)
    c.execute("UPDATE main.gf_state_meta SET value = '11' WHERE key = 'schema_version'")
    c.close()
    c = connect(session, catalog)
    with pytest.raises(sqlite3.OperationalError, match=r"state database of schema version 11, .* upgrade it in place with "
                                                       r"SELECT gf_state_upgrade\(\)"):
        check(c, "s1", 3, 1)
    assert c.execute("SELECT gf_state_upgrade()").fetchall() == [(1,)]
    assert c.execute("SELECT value FROM main.gf_state_meta WHERE key = 'schema_version'").fetchall() == [("12",)]
    assert c.execute("SELECT gf_state_upgrade()").fetchall() == [(0,)]
    check(c, "s1", 3, 1)
    assert ids(session, catalog) == [1, 2, 3]
    # One gf_check would refuse as damaged is not upgraded either: nothing changes (red team).
    for damage, undo in (("DELETE FROM gf_notification_floor", "INSERT INTO gf_notification_floor (singleton, id) VALUES (1, 3)"),
                         ("CREATE TABLE gf_conditions (x)", "DROP TABLE gf_conditions")):
        c.execute(damage)
        c.execute("UPDATE main.gf_state_meta SET value = '11' WHERE key = 'schema_version'")
        with pytest.raises(sqlite3.OperationalError, match="main is a damaged state database"):
            c.execute("SELECT gf_state_upgrade()").fetchall()
        assert c.execute("SELECT value FROM main.gf_state_meta WHERE key = 'schema_version'").fetchall() == [("11",)], damage
        c.execute(undo)
    assert c.execute("SELECT gf_state_upgrade()").fetchall() == [(1,)]
    # One older than the upgrades reach is sent to the export, naming the versions it takes.
    c.execute("UPDATE main.gf_state_meta SET value = '9' WHERE key = 'schema_version'")
    with pytest.raises(sqlite3.OperationalError, match=r"schema version 9, .* \(it upgrades versions 10 to 11 only\): export"):
        c.execute("SELECT gf_state_upgrade()").fetchall()
    c.close()


def test_without_the_floors_trigger_gf_check_refuses_and_the_tool_restores_it(tmp_path):
    db = small_catalog(tmp_path)
    with sqlite3.connect(db) as c:
        c.execute("DROP TRIGGER gf_notification_rows_floor")
    c = connect(db)
    with pytest.raises(sqlite3.OperationalError, match="trigger gf_notification_rows_floor is missing or altered, so the id of a "
                                                       "notification deleted could be given again"):
        check(c, "s1", 1, 0)
    c.close()
    gf("settings", db)
    c = connect(db)
    check(c, "s1", 1, 0)
    c.execute(DELETES["direct"], (1,))
    check(c, "s1", 2)
    assert ids(db) == [2]
    c.close()


def test_no_id_past_sqlites_largest(tmp_path):
    """SQLite gives a random rowid past 2^63 - 1; AUTOINCREMENT refused, and so does the floor."""
    db = small_catalog(tmp_path)
    c = connect(db)
    check(c, "s1", 1, 0)
    c.execute("UPDATE gf_notification_rows SET id = 9223372036854775807")
    with pytest.raises(sqlite3.OperationalError, match="9223372036854775807"):
        check(c, "s1", 2)
    c.execute("DELETE FROM gf_notification_rows")
    assert c.execute("SELECT id FROM gf_notification_floor").fetchall() == [(9223372036854775807,)]
    with pytest.raises(sqlite3.OperationalError, match="9223372036854775807"):
        check(c, "s1", 2)
    assert ids(db) == []
    c.close()


def test_gf_state_init_beside_a_version_10_catalog_names_the_upgrade(tmp_path):
    catalog = tmp_path / "v10.db"
    catalog.write_bytes(gzip.decompress(V10.read_bytes()))
    c = connect(tmp_path / "state.db", catalog)
    with pytest.raises(sqlite3.OperationalError, match=r"schema version 10, .* upgrade the catalog in place .*geofence settings"):
        c.execute("SELECT gf_state_init()")
    c.close()
