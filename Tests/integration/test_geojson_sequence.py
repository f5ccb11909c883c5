"""A GeoJSON sequence (GDAL's GeoJSONSeq, RFC 8142; .geojsonl, .ndjson, …)
is read by the engine's own reader, as the features of a FeatureCollection:
the same areas, the same checks. Through GDAL a record naming a member twice
was imported with the last value; now it is refused like any other
duplicate member. No GDAL is needed."""
import json
import os
import subprocess

import pytest

from conftest import CLI, gf, sql, square, write_collection


def fresh(tmp_path, name):
    db = tmp_path / name
    gf("init", db)
    return db


FEATURES = [square("A", 139.70, 35.60, name="Alpha", in_confirm_count=2), square("B", 139.80, 35.60),
            {"type": "Feature", "properties": {"area_id": "C", "radius_m": 150, "kind": None},
             "geometry": {"type": "Point", "coordinates": [139.9, 35.6]}}]


@pytest.mark.parametrize("suffix", ["geojsonl", "geojsons", "geojsonseq", "ndjson", "jsonl", "ldjson"])
def test_a_sequence_imports_as_its_collection_does(tmp_path, suffix):
    collection = fresh(tmp_path, "collection.db")
    gf("import", collection, write_collection(tmp_path / "a.geojson", FEATURES))
    seq = tmp_path / f"a.{suffix}"
    # RFC 8142's record separators, a blank line, CRLF and lone CR line ends are all allowed.
    seq.write_bytes(b"\x1e" + json.dumps(FEATURES[0]).encode() + b"\r\n\n"
                    + json.dumps(FEATURES[1]).encode() + b"\r\x1e" + json.dumps(FEATURES[2], indent=1).encode())
    db = fresh(tmp_path, "seq.db")
    # Without GDAL on the PATH: the engine reads it.
    out = subprocess.run([str(CLI), "import", str(db), str(seq)], capture_output=True, text=True,
                         env={**os.environ, "PATH": "/nonexistent"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "imported 3 areas (2 polygonal, 1 circle)\n"
    assert gf("export", db).stdout == gf("export", collection).stdout


@pytest.mark.parametrize("text,where,why", [
    ('{"type":"Feature","properties":{"area_id":"A","area_id":"B"},"geometry":null}\n', "line 1", "duplicate member name 'area_id'"),
    ('{"type":"Feature","properties":{"area_id":"A"},"geometry":{"type":"Point","coordinates":[0,0]},"properties":{}}\n',
     "line 1", "duplicate member name 'properties'"),
    (json.dumps(FEATURES[1]) + json.dumps(FEATURES[0]) + "\n", "line 1", "a second record on the line of the one before"),
    (json.dumps(FEATURES[1]) + "\n" + '{"type":"FeatureCollection","features":[]}\n', "feature 1", ""),
    (json.dumps(FEATURES[1]) + "\n" + json.dumps(FEATURES[0])[:-3] + "\n", "line 3", "malformed GeoJSON"),
    # Empty: more likely a failed export than a catalog of nothing (which --replace would make).
    ("", "", "an empty GeoJSON sequence: no Feature to import"),
    ("\n\x1e\n  \n", "", "an empty GeoJSON sequence: no Feature to import"),
])
def test_a_bad_record_is_refused_and_nothing_is_imported(tmp_path, text, where, why):
    db = fresh(tmp_path, "c.db")
    seq = tmp_path / "bad.geojsonl"
    seq.write_text(text)
    r = gf("import", db, seq, check=False)
    assert r.returncode == 1, r.stderr
    assert str(seq) in r.stderr and where in r.stderr and why in r.stderr, r.stderr
    assert sql(db, "SELECT count(*) FROM gf_areas;").stdout == "0\n"


WEB_MERCATOR = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::3857"}}


@pytest.mark.parametrize("where", ["record", "geometry", "collection feature"])
def test_a_crs_on_a_feature_that_is_not_wgs84_is_refused(tmp_path, where):
    """The 2008 format allowed a `crs` on a Feature, which is the top-level
    object of a sequence's record; it was ignored and Web Mercator metres read
    as degrees."""
    feature = json.loads(json.dumps(FEATURES[1]))
    (feature["geometry"] if where == "geometry" else feature)["crs"] = WEB_MERCATOR
    if where == "collection feature":
        path = write_collection(tmp_path / "a.geojson", [FEATURES[0], feature])
    else:
        path = tmp_path / "a.geojsonl"
        path.write_text(json.dumps(FEATURES[0]) + "\n" + json.dumps(feature) + "\n")
    db = fresh(tmp_path, "c.db")
    r = gf("import", db, path, check=False)
    assert r.returncode == 1
    assert f"{path}, feature 1, {'geometry.crs' if where == 'geometry' else 'crs'}:" in r.stderr, r.stderr
    assert "is not WGS 84 longitude/latitude" in r.stderr, r.stderr
    assert sql(db, "SELECT count(*) FROM gf_areas;").stdout == "0\n"
    # One naming WGS 84 is fine.
    feature.pop("crs", None), feature["geometry"].pop("crs", None)
    feature["crs"] = {"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}}
    path.write_text(json.dumps(FEATURES[0]) + "\n" + json.dumps(feature) + "\n") if where != "collection feature" else \
        write_collection(path, [FEATURES[0], feature])
    assert "imported 2 areas" in gf("import", db, path).stdout
