"""An import drops the engine's per-row insert triggers (the catalog stamp's
and gf_conditions_need_area) for its inserts and re-creates them after,
inside its transaction: afterwards every trigger is as `init` made it, the
stamp has moved once, and a failed import leaves triggers, stamp and rows
as they were."""
import sqlite3

from conftest import gf, square, write_collection


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
    assert any(name == "gf_conditions_need_area" for name, _ in before)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square(f"A{i}", 139.0 + i * 0.01, 35.0) for i in range(50)]),
       "--with-default-conditions")
    after, moved, counts = triggers(db)
    assert after == before and moved != stamp and counts == (50, 100)
    # The re-created triggers work: a condition of a missing area is refused, a new one moves the stamp.
    con = sqlite3.connect(db)
    try:
        con.execute("INSERT INTO gf_conditions (condition_id, area_id, timing) VALUES (1000, 'nope', 'IN')")
        raise AssertionError("the need-area trigger is gone")
    except sqlite3.IntegrityError as e:
        assert "does not name an area" in str(e)
    with con:
        con.execute("INSERT INTO gf_conditions (condition_id, area_id, timing) VALUES (1000, 'A1', 'IN')")
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
