"""An area's default pair of conditions is implied by its row (schema
version 12): gf_areas.default_condition_id is its IN's id, its OUT is the
next, and gf_conditions is a view of those and the stored rows
(gf_condition_rows) with the columns and values it had as a table. Writes
through the view store an implied pair first; ids stay unique across both
parts; the upgrade turns stored default pairs into implied ones and
refuses a catalog whose own triggers on gf_conditions the view would lose."""
import sqlite3

import pytest

from conftest import gf, run, sql, square, stored_rows as rows, write_collection

ALL = "SELECT * FROM gf_conditions ORDER BY condition_id"


def squares(prefix, n):
    return [square(f"{prefix}{i:04d}", -170.0 + (i % 300) * 0.05, -60.0 + (i // 300) * 0.05) for i in range(n)]


def write(db, script):
    con = sqlite3.connect(db)
    try:
        with con:
            con.executescript(script)
    finally:
        con.close()


def plan(db, query):
    return " ".join(r[-1] for r in rows(db, "EXPLAIN QUERY PLAN " + query))


@pytest.fixture
def imported(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", squares("A", 3)), "--with-default-conditions")
    return db


def test_an_import_stores_no_row_and_the_view_shows_the_pairs(tmp_path, imported):
    assert rows(imported, "SELECT count(*) FROM gf_condition_rows") == [(0,)]
    assert rows(imported, "SELECT area_id, default_condition_id FROM gf_areas ORDER BY id") == [("A0000", 1), ("A0001", 3), ("A0002", 5)]
    assert rows(imported, ALL) == [(i, f"A000{(i - 1) // 2}", "IN" if i % 2 else "OUT") + (None,) * 8 for i in range(1, 7)]
    # Every part of the view seeks, by id and by area.
    assert plan(imported, "SELECT * FROM gf_conditions WHERE condition_id = 4").count("SEARCH") == 3
    assert "SCAN gf_areas" not in plan(imported, "SELECT * FROM gf_conditions WHERE area_id = 'A0001'")
    # A later import numbers on; --replace starts again from 1; an area removed takes its pair.
    gf("import", imported, write_collection(tmp_path / "b.geojson", squares("B", 2)), "--with-default-conditions")
    assert rows(imported, "SELECT condition_id, timing FROM gf_conditions WHERE area_id = 'B0001' ORDER BY 1") == [(9, "IN"), (10, "OUT")]
    gf("areas", "remove", imported, "B0001")
    assert rows(imported, "SELECT count(*) FROM gf_conditions WHERE area_id = 'B0001'") == [(0,)]
    gf("import", imported, write_collection(tmp_path / "b.geojson", squares("B", 2)), "--with-default-conditions", "--replace")
    assert rows(imported, ALL)[:2] == [(1, "B0000", "IN") + (None,) * 8, (2, "B0000", "OUT") + (None,) * 8]


def test_writes_through_the_view(imported):
    write(imported, """
        UPDATE gf_conditions SET timezone = 'Asia/Tokyo' WHERE condition_id = 4;   -- A0001's OUT: its pair is stored first
        DELETE FROM gf_conditions WHERE condition_id = 1;                           -- A0000's IN: its OUT stays, stored
        INSERT INTO gf_conditions (area_id, timing, dwell_s) VALUES ('A0002', 'DWELL', 60);   -- no id: after the highest
        """)
    assert rows(imported, "SELECT area_id, default_condition_id FROM gf_areas ORDER BY id") == [("A0000", None), ("A0001", None), ("A0002", 5)]
    assert rows(imported, "SELECT condition_id, timing, dwell_s, timezone FROM gf_conditions ORDER BY 1") == [
        (2, "OUT", None, None), (3, "IN", None, None), (4, "OUT", None, "Asia/Tokyo"), (5, "IN", None, None), (6, "OUT", None, None),
        (7, "DWELL", 60, None)]
    assert rows(imported, "SELECT condition_id FROM gf_condition_rows ORDER BY 1") == [(2,), (3,), (4,), (7,)]
    # An id is never given twice: a row on an implied id, an area's column on ids in use.
    for bad in ["INSERT INTO gf_conditions (condition_id, area_id, timing) VALUES (6, 'A0002', 'IN')",
                "INSERT INTO gf_condition_rows (condition_id, area_id, timing) VALUES (5, 'A0002', 'IN')",
                "UPDATE gf_areas SET default_condition_id = 6 WHERE area_id = 'A0000'",
                "UPDATE gf_areas SET default_condition_id = 1 WHERE area_id = 'A0000'"]:
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE constraint failed: gf_condition"):
            write(imported, bad)
    assert rows(imported, "SELECT condition_id FROM gf_condition_rows ORDER BY 1") == [(2,), (3,), (4,), (7,)]
    with pytest.raises(sqlite3.IntegrityError, match="does not name an area"):
        write(imported, "INSERT INTO gf_conditions (area_id, timing) VALUES ('nope', 'IN')")
    write(imported, "UPDATE gf_areas SET default_condition_id = 8 WHERE area_id = 'A0000'")
    assert rows(imported, "SELECT condition_id, timing FROM gf_conditions WHERE area_id = 'A0000' ORDER BY 1") == [(2, "OUT"), (8, "IN"), (9, "OUT")]


def test_conflict_clauses_and_a_replaced_area_keep_what_a_table_kept(imported):
    write(imported, """
        INSERT OR REPLACE INTO gf_conditions (condition_id, area_id, timing, start_time, end_time) VALUES (1, 'A0000', 'IN', '08:00', '09:00');
        INSERT OR IGNORE INTO gf_conditions (condition_id, area_id, timing, dwell_s) VALUES (3, 'A0001', 'DWELL', 5);
        """)
    assert rows(imported, "SELECT condition_id, timing, start_time, dwell_s FROM gf_conditions WHERE condition_id <= 4 ORDER BY 1") == [
        (1, "IN", "08:00", None), (2, "OUT", None, None), (3, "IN", None, None), (4, "OUT", None, None)]
    # A user's refresh of an area's row (INSERT OR REPLACE) keeps its pair, as rows.
    columns = "area_id, kind, in_confirm_count, out_confirm_count, properties, geom"
    run("sqlite3", "-bail", imported, input=f".load mod_spatialite\nINSERT OR REPLACE INTO gf_areas ({columns}) "
        f"SELECT {columns} FROM gf_areas WHERE area_id = 'A0002';\n")
    assert rows(imported, "SELECT condition_id, timing FROM gf_conditions WHERE area_id = 'A0002' ORDER BY 1") == [(5, "IN"), (6, "OUT")]


def test_a_column_written_past_its_check_is_named_not_built_on(tmp_path, imported):
    write(imported, "PRAGMA ignore_check_constraints = 1; UPDATE gf_areas SET default_condition_id = 1e30 WHERE area_id = 'A0002'")
    for args in (["import", imported, write_collection(tmp_path / "b.geojson", squares("B", 2)), "--with-default-conditions"],
                 ["conditions", "add", imported, "--area", "A0000", "--timing", "IN"],
                 ["conditions", "list", imported]):
        p = gf(*args, check=False)
        assert p.returncode != 0 and "A0002" in p.stderr and "default_condition_id" in p.stderr, (args, p.stderr)
    assert rows(imported, "SELECT count(*) FROM gf_areas") == [(3,)]


def test_the_cli_adds_and_removes_through_the_view(tmp_path, imported):
    gf("conditions", "remove", imported, "3", "3")
    assert rows(imported, "SELECT condition_id, timing FROM gf_conditions WHERE area_id = 'A0001'") == [(4, "OUT")]
    p = gf("conditions", "remove", imported, "3", check=False)
    assert p.returncode != 0
    csv = tmp_path / "c.csv"
    csv.write_text("condition_id,area_id,timing\n8,A0002,IN\n5,A0002,OUT\n")
    p = gf("conditions", "import", imported, csv, check=False)
    assert p.returncode != 0 and "duplicate condition_id" in p.stderr and "row 2" in p.stderr, p.stderr
    assert rows(imported, "SELECT max(condition_id) FROM gf_conditions") == [(6,)]
    gf("conditions", "add", imported, "--area", "A0002", "--timing", "IN")
    assert rows(imported, "SELECT max(condition_id) FROM gf_conditions") == [(7,)]


def make_version_11(db, conditions):
    """A catalog of schema version 11 with three areas and `conditions` as rows."""
    gf("init", db, "--schema-version", "11")
    areas = "".join(f"INSERT INTO gf_areas (area_id, kind, geom) VALUES ('{a}', 'polygon', "
                    f"GeomFromText('MULTIPOLYGON((({x} 0, {x + 1} 0, {x + 1} 1, {x} 1, {x} 0)))', 4326));\n" for x, a in enumerate("PQR"))
    values = ", ".join("(" + ", ".join("NULL" if v is None else repr(v) for v in c) + ")" for c in conditions)
    run("sqlite3", "-bail", db, input=".load mod_spatialite\nBEGIN;\n" + areas
        + f"INSERT INTO gf_conditions (condition_id, area_id, timing, dwell_s, timezone) VALUES {values};\nCOMMIT;\n")


def test_the_upgrade_implies_each_areas_first_default_pair(tmp_path):
    db = tmp_path / "v11.db"
    make_version_11(db, [
        (1, "P", "IN", None, None), (2, "P", "OUT", None, None),   # a pair
        (3, "P", "IN", None, None), (4, "P", "OUT", None, None),   # P's second: kept as rows
        (5, "Q", "OUT", None, None), (6, "Q", "IN", None, None),   # OUT before IN: rows
        (7, "Q", "IN", None, "Asia/Tokyo"), (8, "Q", "OUT", None, None),   # one has a zone: rows
        (9, "R", "DWELL", 30, None), (10, "R", "IN", None, None), (12, "R", "OUT", None, None),   # ids apart: rows
        (20, "R", "IN", None, None), (21, "R", "OUT", None, None)])   # a pair
    before = rows(db, ALL)
    gf("settings", db)
    assert rows(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [("12",)]
    assert rows(db, ALL) == before
    assert rows(db, "SELECT area_id, default_condition_id FROM gf_areas ORDER BY area_id") == [("P", 1), ("Q", None), ("R", 20)]
    assert [r[0] for r in rows(db, "SELECT condition_id FROM gf_condition_rows ORDER BY 1")] == [3, 4, 5, 6, 7, 8, 9, 10, 12]
    assert not rows(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'gf_conditions'")


def test_the_upgrade_refuses_a_trigger_of_the_users_on_gf_conditions(tmp_path):
    db = tmp_path / "v11.db"
    make_version_11(db, [(1, "P", "IN", None, None), (2, "P", "OUT", None, None)])
    write(db, "CREATE TABLE audit (id INTEGER); CREATE TRIGGER my_audit AFTER INSERT ON gf_conditions BEGIN INSERT INTO audit VALUES (NEW.condition_id); END;")
    before = rows(db, "SELECT type, name, sql FROM sqlite_master ORDER BY name")
    p = gf("settings", db, check=False)
    assert p.returncode != 0 and "my_audit" in p.stderr and "gf_condition_rows" in p.stderr, p.stderr
    assert rows(db, "SELECT type, name, sql FROM sqlite_master ORDER BY name") == before
    # A foreign key and a column of the user's, named together.
    write(db, "DROP TRIGGER my_audit; ALTER TABLE gf_conditions ADD COLUMN note TEXT;"
              "CREATE TABLE mine (condition_id INTEGER REFERENCES gf_conditions (condition_id))")
    before = rows(db, "SELECT type, name, sql FROM sqlite_master ORDER BY name")
    p = gf("settings", db, check=False)
    assert p.returncode != 0 and "note" in p.stderr and "in mine" in p.stderr, p.stderr
    assert rows(db, "SELECT type, name, sql FROM sqlite_master ORDER BY name") == before


def test_judging_reads_implied_and_stored_conditions_in_id_order(tmp_path, imported):
    # A0000: a stored IN 7, then its implied pair moved to 8 and 9: every door notifies in id order.
    write(imported, "INSERT INTO gf_conditions (condition_id, area_id, timing, timezone) VALUES (7, 'A0000', 'IN', 'UTC');"
                    "UPDATE gf_areas SET default_condition_id = 8 WHERE area_id = 'A0000'")
    track = [("2026-01-01T00:00:00Z", -59.995, -169.995), ("2026-01-01T00:02:00Z", -50, -150)]
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(f"s,{ts},{lat},{lon},0\n" for ts, lat, lon in track))
    out = tmp_path / "n.csv"
    gf("judge", imported, "--fixes", fixes, "--out", out)
    lines = out.read_text().splitlines()
    assert [tuple(l.split(",")[3:5]) for l in lines[1:]] == [("7", "IN"), ("8", "IN"), ("9", "OUT")], lines
    got = sql(imported, "".join(f"SELECT gf_check('t', '{ts}', {lat}, {lon}, 0);\n" for ts, lat, lon in track)).stdout
    assert got.index('"condition_id":7') < got.index('"condition_id":8') < got.index('"condition_id":9'), got
