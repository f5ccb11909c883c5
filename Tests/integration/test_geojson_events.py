"""Notifications as GeoJSON (issue 36): `judge --out x.geojson` and
`notifications --format geojson|geojsonseq` write Point Features that GIS
tools open (GDAL's ogrinfo and ogr2ogr, geopandas.read_file), whose
position is the fix's, bit for bit, and whose properties are the CSV's
columns; the FeatureCollection stays valid JSON whatever the run (none, one,
thousands of notifications from subjects judged on several threads, written
to a file, standard output or read back)."""
import csv
import io
import json
import random

import pytest

from conftest import SAMPLES, gf, run


def catalog(folder):
    db = folder / "fences.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    return db


def many_fixes(path, subjects=400, steps=12, seed=36):
    """Subjects walking in and out of the sample areas, so that many
    subjects (judged on several threads) each give notifications."""
    rnd = random.Random(seed)
    centres = [(35.7098, 139.774), (35.6815, 139.7655), (35.6597, 139.7007)]
    lines = ["subject_id,ts,lat,lon,accuracy_m"]
    for s in range(subjects):
        for k in range(steps):
            lat, lon = centres[(s + k // 3) % 3] if k % 3 else (35.0 + rnd.random() / 10, 139.0 + rnd.random() / 10)
            lat += rnd.uniform(-1e-4, 1e-4)
            lon += rnd.uniform(-1e-4, 1e-4)
            lines.append(f"s{s:04d},2026-11-20T{9 + k // 6:02d}:{(k % 6) * 10:02d}:00+09:00,{lat!r},{lon!r},{rnd.choice([5, 10, 15])}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_feature_per_notification_with_the_csv_fields_and_the_fixs_point(tmp_path):
    db = catalog(tmp_path)
    fixes = many_fixes(tmp_path / "fixes.csv")
    out = tmp_path / "notes.geojson"
    gf("judge", db, "--fixes", fixes, "--out", out, "--threads", "4")
    collection = json.loads(out.read_text())
    rows = list(csv.DictReader(io.StringIO(gf("notifications", db, "--run", "1", "--format", "csv").stdout)))
    assert collection["type"] == "FeatureCollection" and len(collection["features"]) == len(rows) > 1000
    for feature, row in zip(collection["features"], rows):
        assert feature["type"] == "Feature" and feature["geometry"]["type"] == "Point"
        assert feature["geometry"]["coordinates"] == [float(row["lon"]), float(row["lat"])]
        props = feature["properties"]
        assert [str(props[k]) for k in ("subject_id", "ts", "area_id", "condition_id", "transition")] == \
               [row[k] for k in ("subject_id", "ts", "area_id", "condition_id", "transition")]
        assert (props["lat"], props["lon"], props["accuracy_m"]) == (float(row["lat"]), float(row["lon"]), float(row["accuracy_m"]))
    # Read back, as a sequence, and on standard output: the same features.
    assert gf("notifications", db, "--run", "1", "--format", "geojson").stdout == out.read_text()
    seq = gf("notifications", db, "--run", "1", "--format", "geojsonseq").stdout.splitlines()
    assert [json.loads(line) for line in seq] == collection["features"]


@pytest.mark.parametrize("fixes", ["none", "no notification"])
def test_a_run_without_notifications_is_an_empty_collection(tmp_path, fixes):
    db = catalog(tmp_path)
    f = tmp_path / "f.csv"
    f.write_text("subject_id,ts,lat,lon,accuracy_m\n" + ("" if fixes == "none" else "a,2026-11-20T09:00:00Z,10,10,5\n"))
    out = tmp_path / "n.geojson"
    gf("judge", db, "--fixes", f, "--out", out)
    assert json.loads(out.read_text()) == {"type": "FeatureCollection", "features": []}
    (tmp_path / "again").mkdir()
    printed = gf("judge", catalog(tmp_path / "again"), "--fixes", f, "--out", "-", "--format", "geojson").stdout
    assert json.loads(printed) == {"type": "FeatureCollection", "features": []}


def test_gdal_opens_it_and_converts_it_exactly(tmp_path):
    db = catalog(tmp_path)
    gf("judge", db, "--fixes", many_fixes(tmp_path / "fixes.csv", subjects=30), "--out", tmp_path / "n.geojson")
    (tmp_path / "n.geojsonl").write_text(gf("notifications", db, "--format", "geojsonseq", "--run", "1").stdout)
    for name in ("n.geojson", "n.geojsonl"):
        info = run("ogrinfo", "-ro", "-so", "-al", tmp_path / name).stdout
        assert "Geometry: Point" in info and "subject_id: String" in info and "condition_id: Integer" in info, info
    run("ogr2ogr", "-f", "GPKG", tmp_path / "n.gpkg", tmp_path / "n.geojson")
    con = __import__("sqlite3").connect(tmp_path / "n.gpkg")
    count = con.execute("SELECT count(*) FROM n").fetchone()[0]
    assert count == len(json.loads((tmp_path / "n.geojson").read_text())["features"]) > 10


def test_geopandas_reads_it_with_the_positions_exact(venv, tmp_path):
    db = catalog(tmp_path)
    gf("judge", db, "--fixes", many_fixes(tmp_path / "fixes.csv", subjects=30), "--out", tmp_path / "n.geojson")
    (tmp_path / "n.geojsonl").write_text(gf("notifications", db, "--format", "geojsonseq", "--run", "1").stdout)
    lines = run(venv / "bin" / "python", "-c", f"""
import geopandas, pandas
notes = pandas.read_csv(__import__("io").StringIO({gf("notifications", db, "--run", "1", "--format", "csv").stdout!r}),
                        float_precision="round_trip", dtype={{"subject_id": str}})
for name in ("n.geojson", "n.geojsonl"):
    frame = geopandas.read_file({str(tmp_path)!r} + "/" + name)
    print(len(frame) == len(notes) > 10, set(frame.geom_type) == {{"Point"}}, str(frame.crs.to_epsg()),
          list(frame.geometry.x) == list(notes["lon"]), list(frame.geometry.y) == list(notes["lat"]),
          list(frame["subject_id"]) == list(notes["subject_id"]))
""").stdout.splitlines()
    assert lines == ["True True 4326 True True True"] * 2, lines
