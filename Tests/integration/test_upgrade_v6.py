"""A catalog of schema version 6 (the layout before issue 38: notifications,
subjects, stay rows and last-notified days as text-keyed tables) is
upgraded in place by the first command that opens it, in one transaction:
every documented read gives what the version-6 build gave, and a further
batch gives what that build gave for it. A catalog with a user's trigger on
a table the upgrade replaces is not upgraded: the command names each such
trigger and what replaces its table, and changes nothing.

The catalog is the fixture Tests/fixtures/catalog_v6 (made by the build of
fc3bbd3 with its make.py): its rows read into an empty catalog of version 6."""
import hashlib
import json
import sqlite3

import signal

from conftest import CLI, ROOT, Stopped, gf, run, stored_rows

FIXTURE = ROOT / "Tests" / "fixtures" / "catalog_v6"
READS = {
    "notifications": "SELECT id, run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM gf_notifications ORDER BY id",
    "subjects": "SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes FROM gf_subjects ORDER BY subject_id",
    "stays": "SELECT subject_id, area_id, state, in_streak, out_streak, entered_at, dwell_spent FROM gf_stays ORDER BY subject_id, area_id",
    "last_notified": "SELECT subject_id, condition_id, local_date FROM gf_last_notified ORDER BY subject_id, condition_id",
    "runs": "SELECT run_id, kind, source, started_at, fixes, judged, stale, invalid, transitions, notifications, filtered FROM gf_runs ORDER BY run_id",
    "explain": "SELECT run_id, subject_id, ts, area_id, condition_id, kind, reason, lat, lon FROM gf_explain ORDER BY rowid",
}


def old_catalog(tmp_path):
    """An empty catalog of version 6 with the fixture's rows read in."""
    db = tmp_path / "v6.db"
    gf("init", db, "--schema-version", "6")
    rows = (FIXTURE / "rows.sql").read_text()
    run("sqlite3", "-bail", db, input=".load mod_spatialite\nBEGIN;\n" + rows + "COMMIT;\n")
    assert version(db) == "6"
    return db


def version(db):
    return stored(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'")[0][0]


def stored(db, query):
    return stored_rows(db, query)


def reads(db):
    """The documented reads, as make.py wrote them (REALs as their repr)."""
    return {k: [[repr(v) if isinstance(v, float) else v for v in row] for row in stored(db, q)] for k, q in READS.items()}


def expected(name):
    return json.loads((FIXTURE / name).read_text())


def test_the_fixture_reads_as_the_old_build_read_it(tmp_path):
    """Before any upgrade, the fixture's rows are what the old build read:
    the fixture itself carries its values exactly."""
    db = old_catalog(tmp_path)
    assert json.loads(json.dumps(reads(db))) == expected("reads.json")


def test_upgrade_keeps_every_documented_read(tmp_path):
    db = old_catalog(tmp_path)
    gf("settings", db)   # any command that opens the catalog upgrades it
    assert int(version(db)) > 6
    assert json.loads(json.dumps(reads(db))) == expected("reads.json")
    assert run("sqlite3", db, "PRAGMA integrity_check").stdout.strip() == "ok"


def test_upgraded_catalog_judges_on_as_the_old_build_did(tmp_path):
    db = old_catalog(tmp_path)
    gf("judge", db, "--fixes", FIXTURE / "next.csv", "--quiet")
    got, want = json.loads(json.dumps(reads(db))), expected("next.json")
    # The new run's file name and start time are this run's own.
    for r in (got["runs"][-1], want["runs"][-1]):
        r[2] = r[3] = None
    assert got == want


def test_ids_are_never_handed_out_twice_after_the_upgrade(tmp_path):
    """The newest notifications deleted, a later one takes a new id: a
    consumer reading `WHERE id > last_seen` would otherwise miss it."""
    db = old_catalog(tmp_path)
    gf("settings", db)
    top = stored(db, "SELECT max(id) FROM gf_notifications")[0][0]
    run("sqlite3", db, f"DELETE FROM gf_notifications WHERE id > {top - 5}")
    gf("judge", db, "--fixes", FIXTURE / "next.csv", "--quiet")
    first_new = stored(db, f"SELECT min(id) FROM gf_notifications WHERE id > {top - 5}")[0][0]
    assert first_new > top


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_user_triggers_on_replaced_tables_stop_the_upgrade(tmp_path):
    db = old_catalog(tmp_path)
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE my_queue (id INTEGER, subject_id TEXT);
        CREATE TRIGGER "my queue" AFTER INSERT ON gf_notifications BEGIN INSERT INTO my_queue VALUES (NEW.id, NEW.subject_id); END;
        CREATE TRIGGER my_audit AFTER UPDATE ON gf_subjects BEGIN INSERT INTO my_queue VALUES (0, NEW.subject_id); END;
        CREATE TRIGGER my_areas AFTER INSERT ON gf_areas BEGIN SELECT 1; END;
    """)
    con.commit()
    con.close()
    before = digest(db)
    p = gf("settings", db, check=False)
    assert p.returncode != 0
    message = p.stderr
    assert '"my queue" on gf_notifications' in message, message
    assert "my_audit on gf_subjects" in message, message
    assert "my_areas" not in message, message        # gf_areas is not replaced: its triggers stay
    assert "WHERE id > :last_seen" in message          # what replaces a trigger on the notifications
    assert 'Nothing was changed: drop them (DROP TRIGGER "my queue"; DROP TRIGGER my_audit;)' in message
    assert digest(db) == before
    assert version(db) == "6"
    # Once the user drops them, the same command upgrades.
    run("sqlite3", db, 'DROP TRIGGER "my queue"; DROP TRIGGER my_audit;')
    gf("settings", db)
    assert int(version(db)) > 6
    assert json.loads(json.dumps(reads(db)))["notifications"] == expected("reads.json")["notifications"]


def test_a_kill_before_the_upgrade_commits_leaves_version_6(tmp_path):
    """SIGKILL with the upgrade's COMMIT about to run: the catalog is the
    version-6 catalog it was, and the next command upgrades it."""
    db = old_catalog(tmp_path)
    stopped = Stopped([CLI, "settings", db], "committing")
    stopped.send(signal.SIGKILL)
    assert version(db) == "6"
    assert json.loads(json.dumps(reads(db))) == expected("reads.json")
    gf("settings", db)
    assert int(version(db)) > 6
    assert json.loads(json.dumps(reads(db))) == expected("reads.json")


def test_a_kill_after_the_upgrade_commits_keeps_it(tmp_path):
    db = old_catalog(tmp_path)
    stopped = Stopped([CLI, "settings", db], "committed")
    stopped.send(signal.SIGKILL)
    assert int(version(db)) > 6
    assert run("sqlite3", db, "PRAGMA integrity_check").stdout.strip() == "ok"
    assert json.loads(json.dumps(reads(db))) == expected("reads.json")


SUPPRESSING_DAYS = ("SELECT n.subject_id, n.condition_id, n.local_date FROM gf_last_notified AS n "
                    "JOIN gf_conditions AS c USING (condition_id) WHERE c.renotify_suppress_days > 0 ORDER BY 1, 2")


def test_a_pruned_log_keeps_its_suppressions_through_the_upgrade(tmp_path):
    """Version 6 kept each condition's last notified day in its own table,
    also after the notifications were deleted (a pruned log): the upgrade
    takes the days a suppression reads from that table, not from the
    notifications left, and the next batch is suppressed as the old build
    suppressed it (found by the red team)."""
    db = old_catalog(tmp_path)
    days = stored(db, SUPPRESSING_DAYS)
    assert days, "the fixture has suppressions that notified"
    run("sqlite3", db, "DELETE FROM gf_notifications")
    gf("settings", db)
    kept = stored(db, "SELECT s.subject_id, json_extract(d.value, '$[0]'), json_extract(d.value, '$[1]') "
                      "FROM gf_subject_state AS s, json_each(s.record, '$.days') AS d ORDER BY 1, 2")
    assert kept == days
    gf("judge", db, "--fixes", FIXTURE / "next.csv", "--quiet")
    old_top = max(r[0] for r in expected("reads.json")["notifications"])
    want = [r[1:] for r in expected("next.json")["notifications"] if r[0] > old_top]
    got = [r[1:] for r in json.loads(json.dumps(reads(db)))["notifications"]]
    assert got == want


def test_commands_opening_it_at_once_upgrade_it_once(tmp_path):
    """Four commands open the version-6 catalog together: one upgrades it,
    the others, which read version 6 before it committed, find it upgraded
    once they have the write lock, and go on (each read the version again
    under the lock; found by the red team: "table gf_subject_keys already
    exists")."""
    import subprocess
    db = old_catalog(tmp_path)
    procs = [subprocess.Popen([str(CLI), "settings", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _ in outcomes), outcomes
    assert int(version(db)) > 6
    assert json.loads(json.dumps(reads(db))) == expected("reads.json")


def test_other_objects_of_yours_that_use_a_replaced_table_stop_the_upgrade(tmp_path):
    """Not only a trigger on a replaced table: a trigger on another table or
    a view whose text names one, and an index on one, would break or vanish
    with the upgrade (found by the red team: judge then failed with "cannot
    modify gf_subjects because it is a view"). Each is named; nothing changes."""
    db = old_catalog(tmp_path)
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE my_log (x);
        CREATE TRIGGER my_runs AFTER INSERT ON gf_runs BEGIN UPDATE gf_subjects SET last_lat = last_lat; END;
        CREATE VIEW my_stays AS SELECT * FROM GF_STAY_ROWS;
        CREATE VIEW my_subjects_2 AS SELECT * FROM gf_subjects_2_not_ours;
        CREATE INDEX my_by_area ON gf_notifications (area_id);
        CREATE TRIGGER my_fine AFTER INSERT ON gf_runs BEGIN INSERT INTO my_log VALUES ('gf_subjects_x'); END;
    """)
    con.commit()
    con.close()
    before = digest(db)
    p = gf("settings", db, check=False)
    assert p.returncode != 0
    message = p.stderr
    assert "trigger my_runs on gf_runs, which names gf_subjects (" in message, message
    assert "view my_stays, which names gf_stay_rows (" in message, message
    assert "index my_by_area on gf_notifications (" in message, message
    assert "my_subjects_2" not in message and "my_fine" not in message, message   # longer names are other names
    assert "drop them (DROP TRIGGER my_runs; DROP VIEW my_stays; DROP INDEX my_by_area;)" in message, message
    assert digest(db) == before
