"""The GDAL door refuses what it cannot read whole and exactly.

A source GDAL fails on part way (a FlatGeobuf cut short, a VRT whose source
is missing) fails the import, naming file and layer, even where GDAL's reader
just ends early; so does a layer that gives fewer features than it says it
has, a Shapefile whose .shx and .dbf disagree, a layer with two columns of
one name or a column name that is not UTF-8, a geometry GDAL cannot decode
(with GDAL's words, not "no geometry"), and a geometry with arcs (with the
command that linearises it, at a step the user chooses). Times just short of
a minute stay in their minute. Errors about a feature name its id, and layer
names are quoted so that a list of them is never ambiguous. An export to a
full disk says so."""
import json
import math
import shutil
import sqlite3
import struct
import subprocess
from datetime import datetime

import pytest
import shapely

from conftest import CLI, gf, run, snapshot, sql, square, write_collection


def fresh(tmp_path, name="db"):
    db = tmp_path / name
    gf("init", db)
    return db


def gpkg(tmp_path, name, features, **kw):
    """A GeoPackage of `features`, without a spatial index, so this test may rewrite its rows with sqlite3."""
    source = write_collection(tmp_path / (name + ".geojson"), features)
    out = tmp_path / (name + ".gpkg")
    run("ogr2ogr", "-f", "GPKG", out, source, "-nln", kw.get("layer", "areas"), "-lco", "SPATIAL_INDEX=NO")
    return out


def three(tmp_path, name="three"):
    return [square(f"{name}{i}", 139.0 + i * 0.1, 35.0) for i in range(3)]


def test_a_flatgeobuf_cut_short_or_a_vrt_without_its_source_fails_and_keeps_the_catalog(tmp_path):
    db = fresh(tmp_path)
    gf("import", db, write_collection(tmp_path / "old.geojson", [square("OLD", 139.0, 35.0)]))
    before = snapshot(db)
    fgb = tmp_path / "whole.fgb"
    run("ogr2ogr", "-f", "FlatGeobuf", fgb, write_collection(tmp_path / "three.geojson", three(tmp_path)), "-nln", "three")
    data = fgb.read_bytes()
    header = struct.unpack("<I", data[8:12])[0]
    cut = tmp_path / "cut.fgb"
    cut.write_bytes(data[:12 + header + 20])
    p = gf("import", db, cut, "--replace", check=False)
    assert p.returncode == 1, p.stdout
    assert f"{cut}: " in p.stderr and "layer 'three'" in p.stderr and "of the 3 features" in p.stderr, p.stderr
    assert snapshot(db) == before

    vrt = tmp_path / "lost.vrt"
    vrt.write_text(f"""<OGRVRTDataSource><OGRVRTLayer name="areas">
  <SrcDataSource>{tmp_path / "missing.csv"}</SrcDataSource>
  <GeometryField encoding="WKT" field="wkt"/><LayerSRS>EPSG:4326</LayerSRS>
</OGRVRTLayer></OGRVRTDataSource>""")
    p = gf("import", db, vrt, "--replace", "--source-crs", "EPSG:4326", check=False)
    assert p.returncode == 1, p.stdout
    assert f"{vrt}: GDAL failed opening layer 'areas': " in p.stderr and "missing.csv" in p.stderr, p.stderr
    assert snapshot(db) == before


def shapefile(tmp_path, name, features):
    folder = tmp_path / name
    folder.mkdir()
    run("ogr2ogr", "-f", "ESRI Shapefile", folder / "s.shp", write_collection(tmp_path / (name + ".geojson"), features))
    return folder


def test_a_shapefile_whose_shx_and_dbf_disagree_is_refused_and_deleted_records_are_not_missing(tmp_path):
    db = fresh(tmp_path)
    before = snapshot(db)
    a = shapefile(tmp_path, "a", three(tmp_path, "A"))
    b = shapefile(tmp_path, "b", three(tmp_path, "B")[:2])
    fewer_records, fewer_shapes = tmp_path / "fewer_records", tmp_path / "fewer_shapes"
    shutil.copytree(a, fewer_records)
    shutil.copy(b / "s.dbf", fewer_records / "s.dbf")
    shutil.copytree(b, fewer_shapes)
    shutil.copy(a / "s.dbf", fewer_shapes / "s.dbf")
    for folder, shapes, records in ((fewer_records, 3, 2), (fewer_shapes, 2, 3)):
        p = gf("import", db, folder, check=False)
        assert p.returncode == 1, (folder, p.stdout)
        assert f"layer 's': its .shx lists {shapes} shapes but its .dbf holds {records} records" in p.stderr, p.stderr
        assert snapshot(db) == before
    # A record marked deleted is no feature, and no shortfall.
    dbf = bytearray((a / "s.dbf").read_bytes())
    header, record = struct.unpack("<HH", dbf[8:12])
    dbf[header + record] = ord("*")
    (a / "s.dbf").write_bytes(dbf)
    gf("import", db, a)
    assert sorted(a["area_id"] for a in json.loads(gf("areas", "list", db, "--json").stdout)) == ["A0", "A2"]


def test_duplicate_and_non_utf8_column_names_are_refused_and_layer_lists_are_unambiguous(tmp_path):
    db = fresh(tmp_path)
    before = snapshot(db)
    # Two columns named area_id in a .dbf: the first no longer wins.
    folder = shapefile(tmp_path, "dup", [{**square("A", 139.0, 35.0), "properties": {"area_id": "A", "other": "B"}}])
    dbf = bytearray((folder / "s.dbf").read_bytes())
    assert dbf[64:69] == b"other"
    dbf[64:75] = b"area_id".ljust(11, b"\0")
    (folder / "s.dbf").write_bytes(dbf)
    p = gf("import", db, folder, check=False)
    assert p.returncode == 1 and "columns 1 and 2 are both named 'area_id'" in p.stderr, p.stderr
    assert snapshot(db) == before

    # A column name that is not UTF-8 (a GeoPackage's schema rewritten): named by its bytes.
    path = gpkg(tmp_path, "badname", [{**square("A", 139.0, 35.0), "properties": {"area_id": "A", "nom": "x"}}])
    with sqlite3.connect(path) as c:
        schema = c.execute("SELECT CAST(sql AS BLOB) FROM sqlite_master WHERE name = 'areas'").fetchone()[0]
        c.execute("PRAGMA writable_schema = ON")
        c.execute("UPDATE sqlite_master SET sql = CAST(? AS TEXT) WHERE name = 'areas'", (schema.replace(b'"nom"', b'"n\xe9m"'),))
    p = gf("import", db, path, check=False)
    assert p.returncode == 1 and "the name 'n\\xE9m'" in p.stderr and "not UTF-8" in p.stderr, p.stderr
    assert snapshot(db) == before

    # Layer names holding quotes and commas, listed: each ends at its own closing quote.
    two = tmp_path / "two.gpkg"
    shutil.copy(gpkg(tmp_path, "one", [square("A", 139.0, 35.0)]), two)
    run("ogr2ogr", "-update", "-f", "GPKG", two, write_collection(tmp_path / "c.geojson", [square("C", 139.0, 35.0)]),
        "-nln", "c", "-lco", "SPATIAL_INDEX=NO")
    with sqlite3.connect(two) as c:
        c.execute("""ALTER TABLE areas RENAME TO "a', 'b" """)
        for table in ("gpkg_contents", "gpkg_geometry_columns", "gpkg_ogr_contents"):
            c.execute(f"UPDATE {table} SET table_name = ? WHERE table_name = 'areas'", ("a', 'b",))
        c.execute("UPDATE gpkg_contents SET identifier = table_name")
    p = gf("import", db, two, check=False)
    assert p.returncode == 1 and "it has 2 layers ('a\\', \\'b', 'c')" in p.stderr, p.stderr


def test_a_geometry_gdal_cannot_decode_is_named_with_gdals_words_and_the_features_id(tmp_path):
    path = gpkg(tmp_path, "broken", [square("A", 139.0, 35.0), square("B", 139.1, 35.0)])
    with sqlite3.connect(path) as c:
        blob = c.execute("SELECT geom FROM areas WHERE fid = 2").fetchone()[0]
        c.execute("UPDATE areas SET geom = ? WHERE fid = 2", (blob[:40],))
    db = fresh(tmp_path)
    p = gf("import", db, path, check=False)
    assert p.returncode == 1, p.stdout
    assert f"{path}, layer 'areas', fid 2, id 'B', geometry: GDAL cannot read it: " in p.stderr, p.stderr
    assert "no geometry" not in p.stderr


def circle_layer(tmp_path):
    """A GeoPackage holding a circle of radius 1° around (139, 35) as a CurvePolygon of one CircularString."""
    csv = tmp_path / "curve.csv"
    csv.write_text('area_id,wkt\nC,"CURVEPOLYGON(CIRCULARSTRING(138 35,140 35,138 35))"\n')
    out = tmp_path / "curve.gpkg"
    run("ogr2ogr", "-f", "GPKG", out, csv, "-oo", "GEOM_POSSIBLE_NAMES=wkt", "-oo", "KEEP_GEOM_COLUMNS=NO",
        "-a_srs", "EPSG:4326", "-nlt", "CURVEPOLYGON", "-nln", "curve")
    return out


def test_arcs_are_refused_with_the_command_that_linearises_them_within_a_centimetre(tmp_path):
    path = circle_layer(tmp_path)
    db = fresh(tmp_path)
    p = gf("import", db, path, check=False)
    assert p.returncode == 1, p.stdout                    # before: linearised silently, 4° steps, 68 m inside the arc
    assert f"{path}, layer 'curve', fid 1, id 'C', geometry: a CURVEPOLYGON with arcs" in p.stderr, p.stderr
    command = p.stderr[p.stderr.index("ogr2ogr "):p.stderr.index(" (steps")].split()
    assert command[-2:] == ["linear.gpkg", str(path)]
    run(*command, cwd=tmp_path)
    gf("import", db, tmp_path / "linear.gpkg")
    wkb = sql(db, "SELECT hex(AsBinary(geom)) FROM gf_areas WHERE area_id = 'C';\n").stdout.strip()
    ring = shapely.get_coordinates(shapely.from_wkb(bytes.fromhex(wkb)))
    # Every vertex on the circle, every chord's middle within 1 cm of it (1 cm is 9e-8° of latitude).
    distances = [math.hypot(x - 139, y - 35) for x, y in ring]
    assert max(abs(d - 1) for d in distances) < 1e-9
    middles = [math.hypot((a[0] + b[0]) / 2 - 139, (a[1] + b[1]) / 2 - 35) for a, b in zip(ring, ring[1:])]
    assert 1 - min(middles) < 0.01 / 111_320


def test_a_time_just_short_of_a_minute_stays_in_its_minute(tmp_path):
    features = [{**square(k, 139.0, 35.0), "properties": {"area_id": k, "valid_from": "2024-01-02T03:04:05Z"}} for k in "AB"]
    path = gpkg(tmp_path, "times", features)
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT type FROM pragma_table_info('areas') WHERE name = 'valid_from'").fetchone()[0] == "DATETIME"
        c.execute("UPDATE areas SET valid_from = '2024-01-02T03:04:59.9996Z' WHERE area_id = 'A'")
        c.execute("UPDATE areas SET valid_from = '2024-12-31T23:59:59.9999Z' WHERE area_id = 'B'")
    db = fresh(tmp_path)
    p = gf("import", db, path, check=False)
    assert p.returncode == 0, p.stderr                    # before: A refused as second 60, B taken as a leap second
    got = {f["properties"]["area_id"]: datetime.fromisoformat(f["properties"]["valid_from"])
           for f in json.loads(gf("export", db).stdout)["features"]}
    assert got == {"A": datetime.fromisoformat("2024-01-02T03:04:59.999Z"), "B": datetime.fromisoformat("2024-12-31T23:59:59.999Z")}, got


def test_a_text_error_in_a_shapefile_names_the_feature_id(tmp_path):
    source = write_collection(tmp_path / "in.geojson", [square("A", 139.0, 35.0), square("B", 139.1, 35.0, name="Zürich")])
    shp = tmp_path / "latin.shp"
    run("ogr2ogr", "-f", "ESRI Shapefile", shp, source, "-lco", "ENCODING=CP1252")
    (tmp_path / "latin.cpg").unlink()
    p = gf("import", fresh(tmp_path), shp, "--group", "G", check=False)
    assert p.returncode == 1 and "layer 'latin', fid 1, id 'G#B', properties.name: its text" in p.stderr, p.stderr


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux) to mount a small tmpfs")
def test_an_export_to_a_full_disk_says_so_and_keeps_the_old_file(tmp_path):
    db = fresh(tmp_path)
    gf("import", db, write_collection(tmp_path / "in.geojson", three(tmp_path)))
    small = tmp_path / "small"
    small.mkdir()
    script = (f'mount -t tmpfs -o size=64k tmpfs "{small}" && echo old > "{small}/x.gpkg" && '
              f'"{CLI}" export "{db}" --out "{small}/x.gpkg"; echo "rc=$?"; cat "{small}/x.gpkg"')
    p = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script], capture_output=True, text=True)
    if "rc=" not in p.stdout:
        pytest.skip(f"needs a user namespace (unshare --user --mount) to mount a small tmpfs: {p.stderr.strip()}")
    assert "rc=1" in p.stdout and p.stdout.endswith("old\n"), p.stdout
    assert "no space left on device" in p.stderr and "unchanged" in p.stderr, p.stderr
    assert "ERROR 1" not in p.stderr and len(p.stderr) < 400, p.stderr
