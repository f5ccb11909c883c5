"""`locate --fixes` reads an area only once a fix of the batch reaches its
box: an area no fix comes near is never read, so a row elsewhere in the
catalog that cannot be read does not stop the batch; once a fix reaches it,
the batch fails with the row's error and writes nothing."""
from conftest import gf, sql, square, write_collection


def catalog_with_a_broken_far_area(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [
        square("NEAR", 139.70, 35.60, 0.10), square("FAR", 10.0, 10.0, 0.10)]))
    # A validity start that is no time: written past the importer, as a hand edit would.
    sql(db, "UPDATE gf_areas SET valid_from = 'not a time' WHERE area_id = 'FAR';")
    return db


def test_an_area_no_fix_reaches_is_not_read(tmp_path):
    db = catalog_with_a_broken_far_area(tmp_path)
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\ns,1,35.65,139.75,0\ns,2,0.0,0.0,0\n")
    out = tmp_path / "pairs.csv"
    gf("locate", db, "--fixes", fixes, "--out", out)
    assert out.read_text() == "row,area_id,verdict\n1,NEAR,inside\n"


def test_a_fix_reaching_a_broken_area_fails_the_batch_and_writes_nothing(tmp_path):
    db = catalog_with_a_broken_far_area(tmp_path)
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\ns,1,35.65,139.75,0\ns,2,10.05,10.05,0\n")
    out = tmp_path / "pairs.csv"
    p = gf("locate", db, "--fixes", fixes, "--out", out, check=False)
    assert p.returncode == 1 and "not a time" in p.stderr, p.stderr
    assert not out.exists()
