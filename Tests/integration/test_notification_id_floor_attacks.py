"""The id floor against a red team's attacks (test_notification_id_floor.py
holds the plain cases): another process deleting the newest rows between a
resumable run's chunks, a user's trigger deleting rows while the engine
writes, ids near SQLite's largest in a trusted chain, an id lowered by hand,
a floor that is not an integer, the floor's table dropped, a table rebuilt by
hand, and a state database beside a catalog that lost its floor trigger."""
import gzip
import os
import signal
import sqlite3

import pytest

from conftest import CLI, ROOT, gf
from test_check_kept_keys import check, connect, small_catalog, start
from test_notification_id_floor import V10, ids


def visible(db):
    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT id, subject_id || '/' || area_id || '/' || transition FROM gf_notifications"))


def test_a_resumable_run_reads_the_floor_again_after_each_chunk(tmp_path):
    db = small_catalog(tmp_path)
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                     + "".join(f"s{k},2026-11-20T00:00:{10 + k:02d}Z,35.0,{139.0 + 0.01 * (k % 4)},5\n" for k in range(6)))
    env = {**os.environ, "GEOFENCE_TEST_STOP_AT": "committed"}
    import subprocess
    p = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", str(fixes), "--resume", "--chunk-fixes", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen, deleted = {}, False
    while True:
        _, status = os.waitpid(p.pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            break
        now = visible(db)
        seen.update({i: v for i, v in now.items() if i not in seen})
        if now and not deleted:   # another process, between two chunks: the newest row read, then deleted
            with sqlite3.connect(db) as o:
                o.execute("DELETE FROM gf_notification_rows WHERE id = (SELECT max(id) FROM gf_notification_rows)")
            deleted = True
        os.kill(p.pid, signal.SIGCONT)
    p.communicate()
    assert deleted and len(seen) >= 2
    final = visible(db)
    assert {i: v for i, v in final.items() if i in seen and seen[i] != v} == {}, "an id given twice"


@pytest.mark.parametrize("when", ["AFTER", "BEFORE"])
@pytest.mark.parametrize("door", ["gf_check", "judge"])
def test_a_users_trigger_deleting_rows_during_the_write_does_not_bring_an_id_back(tmp_path, door, when):
    db = small_catalog(tmp_path)
    c = connect(db)
    check(c, "s0", 1, 3)
    check(c, "s1", 2, 0)                                   # ids 1 and 2, committed
    before = visible(db)
    c.executescript(f"CREATE TRIGGER my_collapse {when} INSERT ON gf_notification_rows WHEN NEW.transition = 1 BEGIN "
                    "DELETE FROM gf_notification_rows WHERE subject_key = NEW.subject_key AND area_key = NEW.area_key; END;")
    if door == "gf_check":
        check(c, "s1", 3, 1)                               # OUT A00 (deleted by the trigger with A00's IN), IN A01
    else:
        fixes = tmp_path / "f.csv"
        fixes.write_text("subject_id,ts,lat,lon,accuracy_m\ns1,2026-11-20T00:00:03Z,35.0,139.01,5\n")
        gf("judge", db, "--fixes", fixes)
    c.close()
    new = {i: v for i, v in visible(db).items() if before.get(i) != v}
    assert new and min(new) > max(before), new


def test_ids_near_the_largest_are_refused_not_given_at_random(tmp_path):
    db = small_catalog(tmp_path)
    c = connect(db)
    check(c, "s0", 1, 0)
    c.execute("UPDATE gf_notification_rows SET id = 9223372036854775805")
    refused = 0
    for second in range(2, 12):
        try:
            check(c, "s0", second, None if second % 2 == 0 else 0)
        except sqlite3.OperationalError as e:
            assert "9223372036854775807" in str(e)
            refused += 1
    assert refused and max(ids(db)) <= 9223372036854775807 and ids(db) == sorted(ids(db))
    assert all(i >= 9223372036854775805 for i in ids(db))
    c.close()


@pytest.mark.parametrize("name", ["id", "rowid"])
def test_an_id_lowered_by_hand_raises_the_floor(tmp_path, name):
    db = small_catalog(tmp_path)
    c = connect(db)
    check(c, "s0", 1, 0)
    check(c, "s0", 2)
    check(c, "s0", 3, 1)                                   # ids 1, 2, 3
    c.execute(f"UPDATE gf_notification_rows SET {name} = 10 WHERE id = 1")
    c.execute(f"UPDATE gf_notification_rows SET {name} = 4 WHERE id = 10")
    assert c.execute("SELECT id FROM gf_notification_floor").fetchall() == [(10,)]
    check(c, "s0", 4)
    assert ids(db) == [2, 3, 4, 11]
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        c.execute("UPDATE gf_notification_floor SET id = 4.5")
    c.close()


@pytest.mark.parametrize("what", ["table gf_notification_floor", "row of gf_notification_floor"])
def test_a_dropped_floor_is_named_by_gf_check_and_made_again_by_the_tool(tmp_path, what):
    db = small_catalog(tmp_path)
    c = connect(db)
    check(c, "s0", 1, 0)
    c.execute("DROP TABLE gf_notification_floor" if what.startswith("table") else "DELETE FROM gf_notification_floor")
    c.close()
    c = connect(db)
    with pytest.raises(sqlite3.OperationalError, match=f"{what} is missing, so the id of a notification deleted"):
        check(c, "s0", 2)
    c.close()
    gf("settings", db)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT id FROM gf_notification_floor").fetchall() == [(1,)]


@pytest.mark.parametrize("rebuilt", ["lower case", "a column fewer"])
def test_a_notification_table_rebuilt_by_hand_is_refused_by_the_upgrade(tmp_path, rebuilt):
    db = tmp_path / "v10.db"
    db.write_bytes(gzip.decompress(V10.read_bytes()))
    with sqlite3.connect(db) as c:
        text = c.execute("SELECT sql FROM sqlite_master WHERE name = 'gf_notification_rows'").fetchone()[0]
        new = (text.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "integer primary key autoincrement") if rebuilt == "lower case"
               else text.replace(",\n    local_day    INTEGER NOT NULL", ""))
        c.executescript(f"CREATE TABLE copy AS SELECT * FROM gf_notification_rows; DROP VIEW gf_notifications; "
                        f"DROP VIEW gf_last_notified; DROP TABLE gf_notification_rows; {new};")
    p = gf("settings", db, check=False)
    assert p.returncode != 0 and "gf_notification_rows is not as schema version 7 made it" in p.stderr, p.stderr
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM gf_meta WHERE key = 'schema_version'").fetchall() == [("10",)]
        assert c.execute("SELECT sql FROM sqlite_master WHERE name = 'gf_notification_rows'").fetchone()[0] == new


@pytest.mark.parametrize("counter", ["4x", 4.5, "4"])
def test_a_counter_edited_into_text_or_a_real_is_read_as_autoincrement_read_it(tmp_path, counter):
    db = tmp_path / "v10.db"
    db.write_bytes(gzip.decompress(V10.read_bytes()))
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM gf_notification_rows WHERE id > 3")
        c.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'gf_notification_rows'", (counter,))
    gf("settings", db)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT id FROM gf_notification_floor").fetchall() == [(4,)]


def test_a_state_database_does_not_need_the_attached_catalogs_floor_trigger(tmp_path):
    catalog = small_catalog(tmp_path)
    with sqlite3.connect(catalog) as c:
        c.execute("DROP TRIGGER gf_notification_rows_floor")
    session, attached = start(tmp_path / "state.db", catalog, True)
    c = connect(session, attached)
    assert check(c, "s0", 1, 0)
    c.close()
    assert ids(session, attached) == [1]
