"""The GDAL door is lossless and takes nothing from a file as an argument.

Areas imported from a GeoPackage, Shapefile or FlatGeobuf hold exactly the
doubles of the file, bit for bit: checked against the stored SpatiaLite
geometry (its WKB, read back by shapely, no text in between) and against the
file's own bytes (a GeoPackage's WKB, read here without GDAL). Natural Earth
converted by the real ogr2ogr imports without --make-valid, and an exported
GeoPackage imports back exactly. Layer names are names, never options, and
may hold spaces and parentheses. Errors say what the user can do."""
import json
import math
import sqlite3
import struct
from pathlib import Path

import pytest
import shapely
from shapely.geometry import MultiPolygon, Polygon, shape

from conftest import CLI, gf, run, snapshot, sql, square, write_collection
from reference import natural_earth_countries

SLIP = 1e-9   # docs/inputs.md: a coordinate this close past ±180/±90 is that bound


def fresh(tmp_path, name):
    db = tmp_path / name
    gf("init", db)
    return db


def stored(db):
    """area_id -> the stored geometry, from the catalog's SpatiaLite BLOB as WKB
    (polygons), or (center_lon, center_lat) as the REAL columns hold them (circles)."""
    out = {}
    rows = sql(db, "SELECT area_id, kind, hex(AsBinary(geom)), quote(center_lon), quote(center_lat) FROM gf_areas;\n").stdout
    for line in rows.splitlines():
        area_id, kind, wkb, lon, lat = line.split("|")
        out[area_id] = shapely.from_wkb(bytes.fromhex(wkb)) if kind == "polygon" else (float(lon), float(lat))
    return out


def gpkg_geometries(path, table, key):
    """key column -> geometry, from a GeoPackage's own bytes: its header, then ISO WKB."""
    out = {}
    with sqlite3.connect(path) as c:
        column = c.execute("SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?", (table,)).fetchone()[0]
        for k, blob in c.execute(f'SELECT "{key}", "{column}" FROM "{table}"'):
            flags = blob[3]
            envelope = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(flags >> 1) & 7]
            out[k] = shapely.from_wkb(bytes(blob[8 + envelope:]))
    return out


def snapped(geom):
    """The geometry with the documented rounding-slip rule applied, and nothing else."""
    def one(v, bound):
        return math.copysign(bound, v) if bound < abs(v) <= bound + SLIP else v
    return shapely.transform(geom, lambda xy: [[one(x, 180), one(y, 90)] for x, y in xy])


def same_bits(a, b):
    """Equal coordinates, bit for bit, ring orientation and start vertex aside
    (normalize reorders vertices, it computes nothing)."""
    def multi(g):
        return MultiPolygon([g]) if isinstance(g, Polygon) else g
    return shapely.normalize(multi(a)).wkb == shapely.normalize(multi(b)).wkb


def rename_gpkg_layer(path, old, new):
    """Renames a GeoPackage table (made without a spatial index) to a name
    GDAL's own tools refuse to write, as a hostile file could hold."""
    with sqlite3.connect(path) as c:
        c.execute(f'ALTER TABLE "{old}" RENAME TO "{new}"')
        for table in ("gpkg_contents", "gpkg_geometry_columns", "gpkg_ogr_contents"):
            c.execute(f"UPDATE {table} SET table_name = ? WHERE table_name = ?", (new, old))
        c.execute("UPDATE gpkg_contents SET identifier = ? WHERE identifier = ?", (new, old))


def test_natural_earth_imports_exactly_from_geopackage_shapefile_and_flatgeobuf(tmp_path):
    natural_earth_countries(tmp_path)
    shp = tmp_path / "naturalearth_lowres.shp"
    query = "SELECT name AS area_id, continent FROM naturalearth_lowres"
    gpkg = tmp_path / "countries.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, shp, "-sql", query, "-nln", "countries")
    source = gpkg_geometries(gpkg, "countries", "area_id")
    assert len(source) > 170
    assert any(abs(x) > 180 for g in source.values() for x in shapely.get_coordinates(g)[:, 0])  # the slips are there
    made = {"GPKG": gpkg}
    run("ogr2ogr", "-f", "ESRI Shapefile", tmp_path / "countries_shp", shp, "-sql", query)
    made["Shapefile"] = tmp_path / "countries_shp"
    run("ogr2ogr", "-f", "FlatGeobuf", tmp_path / "countries.fgb", shp, "-sql", query, "-nlt", "PROMOTE_TO_MULTI")
    made["FlatGeobuf"] = tmp_path / "countries.fgb"
    for driver, path in made.items():
        db = fresh(tmp_path, f"{driver}.db")
        p = gf("import", db, path, check=False)              # no --make-valid: Sudan is valid as the file has it
        assert p.returncode == 0, (driver, p.stderr)
        got = stored(db)
        assert sorted(got) == sorted(source), driver
        wrong = [k for k in source if not same_bits(got[k], snapped(source[k]))]
        assert wrong == [], (driver, wrong[:5])

    # The GeoJSON door: the same doubles written as shortest round-trip text
    # (Python's repr) give the same catalog, slips and all.
    features = [{"type": "Feature", "properties": {"area_id": k},
                 "geometry": shapely.geometry.mapping(g)} for k, g in source.items()]
    geojson = write_collection(tmp_path / "exact.geojson", features)
    db = fresh(tmp_path, "geojson.db")
    gf("import", db, geojson)
    assert all(same_bits(g, stored(tmp_path / "GPKG.db")[k]) for k, g in stored(db).items())

    # export --format gpkg, then import: the same doubles again.
    out = tmp_path / "exported.gpkg"
    gf("export", tmp_path / "GPKG.db", "--format", "gpkg", "--out", out)
    back = fresh(tmp_path, "back.db")
    gf("import", back, out)
    first = stored(tmp_path / "GPKG.db")
    assert all(same_bits(g, first[k]) for k, g in stored(back).items()) and len(stored(back)) == len(first)


SEVENTEEN = [0.1 + 0.2, 1 / 3, 139.76707000000002, -1e-17, 35.68123450000001, 2 / 3 + 1e-15]


@pytest.mark.parametrize("driver,suffix", [("GPKG", "gpkg"), ("ESRI Shapefile", "shp"), ("FlatGeobuf", "fgb")])
def test_coordinates_that_need_seventeen_digits_arrive_exactly(tmp_path, driver, suffix):
    a, b, lon, tiny, lat, c = SEVENTEEN
    ring = [[tiny, tiny], [a, tiny], [a, b], [tiny, c], [tiny, tiny]]
    far = [[lon, lat], [lon + a, lat], [lon + a, lat + b], [lon, lat + b], [lon, lat]]
    features = [{"type": "Feature", "properties": {"area_id": "near", "ratio": a},
                 "geometry": {"type": "Polygon", "coordinates": [ring]}},
                {"type": "Feature", "properties": {"area_id": "far", "ratio": b},
                 "geometry": {"type": "Polygon", "coordinates": [far]}}]
    geojson = write_collection(tmp_path / "exact.geojson", features)
    path = tmp_path / f"exact.{suffix}"
    run("ogr2ogr", "-f", driver, path, geojson)
    db = fresh(tmp_path, "db")
    gf("import", db, path)
    got = stored(db)
    for f in features:
        assert same_bits(got[f["properties"]["area_id"]], shape(f["geometry"])), driver
    props = {f["properties"]["area_id"]: f["properties"] for f in json.loads(gf("export", db).stdout)["features"]}
    if driver != "ESRI Shapefile":        # a .dbf holds reals as text of 15 decimals, the file's own rounding
        assert props["near"]["ratio"] == a and props["far"]["ratio"] == b      # reals exact too

    # A circle's centre, in a GeoPackage.
    point = write_collection(tmp_path / "circle.geojson", [{"type": "Feature", "properties": {"area_id": "c", "radius_m": 300},
                                                           "geometry": {"type": "Point", "coordinates": [lon, lat]}}])
    run("ogr2ogr", "-f", "GPKG", tmp_path / "circle.gpkg", point)
    db2 = fresh(tmp_path, "circle.db")
    gf("import", db2, tmp_path / "circle.gpkg")
    assert stored(db2)["c"] == (lon, lat)


def test_a_slip_past_the_bounds_is_the_bound_at_every_door_and_more_is_refused(tmp_path):
    slip = 180.00000000000006
    ring = [[170, -10], [slip, -10], [slip, 10], [170, 10], [170, -10]]
    geojson = write_collection(tmp_path / "slip.geojson", [{"type": "Feature", "properties": {"area_id": "s"},
                                                            "geometry": {"type": "Polygon", "coordinates": [ring]}}])
    gpkg = tmp_path / "slip.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, geojson)
    assert any(x == slip for x in shapely.get_coordinates(gpkg_geometries(gpkg, "slip", "area_id")["s"])[:, 0])
    want = Polygon([(170, -10), (180, -10), (180, 10), (170, 10)])
    for path in (geojson, gpkg):
        db = fresh(tmp_path, path.suffix[1:] + ".db")
        gf("import", db, path)
        assert same_bits(stored(db)["s"], want), path
    far = [[170, -10], [180.001, -10], [180.001, 10], [170, 10], [170, -10]]
    bad = write_collection(tmp_path / "far.geojson", [{"type": "Feature", "properties": {"area_id": "f"},
                                                       "geometry": {"type": "Polygon", "coordinates": [far]}}])
    run("ogr2ogr", "-f", "GPKG", tmp_path / "far.gpkg", bad)
    for path in (bad, tmp_path / "far.gpkg"):
        p = gf("import", fresh(tmp_path, path.suffix[1:] + "far.db"), path, check=False)
        assert p.returncode == 1 and "out of range" in p.stderr, p.stderr


BOWTIE = {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]}


@pytest.mark.parametrize("name", ["-makevalid", "-skipfailures", "-wrapdateline", "--config", "-sql", "-f"])
def test_a_layer_name_is_never_an_option(tmp_path, name):
    source = write_collection(tmp_path / "in.geojson", [
        square("ok", 139.0, 35.0), {"type": "Feature", "properties": {"area_id": "bow"}, "geometry": BOWTIE}])
    gpkg = tmp_path / "hostile.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, source, "-nln", "placeholder", "-lco", "SPATIAL_INDEX=NO")
    rename_gpkg_layer(gpkg, "placeholder", name)
    db = fresh(tmp_path, "db")
    before = snapshot(db)
    for args in ([], ["--layer", name]):
        p = gf("import", db, gpkg, *args, check=False)
        assert p.returncode == 1, (name, args, p.stdout)
        assert f"layer '{name}', fid 2, id 'bow'" in p.stderr and "Self-intersection" in p.stderr, p.stderr
        assert snapshot(db) == before
    # A Shapefile's layer is named by its file.
    shp = tmp_path / f"{name}.shp"
    run("ogr2ogr", "-f", "ESRI Shapefile", "./" + shp.name, source, cwd=tmp_path)
    p = gf("import", db, shp, check=False)
    assert p.returncode == 1 and "Self-intersection" in p.stderr, p.stderr
    assert snapshot(db) == before


def test_layer_names_with_spaces_and_parentheses_and_3d_layers(tmp_path):
    source = write_collection(tmp_path / "in.geojson", [square("A", 139.0, 35.0)])
    gpkg = tmp_path / "zones.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, source, "-nln", "zones (v2)")
    db = fresh(tmp_path, "db")
    gf("import", db, gpkg)
    assert sorted(stored(db)) == ["A"]
    z = write_collection(tmp_path / "z.geojson", [{"type": "Feature", "properties": {"area_id": "Z"}, "geometry": {
        "type": "Polygon", "coordinates": [[[139, 35, 5], [139.1, 35, 5], [139.1, 35.1, 5], [139, 35, 5]]]}}])
    zpkg = tmp_path / "z.gpkg"
    run("ogr2ogr", "-f", "GPKG", zpkg, z, "-nln", "z", "-nlt", "GEOMETRYZ")
    assert "z (3D" in run("ogrinfo", "-ro", "-q", zpkg).stdout
    db2 = fresh(tmp_path, "z.db")
    gf("import", db2, zpkg)
    assert sorted(stored(db2)) == ["Z"]


def test_errors_name_the_fid_and_the_stored_id(tmp_path):
    source = write_collection(tmp_path / "in.geojson", [
        square("A", 139.0, 35.0), square("B", 139.1, 35.0, in_confirm_count=0)])
    gpkg = tmp_path / "fences.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, source, "-nln", "fences")
    db = fresh(tmp_path, "db")
    p = gf("import", db, gpkg, "--group", "G", check=False)
    assert p.returncode == 1
    # A GeoPackage numbers its features from 1: the second is fid 2.
    assert f"{gpkg}, layer 'fences', fid 2, id 'G#B', properties.in_confirm_count" in p.stderr, p.stderr
    p = gf("import", db, source, "--group", "G", check=False)
    assert "feature 1, id 'G#B', properties.in_confirm_count" in p.stderr, p.stderr


def test_a_source_without_a_crs_says_what_to_do(tmp_path):
    source = write_collection(tmp_path / "in.geojson", [square("A", 139.0, 35.0)])
    shp = tmp_path / "noprj.shp"
    run("ogr2ogr", "-f", "ESRI Shapefile", shp, source)
    (tmp_path / "noprj.prj").unlink()
    db = fresh(tmp_path, "db")
    p = gf("import", db, shp, check=False)
    assert p.returncode == 1 and "no coordinate reference system" in p.stderr, p.stderr
    assert "--source-crs EPSG:4326" in p.stderr and "-s_srs" not in p.stderr
    gf("import", db, shp, "--source-crs", "EPSG:4326")
    assert same_bits(stored(db)["A"], shape(square("A", 139.0, 35.0)["geometry"]))
    p = gf("import", db, source, "--source-crs", "EPSG:4326", check=False)
    assert p.returncode == 1 and "--source-crs is for a source GDAL reads" in p.stderr


def test_a_shapefile_not_in_utf8_says_how_to_name_its_encoding(tmp_path):
    source = write_collection(tmp_path / "in.geojson", [square("A", 139.0, 35.0, name="Zürich Straße")])
    shp = tmp_path / "latin.shp"
    run("ogr2ogr", "-f", "ESRI Shapefile", shp, source, "-lco", "ENCODING=CP1252")
    (tmp_path / "latin.cpg").unlink()
    db = fresh(tmp_path, "db")
    p = gf("import", db, shp, check=False)
    assert p.returncode == 1, p.stdout
    assert "layer 'latin', fid 0, id 'A', properties.name" in p.stderr and "not UTF-8" in p.stderr, p.stderr
    assert ".cpg" in p.stderr and "SHAPE_ENCODING=CP1252" in p.stderr
    run("env", "SHAPE_ENCODING=CP1252", CLI, "import", db, shp)
    assert "Zürich Straße" in gf("areas", "list", db).stdout


def test_without_libgdal_the_error_says_what_to_install(tmp_path):
    source = write_collection(tmp_path / "in.geojson", [square("A", 139.0, 35.0)])
    gpkg = tmp_path / "a.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, source)
    db = fresh(tmp_path, "db")
    p = run("env", "GEOFENCE_LIBGDAL=/nonexistent/libgdal.so", CLI, "import", db, gpkg, check=False)
    assert p.returncode == 1 and "needs the GDAL library" in p.stderr and "apt-get install" in p.stderr, p.stderr


def test_export_gpkg_names_a_killed_ogr2ogr_and_takes_no_name_as_an_option(tmp_path):
    db = fresh(tmp_path, "db")
    gf("import", db, write_collection(tmp_path / "in.geojson", [square("A", 139.0, 35.0)]))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ogr2ogr"
    fake.write_text("#!/bin/sh\nkill -9 $$\n")
    fake.chmod(0o755)
    p = run("env", f"PATH={bin_dir}:/usr/bin:/bin", CLI, "export", db, "--format", "gpkg", "--out", tmp_path / "x.gpkg", check=False)
    assert p.returncode == 1 and "ogr2ogr could not write the GeoPackage (killed by signal 9 (SIGKILL))" in p.stderr, p.stderr
    assert not (tmp_path / "x.gpkg").exists()
    # An output named like an option, relative to the current folder.
    p = run(CLI, "export", db, "--format", "gpkg", "--out=-sql.gpkg", cwd=tmp_path, check=False)
    assert p.returncode == 0, p.stderr
    assert "1: areas" in run("ogrinfo", "-ro", "-q", "./-sql.gpkg", cwd=tmp_path).stdout


def test_columns_arrive_as_geojson_properties_with_exact_reals(tmp_path):
    props = {"area_id": "A", "i": 5, "r": 50.0, "r2": 0.1 + 0.2, "s": "txt", "d": "2024-01-02",
             "dt": "2024-01-02T03:04:05.123+09:00", "utc": "2024-01-02T03:04:05Z", "b": True, "obj": {"k": 1}, "nul": None}
    source = write_collection(tmp_path / "in.geojson", [{**square("A", 139.0, 35.0), "properties": props}])
    gpkg = tmp_path / "typed.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, source)
    db = fresh(tmp_path, "db")
    gf("import", db, gpkg)
    got = json.loads(gf("export", db).stdout)["features"][0]["properties"]
    for key, value in props.items():
        if value is None:
            assert key not in got                       # a NULL column is a missing property
        else:
            assert got[key] == value and type(got[key]) is type(value), (key, got.get(key))
