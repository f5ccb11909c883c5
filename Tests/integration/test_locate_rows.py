"""`locate --fixes` takes a row by the fix's own rules for latitude,
longitude and accuracy (one rule, in the core), needing no subject or
time; a row without accuracy is an exact position. A row those rules refuse
gives no pair and is counted as invalid."""
from conftest import gf, square, write_collection


def test_rows_are_taken_by_the_fix_rules_without_subject_or_time(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square("A", 139.0, 35.0, 1.0)]))
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                     ",,35.5,139.5,\n"                       # no subject, time or accuracy: an exact position
                     "s,,35.5,139.5,1e400\n"                 # an infinite accuracy, refused as for judge
                     "s,2026-01-01T00:00:00Z,95,139.5,1\n"   # latitude out of range
                     "x,,35.5,139.5,-1\n"                    # negative accuracy: no fix
                     ",,35.5,139.5,5\n")
    p = gf("locate", db, "--fixes", fixes)
    assert p.stdout == "row,area_id,verdict\n1,A,inside\n5,A,inside\n"
    assert "located 5 fixes (3 invalid): 2 pairs" in p.stderr, p.stderr
