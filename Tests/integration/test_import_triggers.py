"""An import drops the engine's per-row insert triggers on gf_areas (the
catalog stamp's and gf_areas_default_id_free) for its inserts and re-creates them after,
inside its transaction: afterwards every trigger is as `init` made it, the
stamp has moved once, and a failed import leaves triggers, stamp and rows
as they were."""
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
