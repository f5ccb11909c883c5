"""An import drops the engine's per-row insert triggers on gf_areas (the
catalog stamp's, gf_areas_default_id_free and gf_areas_replace_keeps_implied)
for its inserts and re-creates them after, inside its transaction:
afterwards every trigger is as `init` made it (one that was missing
included), the stamp has moved once, and a failed import leaves triggers,
stamp and rows as they were."""
import sqlite3

from conftest import gf, run, square, write_collection


def triggers(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name").fetchall()
    stamp = con.execute("SELECT value FROM gf_meta WHERE key = 'catalog_stamp'").fetchone()[0]
    counts = con.execute("SELECT (SELECT count(*) FROM gf_areas), (SELECT count(*) FROM gf_conditions)").fetchone()
    con.close()
    return rows, stamp, counts


def test_import_restores_its_triggers_and_moves_the_stamp(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    before, stamp, _ = triggers(db)
    assert {"gf_areas_stamp_insert", "gf_areas_default_id_free"} <= {name for name, _ in before}
    gf("import", db, write_collection(tmp_path / "a.geojson", [square(f"A{i}", 139.0 + i * 0.01, 35.0) for i in range(50)]),
       "--with-default-conditions")
    after, moved, counts = triggers(db)
    assert after == before and moved != stamp and counts == (50, 100)
    # The re-created triggers work: an area's implied ids in use are refused, a new area moves the stamp.
    insert = (".load mod_spatialite\nINSERT INTO gf_areas (area_id, kind, geom, default_condition_id) "
              "VALUES ('B', 'polygon', GeomFromText('MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))', 4326), {});\n")
    p = run("sqlite3", "-bail", db, input=insert.format(2), check=False)
    assert p.returncode != 0 and "UNIQUE constraint failed: gf_conditions.condition_id" in p.stderr, p.stderr
    run("sqlite3", "-bail", db, input=insert.format(1000))
    con = sqlite3.connect(db)
    assert con.execute("SELECT value FROM gf_meta WHERE key = 'catalog_stamp'").fetchone()[0] != moved
    con.close()


def test_a_failed_import_leaves_triggers_stamp_and_rows(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A0", 139.0, 35.0)]), "--with-default-conditions")
    before = triggers(db)
    bad = [square(f"B{i}", 139.0 + i * 0.01, 35.1) for i in range(30)] + [square("B0", 139.5, 35.5)]   # a duplicate id last
    p = gf("import", db, write_collection(tmp_path / "b.geojson", bad), "--with-default-conditions", check=False)
    assert p.returncode == 1
    assert triggers(db) == before


def test_an_import_re_creates_an_engine_trigger_that_was_missing(tmp_path):
    """A red team's finding: re-creating only the triggers the catalog held
    left one a user had dropped missing, and nothing else re-creates it, so
    an area could take another's implied condition ids."""
    db = tmp_path / "c.db"
    gf("init", db)
    before, _, _ = triggers(db)
    con = sqlite3.connect(db)
    con.executescript("DROP TRIGGER gf_areas_default_id_free; DROP TRIGGER gf_areas_replace_keeps_implied;")
    con.close()
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A0", 139.0, 35.0)]), "--with-default-conditions")
    assert triggers(db)[0] == before
