"""gf_check, gf_nearest and a state database's judging read the catalog in
the schema that holds it (`CatalogTables`). SQLite resolves a table named
without a database in `temp` first, so a TEMP table of the caller's named
like a catalog table (a scratch copy of gf_conditions, say) would otherwise
be read as the catalog's: its conditions would be the ones that notify, its
areas the ones judged. Each shadow here would change the answers if read;
the answers must be those of a connection without it, with the state
in the catalog and in a state database beside it."""
import json
import sqlite3

import pytest

from conftest import gf
from test_check_kept_keys import connect, small_catalog, start

SHADOWS = {
    # Only DWELL conditions: read, the calls would notify no IN and no OUT.
    "gf_conditions": ["CREATE TEMP TABLE gf_conditions AS SELECT * FROM {cat}.gf_conditions WHERE 0",
                      "INSERT INTO temp.gf_conditions (condition_id, area_id, timing, dwell_s) "
                      "SELECT 900 + id, area_id, 'DWELL', 3600 FROM {cat}.gf_areas"],
    # Circles of 1 m: read, no fix would be inside one.
    "gf_areas": ["CREATE TEMP TABLE gf_areas AS SELECT * FROM {cat}.gf_areas", "UPDATE temp.gf_areas SET radius_m = 1"],
    # A confidence that is no number (read, every call would fail on it), and a region margin of 5 km.
    "gf_settings": ["CREATE TEMP TABLE gf_settings AS SELECT * FROM {cat}.gf_settings",
                    "UPDATE temp.gf_settings SET value = 'none' WHERE key = 'default_confidence'",
                    "INSERT INTO temp.gf_settings (key, value) VALUES ('region_margin_m', '5000')"],
    # A schema version from the future: read, the reading functions would refuse the catalog.
    "gf_meta": ["CREATE TEMP TABLE gf_meta AS SELECT * FROM {cat}.gf_meta",
                "UPDATE temp.gf_meta SET value = '99' WHERE key = 'schema_version'"],
    # An empty index: read, no fix would meet a candidate.
    "idx_gf_areas_geom": ["CREATE VIRTUAL TABLE temp.idx_gf_areas_geom USING rtree(pkid, xmin, xmax, ymin, ymax)"],
}

FIXES = [(35.0, 139.0), (35.0, 139.01), (36.0, 139.0), (35.0, 139.02), (35.0, 139.03), (36.0, 139.03)]


def answers(db, catalog, shadow):
    c = connect(db, catalog)
    for sql in SHADOWS.get(shadow, []):
        c.execute(sql.format(cat="catalog" if catalog else "main"))
    out = [c.execute("SELECT gf_check('u', ?, ?, ?, 5)", (f"2026-11-20T00:00:0{k}Z", lat, lon)).fetchone()[0]
           for k, (lat, lon) in enumerate(FIXES)]
    out.append(c.execute("SELECT rank, area_id, round(distance_m, 3) FROM gf_nearest(35.0, 139.015, 3)").fetchall())
    out.append(c.execute("SELECT gf_regions(35.0, 139.0005, 1), gf_positioning(3, 50)").fetchone())
    c.close()
    return out


@pytest.mark.parametrize("apart", [False, True], ids=["state-in-catalog", "state-database"])
@pytest.mark.parametrize("shadow", list(SHADOWS))
def test_a_temp_table_named_like_a_catalog_table_is_not_read_as_the_catalog(tmp_path, shadow, apart):
    catalog = small_catalog(tmp_path)
    want = answers(*start(tmp_path / "plain.db", catalog, apart), None)
    assert sum(len(json.loads(r)) for r in want[:-2]) >= 6 and len(want[-2]) == 3
    assert answers(*start(tmp_path / "shadowed.db", catalog, apart), shadow) == want


def nearest_and_check(c, second):
    return (c.execute("SELECT group_concat(area_id) FROM gf_nearest(35.0, 139.005, 2)").fetchone()[0],
            [n["area_id"] for n in json.loads(c.execute(
                "SELECT gf_check('u', ?, 35.0, 139.0, 5)", (f"2026-11-20T00:00:{second:02d}Z",)).fetchone()[0])])


def catalog_of(tmp_path, prefix, step):
    """Four 200 m circles A00… (or B00…) along 35°N from 139°E, `step` degrees apart."""
    features = [{"type": "Feature", "properties": {"area_id": f"{prefix}{i:02d}", "radius_m": 200},
                 "geometry": {"type": "Point", "coordinates": [139.0 + step * i, 35.0]}} for i in range(4)]
    (tmp_path / f"{prefix}.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    db = tmp_path / f"{prefix}.db"
    gf("init", db)
    gf("import", db, tmp_path / f"{prefix}.geojson", "--with-default-conditions")
    return db


def test_a_catalog_attached_again_under_another_name_is_found_there(tmp_path):
    """A session that read an attached catalog, which is then detached and
    attached under another name, or behind a second catalog: its calls answer
    as a fresh connection's do, not from statements that name the old schema
    (gf_nearest said `no such table: catalog.idx_gf_areas_geom_node`, and
    gf_check `no geofence catalog` on every later call)."""
    a, b = catalog_of(tmp_path, "A", 0.01), catalog_of(tmp_path, "B", -0.01)
    state, _ = start(tmp_path / "state.db", a, True)
    c = connect(state, a)
    assert nearest_and_check(c, 1) == ("A00,A01", ["A00"])
    c.execute("DETACH catalog")
    c.execute(f"ATTACH 'file:{a}?mode=ro' AS cat2")
    assert nearest_and_check(c, 2) == ("A00,A01", [])
    c.execute("DETACH cat2")
    c.execute(f"ATTACH 'file:{b}?mode=ro' AS cat2")
    c.execute(f"ATTACH 'file:{a}?mode=ro' AS catalog")
    # SQLite's order: the first attached database that holds a catalog is the one judged.
    assert c.execute("SELECT group_concat(area_id) FROM gf_nearest(35.0, 139.005, 2)").fetchone()[0] == "B00,B01"
    c.close()


@pytest.mark.parametrize("apart", [False, True], ids=["state-in-catalog", "state-database"])
def test_the_catalog_stamp_is_not_read_from_a_temp_gf_meta(tmp_path, apart):
    """The stamp each call compares (what tells it the catalog changed) is
    the catalog's: a TEMP view named gf_meta, whose every read calls a
    function of the user's, is never read (it was, at every call: a view
    giving a fixed stamp could hide a change of the catalog)."""
    catalog = small_catalog(tmp_path)
    c = connect(*start(tmp_path / "x.db", catalog, apart))
    reads = []
    c.create_function("counted", 0, lambda: reads.append(1) or 1)
    cat = "catalog" if apart else "main"
    c.execute(f"CREATE TEMP VIEW gf_meta (key, value) AS SELECT key, value FROM {cat}.gf_meta WHERE counted()")
    results = [c.execute("SELECT gf_check('u', ?, 35.0, ?, 5)", (f"2026-11-20T00:00:0{k}Z", 139.0 + 0.01 * k)).fetchone()[0]
               for k in range(4)]
    assert sum(len(json.loads(r)) for r in results) >= 4
    assert reads == []
    c.close()


def test_another_catalog_put_first_by_detach_and_attach_is_the_one_judged(tmp_path):
    """A state database's session read catalog A; A is detached, B attached,
    A attached again under its old name: B is now the first attached catalog,
    the one a fresh connection judges with. A's own versions and stamp are as
    they were, so only the list of attached databases shows it (the session
    went on judging with A once its stamp was read in A's schema)."""
    a, b = catalog_of(tmp_path, "A", 0.01), catalog_of(tmp_path, "B", -0.01)
    state, _ = start(tmp_path / "state.db", a, True)
    c = connect(state, a)
    first = json.loads(c.execute("SELECT gf_check('u', '2026-11-20T00:00:01Z', 35.0, 139.0, 5)").fetchone()[0])
    assert [n["area_id"] for n in first] == ["A00"]
    c.execute("DETACH catalog")
    c.execute(f"ATTACH 'file:{b}?mode=ro' AS other")
    c.execute(f"ATTACH 'file:{a}?mode=ro' AS catalog")
    later = json.loads(c.execute("SELECT gf_check('v', '2026-11-20T00:00:02Z', 35.0, 139.0, 5)").fetchone()[0])
    assert [n["area_id"] for n in later] == ["B00"]
    c.close()


def test_a_catalog_attached_again_read_write_is_refused_as_on_a_fresh_connection(tmp_path):
    """The same file under the same name, attached again without mode=ro:
    the attached databases' names and files are as they were, so only their
    read-only flag shows it (the session went on judging with it)."""
    a = catalog_of(tmp_path, "A", 0.01)
    state, _ = start(tmp_path / "state.db", a, True)
    c = connect(state, a)
    assert json.loads(c.execute("SELECT gf_check('u', '2026-11-20T00:00:01Z', 35.0, 139.0, 5)").fetchone()[0])
    c.execute("DETACH catalog")
    c.execute(f"ATTACH '{a}' AS catalog")
    with pytest.raises(sqlite3.OperationalError, match="so that it can be written: attach it read-only"):
        c.execute("SELECT gf_check('v', '2026-11-20T00:00:02Z', 35.0, 139.0, 5)")
    c.close()
