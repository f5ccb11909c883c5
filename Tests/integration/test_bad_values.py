"""Values that could be stored but not used: times past year 9999, text
holding NUL, numbers that are not decimal, negative numbers as option values,
areas with no interior. Each is refused at the door with a clear error (or, for
the last two, answered as documented), and nothing is stored."""
import json
import sqlite3

import pytest

from conftest import CLI, gf, snapshot, sql, square

HEADER = "subject_id,ts,lat,lon,accuracy_m\n"


def state(db):
    """What judgement left: subjects and notifications, as raw bytes of the ids."""
    c = sqlite3.connect(db)
    try:
        subjects = c.execute("SELECT hex(subject_id), last_ts FROM gf_subjects ORDER BY 1").fetchall()
        notes = c.execute("SELECT hex(subject_id), ts, area_id, condition_id FROM gf_notifications ORDER BY 1, 2, 3, 4").fetchall()
        return subjects, notes
    finally:
        c.close()


# --- times after 9999 ---

@pytest.mark.parametrize("ts", ["253402300800", "999999999999", "253402300800.5", "9999-12-31T23:30:00-01:00",
                                "0000-01-01T00:30:00+01:00", "-62167219201"])
def test_a_fix_outside_years_0000_to_9999_is_invalid_and_poisons_nothing(catalog, tmp_path, ts):
    """Before: the time was stored as `10000-01-01…`, which no later read could
    parse, so every later batch holding the subject failed."""
    first = tmp_path / "first.csv"
    first.write_text(HEADER + f"far,{ts},35.7,139.77,5\nnear,1700000000,35.7,139.77,5\n")
    p = gf("judge", catalog, "--fixes", first, "--explain")
    assert "1 judged" in p.stdout + p.stderr and "1 invalid" in p.stdout + p.stderr, p
    reasons = sql(catalog, "SELECT reason FROM gf_explain WHERE subject_id = 'far';").stdout
    assert "outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z" in reasons, reasons
    assert sql(catalog, "SELECT count(*) FROM gf_subjects WHERE subject_id = 'far';").stdout.strip() == "0"
    later = tmp_path / "later.csv"
    later.write_text(HEADER + "far,1700000100,35.7,139.77,5\nnear,1700000100,35.7,139.77,5\n")
    p = gf("judge", catalog, "--fixes", later)
    assert "2 judged" in p.stdout + p.stderr, p


def test_the_last_second_of_9999_is_accepted(catalog, tmp_path):
    fixes = tmp_path / "f.csv"
    fixes.write_text(HEADER + "s,253402300799.5,35.7,139.77,5\n")
    gf("judge", catalog, "--fixes", fixes)
    assert sql(catalog, "SELECT last_ts FROM gf_subjects;").stdout.strip() == "9999-12-31T23:59:59.500000Z"
    gf("state", catalog)


@pytest.mark.parametrize("call", [
    "SELECT gf_time(253402300800);",
    "SELECT gf_time('9999-12-31T23:30:00-01:00');",
    "SELECT gf_check('s', 253402300800, 35.7, 139.77, 5);",
    "SELECT gf_check('s', '999999999999', 35.7, 139.77, 5);",
    "SELECT count(*) FROM gf_nearest(35.7, 139.77, 1, 253402300800);",
    "SELECT gf_regions(35.7, 139.77, 1, 0, 253402300800);",
    "SELECT gf_time(1e300);",
    "SELECT gf_check('s', 1e16, 35.7, 139.77, 5);",
    "SELECT count(*) FROM gf_nearest(35.7, 139.77, 1, -1e20);",
])
def test_sql_functions_refuse_a_time_after_9999(catalog, call):
    before = state(catalog)
    p = sql(catalog, call, check=False)
    assert p.returncode != 0, p.stdout
    assert "outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z" in p.stderr, p.stderr
    assert state(catalog) == before


def test_a_real_time_near_the_epoch_is_a_time(catalog):
    """Before: a REAL within 1e-4 s of the epoch went to text as `1e-05`
    (an exponent, which Unix seconds as text do not have) and was refused."""
    out = sql(catalog, "SELECT gf_time(1e-05), gf_time(-1.5e-05), gf_time(0.0);"
              "SELECT count(*) FROM gf_nearest(35.7, 139.77, 1, 2e-05);"
              "SELECT json_array_length(gf_check('s', 3e-05, 35.7, 139.77, 5)) >= 0;").stdout.split()
    assert out == ["1970-01-01T00:00:00.000010Z|1969-12-31T23:59:59.999985Z|1970-01-01T00:00:00.000000Z", "1", "1"], out
    assert sql(catalog, "SELECT last_ts FROM gf_subjects WHERE subject_id = 's';").stdout.strip() == "1970-01-01T00:00:00.000030Z"
    sql(catalog, "CREATE TABLE t (subject_id, ts, lat, lon, accuracy_m); INSERT INTO t VALUES ('s', 4e-05, 35.7, 139.77, 5);")
    p = gf("judge", catalog, "--table", "t")
    assert "1 judged" in p.stdout + p.stderr, p
    assert sql(catalog, "SELECT last_ts FROM gf_subjects WHERE subject_id = 's';").stdout.strip() == "1970-01-01T00:00:00.000040Z"


def test_cli_refuses_a_time_after_9999(catalog):
    before = snapshot(catalog), state(catalog)
    for args in (["check", catalog, "--subject", "s", "--lat", "35.7", "--lon", "139.77", "--accuracy", "5", "--time", "253402300800"],
                 ["areas", "add", catalog, "--id", "FAR", "--circle", "35.7,139.77,100", "--valid-until", "253402300800"],
                 ["areas", "add", catalog, "--id", "FAR", "--circle", "35.7,139.77,100", "--valid-from", "9999-12-31T23:30:00-01:00"],
                 ["nearest", catalog, "--lat", "35.7", "--lon", "139.77", "--at", "999999999999"]):
        p = gf(*args, check=False)
        assert p.returncode == 1, (args, p)
        assert "outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z" in p.stderr, (args, p.stderr)
    assert (snapshot(catalog), state(catalog)) == before


# --- NUL characters ---

def test_a_nul_in_a_fixes_file_stops_it_before_anything_is_judged(catalog, tmp_path):
    """Before: subject `walk\\0er` was judged (and stored) as `walk`."""
    fixes = tmp_path / "nul.csv"
    fixes.write_bytes((HEADER + "ok,1700000000,35.7,139.77,5\nwalk\0er,1700000000,35.7,139.77,5\n").encode())
    before = state(catalog)
    p = gf("judge", catalog, "--fixes", fixes, check=False)
    assert p.returncode == 1, p
    assert "line 3" in p.stderr and "NUL byte" in p.stderr, p.stderr
    assert state(catalog) == before


def test_a_nul_in_a_fixes_table_makes_that_fix_invalid(catalog):
    sql(catalog, "INSERT INTO gf_fixes (subject_id, ts, lat, lon, accuracy_m) "
                 "VALUES ('walk' || char(0) || 'er', '1700000000', 35.7, 139.77, 5), ('walk', '1700000000', 35.7, 139.77, 5);")
    p = gf("judge", catalog, "--explain")
    assert "1 judged" in p.stdout + p.stderr and "1 invalid" in p.stdout + p.stderr, p
    reasons = sql(catalog, "SELECT reason FROM gf_explain;").stdout
    assert "subject_id 'walk\\u0000er' holds a NUL character" in reasons, reasons
    subjects, _ = state(catalog)
    assert subjects == [("77616C6B", "2023-11-14T22:13:20.000000Z")]


def test_ndjson_fixes_with_nul_or_a_duplicate_name_are_invalid(catalog, tmp_path):
    """Before: `walk\\u0000er` was judged as `walk`, and of two "lat" the first counted."""
    fixes = tmp_path / "f.ndjson"
    fixes.write_text('{"subject_id": "walk\\u0000er", "ts": 1700000000, "lat": 35.7, "lon": 139.77, "accuracy_m": 5}\n'
                     '{"subject_id": "dup", "ts": 1700000000, "lat": 35.7, "lat": 0, "lon": 139.77, "accuracy_m": 5}\n'
                     '{"subject_id": "ok", "ts": 1700000000, "lat": 35.7, "lon": 139.77, "accuracy_m": 5}\n')
    p = gf("judge", catalog, "--fixes", fixes, "--explain")
    assert "1 judged" in p.stdout + p.stderr and "2 invalid" in p.stdout + p.stderr, p
    reasons = sql(catalog, "SELECT reason FROM gf_explain ORDER BY reason;").stdout
    assert "line 1: not a JSON object" in reasons and "(NUL)" in reasons, reasons
    assert "line 2: not a JSON object" in reasons and "duplicate member name 'lat'" in reasons, reasons
    assert state(catalog)[0] == [("6F6B", "2023-11-14T22:13:20.000000Z")]


@pytest.mark.parametrize("call", [
    "SELECT gf_check('walk' || char(0) || 'er', 1700000000, 35.7, 139.77, 5);",
    "SELECT gf_area_contains('G#AREA_ID_001' || char(0) || 'junk', 35.7, 139.77, 5);",
    "SELECT gf_time('1700000000' || char(0) || 'junk');",
])
def test_sql_functions_refuse_text_holding_nul(catalog, call):
    before = state(catalog)
    p = sql(catalog, call, check=False)
    assert p.returncode != 0, p.stdout
    # The message is whole, the NUL written as \u0000 (a C string would stop at it).
    assert "holds a NUL character (U+0000)" in p.stderr, p.stderr
    assert "\\u0000junk'" in p.stderr or "'walk\\u0000er'" in p.stderr, p.stderr
    assert state(catalog) == before


def test_a_nul_in_a_conditions_file_is_refused(catalog, tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(b"condition_id,area_id,timing\n901,G#AREA_ID_001\0x,IN\n")
    before = snapshot(catalog)
    p = gf("conditions", "import", catalog, path, check=False)
    assert p.returncode == 1 and "NUL byte" in p.stderr, p
    assert snapshot(catalog) == before


# --- numbers ---

@pytest.mark.parametrize("value", ["0x1p3", "0X10", "1_000"])
def test_a_fixes_file_number_must_be_decimal(catalog, tmp_path, value):
    """strtod reads 0x1p3 as 8; a fixes file's numbers are decimal only."""
    fixes = tmp_path / "hex.csv"
    fixes.write_text(HEADER + f"s,1700000000,35.7,139.77,{value}\n")
    p = gf("judge", catalog, "--fixes", fixes, "--explain")
    assert "1 invalid" in p.stdout + p.stderr, p
    assert f"accuracy_m '{value}' is not a number" in sql(catalog, "SELECT reason FROM gf_explain;").stdout


def test_decimal_forms_still_read(catalog, tmp_path):
    fixes = tmp_path / "dec.csv"
    fixes.write_text(HEADER + "s,1700000000,+35.7,139.77,5e0\nt,1700000000,35.70,139.77,.5\nu,1700000000,NaN,139.77,5\n")
    p = gf("judge", catalog, "--fixes", fixes, "--explain")
    assert "2 judged" in p.stdout + p.stderr and "1 invalid" in p.stdout + p.stderr, p
    assert "NaN" in sql(catalog, "SELECT reason FROM gf_explain;").stdout


def test_sql_text_numbers_must_be_decimal(catalog):
    p = sql(catalog, "SELECT gf_contains(gf_circle(35, 139, 100), '0x1p3', 139, 5);", check=False)
    assert p.returncode != 0 and "argument 2 (lat) must be a number, got text '0x1p3'" in p.stderr, p
    # The text is named, an empty one too (sqlite3's .import stores an empty CSV field as ''); a BLOB as one.
    for value, got in (("''", "got text ''"), ("'10 m'", "got text '10 m'"), ("x'3130'", "got a BLOB")):
        p = sql(catalog, f"SELECT gf_check('u', '2026-11-20T09:00:00Z', 35, 139, {value});", check=False)
        assert p.returncode != 0 and f"argument 5 (accuracy_m) must be a number, {got}" in p.stderr, (value, p.stderr)
    assert sql(catalog, "SELECT gf_contains(gf_circle(35, 139, 100), '35.0', 139, 5);").stdout.strip() == "1"


@pytest.mark.parametrize("args", [
    ["locate", "{db}", "--lat", "-33.86", "--lon", "-151.21", "--accuracy", "5"],
    ["check", "{db}", "--subject", "s", "--lat", "-33.86", "--lon", "-151.21", "--accuracy", "5", "--time", "1700000000"],
    ["nearest", "{db}", "--lat", "-33.86", "--lon", "-151.21", "-n", "1"],
    ["regions", "{db}", "--lat", "-33.86", "--lon", "-151.21", "-n", "1"],
    ["areas", "add", "{db}", "--id", "SOUTH", "--circle", "-33.86,-151.21,100"],
])
def test_negative_numbers_as_option_values(catalog, args):
    """Before: `--lon -151.21` was taken for an unknown option; `--lon=-151.21` was needed."""
    p = gf(*[catalog if a == "{db}" else a for a in args])
    assert p.returncode == 0


def test_a_negative_number_where_none_is_allowed_is_named(catalog):
    p = gf("positioning", catalog, "--speed", "-1", check=False)
    assert p.returncode == 1 and "--speed: must be >= 0 m/s, got -1.0" in p.stderr, p


# --- areas with no interior ---

# Rings on one point, or on one line: a boundary and nothing inside.
FLAT = ["POLYGON((139 35, 139 35, 139 35, 139 35))", "POLYGON((139 35, 139.01 35, 139.02 35, 139 35))",
        "MULTIPOLYGON(((139 35, 139 35.01, 139 35, 139 35)))"]


@pytest.mark.parametrize("wkt", FLAT)
def test_an_area_with_no_interior_contains_nothing(catalog, wkt):
    """Before: a fix near it was undecided (NULL) as near any boundary."""
    g = f"GeomFromText('{wkt}', 4326)"
    out = sql(catalog, f"SELECT gf_contains({g}, 35, 139.00001, 10, 0.5), gf_contains({g}, 35, 139, 10), "
                       f"gf_contains({g}, 35, 139, 0), gf_inside_probability({g}, 35, 139.005, 10), "
                       f"gf_distance_m({g}, 35, 139) <= 0;").stdout.strip()
    assert out == "0|0|0|0.0|1", out


def test_an_area_with_no_polygon_contains_nothing(catalog):
    """A SpatiaLite MULTIPOLYGON BLOB of no polygons: 0, probability 0, distance -Inf
    (no boundary to be near). SpatiaLite's own `POLYGON EMPTY` is NULL, and gives NULL."""
    import struct
    blob = (b"\x00\x01" + struct.pack("<i", 4326) + struct.pack("<4d", 0, 0, 0, 0) + b"\x7c" + struct.pack("<ii", 6, 0) + b"\xfe").hex()
    out = sql(catalog, f"SELECT gf_contains(x'{blob}', 35, 139, 10, 0.5), gf_inside_probability(x'{blob}', 35, 139, 10), "
                       f"gf_distance_m(x'{blob}', 35, 139);").stdout.strip()
    assert out == "0|0.0|-Inf", out


# --- spans longer than every storable time ---

def test_dwell_and_suppression_longer_than_years_0000_to_9999_are_refused(catalog):
    before = snapshot(catalog)
    for option, value in (("--renotify-suppress-days", "9223372036854775807"), ("--dwell-s", "9223372036854775807")):
        timing = "DWELL" if option == "--dwell-s" else "IN"
        p = gf("conditions", "add", catalog, "--area", "G#AREA_ID_001", "--timing", timing, option, value, check=False)
        assert p.returncode == 1 and "must be at most" in p.stderr and "years 0000 to 9999" in p.stderr, p
    assert snapshot(catalog) == before


def test_a_catalog_holding_huge_spans_is_judged_without_a_crash(tmp_path):
    """Before: `last + renotify_suppress_days` and `dwell_s * 1e6` overflowed and
    the process died of a trap (in gf_check: the host's process)."""
    db = tmp_path / "huge.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "C", "--circle", "35.7,139.77,1000")
    sql(db, "INSERT INTO gf_conditions (condition_id, area_id, timing, renotify_suppress_days) VALUES (1, 'C', 'IN', 9223372036854775807);"
            "INSERT INTO gf_conditions (condition_id, area_id, timing, dwell_s) VALUES (2, 'C', 'DWELL', 9223372036854775807);")
    fixes = tmp_path / "f.csv"
    fixes.write_text(HEADER + "s,1700000000,35.7,139.77,5\ns,1700000100,36.7,139.77,5\ns,1700000200,35.7,139.77,5\n")
    p = gf("judge", db, "--fixes", fixes, "--explain")
    assert "3 judged" in p.stdout + p.stderr and "1 notification," in p.stdout + p.stderr, p
    reasons = sql(db, "SELECT reason FROM gf_explain;").stdout
    assert "suppressed for 9223372036854775807 days (notified" in reasons, reasons
    out = sql(db, "SELECT gf_check('t', 1700000000, 35.7, 139.77, 5); SELECT gf_check('t', 1700000100, 36.7, 139.77, 5);"
                  "SELECT gf_check('t', 1700000200, 35.7, 139.77, 5);").stdout.split("\n")
    assert '"condition_id":1' in out[0] and out[1] == "[]" and out[2] == "[]", out


def test_a_local_date_in_year_10000_is_read_back(tmp_path):
    """A fix in the last hours of 9999 (UTC) is in year 10000 in Tokyo: its
    notification's local date must be read back, or suppression is lost."""
    db = tmp_path / "end.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "C", "--circle", "35.7,139.77,1000", "--timezone", "Asia/Tokyo")
    gf("conditions", "add", db, "--area", "C", "--timing", "IN", "--renotify-suppress-days", "1")
    for rows in ("s,9999-12-31T23:00:00Z,35.7,139.77,5\ns,9999-12-31T23:10:00Z,36.7,139.77,5\n",
                 "s,9999-12-31T23:20:00Z,35.7,139.77,5\n"):
        fixes = tmp_path / "f.csv"
        fixes.write_text(HEADER + rows)
        gf("judge", db, "--fixes", fixes, "--explain")
    assert sql(db, "SELECT local_date FROM gf_last_notified;").stdout.strip() == "10000-01-01"
    assert sql(db, "SELECT count(*) FROM gf_notifications;").stdout.strip() == "1"
    assert "suppressed until 10000-01-02 (notified 10000-01-01)" in sql(db, "SELECT reason FROM gf_explain;").stdout

