"""Catalogs in the layouts of earlier schema versions, for the tests of the
in-place upgrade and of files a user rebuilt by hand: a version-6 catalog
read from a fixture, and a new catalog's tables turned back into the layout
an older version had."""
import re
from pathlib import Path

from conftest import ROOT, gf, run


def version_6_catalog(db, rows_sql):
    """A catalog of schema version 6 holding the rows a fixture's make.py
    dumped from the catalog the version-6 build made (Tests/fixtures/*/rows.sql):
    an empty catalog of that version, the rows read in through the sqlite3
    shell with SpatiaLite (the areas' geometries), in one transaction."""
    gf("init", db, "--schema-version", "6")
    run("sqlite3", "-bail", db, input=".load mod_spatialite\nBEGIN;\n" + Path(rows_sql).read_text() + "COMMIT;\n")
    return db



# SQL that takes a new catalog's runs back to their layout before version 10
# (no resumable runs), for tests that make an older catalog from a new one.
RUNS_BEFORE_VERSION_10 = "DROP TABLE gf_run_inputs; ALTER TABLE gf_runs DROP COLUMN status;"

# The same for the notification id floor of version 11 (gf_notification_rows
# itself goes with VERSION_6_NOTIFICATIONS, its trigger with it).
FLOOR_BEFORE_VERSION_11 = "DROP TRIGGER IF EXISTS gf_notification_rows_floor; DROP TABLE gf_notification_floor;"


def conditions_before_version_12():
    """SQL that turns a new catalog's conditions back into version 1's table
    (its index and triggers, version 5's stamp triggers on it, version 9's
    gf_last_notified over it), each area's implied pair stored as two rows:
    for tests that make an older catalog from one this build made."""
    v1 = (ROOT / "sql" / "001_catalog.sql").read_text()
    kept = [m.group(0) for m in re.finditer(r"CREATE (TABLE gf_conditions .*?\n\);|INDEX gf_conditions_by_area .*?;"
                                            r"|TRIGGER (gf_conditions_need_area|gf_areas_remove_conditions).*?END;)", v1, re.S)]
    v5 = (ROOT / "sql" / "005_catalog_stamp.sql").read_text()
    stamps = re.findall(r"CREATE TRIGGER gf_conditions_stamp_\w+ .*?END;", v5, re.S)
    v9 = re.search(r"CREATE VIEW gf_last_notified AS.*?;", (ROOT / "sql" / "009_last_notified_from_state.sql").read_text(), re.S).group(0)
    # Every trigger version 12 made (those on gf_areas outlive the tables dropped).
    v12 = re.findall(r"CREATE TRIGGER (\w+)", (ROOT / "sql" / "012_implied_conditions.sql").read_text())
    return ("CREATE TEMP TABLE c12 AS SELECT * FROM gf_conditions;"
            "DROP VIEW gf_conditions; DROP TABLE gf_condition_rows; DROP INDEX gf_areas_default_in; DROP INDEX gf_areas_default_out;"
            + "".join(f"DROP TRIGGER IF EXISTS {t};" for t in v12) +
            "DROP VIEW IF EXISTS gf_last_notified; ALTER TABLE gf_areas DROP COLUMN default_condition_id;\n"
            + "\n".join(kept + stamps) + "\n"
            "INSERT INTO gf_conditions SELECT * FROM temp.c12 ORDER BY condition_id; DROP TABLE temp.c12;\n" + v9 + "\n")


def notifications_as_a_table(con):
    """Replaces the gf_notifications view (schema version 7) with a table of
    its columns holding its rows, as versions 2 to 6 had it and as a user may
    rebuild it by hand: for a test that writes rows of its own, values no
    judging writes included (text in a number's column), which the stored
    integer rows cannot hold."""
    con.executescript("""
        CREATE TABLE gf_notifications_copy AS SELECT * FROM gf_notifications;
        DROP VIEW gf_notifications;
        CREATE TABLE gf_notifications (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_id TEXT NOT NULL, ts TEXT NOT NULL,
            area_id TEXT NOT NULL, condition_id INTEGER NOT NULL, transition TEXT NOT NULL,
            lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL);
        INSERT INTO gf_notifications SELECT * FROM gf_notifications_copy ORDER BY id;
        DROP TABLE gf_notifications_copy;""")



def state_layout_before_version_8():
    """SQL that turns a new catalog's subject state back into the layout of
    versions 4 to 7 (gf_subjects and gf_stay_rows tables, the gf_stays view
    over them, version 7's gf_last_notified view), keeping every subject's state: for tests that make an older
    catalog from one this build made. Version 2's tables and area trigger,
    then version 4 as written, then the rows (streaks exact, as of the
    subject's last judged fix)."""
    v2 = (ROOT / "sql" / "002_judgement.sql").read_text()
    kept = [m.group(0) for m in re.finditer(r"CREATE (TABLE gf_subjects|TABLE gf_stays|INDEX gf_stays_by_area|TRIGGER gf_areas_remove_stays)"
                                            r".*?(\);|END;)", v2, re.S)]
    v7_last_notified = re.search(r"CREATE VIEW gf_last_notified AS.*?;", (ROOT / "sql" / "007_notification_rows.sql").read_text(), re.S).group(0)
    return ("CREATE TEMP TABLE s8 AS SELECT * FROM gf_subjects; CREATE TEMP TABLE t8 AS SELECT * FROM gf_stays;"
            "DROP VIEW IF EXISTS gf_last_notified;"
            "DROP TRIGGER gf_subjects_remove; DROP TRIGGER gf_stays_remove; DROP TRIGGER gf_areas_remove_inside;"
            "DROP VIEW gf_stays; DROP VIEW gf_subjects; DROP TABLE gf_subject_state; DROP TABLE gf_inside;\n"
            + "\n".join(kept) + "\n"
            "INSERT INTO gf_subjects SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m FROM temp.s8;"
            "INSERT INTO gf_stays SELECT subject_id, area_id, state, in_streak, out_streak, entered_at, dwell_spent FROM temp.t8;\n"
            + (ROOT / "sql" / "004_streak_rows.sql").read_text()
            + "UPDATE gf_subjects SET judged_fixes = (SELECT judged_fixes FROM temp.s8 WHERE s8.subject_id = gf_subjects.subject_id);"
            "UPDATE gf_stay_rows SET base_judged = (SELECT judged_fixes FROM gf_subjects AS s WHERE s.subject_id = gf_stay_rows.subject_id);"
            "DROP TABLE temp.s8; DROP TABLE temp.t8;\n" + v7_last_notified)


# Statements that put back version 6's notification tables, empty, in a new
# catalog (the views and stored rows of version 7 dropped).
VERSION_6_NOTIFICATIONS = [
    "DROP VIEW gf_notifications;", "DROP VIEW gf_last_notified;", "DROP TABLE gf_notification_rows;",
    "DROP TABLE gf_subject_keys;", "DROP TABLE gf_area_keys;",
    "CREATE TABLE gf_last_notified (subject_id TEXT NOT NULL, condition_id INTEGER NOT NULL, local_date TEXT NOT NULL, "
    "PRIMARY KEY (subject_id, condition_id)) WITHOUT ROWID;",
    "CREATE TABLE gf_notifications (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_id TEXT NOT NULL, ts TEXT NOT NULL, "
    "area_id TEXT NOT NULL, condition_id INTEGER NOT NULL, transition TEXT NOT NULL CHECK (transition IN ('IN', 'OUT', 'DWELL')), "
    "lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL);",
    "CREATE INDEX gf_notifications_by_subject ON gf_notifications (subject_id, ts);",
]
