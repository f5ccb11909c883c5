"""An import that brings at least as many areas as the spatial index held
writes the index anew, packed, into SQLite's shadow tables; a smaller one
inserts its rows through the R*Tree module. Either way the index is one
SQLite itself accepts (rtreecheck), holds exactly the boxes the module would
store for the rows (rounded to floats its way), answers box queries as the
module's own tree does, and stays whole through the module's later inserts
and deletes."""
import math
import random
import sqlite3

from conftest import gf, run, sql, square, write_collection

NODE_CELLS = 51   # SQLite's rtree: (node size - 4) / 24 cells a node, at most 51


def features(prefix, count, seed):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        lon, lat = rng.uniform(-179.5, 179.5), rng.uniform(-60, 60)
        if i % 3 == 0:
            out.append({"type": "Feature", "properties": {"area_id": f"{prefix}{i}", "radius_m": rng.uniform(5, 5000)},
                        "geometry": {"type": "Point", "coordinates": [lon, lat]}})
        else:
            out.append(square(f"{prefix}{i}", lon, lat, size=rng.choice([1e-5, 0.003, 0.4])))
    # A circle across the antimeridian (two parts) and a polygon on it.
    out.append({"type": "Feature", "properties": {"area_id": f"{prefix}-am", "radius_m": 900},
                "geometry": {"type": "Point", "coordinates": [179.999, 10.0]}})
    out.append(square(f"{prefix}-edge", 179.99, -5.0))
    return out


def sqlite(db, script):
    return run("sqlite3", "-bail", db, input=".load mod_spatialite\n" + script).stdout


def check_index(db):
    """The index is whole, and holds the module's own boxes for every area."""
    assert sqlite(db, "SELECT rtreecheck('idx_gf_areas_geom');").split() == ["ok"]
    sqlite(db, "DROP TABLE IF EXISTS temp.reference; CREATE VIRTUAL TABLE temp.reference USING rtree(pkid, xmin, xmax, ymin, ymax);"
               "INSERT INTO temp.reference SELECT id, MbrMinX(geom), MbrMaxX(geom), MbrMinY(geom), MbrMaxY(geom) FROM gf_areas;"
               "CREATE TABLE reference_rows AS SELECT * FROM temp.reference;")
    con = sqlite3.connect(db)
    try:
        stored = con.execute("SELECT pkid, xmin, xmax, ymin, ymax FROM idx_gf_areas_geom ORDER BY pkid").fetchall()
        module = con.execute("SELECT * FROM reference_rows ORDER BY pkid").fetchall()
        con.execute("DROP TABLE reference_rows")
        con.commit()
        nodes = con.execute("SELECT count(*) FROM idx_gf_areas_geom_node").fetchone()[0]
    finally:
        con.close()
    assert stored == module and len(stored) > 0
    return len(stored), nodes


def box_query(db, box):
    con = sqlite3.connect(db)
    try:
        return sorted(r[0] for r in con.execute(
            "SELECT pkid FROM idx_gf_areas_geom WHERE xmax >= ? AND xmin <= ? AND ymax >= ? AND ymin <= ?", box))
    finally:
        con.close()


def test_a_first_import_writes_a_packed_index_of_the_modules_boxes(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", features("A", 3000, 1)), "--with-default-conditions")
    rows, nodes = check_index(db)
    leaves = math.ceil(rows / NODE_CELLS)
    assert nodes <= leaves + math.ceil(leaves / NODE_CELLS) + 1   # packed: every node full but a slice's last
    # The same box queries as a tree the module built row by row.
    sqlite(db, "CREATE TABLE boxes AS SELECT id, MbrMinX(geom) x0, MbrMaxX(geom) x1, MbrMinY(geom) y0, MbrMaxY(geom) y1 FROM gf_areas;")
    module = tmp_path / "module.db"
    con = sqlite3.connect(module)
    con.execute("CREATE VIRTUAL TABLE idx_gf_areas_geom USING rtree(pkid, xmin, xmax, ymin, ymax)")
    con.execute("ATTACH ? AS c", (str(db),))
    con.execute("INSERT INTO idx_gf_areas_geom SELECT * FROM c.boxes")
    con.commit()
    con.close()
    rng = random.Random(7)
    for _ in range(200):
        lon, lat, w = rng.uniform(-180, 180), rng.uniform(-65, 65), rng.choice([0, 0.01, 1, 20])
        box = (lon - w, lon + w, lat - w, lat + w)
        assert box_query(db, box) == box_query(module, box)
    assert box_query(db, (179.9995, 180, 9.99, 10.01)) != []


def test_smaller_imports_go_through_the_module_and_larger_ones_rebuild(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", features("A", 600, 2)))
    _, packed = check_index(db)
    gf("import", db, write_collection(tmp_path / "b.geojson", features("B", 100, 3)))   # fewer: row by row
    rows, nodes = check_index(db)
    assert rows == 2 * 2 + 700 and nodes > packed
    gf("areas", "remove", db, *[f"A{i}" for i in range(0, 600, 2)])                      # the module's deletes
    rows, _ = check_index(db)
    assert rows == 2 * 2 + 700 - 300
    gf("import", db, write_collection(tmp_path / "c.geojson", features("C", 2000, 4)))  # more: rebuilt whole
    rows, nodes = check_index(db)
    assert rows == 3 * 2 + 700 - 300 + 2000
    assert nodes <= math.ceil(rows / NODE_CELLS) + 2
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM gf_areas").fetchone()[0] == rows
    con.close()


def test_a_replacing_import_and_an_empty_one_leave_a_whole_index(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", features("A", 500, 5)))
    gf("import", db, write_collection(tmp_path / "b.geojson", features("B", 80, 6)), "--replace")
    rows, _ = check_index(db)
    assert rows == 82
    gf("import", db, write_collection(tmp_path / "empty.geojson", []), "--replace")
    assert sqlite(db, "SELECT rtreecheck('idx_gf_areas_geom'); SELECT count(*) FROM idx_gf_areas_geom;").split() == ["ok", "0"]
    gf("import", db, write_collection(tmp_path / "c.geojson", features("C", 40, 8)))
    assert check_index(db)[0] == 42


def test_an_index_that_only_looks_plain_goes_through_the_module(tmp_path):
    """A red team's finding: a stored text that merely ended in SpatiaLite's
    `rtree(pkid, xmin, xmax, ymin, ymax)` (another module, or more columns,
    behind a comment) was taken as plain, and floats were written into an
    integer tree. Only SpatiaLite's whole text is; anything else goes
    through the module, which stores what it is given its own way."""
    for module in ["rtree_i32(pkid, xmin, xmax, ymin, ymax -- using rtree(pkid, xmin, xmax, ymin, ymax\n)",
                   "rtree(pkid, xmin, xmax, ymin, ymax, zmin, zmax -- using rtree(pkid,xmin,xmax,ymin,ymax\n)"]:
        db = tmp_path / f"c{len(module)}.db"
        gf("init", db)
        gf("import", db, write_collection(tmp_path / "a.geojson", features("A", 100, 9)))
        sqlite(db, "DROP TABLE idx_gf_areas_geom;"
                   f"CREATE VIRTUAL TABLE idx_gf_areas_geom USING {module};"
                   "INSERT INTO idx_gf_areas_geom (pkid, xmin, xmax, ymin, ymax) "
                   "SELECT id, MbrMinX(geom), MbrMaxX(geom), MbrMinY(geom), MbrMaxY(geom) FROM gf_areas;")
        gf("import", db, write_collection(tmp_path / "b.geojson", features("B", 300, 10)))
        assert sqlite(db, "SELECT rtreecheck('idx_gf_areas_geom');").split() == ["ok"]
        # The same rows as the same module's own tree of every area gives.
        query = "SELECT group_concat(pkid) FROM (SELECT pkid FROM {} WHERE xmax >= -50 AND xmin <= 50 AND ymax >= -50 AND ymin <= 50 ORDER BY pkid);"
        stored, module_tree = sqlite(db, query.format("idx_gf_areas_geom")), sqlite(
            db, f"CREATE VIRTUAL TABLE temp.reference USING {module};"
                "INSERT INTO temp.reference (pkid, xmin, xmax, ymin, ymax) "
                "SELECT id, MbrMinX(geom), MbrMaxX(geom), MbrMinY(geom), MbrMaxY(geom) FROM gf_areas;" + query.format("temp.reference"))
        assert stored == module_tree and len(stored.split(",")) > 50
        # gf_nearest walks a plain tree's nodes itself; this one it searches through the module, with the same answer.
        nearest = "SELECT group_concat(area_id) FROM (SELECT area_id FROM gf_nearest WHERE lat = 10.5 AND lon = 20.5 AND n = 5);"
        if module.startswith("rtree_i32"):
            plain = tmp_path / "plain.db"
            gf("init", plain)
            for f in ["a.geojson", "b.geojson"]:
                gf("import", plain, tmp_path / f)
            assert sql(db, nearest).stdout == sql(plain, nearest).stdout != "\n"


def test_a_root_the_module_refuses_fails_the_import_and_a_large_one_is_packed_as_the_module_would(tmp_path):
    """A red team's findings: an undersize root (which the module refuses)
    was written over instead of failing the import, and a root long enough
    for more than 65,535 cells overflowed a node's 2-byte count."""
    db = tmp_path / "small.db"
    gf("init", db)
    sqlite(db, "UPDATE idx_gf_areas_geom_node SET data = zeroblob(447) WHERE nodeno = 1;")
    p = gf("import", db, write_collection(tmp_path / "a.geojson", features("A", 300, 11)), check=False)
    assert p.returncode == 2 and "undersize RTree blobs" in p.stderr, p.stderr
    assert sqlite(db, "SELECT count(*) FROM gf_areas;").split() == ["0"]
    db = tmp_path / "large.db"
    gf("init", db)
    sqlite(db, "UPDATE idx_gf_areas_geom_node SET data = zeroblob(1600004) WHERE nodeno = 1;")
    gf("import", db, write_collection(tmp_path / "b.geojson", features("B", 300, 12)))
    rows, nodes = check_index(db)
    assert rows == 302 and nodes == math.ceil(rows / NODE_CELLS) + 1
