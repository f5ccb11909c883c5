"""Any vector source GDAL reads, read through the GDAL library into the same
validating importer: GeoPackage, Shapefile, FlatGeobuf and GeoJSONSeq files
made by the real ogr2ogr from real shapes (Natural Earth's countries, New York
City's boroughs in their State Plane projection) import with the same result as
their GeoJSON; an exported catalog written to those formats imports back to the
same catalog; and `export --format` writes GeoJSONSeq and GeoPackage."""
import glob
import json
import os
import sqlite3
import zipfile
from pathlib import Path

import pytest
import shapely
from shapely.geometry import shape

from conftest import CLI, ROOT, gf, run, snapshot, square, write_collection
from reference import natural_earth_countries
from test_gdal_exact import gpkg_geometries


def ogr2ogr(*args):
    return run("ogr2ogr", *args)


def features(db):
    """area_id -> (properties, normalised geometry): the catalog as export shows it,
    ring orientation and start vertex aside (GDAL's GeoJSONSeq writer turns rings)."""
    doc = json.loads(gf("export", db).stdout)
    out = {}
    for f in doc["features"]:
        geom = shapely.normalize(shape(f["geometry"]))
        out[f["properties"]["area_id"]] = (f["properties"], geom.wkb_hex)
    return out


def fresh(tmp_path, name):
    db = tmp_path / name
    gf("init", db)
    return db


@pytest.mark.parametrize("driver,suffix", [("GPKG", "gpkg"), ("FlatGeobuf", "fgb"), ("GeoJSONSeq", "geojsonl")])
def test_an_exported_catalog_written_by_ogr2ogr_imports_back_the_same(catalog, tmp_path, driver, suffix):
    exported = tmp_path / "export.geojson"
    gf("export", catalog, "--out", exported)
    converted = tmp_path / f"areas.{suffix}"
    ogr2ogr("-f", driver, converted, exported)
    db = fresh(tmp_path, "back.db")
    out = gf("import", db, converted)
    assert "imported 4 areas (2 polygonal, 2 circles)" in out.stdout
    assert features(db) == features(catalog)          # circles included
    if driver == "GPKG":                                # GDAL keeps the collection's members there
        assert json.loads(gf("export", db).stdout)["updated_at"] == json.loads(exported.read_text())["updated_at"]


def test_export_formats_geojsonseq_and_gpkg_import_back(catalog, tmp_path):
    original = gf("export", catalog).stdout
    gpkg = tmp_path / "areas.gpkg"
    gf("export", catalog, "--format", "gpkg", "--out", gpkg)
    assert "1: areas" in run("ogrinfo", "-ro", "-q", gpkg).stdout
    db = fresh(tmp_path, "from_gpkg.db")
    gf("import", db, gpkg)
    assert gf("export", db).stdout == original         # byte for byte, updated_at included

    seq = gf("export", catalog, "--format", "geojsonseq").stdout
    lines = seq.splitlines()
    assert len(lines) == 4 and all(json.loads(line)["type"] == "Feature" for line in lines)
    path = tmp_path / "areas.geojsonl"
    path.write_text(seq)
    db2 = fresh(tmp_path, "from_seq.db")
    gf("import", db2, path)
    assert features(db2) == features(catalog)

    refused = gf("export", catalog, "--format", "gpkg", "--out", catalog, check=False)
    assert refused.returncode == 1 and "refusing to write over the database" in refused.stderr
    assert gf("export", catalog, "--format", "gpkg", check=False).returncode != 0   # needs --out


def test_natural_earth_from_geopackage_shapefile_flatgeobuf_as_from_geojson(tmp_path):
    natural_earth_countries(tmp_path)
    shp = tmp_path / "naturalearth_lowres.shp"
    query = "SELECT name AS area_id, continent, iso_a3 FROM naturalearth_lowres"
    made = {}
    for driver, name in [("GPKG", "countries.gpkg"), ("ESRI Shapefile", "countries_shp"), ("FlatGeobuf", "countries.fgb")]:
        # FlatGeobuf holds one geometry type: Polygon and MultiPolygon become MultiPolygon.
        promote = ["-nlt", "PROMOTE_TO_MULTI"] if driver == "FlatGeobuf" else []
        ogr2ogr("-f", driver, tmp_path / name, shp, "-sql", query, "-nln", "countries", *promote)
        made[driver] = tmp_path / name
    # The GeoJSON of the same doubles, written by Python (ogr2ogr's GeoJSON
    # writer drops digits even with SIGNIFICANT_FIGURES=17: 22.876219999999932 as 22.87622).
    geometries = gpkg_geometries(made["GPKG"], "countries", "area_id")
    with sqlite3.connect(made["GPKG"]) as c:
        rows = c.execute("SELECT area_id, continent, iso_a3 FROM countries").fetchall()
    geojson = write_collection(tmp_path / "exact.geojson", [
        {"type": "Feature", "properties": {"area_id": a, "continent": c, "iso_a3": i},
         "geometry": shapely.geometry.mapping(geometries[a])} for a, c, i in rows])
    reference = fresh(tmp_path, "geojson.db")
    gf("import", reference, geojson)                   # valid as the file has it: no --make-valid
    expected = features(reference)
    assert len(expected) > 170
    fixes = tmp_path / "fixes.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(
        f"s,2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z,{lat},{lon},{acc}\n"
        for i, (lat, lon, acc) in enumerate((lat, lon, acc) for lat in range(-60, 80, 7)
                                             for lon in range(-180, 180, 11) for acc in (10, 50000))))
    located = gf("locate", reference, "--fixes", fixes).stdout
    assert located.count("\n") > 100
    for driver, path in made.items():
        db = fresh(tmp_path, f"{path.name}.db")
        gf("import", db, path)                         # the Shapefile as its folder
        assert features(db) == expected, driver
        assert gf("locate", db, "--fixes", fixes).stdout == located, driver


def test_new_york_boroughs_reprojected_from_state_plane(tmp_path):
    wheel = glob.glob(str(ROOT / ".venv-test" / "wheels" / "geopandas-0.14.4-*.whl"))[0]
    with zipfile.ZipFile(wheel) as z:
        (tmp_path / "nybb.zip").write_bytes(z.read("geopandas/datasets/nybb_16a.zip"))
    source = f"/vsizip/{tmp_path}/nybb.zip/nybb.shp"
    query = "SELECT BoroName AS area_id, BoroCode AS code FROM nybb"
    gpkg, shp = tmp_path / "boroughs.gpkg", tmp_path / "boroughs.shp"
    ogr2ogr("-f", "GPKG", gpkg, source, "-sql", query)          # stays in EPSG:2263 (US feet)
    ogr2ogr("-f", "ESRI Shapefile", shp, source, "-sql", query)
    geojson = tmp_path / "boroughs.geojson"
    ogr2ogr("-f", "GeoJSON", geojson, source, "-sql", query, "-t_srs", "EPSG:4326")
    reference = fresh(tmp_path, "geojson.db")
    gf("import", reference, geojson)
    expected = features(reference)
    assert sorted(expected) == ["Bronx", "Brooklyn", "Manhattan", "Queens", "Staten Island"]
    for path in (gpkg, shp):
        db = fresh(tmp_path, path.suffix[1:] + ".db")
        gf("import", db, path)
        assert features(db) == expected, path
    # Central Park is in Manhattan, whichever file the catalog came from.
    assert "Manhattan" in gf("locate", db, "--lat=40.7829", "--lon=-73.9654", "--json").stdout


def test_a_bad_feature_names_file_layer_feature_and_field_and_changes_nothing(catalog, tmp_path):
    bad = write_collection(tmp_path / "bad.geojson", [
        square("A", 139.0, 35.0), square("B", 139.1, 35.0, in_confirm_count=0), square("C", 139.2, 35.0)])
    gpkg = tmp_path / "bad.gpkg"
    ogr2ogr("-f", "GPKG", gpkg, bad, "-nln", "fences")
    before = snapshot(catalog)
    p = gf("import", catalog, gpkg, check=False)
    assert p.returncode == 1
    assert f"{gpkg}, layer 'fences', fid 2, id 'B', properties.in_confirm_count" in p.stderr   # a GeoPackage's fids start at 1
    assert snapshot(catalog) == before

    lines = tmp_path / "lines.gpkg"
    ogr2ogr("-f", "GPKG", lines, write_collection(tmp_path / "l.geojson", [{
        "type": "Feature", "properties": {"area_id": "L"},
        "geometry": {"type": "LineString", "coordinates": [[139, 35], [139.1, 35.1]]}}]))
    p = gf("import", catalog, lines, check=False)
    assert p.returncode == 1 and "fid 1, id 'L', geometry.type" in p.stderr and "not an area" in p.stderr
    assert snapshot(catalog) == before


def test_several_layers_need_layer_and_errors_from_gdal_are_clear(catalog, tmp_path):
    gpkg = tmp_path / "two.gpkg"
    ogr2ogr("-f", "GPKG", gpkg, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0)]), "-nln", "first")
    ogr2ogr("-update", "-f", "GPKG", gpkg, write_collection(tmp_path / "b.geojson", [square("B", 139.5, 35.0)]), "-nln", "second")
    before = snapshot(catalog)
    p = gf("import", catalog, gpkg, check=False)
    assert p.returncode == 1 and "2 layers ('first', 'second'): choose one with --layer" in p.stderr
    p = gf("import", catalog, gpkg, "--layer", "nosuch", check=False)
    assert p.returncode == 1 and "layer 'nosuch'" in p.stderr
    not_gis = tmp_path / "notes.txt"
    not_gis.write_text("hello\n")
    p = gf("import", catalog, not_gis, check=False)
    assert p.returncode == 1 and "GDAL cannot read it" in p.stderr and "->" not in p.stderr
    # Without the GDAL library: a clear error, not a crash.
    p = run("env", "GEOFENCE_LIBGDAL=/nonexistent/libgdal.so", CLI, "import", catalog, gpkg, "--layer", "second", check=False)
    assert p.returncode == 1 and "needs the GDAL library (libgdal), which is not installed" in p.stderr
    assert snapshot(catalog) == before
    gf("import", catalog, gpkg, "--layer", "second")
    assert "G#AREA_ID_001" in gf("areas", "list", catalog).stdout and "B" in features(catalog)


def test_a_null_column_is_a_missing_property(tmp_path):
    """GeoJSON can leave a property out or write null; a table has every column
    for every feature. From GDAL a NULL column is absent; in GeoJSON an explicit
    null free property is kept as written."""
    geojson = write_collection(tmp_path / "a.geojson", [
        square("A", 139.0, 35.0, note="kept", in_accuracy_max_m=50), square("B", 139.1, 35.0),
        square("C", 139.2, 35.0, note=None)])
    gpkg = tmp_path / "a.gpkg"
    ogr2ogr("-f", "GPKG", gpkg, geojson)
    db = fresh(tmp_path, "gpkg.db")
    gf("import", db, gpkg)
    got = features(db)
    assert got["A"][0]["note"] == "kept" and got["A"][0]["in_accuracy_max_m"] == 50
    assert "note" not in got["B"][0] and "in_accuracy_max_m" not in got["B"][0]
    assert "note" not in got["C"][0]
    db2 = fresh(tmp_path, "geojson.db")
    gf("import", db2, geojson)
    assert features(db2)["C"][0]["note"] is None and "note" not in features(db2)["B"][0]


def test_a_shapefile_keeps_geometry_and_ids(tmp_path):
    """One geometry type per file, field names cut to 10 characters: the
    polygons keep their ids and shapes; in_accuracy_max_m, cut to in_accurac,
    comes back as that area field (documented)."""
    geojson = write_collection(tmp_path / "p.geojson", [
        square("A", 139.0, 35.0, in_accuracy_max_m=50, name="a"), square("B", 139.5, 35.0, group_id="G")])
    shp = tmp_path / "p.shp"
    ogr2ogr("-f", "ESRI Shapefile", shp, geojson)
    db = fresh(tmp_path, "shp.db")
    gf("import", db, shp)
    got, want = features(db), features(_imported(tmp_path, geojson))
    assert sorted(got) == sorted(want) == ["A", "B"]
    assert all(got[k][1] == want[k][1] for k in got)
    assert got["A"][0]["in_accuracy_max_m"] == 50 and "in_accurac" not in got["A"][0]
    assert got["B"][0]["group_id"] == "G"


def _imported(tmp_path, path):
    db = fresh(tmp_path, "ref.db")
    gf("import", db, path)
    return db
