"""The writer gives a new subject or area its key by inserting it into
gf_subject_keys or gf_area_keys, and may try the insert before the lookup
when the last id it met was new (OutputKeys). A red team found two ways
that showed: a user's BEFORE INSERT trigger on a dictionary ran for ids
the table already held (an audit logged a subject twice; a guard that
refuses known ids failed the call), and a dictionary rebuilt without its
UNIQUE id made every call fail (`ON CONFLICT clause does not match`).
With a trigger, or without the UNIQUE, ids are looked up first, as before."""
import json
import shutil
import sqlite3

import pytest

from conftest import EXTENSION

CALLS = [("commuter-07", "2026-11-20T08:42:00+09:00", 35.6815, 139.7655, 25),
         ("walker-01", "2026-11-20T09:05:00+09:00", 35.7098, 139.7740, 15),
         ("walker-01", "2026-11-20T09:10:00+09:00", 35.7150, 139.7730, 8),
         ("commuter-07", "2026-11-20T19:02:00+09:00", 35.6597, 139.7007, 30),
         ("walker-01", "2026-11-20T19:30:00+09:00", 35.6590, 139.7450, 60)]


def connect(db):
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(EXTENSION))
    return c


def checked(db, setup):
    """Every call's returned text after `setup`, the stored rows, and the connection for more questions."""
    c = connect(db)
    for s in setup:
        c.execute(s)
    texts = [c.execute("SELECT gf_check(?, ?, ?, ?, ?)", call).fetchone()[0] for call in CALLS]
    rows = c.execute("SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications ORDER BY id").fetchall()
    return texts, rows, c


def test_a_before_insert_trigger_runs_only_for_new_ids(catalog, tmp_path):
    plain = tmp_path / "plain.db"
    shutil.copy(catalog, plain)
    texts, rows, c = checked(plain, [])
    c.close()
    assert sum(len(json.loads(t)) for t in texts) >= 3, texts

    audited = tmp_path / "audited.db"
    shutil.copy(catalog, audited)
    setup = ["CREATE TABLE audit (what TEXT)",
             "CREATE TRIGGER audit_subjects BEFORE INSERT ON gf_subject_keys BEGIN INSERT INTO audit VALUES (NEW.subject_id); END",
             "CREATE TEMP TRIGGER audit_areas BEFORE INSERT ON main.gf_area_keys BEGIN INSERT INTO audit VALUES (NEW.area_id); END"]
    got, got_rows, c = checked(audited, setup)
    assert (got, got_rows) == (texts, rows)
    logged = [r[0] for r in c.execute("SELECT what FROM audit")]
    assert sorted(logged) == sorted(set(logged)), f"an id the dictionary held was inserted again: {logged}"
    assert {"walker-01", "commuter-07"} <= set(logged)
    c.close()

    guarded = tmp_path / "guarded.db"
    shutil.copy(catalog, guarded)
    guard = ["CREATE TRIGGER known_stay_known BEFORE INSERT ON gf_subject_keys "
             "WHEN EXISTS (SELECT 1 FROM gf_subject_keys WHERE subject_id = NEW.subject_id) "
             "BEGIN SELECT RAISE(ABORT, 'a known subject inserted again'); END"]
    got, got_rows, c = checked(guarded, guard)
    assert (got, got_rows) == (texts, rows)
    c.close()


# The dictionary rebuilt with its id unconstrained, then given the index each case names (none, partial, expression).
REBUILT = {"no UNIQUE": None,
           "a partial UNIQUE index": "CREATE UNIQUE INDEX ak ON gf_area_keys (area_id) WHERE area_id <> ''",
           "a UNIQUE index on an expression": "CREATE UNIQUE INDEX ak ON gf_area_keys (lower(area_id))"}


@pytest.mark.parametrize("how", list(REBUILT))
def test_a_dictionary_rebuilt_without_its_unique_id_still_takes_keys(catalog, tmp_path, how):
    plain = tmp_path / "plain.db"
    shutil.copy(catalog, plain)
    texts, rows, c = checked(plain, [])
    c.close()
    rebuilt = tmp_path / "rebuilt.db"
    shutil.copy(catalog, rebuilt)
    setup = ["PRAGMA legacy_alter_table = ON", "CREATE TABLE k2 (area_key INTEGER PRIMARY KEY, area_id TEXT NOT NULL)",
             "INSERT INTO k2 SELECT * FROM gf_area_keys", "DROP TABLE gf_area_keys", "ALTER TABLE k2 RENAME TO gf_area_keys",
             *filter(None, [REBUILT[how]])]
    got, got_rows, c = checked(rebuilt, setup)
    assert (got, got_rows) == (texts, rows)
    assert c.execute("SELECT count(*) = count(DISTINCT area_id) FROM gf_area_keys").fetchone()[0] == 1
    c.close()
