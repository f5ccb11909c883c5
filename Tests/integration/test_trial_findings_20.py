"""What the twentieth session's new-user trial and red team found in the
doors of issues 35 and 36 (each test fails on the build they tried):
a run only in the -wal after judge, --since with a compact date or a local
time, GeoJSON with infinite coordinates, and fix-columns files with many
columns, Unicode-equivalent names or a float subject column; the Python
wrappers' time zones, float32 columns, column names and argument checks."""
import shutil
import sqlite3
import struct

from conftest import SAMPLES, gf, run
from test_feeds import STANDARD, fence
from test_fix_columns import catalog, fixcols, float_column, sample_columns, sample_fixes, text_column


def test_a_judged_run_is_in_the_catalog_file_itself(tmp_path):
    """Copied alone (cp, no -wal), the file holds the run judge committed
    (a feed of Unix-second times left it in the -wal every time)."""
    db = catalog_in(tmp_path)
    feed = tmp_path / "unix.csv"
    feed.write_text("subject_id,ts,lat,lon,accuracy_m\na,1795129200,35.7098,139.774,5\na,1795129300,35.72,139.78,5\n")
    gf("judge", db, "--fixes", feed)
    shutil.copy(db, tmp_path / "copy.db")
    count = sqlite3.connect(tmp_path / "copy.db").execute("SELECT count(*) FROM gf_runs").fetchone()[0]
    assert count == 1


def catalog_in(tmp_path):
    (tmp_path / "c").mkdir()
    return catalog(tmp_path / "c")


def test_since_refuses_a_compact_date_and_reads_a_local_time_in_the_catalogs_zone(tmp_path):
    db = fence(tmp_path)
    feed = tmp_path / "f.csv"
    feed.write_text(STANDARD + "u1,2026-11-19T14:59:00Z,35,139,5\nu1,2026-11-19T15:01:00Z,36,139,5\n")
    gf("judge", db, "--fixes", feed)
    p = gf("notifications", db, "--since", "20261120", check=False)
    assert p.returncode != 0 and "'20261120' reads as Unix seconds in 1970; a day is written with dashes (2026-11-20)" in p.stderr, p.stderr
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    # 00:00:30 on the 20th in Tokyo is 15:00:30Z on the 19th: only the OUT at 15:01Z is after it.
    listed = gf("notifications", db, "--since", "2026-11-20T00:00:30", "--format", "csv").stdout
    assert listed.count("\n") == 2 and ",OUT," in listed, listed


def test_geojson_never_writes_an_infinite_coordinate(tmp_path):
    db = catalog_in(tmp_path)
    con = sqlite3.connect(db)
    con.executescript("""
        DROP VIEW gf_notifications;
        CREATE TABLE gf_notifications (id INTEGER PRIMARY KEY, run_id, subject_id, ts, area_id, condition_id, transition,
                                       lat, lon, accuracy_m);
        INSERT INTO gf_notifications VALUES (1, 1, 'a', '2026-11-20T00:00:00Z', 'A', 1, 'IN', '1e999', '-1e999', '1');""")
    con.close()
    import json
    for fmt in ("geojson", "geojsonseq", "ndjson"):
        text = gf("notifications", db, "--format", fmt).stdout
        parsed = json.loads(text) if fmt == "geojson" else json.loads(text.splitlines()[0])
        geometry = parsed["features"][0]["geometry"] if fmt == "geojson" else parsed["geometry"]
        assert geometry is None, text


def test_a_fix_columns_file_may_have_many_columns(tmp_path):
    rows = sample_fixes()
    cols = sample_columns(rows)
    for k in range(70):
        cols[f"extra{k}"] = float_column([float(k)] * len(rows))
    db = catalog_in(tmp_path)
    p = gf("judge", db, "--fixes", fixcols(tmp_path / "wide.fixcols", len(rows), cols))
    assert f"{len(rows)} fixes" in p.stdout, p.stdout


def test_fix_column_names_are_told_apart_by_their_bytes(tmp_path):
    rows = sample_fixes()
    cols = sample_columns(rows)
    cols["caf\u00e9"] = float_column([1.0] * len(rows))
    cols["cafe\u0301"] = float_column([2.0] * len(rows))
    db = catalog_in(tmp_path)
    p = gf("judge", db, "--fixes", fixcols(tmp_path / "names.fixcols", len(rows), cols))
    assert f"{len(rows)} fixes" in p.stdout, p.stdout


def test_a_float_subject_column_is_refused(tmp_path):
    rows = sample_fixes()[:2]
    cols = sample_columns(rows)
    cols["subject_id"] = float_column([7.0, 7.0])
    db = catalog_in(tmp_path)
    p = gf("judge", db, "--fixes", fixcols(tmp_path / "s.fixcols", 2, cols), check=False)
    assert p.returncode != 0 and "column 'subject_id' holds doubles; a subject id is text" in p.stderr, p.stderr


def python(venv, script):
    return run(venv / "bin" / "python", "-c", script).stdout.splitlines()


def test_python_labels_and_warns_about_times_without_an_offset(venv, tmp_path):
    """Naive times in a catalog with a zone are read there, as the command
    reads them (each notification keeps its own row's label), and the
    command's notice that they were read as local time is a warning, with
    a hint for a naive datetime64 column."""
    db = tmp_path / "z.db"
    gf("init", db)
    gf("areas", "add", db, "--id", "A", "--geometry",
       '{"type":"Polygon","coordinates":[[[139,35],[140,35],[140,36],[139,36],[139,35]]]}')
    gf("conditions", "add", db, "--id", "1", "--area", "A", "--timing", "IN")
    gf("conditions", "add", db, "--id", "2", "--area", "A", "--timing", "OUT")
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    lines = python(venv, f"""
import warnings, pandas, geofence
df = pandas.DataFrame(dict(subject_id=["u"] * 3,
    ts=pandas.to_datetime(["2026-11-20 09:00:00", "2026-11-20 12:00:00", "2026-11-20 18:00:00"]),
    lat=[35.5, 34.0, 35.5], lon=[139.5] * 3, accuracy_m=[10.0] * 3), index=["A", "B", "C"])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    notes = geofence.judge({str(db)!r}, df)
print(list(zip(notes.index, notes["ts"], notes["transition"])))
print(len(caught) == 1 and "read as local time in Asia/Tokyo" in str(caught[0].message) and "tz_localize('UTC')" in str(caught[0].message))
""")
    assert lines[0] == ("[('A', '2026-11-20T00:00:00Z', 'IN'), ('B', '2026-11-20T03:00:00Z', 'OUT'), "
                        "('C', '2026-11-20T09:00:00Z', 'IN')]"), lines
    assert lines[1] == "True", lines


def test_python_float32_arguments_and_column_names(venv, tmp_path):
    db = catalog_in(tmp_path)
    lines = python(venv, f"""
import numpy, pandas, geofence
df = pandas.read_csv({str(SAMPLES / 'fixes.csv')!r}, dtype={{"subject_id": str, "ts": str}})
narrow = df.assign(lat=df["lat"].astype(numpy.float32), lon=df["lon"].astype(numpy.float32))
notes = geofence.judge({str(db)!r}, narrow)
print(all(repr(float(x)) == repr(float(str(numpy.float32(x)))) for x in notes["lat"]), len(notes) > 0)
for call in (lambda: geofence.judge({str(db)!r}, df, accuracy_m=-1),
             lambda: geofence.locate({str(db)!r}, df.rename(columns={{"lat": " lat "}}), columns={{"lat": " lat "}}),
             lambda: geofence.locate({str(db)!r}, df.rename(columns={{"lat": "x,lon=y"}}), columns={{"lat": "x,lon=y"}}),
             lambda: geofence.judge({str(db)!r}, df.drop(columns="accuracy_m"))):
    try:
        call()
        print("accepted")
    except geofence.GeofenceError as e:
        print(str(e))
""")
    assert lines[0] == "True True", lines
    assert lines[1].startswith("accuracy_m: the accuracy in metres (a finite number, 0 or more) of fixes without one, got -1"), lines
    assert lines[2].startswith("columns: the column name ' lat ' cannot be named to the command"), lines
    assert lines[3].startswith("columns: the column name 'x,lon=y' cannot be named to the command"), lines
    assert "accuracy_m=METRES gives fixes without one an accuracy" in lines[4] and "the frame's columns: 'subject_id'" in lines[4], lines


# Found by the trials of the export door (issue 36).

def exported_catalog(tmp_path, features):
    from conftest import write_collection
    db = tmp_path / "e.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "e.geojson", features))
    return db


def test_a_shapefile_export_refuses_what_a_shapefile_would_cut(tmp_path):
    """An id past 254 bytes or a free property named past 10 would come back
    as another area or another property: refused, naming the area."""
    from conftest import square
    long_id = "a" * 254 + "X"
    db = exported_catalog(tmp_path, [square(long_id, 139, 35), square("b", 139.1, 35)])
    p = gf("export", db, "--out", tmp_path / "x.shp", check=False)
    assert p.returncode != 0 and "area_id is 255 bytes, and a Shapefile keeps 254 of a text" in p.stderr, p.stderr
    assert not (tmp_path / "x.shp").exists()
    (tmp_path / "2").mkdir()
    db = exported_catalog(tmp_path / "2", [square("c", 139, 35, description_one="x")])
    p = gf("export", db, "--out", tmp_path / "y.shp", check=False)
    assert p.returncode != 0 and "its property 'description_one' has a name longer than a Shapefile's 10 bytes" in p.stderr, p.stderr
    gf("export", db, "--out", tmp_path / "y.gpkg")   # what the message says to use instead


def test_a_csv_export_carries_the_geometry_and_a_failed_export_leaves_nothing(tmp_path):
    from conftest import square
    db = exported_catalog(tmp_path, [square("a", 139, 35)])
    gf("export", db, "--out", tmp_path / "a.csv", "--format", "CSV")
    text = (tmp_path / "a.csv").read_text()
    assert text.splitlines()[0].startswith("WKT,") and "POLYGON ((139 35," in text, text
    (tmp_path / "f").mkdir()
    p = gf("export", db, "--format", "MVT", "--out", tmp_path / "f" / "g.mvt", check=False)
    assert p.returncode != 0
    assert list((tmp_path / "f").iterdir()) == [], list((tmp_path / "f").iterdir())


def test_judge_explain_names_the_command_that_lists_its_reasons(tmp_path):
    db = catalog_in(tmp_path)
    out = gf("judge", db, "--fixes", SAMPLES / "fixes.csv", "--explain").stdout
    line = [x for x in out.splitlines() if x.startswith("reasons: ")][0]
    assert line == f"reasons: `geofence explain {db} --run 1` (table gf_explain)", line
    listed = gf("explain", db, "--run", "1", "--format", "csv").stdout
    assert listed.count("\n") > 1, listed


def test_a_gdal_export_through_a_link_writes_the_file_it_names(tmp_path):
    """The red team's /dev/stdout: a GDAL export renamed its file over a
    link --out named, replacing the link (as root, /dev/stdout itself) and
    leaving the file it named as it was. A link is followed; one to a device
    or a descriptor is refused; an upper-case .SHP is refused by name."""
    import os
    from conftest import square
    db = exported_catalog(tmp_path, [square("a", 139, 35)])
    target = tmp_path / "target.gpkg"
    target.write_bytes(b"old")
    (tmp_path / "link.gpkg").symlink_to(target)
    gf("export", db, "--out", tmp_path / "link.gpkg")
    assert (tmp_path / "link.gpkg").is_symlink() and target.read_bytes().startswith(b"SQLite format 3\0")
    (tmp_path / "fd.gpkg").symlink_to("/proc/self/fd/1")
    (tmp_path / "fd2.gpkg").symlink_to("/dev/stdout")
    for out in (tmp_path / "fd.gpkg", tmp_path / "fd2.gpkg"):  # never /dev/stdout itself: an old build would replace it
        p = gf("export", db, "--out", out, check=False)
        assert p.returncode != 0 and "GDAL writes a file by its name, not to a device or a descriptor" in p.stderr, p.stderr
    assert os.readlink(tmp_path / "fd.gpkg") == "/proc/self/fd/1" and os.readlink(tmp_path / "fd2.gpkg") == "/dev/stdout"
    p = gf("export", db, "--out", tmp_path / "X.SHP", check=False)
    assert p.returncode != 0 and "name it NAME.shp" in p.stderr, p.stderr
