"""A catalog file is data, never code the import runs: `geofence import`
re-creates SpatiaLite's R*Tree insert triggers on gf_areas from the engine's
own text, so a file whose stored trigger text carries further statements
(ATTACH another database, DROP a table in it) changes nothing outside the
catalog, and its triggers come out repaired. Users' own triggers stay."""
import json
import sqlite3

import pytest

from conftest import EXTENSION, SAMPLES, gf, run, sql, stored_rows, write_collection, square
from older_layouts import (FLOOR_BEFORE_VERSION_11, RUNS_BEFORE_VERSION_10, VERSION_6_NOTIFICATIONS, conditions_before_version_12,
                            state_layout_before_version_8)

TRIGGERS = ["gii_gf_areas_geom", "tmi_gf_areas_geom"]


def trigger_sql(db, name):
    return run("sqlite3", db, f"SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = '{name}';").stdout


@pytest.mark.parametrize("tampered", TRIGGERS)
def test_import_never_runs_sql_stored_in_the_catalog(tmp_path, tampered):
    fresh = tmp_path / "fresh.db"
    gf("init", fresh)
    spatialite_text = {name: trigger_sql(fresh, name) for name in TRIGGERS}
    assert "RTreeAlign('idx_gf_areas_geom'" in spatialite_text["gii_gf_areas_geom"]

    other = tmp_path / "other.db"
    run("sqlite3", other, "CREATE TABLE precious (x); INSERT INTO precious VALUES (42);")
    db = tmp_path / "hostile.db"
    gf("init", db)
    # A user's own trigger, which must keep working.
    run("sqlite3", db, "CREATE TABLE audit (area_key INTEGER, transition INTEGER);"
        "CREATE TRIGGER audit_notifications AFTER INSERT ON gf_notification_rows "
        "BEGIN INSERT INTO audit VALUES (NEW.area_key, NEW.transition); END;")
    payload = f"; ATTACH '{other}' AS o; DROP TABLE o.precious; CREATE TABLE o.pwned (x);"
    run("sqlite3", db, ".dbconfig defensive off", "PRAGMA writable_schema = ON;"
        f"UPDATE sqlite_master SET sql = sql || '{payload.replace(chr(39), chr(39) * 2)}' WHERE name = '{tampered}';")
    assert payload in trigger_sql(db, tampered)

    p = gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    # Nothing outside the catalog changed.
    assert run("sqlite3", other, "SELECT name FROM sqlite_master; SELECT x FROM precious;").stdout.split() == ["precious", "42"]
    assert f"repaired trigger {tampered} on gf_areas" in p.stderr
    # The triggers are SpatiaLite's again, and do their work.
    assert {name: trigger_sql(db, name) for name in TRIGGERS} == spatialite_text
    assert run("sqlite3", db, "PRAGMA integrity_check;").stdout.strip() == "ok"
    count = run("sqlite3", db, "SELECT count(*) FROM gf_areas; SELECT count(*) FROM idx_gf_areas_geom;").stdout.split()
    assert count[0] == count[1] and int(count[0]) > 0
    # Per-row path (an area added outside the bulk import) indexed by the re-created trigger.
    write_collection(tmp_path / "one.geojson", [square("extra", 139.7, 35.7)])
    gf("areas", "add", db, "--id", "single", "--circle", "35.6,139.6,100")
    count = run("sqlite3", db, "SELECT count(*) FROM gf_areas; SELECT count(*) FROM idx_gf_areas_geom;").stdout.split()
    assert count[0] == count[1]
    # A second import of an intact catalog repairs nothing and keeps the text.
    p = gf("import", db, tmp_path / "one.geojson")
    assert "repaired trigger" not in p.stderr
    assert {name: trigger_sql(db, name) for name in TRIGGERS} == spatialite_text
    located = json.loads(gf("locate", db, "--lat", "35.705", "--lon", "139.705", "--json").stdout)
    assert [(r["area_id"], r["verdict"]) for r in located] == [("extra", "inside")]

    gf("judge", db, "--fixes", SAMPLES / "fixes.csv")
    notified = run("sqlite3", db, "SELECT count(*) FROM gf_notifications; SELECT count(*) FROM audit;").stdout.split()
    assert notified[0] == notified[1] and int(notified[0]) > 0


def test_a_catalog_that_lost_its_insert_trigger_is_repaired_and_fully_indexed(tmp_path):
    """Areas added while SpatiaLite's insert trigger was gone are missing from
    the R*Tree and invisible to every spatial query: the import puts the
    trigger back and indexes every area, not only its own."""
    db = tmp_path / "damaged.db"
    gf("init", db)
    run("sqlite3", db, "DROP TRIGGER gii_gf_areas_geom;")
    gf("areas", "add", db, "--id", "added-meanwhile", "--circle", "35.6,139.6,100")
    p = gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    assert "repaired trigger gii_gf_areas_geom on gf_areas" in p.stderr
    count = run("sqlite3", db, "SELECT count(*) FROM gf_areas; SELECT count(*) FROM idx_gf_areas_geom;").stdout.split()
    assert count[0] == count[1] == "5"
    located = json.loads(gf("locate", db, "--lat", "35.6", "--lon", "139.6", "--json").stdout)
    assert [r["area_id"] for r in located] == ["added-meanwhile"]
    intact = tmp_path / "intact.db"
    gf("init", intact)
    gf("areas", "add", intact, "--id", "added-meanwhile", "--circle", "35.6,139.6,100")
    gf("import", intact, SAMPLES / "areas.geojson", "--with-default-conditions")
    gf("judge", db, "--fixes", SAMPLES / "fixes.csv")
    gf("judge", intact, "--fixes", SAMPLES / "fixes.csv")
    query = "SELECT subject_id, ts, area_id, condition_id FROM gf_notifications ORDER BY 1, 2, 3, 4;"
    assert run("sqlite3", db, query).stdout == run("sqlite3", intact, query).stdout != ""


def test_a_catalog_without_its_spatial_index_is_refused(tmp_path):
    db = tmp_path / "no-index.db"
    gf("init", db)
    run("sqlite3", db, ".load mod_spatialite", "SELECT DisableSpatialIndex('gf_areas', 'geom');",
        "DROP TABLE idx_gf_areas_geom;")
    p = gf("import", db, SAMPLES / "areas.geojson", check=False)
    assert p.returncode == 2 and "no spatial index on gf_areas.geom" in p.stderr and "CreateSpatialIndex" in p.stderr
    assert run("sqlite3", db, "SELECT count(*) FROM gf_areas;").stdout.strip() == "0"


STAMP_QUERY = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name GLOB 'gf_*_stamp_*' ORDER BY name;"


def test_lost_or_altered_stamp_triggers_are_refused_by_gf_check_and_repaired_by_the_cli(tmp_path):
    """gf_check's cache relies on the catalog-stamp triggers to see a catalog
    change rolled back on its own connection: without them it refuses rather
    than judge by a stale catalog, and the command-line tool re-creates them."""
    db = tmp_path / "stamp.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    reference = run("sqlite3", db, STAMP_QUERY).stdout
    assert reference.count("CREATE TRIGGER") == 9
    run("sqlite3", db, "DROP TRIGGER gf_areas_stamp_update;",
        ".dbconfig defensive off", "PRAGMA writable_schema = ON;",
        "UPDATE sqlite_master SET sql = replace(sql, 'random()', '42') WHERE name = 'gf_settings_stamp_insert';")
    p = run("sqlite3", "-bail", db, check=False, input=f".load {EXTENSION.with_suffix('')}\n"
            "SELECT gf_check('w', '2026-11-20T09:00:00Z', 35.70, 139.70, 10);\n")
    assert p.returncode != 0 and "trigger gf_areas_stamp_update is missing or altered" in p.stderr, p.stderr
    gf("settings", db)  # any command that opens the catalog repairs it
    assert run("sqlite3", db, STAMP_QUERY).stdout == reference
    # And the rolled-back change of issue 19's reproduction is seen again.
    p = run("sqlite3", "-bail", db, input=f".load mod_spatialite\n.load {EXTENSION.with_suffix('')}\n"
            "SELECT gf_check('w', '2026-11-20T09:00:00Z', 35.70, 139.70, 10);\n"
            "BEGIN; UPDATE gf_areas SET in_accuracy_max_m = 1;\n"
            "SELECT gf_check('probe', '2026-11-20T09:00:00Z', 35.715, 139.773, 10);\nROLLBACK;\n"
            "SELECT gf_check('w', '2026-11-20T09:01:00Z', 35.715, 139.773, 10);\n")
    assert '"transition":"IN"' in p.stdout.splitlines()[-1]


# The notification tables as versions 2 to 6 had them (version 7 made them views).
def test_an_upgrade_replaces_stamp_triggers_a_file_already_carries(tmp_path):
    db = tmp_path / "v4.db"
    gf("init", db)
    run("sqlite3", db, conditions_before_version_12(), state_layout_before_version_8(), "DROP TRIGGER gf_areas_stamp_insert;",
        "CREATE TRIGGER gf_areas_stamp_insert AFTER INSERT ON gf_areas BEGIN SELECT 1; END;",
        *VERSION_6_NOTIFICATIONS,
        "ALTER TABLE gf_explain DROP COLUMN lat;", "ALTER TABLE gf_explain DROP COLUMN lon;",  # as version 4 had it
        RUNS_BEFORE_VERSION_10, FLOOR_BEFORE_VERSION_11, "UPDATE gf_meta SET value = '4' WHERE key = 'schema_version';")
    gf("settings", db)
    fresh = tmp_path / "fresh.db"
    gf("init", fresh)
    assert run("sqlite3", db, STAMP_QUERY).stdout == run("sqlite3", fresh, STAMP_QUERY).stdout
    assert run("sqlite3", db, "SELECT value FROM gf_meta WHERE key = 'schema_version';").stdout \
        == run("sqlite3", fresh, "SELECT value FROM gf_meta WHERE key = 'schema_version';").stdout


def test_a_confidence_written_past_the_constraints_is_an_error_not_a_trap(tmp_path):
    """An area's confidence of 7, or a default_confidence of 7, written past
    the catalog's CHECK constraints reached the CEP arithmetic, whose
    precondition trapped: the CLI died, and in SQL the host process with it
    (red team). Each door now says which value is wrong."""
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("P0", 139.70, 35.60, 0.10)]))
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\ns,1700000000,35.65,139.75,100\n")
    con = sqlite3.connect(db)
    con.execute("PRAGMA ignore_check_constraints = 1")
    con.execute("UPDATE gf_areas SET confidence = 7 WHERE area_id = 'P0'")
    con.commit()
    con.close()
    p = gf("locate", db, "--fixes", fixes, check=False)
    assert p.returncode == 1 and "id 'P0', confidence: must be in [0, 1), got 7.0" in p.stderr, p.stderr
    p = gf("locate", db, "--lat", "35.65", "--lon", "139.75", "--accuracy", "100", check=False)
    assert p.returncode == 2 and "area 'P0': confidence 7.0 is not in [0, 1)" in p.stderr, p.stderr
    p = sql(db, "SELECT gf_area_contains('P0', 35.65, 139.75, 100);", check=False)
    assert p.returncode == 1 and "gf_area_contains: area 'P0': confidence 7.0 is not in [0, 1)" in p.stderr, p.stderr
    sql(db, "UPDATE gf_areas SET confidence = NULL WHERE area_id = 'P0';")
    con = sqlite3.connect(db)
    con.execute("INSERT OR REPLACE INTO gf_settings(key, value) VALUES ('default_confidence', '7')")
    con.commit()
    con.close()
    for args in (["locate", db, "--fixes", fixes], ["judge", db, "--fixes", fixes]):
        p = gf(*args, check=False)
        assert p.returncode == 1 and "default_confidence in gf_settings must be a number in [0, 1), got '7'" in p.stderr, p.stderr
    p = sql(db, "SELECT gf_check('s', 1700000000, 35.65, 139.75, 100);", check=False)
    assert p.returncode == 1 and "default_confidence in gf_settings must be a number in [0, 1)" in p.stderr, p.stderr


def test_properties_no_rule_reads_are_not_read_by_any_door_that_judges(tmp_path):
    """An area's properties that are not JSON (written by SQL) stop no
    judgement: no rule reads them, so neither the batch with every area
    prepared, nor the one preparing areas as its fixes reach them, nor
    gf_check, nor locate, reads them. (The batch preparing every area and
    gf_check used to parse them, and failed on the area where the batch
    preparing on demand did not.) The commands that show areas say what is
    wrong, naming the area (they said only "line 1, column 2: …", and
    dropped properties that were not an object silently)."""
    areas = [square(f"A{i:02d}", 139.70 + 0.02 * i, 35.60) for i in range(40)]
    moves = [(k, 35.605, 139.705 + 0.02 * (k % 8)) for k in range(60)]
    lines = "".join(f"s{k % 3},{1700000000 + 60 * k},{lat},{lon},5\n" for k, lat, lon in moves)
    calls = "".join(f"SELECT gf_check('s{k % 3}', {1700000000 + 60 * k}, {lat}, {lon}, 5);\n" for k, lat, lon in moves)
    every = tmp_path / "every.csv"   # more fixes than areas: every area prepared first
    every.write_text("subject_id,ts,lat,lon,accuracy_m\n" + lines)
    few = tmp_path / "few.csv"       # fewer: areas prepared as fixes reach them
    few.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(lines.splitlines(keepends=True)[:30]))

    def judged(bad):
        db = tmp_path / f"c-{bad}.db"
        gf("init", db)
        gf("import", db, write_collection(tmp_path / "a.geojson", areas), "--with-default-conditions")
        if bad:
            sql(db, "UPDATE gf_areas SET properties = '{not json' WHERE area_id = 'A00';"
                    "UPDATE gf_areas SET properties = '[1,2]' WHERE area_id = 'A03';"
                    "UPDATE gf_areas SET properties = X'7b7d' WHERE area_id = 'A05';"
                    "UPDATE gf_areas SET properties = '{\"a\":1,\"a\":2}' WHERE area_id = 'A06';"
                    "UPDATE gf_areas SET properties = '{\"area_id\":\"other\"}' WHERE area_id = 'A07';")
        out = []
        for fixes in (every, few):
            copy = tmp_path / f"{fixes.stem}-{bad}.db"
            copy.write_bytes(db.read_bytes())
            gf("judge", copy, "--fixes", fixes)
            out.append(stored_rows(copy, "SELECT subject_id, area_id, transition, ts FROM gf_notifications ORDER BY id"))
        out.append(sql(db, calls).stdout)
        out.append(gf("locate", db, "--fixes", every, "--out", tmp_path / f"l-{bad}.csv").stdout)
        out.append((tmp_path / f"l-{bad}.csv").read_text())
        return db, out

    _, clean = judged(False)
    db, tampered = judged(True)
    assert tampered == clean and len(clean[0]) > 20 and len(clean[1]) > 5 and "A03" in clean[2], clean
    p = gf("areas", "list", db, check=False)
    assert p.returncode == 2 and "area 'A00' has properties that are not JSON as import writes it (line 1, column 2" in p.stderr, p.stderr
    for area, what in (("A03", "JSON that is not an object"), ("A05", "a BLOB"),
                       ("A06", "not JSON as import writes it (line 1, column 8: duplicate member name 'a' in one object)"),
                       ("A07", "a JSON object with a member 'area_id', a field of the area itself")):
        p = gf("areas", "show", db, area, check=False)
        assert p.returncode == 2 and f"area '{area}' has properties that are {what}, written into gf_areas by SQL or an older version: " \
            "set them to a JSON object in SQL, '{}' for none" in p.stderr, p.stderr
    # What the message says to do works (the column is NOT NULL: NULL would not).
    sql(db, "UPDATE gf_areas SET properties = '{}' WHERE area_id IN ('A00', 'A03', 'A05', 'A06', 'A07');")
    assert "A39" in gf("areas", "list", db).stdout
    # What `export` writes, `import` takes back.
    gf("export", db, "--out", tmp_path / "back.geojson")
    gf("init", tmp_path / "back.db")
    gf("import", tmp_path / "back.db", tmp_path / "back.geojson")
