"""Every class of bad GeoJSON gets a located error, exit status 1, and leaves the database as it was."""
import json
import sqlite3

import pytest

from conftest import EXTENSION, SAMPLES, gf, snapshot, sql, square, write_collection

SAMPLES_FIXES = SAMPLES / "fixes.csv"

BOWTIE = {"type": "Polygon", "coordinates": [[[139, 35], [139.01, 35.01], [139.01, 35], [139, 35.01], [139, 35]]]}


def feature(area_id, geometry, **props):
    return {"type": "Feature", "properties": {"area_id": area_id, **props}, "geometry": geometry}


def collection(*features):
    return json.dumps({"type": "FeatureCollection", "features": [square("OK1", 139.5, 35.5), *features]})


CASES = {
    "truncated JSON": ('{"type":"FeatureCollection","features":[{"type":"Feature",', ["malformed GeoJSON at line 1"]),
    "NaN": (collection().replace('"area_id": "OK1"', '"area_id": "OK1", "x": NaN'), ["NaN and Infinity are not JSON numbers"]),
    "deep nesting": (collection().replace('"area_id": "OK1"', '"area_id": "OK1", "x": ' + "[" * 5000 + "]" * 5000),
                     ["nesting deeper than"]),
    "not a collection": (json.dumps(square("A", 139, 35)), ['expected "FeatureCollection"']),
    "line string": (collection(feature("L", {"type": "LineString", "coordinates": [[139, 35], [139.1, 35]]})),
                    ["feature 1", "id 'L'", "geometry.type", "not an area"]),
    "geometry collection": (collection(feature("G", {"type": "GeometryCollection", "geometries": [
        {"type": "Polygon", "coordinates": [[[139, 35], [139.1, 35], [139.1, 35.1], [139, 35]]]}]})),
        ["feature 1", "id 'G'", "geometry.type", "GeometryCollection is not an area"]),
    "unclosed ring": (collection(feature("U", {"type": "Polygon", "coordinates": [[[139, 35], [139.1, 35], [139.1, 35.1], [139, 35.1]]]})),
                      ["feature 1", "id 'U'", "geometry.coordinates[0]", "not closed"]),
    "short ring": (collection(feature("S", {"type": "Polygon", "coordinates": [[[139, 35], [139.1, 35], [139, 35]]]})),
                   ["id 'S'", "at least 4"]),
    "latitude 95": (collection(feature("R", {"type": "Polygon", "coordinates": [[[139, 35], [139.1, 95], [139.1, 35.1], [139, 35]]]})),
                    ["id 'R'", "geometry.coordinates[0][1]", "out of range"]),
    "string coordinate": (collection(feature("T", {"type": "Polygon", "coordinates": [[[139, "35"], [139.1, 35], [139.1, 35.1], [139, 35]]]})),
                          ["id 'T'", "finite number"]),
    "self-intersection": (collection(feature("B", BOWTIE)), ["id 'B'", "Self-intersection", "--make-valid"]),
    "duplicate id": (collection(square("OK1", 140, 35)), ["feature 1", "duplicate area_id"]),
    "negative accuracy": (collection(square("N", 140, 35, in_accuracy_max_m=-5)), ["id 'N'", "properties.in_accuracy_max_m"]),
    "confirm count 0": (collection(square("C", 140, 35, out_confirm_count=0)), ["id 'C'", "properties.out_confirm_count", ">= 1"]),
    "unknown time zone": (collection(square("Z", 140, 35, timezone="Tokyo")), ["id 'Z'", "properties.timezone", "unknown time zone 'Tokyo'"]),
    "time without offset": (collection(square("V", 140, 35, valid_from="2026-01-01T00:00:00")), ["properties.valid_from", "no UTC offset"]),
    "circle without radius": (collection(feature("P", {"type": "Point", "coordinates": [139, 35]})), ["id 'P'", "radius_m"]),
    "bad threshold type": (collection(square("Q", 140, 35, in_accuracy_max_m="ten")), ["properties.in_accuracy_max_m", "must be a number"]),
    "Unix time after 9999": (collection(square("Y", 140, 35, valid_until=253402300800)),
                             ["feature 1", "id 'Y'", "properties.valid_until", "outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z"]),
    "Unix time string after 9999": (collection(square("Y", 140, 35, valid_from="999999999999")),
                                    ["id 'Y'", "properties.valid_from", "outside 0000-01-01"]),
    "ISO time in year 10000 by its offset": (collection(square("Y", 140, 35, valid_until="9999-12-31T23:30:00-01:00")),
                                             ["id 'Y'", "properties.valid_until", "outside 0000-01-01"]),
    "NUL in area_id": (collection(square("A\u0000B", 140, 35)), ["feature 1", "\\u0000 (NUL) in a string"]),
    "NUL in a free property": (collection(square("N0", 140, 35, note="x\u0000y")), ["feature 1", "\\u0000 (NUL)"]),
    "duplicate member name": (collection(square("DK", 140, 35)).replace('"area_id": "DK"', '"area_id": "DK", "area_id": "DK2"'),
                              ["feature 1", "duplicate member name 'area_id'"]),
    "duplicate top-level member": ('{"type": "FeatureCollection", "features": [], "features": []}', ["duplicate member name 'features'"]),
    "hex float": (collection().replace('"area_id": "OK1"', '"area_id": "OK1", "x": 0x1p3'),
                  ["feature 0", "malformed number '0x1p3'", "decimal, not hexadecimal"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_geojson(catalog, tmp_path, name):
    text, expected = CASES[name]
    path = tmp_path / "bad.geojson"
    path.write_text(text)
    before = snapshot(catalog)
    p = gf("import", catalog, path, check=False)
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith("error: ") and str(path) in p.stderr
    for fragment in expected:
        assert fragment in p.stderr, p.stderr
    assert snapshot(catalog) == before


def test_make_valid_repairs_and_says_which(catalog, tmp_path):
    path = tmp_path / "bow.geojson"
    path.write_text(collection(feature("B", BOWTIE)))
    p = gf("import", catalog, path, "--make-valid")
    assert "repaired feature 1 (id 'B')" in p.stderr
    assert "2 parts" in gf("areas", "show", catalog, "B").stdout


def test_missing_file(catalog, tmp_path):
    p = gf("import", catalog, tmp_path / "nope.geojson", check=False)
    assert p.returncode == 1 and "No such file" in p.stderr


def test_area_ids_differing_only_in_normalization_stop_judgement(catalog, tmp_path):
    """SQLite's UNIQUE sees two area_ids in "é" and "e" + U+0301; judgement keys
    areas by Swift string and would merge them. `import` and `areas add`
    refuse to make such a pair; a catalog that holds one anyway (renamed in
    SQL) is refused by a batch and `locate`, with both ids named, and
    nothing is kept."""
    areas = tmp_path / "nfc.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [
        square("\u00e9", 139.70, 35.60), square("e\u0301", 139.70, 35.60, size=0.02)]}))
    before = snapshot(catalog)
    p = gf("import", catalog, areas, check=False)
    assert p.returncode == 1 and "differ only in Unicode normalization" in p.stderr and str(areas) in p.stderr, p
    assert snapshot(catalog) == before
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [
        square("\u00e9", 139.70, 35.60), square("X2", 139.70, 35.60, size=0.02)]}))
    gf("import", catalog, areas)
    p = gf("areas", "add", catalog, "--id", "e\u0301", "--circle", "35.6,139.7,100", check=False)
    assert p.returncode == 1 and "differ only in Unicode normalization" in p.stderr, p
    sql(catalog, "UPDATE gf_areas SET area_id = 'e' || char(769) WHERE area_id = 'X2';")
    fixes = tmp_path / "fixes.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\nS,1700000000,35.605,139.705,5\nS,1700000060,35.615,139.715,5\n")
    before = snapshot(catalog)
    for command in (["judge", catalog, "--fixes", fixes], ["locate", catalog, "--fixes", fixes]):
        p = gf(*command, check=False)
        assert p.returncode == 1, p
        assert "differ only in Unicode normalization" in p.stderr and "C3A9" in p.stderr and "65CC81" in p.stderr, p.stderr
    assert snapshot(catalog) == before


def test_a_huge_field_is_cut_in_the_error_line(catalog, tmp_path):
    """A 10 MB value echoed in an error is cut to ~200 characters, with its length."""
    path = tmp_path / "huge.geojson"
    path.write_text(collection(square("Z" * 10_000_000, 140, 35, timezone="T" * 10_000_000)))
    before = snapshot(catalog)
    p = gf("import", catalog, path, check=False)
    assert p.returncode == 1
    assert len(p.stderr) < 1000, len(p.stderr)
    assert "id 'ZZZZ" in p.stderr and "unknown time zone 'TTTT" in p.stderr and "… (10000000 bytes)'" in p.stderr, p.stderr
    assert snapshot(catalog) == before


def test_a_byte_order_mark_before_the_geojson_is_skipped(catalog, tmp_path):
    path = tmp_path / "bom.geojson"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"type": "FeatureCollection", "features": [square("BOM", 140, 35)]}).encode())
    p = gf("import", catalog, path)
    assert "imported 1 area (1 polygonal, 0 circles)" in p.stdout
    assert "BOM" in gf("areas", "list", catalog).stdout


@pytest.mark.parametrize("name,accepted", [("urn:ogc:def:crs:EPSG::3857", False), ("EPSG:2263", False),
                                           ("urn:ogc:def:crs:OGC:1.3:CRS84", True), ("EPSG:4326", True)])
def test_a_legacy_crs_member_must_be_lon_lat(catalog, tmp_path, name, accepted):
    """A 2008-style `crs` naming another system would make every coordinate mean
    something else: refused with the way to reproject, never ignored."""
    path = write_collection(tmp_path / "crs.geojson", [square("sq", 10, 10, size=70)],
                            crs={"type": "name", "properties": {"name": name}})
    before = snapshot(catalog)
    p = gf("import", catalog, path, check=False)
    if accepted:
        assert p.returncode == 0, p.stderr
    else:
        assert p.returncode == 1 and "crs: " in p.stderr and "is not WGS 84 longitude/latitude" in p.stderr
        assert "ogr2ogr -f GPKG out.gpkg" in p.stderr      # GDAL's GeoJSON writer would round
        assert snapshot(catalog) == before


# FAIL on the fifth row keeps the four before it, as the engine's own
# multi-row `INSERT OR FAIL` does: the run's transaction must undo them.
@pytest.mark.parametrize("how", ["ABORT", "FAIL"])
def test_an_error_from_a_users_trigger_is_one_line_and_changes_nothing(catalog, how):
    from conftest import run
    run("sqlite3", catalog, "CREATE TRIGGER boom BEFORE INSERT ON gf_notification_rows "
        f"WHEN (SELECT count(*) FROM gf_notification_rows) = 4 BEGIN SELECT RAISE({how}, 'vetoed'); END;")
    p = gf("judge", catalog, "--fixes", SAMPLES_FIXES, check=False)
    assert p.returncode == 2 and "vetoed" in p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    assert run("sqlite3", catalog, "SELECT count(*) FROM gf_subjects;").stdout.strip() == "0"
    assert run("sqlite3", catalog, "SELECT count(*) FROM gf_notifications;").stdout.strip() == "0"


def test_a_failing_users_trigger_is_named(catalog):
    """From a new-user trial: a UNIQUE constraint that failed in a user's
    trigger on the stored notifications was reported as the INSERT's error,
    without the trigger's name; with several triggers, which one refused the
    run was anyone's guess. The run is rolled back, as before."""
    from conftest import run
    run("sqlite3", catalog, "CREATE TABLE once (area_id TEXT UNIQUE); INSERT INTO once VALUES ('G#AREA_ID_001');"
        "CREATE TRIGGER to_queue AFTER INSERT ON gf_notification_rows BEGIN "
        "INSERT INTO once SELECT area_id FROM gf_area_keys WHERE area_key = new.area_key; END;"
        "CREATE TRIGGER gf_audit AFTER INSERT ON gf_notification_rows BEGIN SELECT 1; END;")  # yours, though named gf_
    before = snapshot(catalog)
    p = gf("judge", catalog, "--fixes", SAMPLES_FIXES, check=False)
    assert p.returncode == 2 and "UNIQUE constraint failed: once.area_id; gf_notification_rows has triggers of yours, " \
        "which ran in this statement: gf_audit, to_queue (SQLite 2067" in p.stderr, p.stderr
    assert snapshot(catalog) == before
    p = sql(catalog, "SELECT gf_check('s', '2026-11-20T09:05:00+09:00', 35.7098, 139.774, 15);", check=False)
    assert p.returncode != 0 and "gf_check: UNIQUE constraint failed: once.area_id; gf_notification_rows has triggers of yours" in p.stderr, p.stderr
    assert snapshot(catalog) == before


def test_fixes_files_as_other_tools_write_them_get_errors_that_say_why(tmp_path):
    """From a new-user trial: a spreadsheet's ';'-separated export was told
    only that the header had no column 'subject_id'; Spark's default
    backslash escape of a quote was called a 'stray quote inside an unquoted
    field', of a field that was quoted; `"ab"c` was read as `abc`. None
    judges anything."""
    db = tmp_path / "f.db"
    gf("init", db)
    before = snapshot(db)
    semi = tmp_path / "semi.csv"
    semi.write_text("subject_id;ts;lat;lon;accuracy_m\nu;1700000000;10,5;10;1\n")
    p = gf("judge", db, "--fixes", semi, check=False)
    assert p.returncode == 1 and p.stderr.strip().endswith(
        "the header has no column 'subject_id' (needs subject_id, ts, lat, lon, accuracy_m); "
        "fields are separated by commas, and this header is one field holding ';'"), p.stderr
    spark = tmp_path / "spark.csv"
    spark.write_text('subject_id,ts,lat,lon,accuracy_m\n"dev \\"A\\"",1700000000,10,10,1\n')
    p = gf("judge", db, "--fixes", spark, check=False)
    assert p.returncode == 1 and "spark.csv, line 2: field 1, quoted, goes on after its closing quote: a quote inside a quoted field " \
        "is written twice (\"\"), not after a backslash (Spark: write with option escape='\"')" in p.stderr, p.stderr
    glued = tmp_path / "glued.csv"
    glued.write_text('subject_id,ts,lat,lon,accuracy_m\nu,1700000000,10,10,1\n"ab"c,1700000000,10,10,1\n')
    p = gf("judge", db, "--fixes", glued, check=False)
    assert p.returncode == 1 and "glued.csv, line 3: field 1, quoted, goes on after its closing quote: " \
        "a field is quoted whole or not at all" in p.stderr, p.stderr
    assert snapshot(db) == before


def test_command_options_and_conditions_headers_are_named_in_errors(catalog, tmp_path):
    """From a new-user trial: `check --lat 95` said `invalid fix: latitude
    95.0 outside …` and `areas add --id ''` blamed `properties.area_id`,
    naming no option; a conditions file exported with `;` got no hint, and a
    header `condition_id, area_id` was refused for its spaces."""
    before = snapshot(catalog)
    fix = ["--subject", "s", "--lat", "35.7", "--lon", "139.7", "--accuracy", "5", "--time", "2026-11-20T09:00:00Z"]
    for option, value, message in [("--lat", "95", "error: --lat: must be a latitude in [-90, 90], got 95.0"),
                                   ("--accuracy", "-1", "error: --accuracy: must be a finite number of metres >= 0, got -1.0"),
                                   ("--time", "yesterday", "error: --time: time 'yesterday' is neither ISO 8601")]:
        args = list(fix)
        args[args.index(option) + 1] = value
        p = gf("check", catalog, *args, check=False)
        assert p.returncode == 1 and p.stderr.startswith(message), p.stderr
    p = gf("areas", "add", catalog, "--id", "", "--circle", "35,139,100", check=False)
    assert p.returncode == 1 and p.stderr.startswith("error: --id: must not be empty"), p.stderr
    semi = tmp_path / "semi.csv"
    semi.write_text("condition_id;area_id;timing\n90;G#AREA_ID_001;IN\n")
    p = gf("conditions", "import", catalog, semi, check=False)
    assert p.returncode == 1 and "fields are separated by commas, and this header is one field holding ';'" in p.stderr, p.stderr
    assert snapshot(catalog) == before
    spaced = tmp_path / "spaced.csv"
    spaced.write_text("condition_id, area_id, timing\n90,G#AREA_ID_001,IN\n")
    assert "imported 1 condition" in gf("conditions", "import", catalog, spaced).stdout
    # A second trial: a duplicate id named nothing but the column.
    after = snapshot(catalog)
    again = tmp_path / "again.csv"
    again.write_text("condition_id,area_id,timing\n91,G#AREA_ID_001,OUT\n90,G#AREA_ID_001,IN\n")
    p = gf("conditions", "import", catalog, again, check=False)
    assert p.returncode == 1 and "duplicate condition_id: condition 90 exists already, in the catalog or earlier in this input" in p.stderr \
        and "an empty condition_id in a file, or `conditions add` without --id, numbers a new condition" in p.stderr, p.stderr
    assert snapshot(catalog) == after


def test_a_days_work_errors_name_the_option_column_or_run(catalog, tmp_path):
    """From a new-user trial: `conditions add` errors named CSV columns
    (`dwell_s`) and an id the user never gave; a trailing comma in a
    conditions header was `unknown column(s) ''`; a space before an opening
    quote was called a stray quote; `notifications --run 99` was an empty
    listing and exit 0."""
    before = snapshot(catalog)
    p = gf("conditions", "add", catalog, "--area", "G#AREA_ID_001", "--timing", "DWELL", check=False)
    assert p.returncode == 1 and p.stderr.strip() == "error: --dwell-s: a DWELL condition needs dwell_s", p.stderr
    p = gf("conditions", "add", catalog, "--area", "G#AREA_ID_001", "--timing", "IN", "--timezone", "asia/tokyo", check=False)
    assert p.returncode == 1 and p.stderr.strip() == "error: --timezone: unknown time zone 'asia/tokyo' (did you mean 'Asia/Tokyo'?)", p.stderr
    p = gf("conditions", "add", catalog, "--area", "G#AREA_ID_001", "--timing", "IN", "--timezone", "JST", check=False)
    assert p.returncode == 1 and "an abbreviation such as JST is none" in p.stderr, p.stderr
    p = gf("settings", catalog, "default_timezone", "america/new_york", check=False)
    assert p.returncode == 1 and "(did you mean 'America/New_York'?)" in p.stderr, p.stderr
    trailing = tmp_path / "trailing.csv"
    trailing.write_text("condition_id,area_id,timing,\n90,G#AREA_ID_001,IN,\n")
    p = gf("conditions", "import", catalog, trailing, check=False)
    assert p.returncode == 1 and "a column with no name: a comma at the header's end?" in p.stderr, p.stderr
    spaced = tmp_path / "spaced.csv"
    spaced.write_text('condition_id,area_id,timing,weekdays\n90,G#AREA_ID_001,IN, "Mon,Tue"\n')
    p = gf("conditions", "import", catalog, spaced, check=False)
    assert p.returncode == 1 and "line 2: field 4 has spaces before its opening quote" in p.stderr, p.stderr
    assert snapshot(catalog) == before
    p = gf("notifications", catalog, "--run", "99", "--format", "csv", check=False)
    assert p.returncode == 1 and p.stdout == "" and "--run: no run 99 in" in p.stderr, (p.stdout, p.stderr)


def test_gf_check_says_what_a_refused_time_most_likely_is(catalog):
    """From a new-user trial: gf_check refused epoch milliseconds and a time without an offset (the catalog
    naming a zone) without saying why `geofence judge` reads both (`--time-unit ms`, default_timezone)."""
    gf("settings", catalog, "default_timezone", "Europe/Paris")
    c = sqlite3.connect(catalog, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(EXTENSION))
    for ts, hint in [(1774692000000, "13 digits read as Unix seconds: epoch milliseconds? gf_check takes seconds (divide by 1000.0)"),
                     ("2026-03-28T10:00:00", "gf_check reads no time in a zone (not even the catalog's default_timezone")]:
        with pytest.raises(sqlite3.OperationalError) as e:
            c.execute("SELECT gf_check('x1', ?, 48.9, 2.3, 10)", (ts,)).fetchone()
        assert hint in str(e.value), str(e.value)
    with pytest.raises(sqlite3.OperationalError) as e:
        c.execute("SELECT gf_check('x1', '99999-01-01T00:00:00Z', 48.9, 2.3, 10)").fetchone()
    assert "epoch milliseconds" not in str(e.value) and "zone" not in str(e.value), str(e.value)
    assert c.execute("SELECT count(*) FROM gf_subject_state").fetchone() == (0,)
    c.close()
