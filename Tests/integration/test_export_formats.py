"""export to any GDAL vector format, circles as traced polygons, and import
--id-field / --group-field (issue 36).

A catalog of polygons, a polygon with a hole, a multipolygon and circles, all
with coordinates of 17 significant digits (a lost bit shows), is exported to
GeoPackage, FlatGeobuf and Shapefile and imported back: the catalogs are the
same to the bit. geopandas (the session's venv) opens each file and sees every
circle as a Polygon carrying circle_lat, circle_lon and circle_radius_m, whose
vertices and edge middles pyproj measures within the tolerance docs/inputs.md
states. A failing ogr2ogr and a full disk leave the old file(s)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, gf, run, small_tmpfs, square, write_collection

FORMATS = [("GPKG", "areas.gpkg"), ("FlatGeobuf", "areas.fgb"), ("ESRI Shapefile", "areas.shp")]


def circle(area_id, lon, lat, radius, **props):
    return {"type": "Feature", "properties": {"area_id": area_id, "radius_m": radius, **props},
            "geometry": {"type": "Point", "coordinates": [lon, lat]}}


def source_features():
    holed = square("HOLE", 2.3522219000000001, 48.856614000000001, size=0.05)
    holed["geometry"]["coordinates"].append(
        [[2.36, 48.86], [2.37000000000000001, 48.87], [2.38, 48.86000000000000003], [2.36, 48.86]][::-1])
    multi = {"type": "Feature", "properties": {"area_id": "MULTI", "group_id": "depots", "name": "Zürich & Genève"},
             "geometry": {"type": "MultiPolygon", "coordinates": [
                 square("", 8.541694000000001, 47.376887000000003)["geometry"]["coordinates"],
                 square("", 6.1431577000000001, 46.204391000000001)["geometry"]["coordinates"]]}}
    return [
        square("SQ", -73.98565400000001, 40.748817000000003, in_accuracy_max_m=25, valid_from="2026-01-01T00:00:00Z",
               valid_until="2027-06-30T12:00:00+02:00", confidence=0.95, timezone="America/New_York", owner="ops"),
        holed,
        multi,
        circle("PARIS", 2.2944810000000001, 48.858370000000001, 1234.5678901234567, in_confirm_count=2),
        circle("NYC", -74.006015000000003, 40.712775999999998, 250.25, out_accuracy_max_m=100.5),
        circle("SMALL", 139.69170639999999, 35.689487299999997, 3.3333333333333335),
        circle("BIG", 0.30000000000000004, -33.868820000000003, 350000.123456789),
    ]


def new_catalog(tmp_path, name="fences.db"):
    db = tmp_path / name
    gf("init", db)
    return db


def source_catalog(tmp_path):
    db = new_catalog(tmp_path, "source.db")
    gf("import", db, write_collection(tmp_path / "source.geojson", source_features()))
    return db


def as_points(db):
    """The catalog's areas as the engine's own GeoJSON (circles as points): equal text is equal doubles."""
    return json.loads(gf("export", db, "--format", "geojson", "--circles", "points").stdout)["features"]


def rings_either_way(features):
    """The features with each ring as a set of its two directions: a Shapefile
    stores exterior rings clockwise and holes counter-clockwise whatever they
    were (docs/inputs.md), the same points from the same first vertex."""
    def ring_key(ring):
        return tuple(sorted([json.dumps(ring), json.dumps(ring[::-1])]))
    out = []
    for f in features:
        g = dict(f["geometry"])
        if g["type"] == "Polygon":
            g["coordinates"] = [ring_key(r) for r in g["coordinates"]]
        elif g["type"] == "MultiPolygon":
            g["coordinates"] = [[ring_key(r) for r in p] for p in g["coordinates"]]
        out.append({**f, "geometry": g})
    return out


@pytest.mark.parametrize("driver,name", FORMATS)
def test_an_export_imports_back_to_the_same_catalog_circles_included(tmp_path, driver, name):
    db = source_catalog(tmp_path)
    out = tmp_path / name
    gf("export", db, "--out", out)
    info = run("ogrinfo", "-ro", "-al", "-geom=SUMMARY", out).stdout
    assert "POLYGON : " in info and "POINT" not in info, info   # circles traced, not points
    back = new_catalog(tmp_path, "back.db")
    gf("import", back, out)
    if driver == "ESRI Shapefile":
        assert rings_either_way(as_points(back)) == rings_either_way(as_points(db))
    else:
        assert as_points(back) == as_points(db)
    # The driver by name, in any case, writes the same.
    again = tmp_path / ("again" + Path(name).suffix)
    gf("export", db, "--format", driver.lower(), "--out", again)
    other = new_catalog(tmp_path, "again.db")
    gf("import", other, again)
    assert rings_either_way(as_points(other)) == rings_either_way(as_points(db))


def test_a_shapefile_export_is_every_file_renamed_to_the_stem(tmp_path):
    db = source_catalog(tmp_path)
    gf("export", db, "--out", tmp_path / "fences.shp")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("fences.")) == [
        "fences.cpg", "fences.dbf", "fences.prj", "fences.shp", "fences.shx"]
    assert (tmp_path / "fences.cpg").read_text().strip() == "UTF-8"
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]
    p = gf("export", db, "--format", "ESRI Shapefile", "--out", tmp_path / "fences.data", check=False)
    assert p.returncode != 0 and "NAME.shp" in p.stderr, p.stderr


def test_geopandas_sees_circles_as_polygons_with_their_exact_centre_and_radius(venv, tmp_path):
    db = source_catalog(tmp_path)
    for _, name in FORMATS:
        gf("export", db, "--out", tmp_path / name)
    script = f"""
import json, geopandas
for name in {[n for _, n in FORMATS]!r}:
    frame = geopandas.read_file({str(tmp_path)!r} + "/" + name)
    rows = []
    for _, row in frame.iterrows():
        radius = row.get("circle_radius_m", row.get("circle_rad"))
        rows.append({{"id": row["area_id"], "type": row.geometry.geom_type,
                      "circle": None if radius is None or radius != radius else
                                [float(row["circle_lat"]), float(row["circle_lon"]), float(radius)],
                      "rings": [list(map(list, p.exterior.coords)) for p in
                                ([row.geometry] if row.geometry.geom_type == "Polygon" else list(row.geometry.geoms))]}})
    print(json.dumps({{"name": name, "crs": frame.crs.to_epsg(), "rows": rows}}))
"""
    lines = run(venv / "bin" / "python", "-c", script).stdout.splitlines()
    circles = {f["properties"]["area_id"]: f for f in source_features() if f["geometry"]["type"] == "Point"}
    from pyproj import Geod
    geod = Geod(ellps="WGS84")
    for line in lines:
        seen = json.loads(line)
        assert seen["crs"] == 4326, seen["name"]
        rows = {r["id"]: r for r in seen["rows"]}
        assert set(rows) == {"SQ", "HOLE", "MULTI", "PARIS", "NYC", "SMALL", "BIG"}, seen["name"]
        for area_id, f in circles.items():
            row = rows[area_id]
            lon, lat = f["geometry"]["coordinates"]
            radius = f["properties"]["radius_m"]
            assert row["type"] in ("Polygon", "MultiPolygon"), (seen["name"], row)
            assert row["circle"] == [lat, lon, radius], (seen["name"], area_id)   # exact, to the bit
            assert len(row["rings"]) == 1, (seen["name"], area_id)   # one polygon, perhaps promoted to multi
            ring = row["rings"][0]
            points = ring + [[(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] for a, b in zip(ring, ring[1:])]
            tolerance = max(0.1, radius * 1e-5)
            for x, y in points:
                _, _, d = geod.inv(lon, lat, x, y)
                assert abs(d - radius) <= tolerance * 1.001, (seen["name"], area_id, d, radius)
        # The polygons' own coordinates arrive exactly.
        sq = source_features()[0]["geometry"]["coordinates"][0]
        assert rows["SQ"]["rings"][0] in (sq, sq[::-1]), seen["name"]


def test_circles_as_polygons_in_geojson_and_an_edited_one_is_refused(tmp_path):
    db = source_catalog(tmp_path)
    text = gf("export", db, "--circles", "polygons").stdout
    doc = json.loads(text)
    paris = next(f for f in doc["features"] if f["properties"]["area_id"] == "PARIS")
    assert paris["geometry"]["type"] == "Polygon" and "radius_m" not in paris["properties"]
    assert paris["properties"]["circle_radius_m"] == 1234.5678901234567
    back = new_catalog(tmp_path, "back.db")
    gf("import", back, write_collection(tmp_path / "polygons.geojson", doc["features"]))
    assert as_points(back) == as_points(db)
    # Moved 2 m outwards in QGIS: no longer the circle its attributes say.
    paris["geometry"]["coordinates"][0][3][1] += 0.00002
    edited = write_collection(tmp_path / "edited.geojson", doc["features"])
    p = gf("import", new_catalog(tmp_path, "edited.db"), edited, check=False)
    index = doc["features"].index(paris)
    assert p.returncode == 1, p.stderr
    assert f"feature {index}" in p.stderr and "'PARIS'" in p.stderr and "drop the circle_lat" in p.stderr, p.stderr
    # Dropping the attributes imports the polygon as drawn.
    for k in ("circle_lat", "circle_lon", "circle_radius_m"):
        del paris["properties"][k]
    drawn = new_catalog(tmp_path, "drawn.db")
    gf("import", drawn, write_collection(tmp_path / "drawn.geojson", doc["features"]))
    assert next(f for f in as_points(drawn) if f["properties"]["area_id"] == "PARIS")["geometry"]["type"] == "Polygon"


def test_format_names_extensions_and_unknown_drivers(tmp_path):
    db = source_catalog(tmp_path)
    for name, driver in [("a.sqlite", "SQLite"), ("a.gml", "GML"), ("a.kml", "KML")]:
        gf("export", db, "--out", tmp_path / name)
        opened = run("ogrinfo", "-ro", "-so", "-al", tmp_path / name).stdout   # KML is read by LIBKML where it is installed
        assert f"using driver `{driver}' successful" in opened or f"using driver `LIB{driver}' successful" in opened, opened
    p = gf("export", db, "--out", tmp_path / "a.csv", check=False)
    assert p.returncode != 0 and "--format" in p.stderr and "ogrinfo --formats" in p.stderr, p.stderr
    gf("export", db, "--format", "CSV", "--out", tmp_path / "a.csv")   # named by its driver, it is written
    assert "area_id" in (tmp_path / "a.csv").read_text().splitlines()[0]
    for bad in ("NoSuchDriver", "OSM"):   # none by that name; one that only reads
        p = gf("export", db, "--format", bad, "--out", tmp_path / "a.dat", check=False)
        assert p.returncode == 1 and "ogrinfo --formats" in p.stderr and "--format" in p.stderr, p.stderr
    p = gf("export", db, "--format", "FlatGeobuf", check=False)
    assert p.returncode != 0 and "--out" in p.stderr, p.stderr
    p = gf("export", db, "--format", "GPKG", "--out", tmp_path / "a.fgb", check=False)
    assert p.returncode != 0 and "disagree" in p.stderr, p.stderr


def test_a_one_type_format_refuses_circles_as_points_naming_the_area(tmp_path):
    db = source_catalog(tmp_path)
    p = gf("export", db, "--circles", "points", "--out", tmp_path / "a.shp", check=False)
    assert p.returncode == 1 and "'BIG'" in p.stderr and "GPKG" in p.stderr, p.stderr   # the first circle by id
    assert not list(tmp_path.glob("a.*"))
    gf("export", db, "--circles", "points", "--out", tmp_path / "a.gpkg")   # a GeoPackage holds both
    back = new_catalog(tmp_path, "back.db")
    gf("import", back, tmp_path / "a.gpkg")
    assert as_points(back) == as_points(db)


def export_with_a_failing_ogr2ogr(db, out, tmp_path):
    """`geofence export` with an ogr2ogr on PATH that writes half a file and fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "ogr2ogr"
    fake.write_text('#!/bin/sh\n# writes part of its target ($4), then fails as GDAL does\n'
                    'echo half > "$4"\necho "ERROR 1: something went wrong" >&2\nexit 1\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run([str(CLI), "export", str(db), "--out", str(out)], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("name", ["old.fgb", "old.shp"])
def test_a_failing_gdal_leaves_the_old_files(tmp_path, name):
    db = source_catalog(tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / name
    gf("export", db, "--out", out)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    p = export_with_a_failing_ogr2ogr(db, out, tmp_path)
    assert p.returncode == 1 and "something went wrong" in p.stderr, p.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_an_export_to_a_full_disk_keeps_the_old_shapefile(tmp_path):
    db = new_catalog(tmp_path)
    many = [square(f"A{i}", -70 + (i % 300) * 0.02, 10 + (i // 300) * 0.02, name="x" * 40) for i in range(3000)]
    few = new_catalog(tmp_path, "few.db")
    gf("import", few, write_collection(tmp_path / "few.geojson", many[:3]))
    gf("import", db, write_collection(tmp_path / "many.geojson", many))
    with small_tmpfs(tmp_path / "small", "256k") as small:
        out = Path(small) / "fences.shp"
        gf("export", few, "--out", out)
        before = {p.name: p.read_bytes() for p in Path(small).iterdir()}
        p = gf("export", db, "--out", out, check=False)
        assert p.returncode == 1 and "no space left on device" in p.stderr and "unchanged" in p.stderr, p.stderr
        assert {p.name: p.read_bytes() for p in Path(small).iterdir()} == before


def test_import_id_and_group_fields(tmp_path):
    features = [square("ignored", 10.0, 50.0), square("ignored", 10.1, 50.0), square("ignored", 10.2, 50.0)]
    for f, code, region in zip(features, ["K-1", 202, "K-3"], ["north", "south", None]):
        f["properties"] = {"fence_code": code, "region": region, "note": "kept"}
    source = write_collection(tmp_path / "fences.geojson", features)
    gpkg = tmp_path / "fences.gpkg"
    run("ogr2ogr", "-f", "GPKG", gpkg, source, "-nln", "fences")
    for path in (source, gpkg):
        db = new_catalog(tmp_path, f"ids_{path.suffix[1:]}.db")
        gf("import", db, path, "--id-field", "fence_code", "--group-field", "region")
        areas = {f["properties"]["area_id"]: f["properties"] for f in as_points(db)}
        assert set(areas) == {"north#K-1", "south#202", "K-3"} or set(areas) == {"K-1", "202", "K-3"}, areas
        listed = json.loads(gf("areas", "list", db, "--json").stdout)
        ids = sorted(a["area_id"] for a in listed)
        assert ids == ["K-3", "north#K-1", "south#202"], listed
        assert all("fence_code" not in p and "region" not in p and p.get("note") == "kept" for p in areas.values()), areas
    # A feature without the named field is refused, naming the user's field.
    features[1]["properties"].pop("fence_code")
    p = gf("import", new_catalog(tmp_path, "missing.db"), write_collection(tmp_path / "missing.geojson", features),
           "--id-field", "fence_code", check=False)
    assert p.returncode == 1 and "feature 1" in p.stderr and "properties.fence_code" in p.stderr, p.stderr
    p = gf("import", new_catalog(tmp_path, "both.db"), source, "--group", "G", "--group-field", "region", check=False)
    assert p.returncode != 0 and "--group-field" in p.stderr, p.stderr
