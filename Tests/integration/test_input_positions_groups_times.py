"""Input found wrong on the way (issue 20): `locate` takes the same positions
and accuracies as `nearest`, group ids are taken as written and never
doubled, and a time's second 60 is only a leap second."""
import json

import pytest

from conftest import gf, run, snapshot, sql, square, write_collection


@pytest.mark.parametrize("args,fragment", [
    (["--lat", "95", "--lon", "139.7"], "--lat: must be a latitude in [-90, 90], got 95.0"),
    (["--lat", "35.7", "--lon", "500"], "--lon: must be a longitude in [-180, 180], got 500.0"),
    (["--lat", "nan", "--lon", "139.7"], "--lat: must be a latitude in [-90, 90], got nan"),
    (["--lat", "35.7", "--lon", "139.7", "--accuracy=-5"], "--accuracy: must be a finite number of metres >= 0, got -5.0"),
    (["--lat", "35.7", "--lon", "139.7", "--accuracy=inf"], "--accuracy: must be a finite number of metres >= 0, got inf"),
])
def test_locate_refuses_bad_positions_and_accuracies(catalog, args, fragment):
    before = snapshot(catalog)
    p = gf("locate", catalog, *args, check=False)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.strip() == f"error: {fragment}", p.stderr
    assert p.stdout == ""
    assert "SELECT" not in p.stderr
    # The same checks as nearest's.
    if "--accuracy" not in " ".join(args):
        q = gf("nearest", catalog, *args, check=False)
        assert q.returncode == 1 and q.stderr.strip() == f"error: {fragment}"
    assert snapshot(catalog) == before


def test_locate_still_answers_good_positions(catalog):
    out = gf("locate", catalog, "--lat", "35.715", "--lon", "139.773", "--accuracy", "20", "--json").stdout
    assert any(r["area_id"] == "G#AREA_ID_001" for r in json.loads(out))


def test_group_ids_are_taken_as_written_and_never_doubled(tmp_path):
    db = tmp_path / "g.db"
    gf("init", db)
    path = write_collection(tmp_path / "a.geojson", [
        square("G#A", 139.0, 35.0, group_id="G"),      # already grouped: stays G#A
        square("B", 139.1, 35.0, group_id="G"),        # grouped here: G#B
        square("7", 139.2, 35.0, group_id=42),         # a numeric group_id, as a numeric area_id is taken
        square(8, 139.3, 35.0, group_id=4.50),          # numbers as written in the JSON
        square("H#C", 139.4, 35.0, group_id="G"),      # another group's prefix is just part of the id
    ])
    gf("import", db, path)
    ids = [r["area_id"] for r in json.loads(gf("areas", "list", db, "--json").stdout)]
    assert sorted(ids) == sorted(["G#A", "G#B", "42#7", "4.5#8", "G#H#C"]), ids
    # Exported and imported again: the same ids.
    exported = tmp_path / "out.geojson"
    exported.write_text(gf("export", db).stdout)
    db2 = tmp_path / "g2.db"
    gf("init", db2)
    gf("import", db2, exported)
    assert sorted(r["area_id"] for r in json.loads(gf("areas", "list", db2, "--json").stdout)) == sorted(ids)


def test_group_option_does_not_double_a_prefix(tmp_path):
    db = tmp_path / "g.db"
    gf("init", db)
    path = write_collection(tmp_path / "a.geojson", [square("G#A", 139.0, 35.0), square("B", 139.1, 35.0)])
    gf("import", db, path, "--group", "G")
    assert sorted(r["area_id"] for r in json.loads(gf("areas", "list", db, "--json").stdout)) == ["G#A", "G#B"]


def test_a_bad_group_id_is_a_located_error(catalog, tmp_path):
    path = write_collection(tmp_path / "a.geojson", [square("X", 139.0, 35.0, group_id=["G"])])
    before = snapshot(catalog)
    p = gf("import", catalog, path, check=False)
    assert p.returncode == 1 and "properties.group_id" in p.stderr and "must be a string or number" in p.stderr, p.stderr
    assert snapshot(catalog) == before


def test_second_60_only_as_a_leap_second(tmp_path):
    db = tmp_path / "t.db"
    gf("init", db)
    ok = sql(db, "SELECT gf_time('2016-12-31T23:59:60Z'), gf_time('2017-01-01T08:59:60.5+09:00'), "
                 "gf_time('2015-06-30T23:59:60Z');").stdout.strip()
    assert ok == "2016-12-31T23:59:59.000000Z|2016-12-31T23:59:59.500000Z|2015-06-30T23:59:59.000000Z", ok
    for bad in ("2026-11-25T12:34:60Z", "2016-12-31T23:59:60+09:00", "2016-12-30T23:59:60Z"):
        p = sql(db, f"SELECT gf_time('{bad}');", check=False)
        assert p.returncode != 0 and "has second 60, which only a leap second has" in p.stderr, (bad, p.stderr)
    # And in an area's validity period.
    path = write_collection(tmp_path / "a.geojson", [square("V", 139.0, 35.0, valid_from="2026-01-01T00:00:60Z")])
    p = gf("import", db, path, check=False)
    assert p.returncode == 1 and "properties.valid_from" in p.stderr and "second 60" in p.stderr, p.stderr


def test_number_options_are_decimal_only(catalog):
    """`--lat 0x10` would be 16 to strtod; every number option reads decimals only,
    as the data files do."""
    for args in (["locate", catalog, "--lat", "0x10", "--lon", "139"],
                 ["check", catalog, "--subject", "s", "--lat", "35.7", "--lon", "0xB4", "--accuracy", "10",
                  "--time", "2026-01-01T00:00:00Z"],
                 ["nearest", catalog, "--lat", "35.7", "--lon", "139.7e0x"]):
        p = gf(*args, check=False)
        assert p.returncode != 0 and "is not a decimal number" in p.stderr, (args, p.stderr)
    assert run("sqlite3", catalog, "SELECT count(*) FROM gf_subjects;").stdout.strip() == "0"
    gf("locate", catalog, "--lat", "-35.7", "--lon", "1e2", "--accuracy", ".5")


def test_an_id_that_begins_with_its_group_twice_survives_export_and_import(tmp_path):
    db = tmp_path / "a.db"
    gf("init", db)
    src = write_collection(tmp_path / "g.geojson", [square("D", 139.70, 35.70, group_id="G"),
                                                   square("G#G#D", 139.72, 35.70, group_id="G")])
    gf("import", db, src)
    ids = run("sqlite3", db, "SELECT area_id FROM gf_areas ORDER BY 1;").stdout.split()
    assert ids == ["G#D", "G#G#D"]
    gf("export", db, "--out", tmp_path / "out.geojson")
    again = tmp_path / "b.db"
    gf("init", again)
    gf("import", again, tmp_path / "out.geojson")
    assert run("sqlite3", again, "SELECT area_id FROM gf_areas ORDER BY 1;").stdout.split() == ids


def test_locate_near_a_pole_asks_every_longitude(tmp_path):
    """A window that reaches a pole takes every longitude: a wedge ending at the
    North Pole is a candidate of a fix at the pole written at any longitude, and
    of a fix beside the pole whose error circle reaches it."""
    db = tmp_path / "pole.db"
    gf("init", db)
    wedge = {"type": "Polygon", "coordinates": [[[100, 89.9], [170, 89.9], [170, 90], [100, 90], [100, 89.9]]]}
    gf("areas", "add", db, "--id", "wedge", "--geometry", json.dumps(wedge))
    for lon in ("0", "-45", "135", "180"):
        rows = json.loads(gf("locate", db, "--lat", "90", "--lon", lon, "--accuracy", "1", "--confidence", "0.9",
                             "--json").stdout)
        assert [(r["area_id"], r["verdict"]) for r in rows] == [("wedge", "undecided")], (lon, rows)
    rows = json.loads(gf("locate", db, "--lat", "89.99999", "--lon", "0", "--accuracy", "50", "--confidence", "0.9",
                         "--json").stdout)
    assert [(r["area_id"], r["verdict"]) for r in rows] == [("wedge", "undecided")]


@pytest.mark.parametrize("text,stored", [
    # Digits past the microsecond are cut towards the earlier time, as in ISO text (were cut towards zero).
    ("-0.0000001", "1969-12-31T23:59:59.999999Z"),
    ("1969-12-31T23:59:59.9999999Z", "1969-12-31T23:59:59.999999Z"),
    ("-1.0000005", "1969-12-31T23:59:58.999999Z"),
    ("1.0000005", "1970-01-01T00:00:01.000000Z"),
    ("-5e-7", "1969-12-31T23:59:59.999999Z"),
    # Every decimal form, as other numbers are read (were refused as text, taken as a REAL or in NDJSON).
    ("1.7e9", "2023-11-14T22:13:20.000000Z"),
    ("1.7E+9", "2023-11-14T22:13:20.000000Z"),
    ("17000000000000000e-7", "2023-11-14T22:13:20.000000Z"),
    ("1700000000.", "2023-11-14T22:13:20.000000Z"),
    ("+1700000000", "2023-11-14T22:13:20.000000Z"),
    (".5", "1970-01-01T00:00:00.500000Z"),
    ("1795133100.1234567e0", "2026-11-20T00:05:00.123456Z"),
])
def test_unix_seconds_in_text_are_any_decimal_cut_to_the_earlier_microsecond(text, stored):
    assert sql(":memory:", f"SELECT gf_time('{text}');").stdout.strip() == stored


def test_unix_seconds_with_an_exponent_in_a_fixes_file_and_out_of_range(tmp_path):
    db = tmp_path / "t.db"
    gf("init", db)
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\nc1,1.7e9,0,0,1\nc2,1700000000.,0,0,1\nc3,1e20,0,0,1\nc4,1e,0,0,1\n")
    gf("judge", db, "--fixes", fixes, "--explain")
    reasons = sql(db, "SELECT subject_id, reason FROM gf_explain ORDER BY subject_id;").stdout
    assert "c1" not in reasons and "c2" not in reasons, reasons
    assert "c3|row 3: time '1e20' is outside 0000-01-01T00:00:00Z" in reasons, reasons
    assert "c4|row 4: time '1e' is neither ISO 8601 with an offset nor Unix seconds" in reasons, reasons
    assert sql(db, "SELECT subject_id, last_ts FROM gf_subjects ORDER BY 1;").stdout == \
        "c1|2023-11-14T22:13:20.000000Z\nc2|2023-11-14T22:13:20.000000Z\n"


@pytest.mark.parametrize("value,message", [
    ("91,0,5", "error: --circle: LAT must be a latitude in [-90, 90], got 91.0"),
    ("0,181,5", "error: --circle: LON must be a longitude in [-180, 180], got 181.0"),
    ("35,139,0", "error: --circle: RADIUS_M must be a number > 0, got 0.0"),
    ("10,10,100,", "error: --circle: expected LAT,LON,RADIUS_M, got '10,10,100,'"),
])
def test_areas_add_circle_errors_name_the_option_as_written(tmp_path, value, message):
    """From a new-user trial: `--circle 91,0,5` said `geometry.coordinates:
    coordinate [0.0, 91.0] is out of range`, lon first, of a GeoJSON the user never wrote."""
    db = tmp_path / "c.db"
    gf("init", db)
    before = snapshot(db)
    p = gf("areas", "add", db, "--id", "x", "--circle", value, check=False)
    assert p.returncode == 1 and p.stderr.strip() == message, p.stderr
    assert snapshot(db) == before


def test_summaries_of_one_are_singular_and_areas_add_names_no_file(tmp_path):
    db = tmp_path / "one.db"
    gf("init", db)
    assert gf("areas", "add", db, "--id", "x", "--circle", "10,10,100").stdout == "added area x: circle, centre 10° N, 10° E, radius 100 m\n"
    p = gf("areas", "add", db, "--id", "x", "--circle", "10,10,100", check=False)
    assert p.returncode == 1 and "duplicate area_id: the catalog already has an area with this id (use --upsert" in p.stderr, p.stderr
    gf("conditions", "add", db, "--area", "x", "--timing", "IN")
    fixes = tmp_path / "one.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\nu,1.7e9,10,10,1\n")
    assert gf("judge", db, "--fixes", fixes).stdout.startswith(
        "run 1: 1 fix: 1 judged, 0 stale, 0 invalid; 1 transition, 1 notification, 0 not notified (filters)")
    assert gf("locate", db, "--fixes", fixes, "--out", "/dev/null").stderr.startswith("located 1 fix (0 invalid): 1 pair; ")
    assert gf("export", db, "--out", tmp_path / "x.geojson").stderr.startswith("exported 1 area to ")
    assert gf("areas", "remove", db, "x").stdout == "removed 1 area and its conditions\n"
