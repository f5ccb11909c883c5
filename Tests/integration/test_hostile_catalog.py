"""A catalog file is data, never code the import runs: `geofence import`
re-creates SpatiaLite's R*Tree insert triggers on gf_areas from the engine's
own text, so a file whose stored trigger text carries further statements
(ATTACH another database, DROP a table in it) changes nothing outside the
catalog, and its triggers come out repaired. Users' own triggers stay."""
import json

import pytest

from conftest import SAMPLES, gf, run, write_collection, square

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
    run("sqlite3", db, "CREATE TABLE audit (area_id TEXT, transition TEXT);"
        "CREATE TRIGGER audit_notifications AFTER INSERT ON gf_notifications "
        "BEGIN INSERT INTO audit VALUES (NEW.area_id, NEW.transition); END;")
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
