"""Numbers at the top of SQLite's integers, written by hand or by another
tool into a catalog: each is an error naming it, never a crash of the
command or of the host process, and nothing is written. And a re-import
with --upsert --with-default-conditions gives an area its default pair
once, not again at every import."""
import sqlite3

from conftest import EXTENSION, gf, sql, square, write_collection


def catalog(tmp_path, *areas):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", [square(a, 139.70 + 0.1 * k, 35.60, 0.01) for k, a in enumerate(areas)]))
    return db


def test_default_conditions_past_the_largest_id_are_an_error(tmp_path):
    db = catalog(tmp_path, "A")
    gf("conditions", "add", db, "--id", "9223372036854775806", "--area", "A", "--timing", "IN")
    more = write_collection(tmp_path / "b.geojson", [square("B", 139.9, 35.6, 0.01)])
    before = sql(db, "SELECT count(*) FROM gf_areas; SELECT count(*) FROM gf_conditions;").stdout
    p = gf("import", db, more, "--with-default-conditions", check=False)
    assert p.returncode == 1 and "no condition id is left after 9223372036854775807" in p.stderr, p.stderr
    assert sql(db, "SELECT count(*) FROM gf_areas; SELECT count(*) FROM gf_conditions;").stdout == before
    assert "added condition 9223372036854775807" in gf("conditions", "add", db, "--area", "A", "--timing", "OUT").stdout
    p = gf("conditions", "add", db, "--area", "A", "--timing", "OUT", check=False)
    assert p.returncode == 1 and "no condition id is left" in p.stderr, p.stderr


def test_a_hand_edited_count_of_judged_fixes_is_refused_not_a_crash(tmp_path):
    db = catalog(tmp_path, "A")
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    c.execute("SELECT gf_check('s', '2026-01-07T10:00:00Z', 35.605, 139.705, 5)").fetchall()
    record = c.execute("SELECT record FROM gf_subject_state WHERE subject_id = 's'").fetchone()[0]
    for value in [9223372036854775807, -1]:
        c.execute("UPDATE gf_subject_state SET record = json_set(record, '$.judged', ?)", (value,))
        try:
            c.execute("SELECT gf_check('s', '2026-01-07T10:02:00Z', 35.605, 139.705, 5)").fetchall()
            raise AssertionError("accepted")
        except sqlite3.OperationalError as e:
            assert f"subject 's' has \"judged\" {value}, not an integer from 0 to 9007199254740992" in str(e), e
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\ns,2026-01-07T10:04:00Z,35.605,139.705,5\n")
    # Each hand edit of the record (docs/subject-record.md) in turn, and what judge says of it: a streak
    # out of range, times that are none or come after the last fix, stays without a last fix, not JSON.
    cases = [
        ("json_set(?, '$.stays[0].in', -5)", '"stays[0].in" -5, not an integer'),
        ("json_set(?, '$.stays[0].entered', 'yesterday')", '"stays[0].entered" \'yesterday\', not a time'),
        ("json_set(?, '$.stays[0].entered', '2030-01-01T00:00:00Z')", "stays[0].entered 2030-01-01T00:00:00Z, after its last judged fix"),
        ("json_set(?, '$.last', json('null'))", "has a stay of area 'A' but no last fix"),
        ("json_set(?, '$.last.ts', 'soon')", '"last.ts" \'soon\', not a time'),
        ("substr(?, 2)", "is not JSON"),
    ]
    assert c.execute("SELECT count(*) FROM gf_stays WHERE subject_id = 's'").fetchone() == (1,)
    for edit, message in cases:
        c.execute(f"UPDATE gf_subject_state SET record = {edit}", (record,))
        p = gf("judge", db, "--fixes", fixes, check=False)
        assert p.returncode == 1 and message in p.stderr and "the state record of subject 's'" in p.stderr, (edit, p.stderr)
    assert c.execute("SELECT count(*) FROM gf_runs WHERE kind = 'judge'").fetchone() == (0,)


def test_upsert_gives_an_area_its_default_pair_once(tmp_path):
    db = catalog(tmp_path, "A")
    areas = write_collection(tmp_path / "u.geojson", [square("A", 139.70, 35.60, 0.01), square("B", 139.8, 35.6, 0.01),
                                                      square("B", 139.8, 35.6, 0.02)])
    first = gf("import", db, areas, "--upsert", "--with-default-conditions").stdout
    second = gf("import", db, areas, "--upsert", "--with-default-conditions").stdout
    # A was in the catalog before (no pair added); B is new once, then only replaced.
    assert sql(db, "SELECT area_id, group_concat(timing) FROM gf_conditions GROUP BY area_id ORDER BY area_id;").stdout == "B|IN,OUT\n"
    # The file's second B replaced its first (the last wins): two areas written, not three.
    # The summary says how many areas of the catalog were replaced: A the first time, A and B the second.
    assert first == ("imported 2 areas (2 polygonal, 0 circles) and 2 conditions; "
                     "1 of them replaced an area already in the catalog; "
                     "1 feature of the file replaced an earlier one with the same id\n")
    assert second == ("imported 2 areas (2 polygonal, 0 circles); 2 of them replaced areas already in the catalog; "
                      "1 feature of the file replaced an earlier one with the same id\n")
    assert sql(db, "SELECT count(*), round(max(ST_Area(geom)), 6) FROM gf_areas WHERE area_id = 'B';").stdout == "1|0.0004\n"


def test_a_real_unix_time_keeps_its_microseconds_in_gf_check_as_in_judge_table(tmp_path):
    db = catalog(tmp_path, "A")
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    # 3 µs apart: SQLite's own 15-digit text of these REALs is the same time.
    times = [1767226250.123451, 1767226250.123454]
    assert [c.execute("SELECT gf_time(?)", (t,)).fetchone()[0] for t in times] == \
        ["2026-01-01T00:10:50.123451Z", "2026-01-01T00:10:50.123454Z"]
    c.execute("SELECT gf_check('s', ?, 35.605, 139.705, 5)", (times[0],)).fetchall()
    c.execute("SELECT gf_check('s', ?, 35.7, 139.705, 5)", (times[1],)).fetchall()
    assert c.execute("SELECT judged_fixes FROM gf_subjects").fetchone() == (2,)
