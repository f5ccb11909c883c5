"""Issue 35's defects outside the GDAL door, each as a new user or a red team
met it: a full disk opening a WAL catalog, MakeValid's own warnings on the
terminal, gf_check called from a TEMP trigger inside gf_check, a statement
that feeds gf_check the notifications it writes, output files whose name
says another format than the one written, and error texts and number rules
the docs quoted wrongly. (The symbolic-link catalog is in test_read_only.py,
which runs commands as an unprivileged user.)"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import EXTENSION, ROOT, SAMPLES, gf, run, sql, square, write_collection

BOWTIE = {"type": "Polygon", "coordinates": [[[139, 35], [139.01, 35.01], [139.01, 35], [139, 35.01], [139, 35]]]}
# Each gf_check statement below runs under this deadline: one that never ends fails the test instead of hanging it.
DEADLINE_S = 120


def notification_count(db):
    return int(run("sqlite3", db, "SELECT count(*) FROM gf_notifications;").stdout)


@pytest.fixture
def judged(catalog):
    """The sample catalog after one judgement of the sample fixes (it has notifications)."""
    gf("judge", catalog, "--fixes", SAMPLES / "fixes.csv")
    assert notification_count(catalog) > 0
    return catalog


# -- 6: errors that blamed the wrong thing ---------------------------------------------------------------------------

@pytest.fixture
def full_disk_catalog(tmp_path, catalog):
    """The catalog, closed (no -shm file), alone on a tmpfs filled to the last byte."""
    mount = tmp_path / "small"
    mount.mkdir()
    size = os.path.getsize(catalog) + (256 << 10)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"needs root and CAP_SYS_ADMIN to mount a small tmpfs to fill: {p.stderr.strip()}")
    assert run("sqlite3", catalog, "PRAGMA journal_mode;").stdout.strip() == "wal"
    try:
        db = mount / "fences.db"
        shutil.copy(catalog, db)
        assert not Path(f"{db}-shm").exists() and not Path(f"{db}-wal").exists()
        with open(mount / "filler", "wb", buffering=0) as f:
            for chunk in (4096, 1):
                try:
                    while True:
                        f.write(b"\0" * chunk)
                except OSError:
                    pass
        yield db
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_a_full_disk_when_opening_a_wal_catalog_says_so(full_disk_catalog):
    """Before: `disk I/O error (SQLite 4874, in: PRAGMA mmap_size = …)`: SQLite
    could not make the -shm file (SQLITE_IOERR_SHMSIZE, errno ENOSPC)."""
    db = full_disk_catalog
    for command in (["areas", "list", db], ["notifications", db], ["settings", db]):
        p = gf(*command, check=False)
        assert p.returncode == 2, (command, p.stdout, p.stderr)
        assert f"error: {db}: cannot open: no space left on device" in p.stderr, p.stderr
        assert "free some space" in p.stderr
        assert "disk I/O error" not in p.stderr and "PRAGMA" not in p.stderr, p.stderr


def test_make_valid_keeps_rttopo_warnings_off_the_terminal(catalog, tmp_path):
    """Before: `RTTOPO warning: Self-intersection at or near point …` on
    standard error for each repaired polygon, beside our own line."""
    path = write_collection(tmp_path / "bow.geojson", [{"type": "Feature", "properties": {"area_id": "B"}, "geometry": BOWTIE}])
    p = gf("import", catalog, path, "--make-valid")
    assert "RTTOPO" not in p.stderr and "GEOS" not in p.stderr, p.stderr
    assert "(id 'B'): Self-intersection" in p.stderr, p.stderr
    p = gf("areas", "add", catalog, "--id", "B2", "--geometry", json.dumps(BOWTIE), "--make-valid")
    assert "RTTOPO" not in p.stderr and "repaired: Self-intersection" in p.stderr, p.stderr
    assert "2 parts" in gf("areas", "show", catalog, "B2").stdout
    # Standard error works again after the repair: a later error is still printed.
    p = gf("import", catalog, path, "--make-valid", check=False)
    assert p.returncode == 1 and "duplicate area_id" in p.stderr, p.stderr


@pytest.mark.parametrize("inner_accuracy", ["NEW.accuracy_m", "-1"])
def test_gf_check_from_a_temp_trigger_inside_gf_check_is_refused_once_and_truly(judged, inner_accuracy):
    """Before, in autocommit: `gf_check: gf_check: cannot run inside a statement
    that writes … within an open transaction` — the prefix twice, and a
    transaction the user never opened (it was the outer call's own). An
    invalid fix in the inner call (accuracy -1) is refused as a call inside a
    call too: it once came back as the outer, valid, call's `invalid fix`."""
    before = notification_count(judged)
    p = sql(judged, f"""
CREATE TEMP TRIGGER relay AFTER INSERT ON gf_notification_rows
BEGIN SELECT gf_check('relay-' || NEW.subject_key, NEW.ts_us / 1000000, NEW.lat, NEW.lon, {inner_accuracy}); END;
SELECT gf_check('newcomer', '2026-11-20T09:05:00+09:00', 35.7098, 139.7740, 15);
""", check=False)
    assert p.returncode != 0
    message = p.stderr.strip()
    assert message.count("gf_check:") == 1, message
    assert "within an open transaction" not in message, message
    assert "cannot be called from a trigger" in message and "relay" in message, message
    assert notification_count(judged) == before
    assert run("sqlite3", judged, "SELECT count(*) FROM gf_subjects WHERE subject_id IN ('newcomer', 'relay-newcomer');").stdout.strip() == "0"


# -- 7: a statement reading the rows its gf_check calls write --------------------------------------------------------

@pytest.mark.parametrize("source", ["gf_notifications", "a TEMP view of it", "a subquery of it"])
def test_gf_check_over_gf_notifications_is_refused_and_ends(judged, source):
    """Before: it never ended, each call adding rows the scan then reached
    (5 GB in 2 minutes). max_page_count bounds the file, so the starting build
    fails at once with a full database instead of filling the disk."""
    before = notification_count(judged)
    pages = int(run("sqlite3", judged, "PRAGMA page_count;").stdout)
    select = {
        "gf_notifications": "SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM gf_notifications;",
        "a TEMP view of it": "CREATE TEMP VIEW again AS SELECT * FROM main.gf_notifications;\n"
                             "SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM again;",
        "a subquery of it": "SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM "
                            "(SELECT * FROM gf_notifications WHERE transition <> 'DWELL');",
    }[source]
    head = f".load mod_spatialite\n.load {EXTENSION.with_suffix('')}\nPRAGMA max_page_count = {pages + 2000};\n"
    p = subprocess.run(["sqlite3", "-bail", "-batch", str(judged)], input=head + select, capture_output=True, text=True,
                       timeout=DEADLINE_S)
    assert p.returncode != 0, p.stdout
    assert "gf_check: this statement, or another left running on this connection, reads gf_notifications" in p.stderr, p.stderr
    assert "CREATE TEMP TABLE" in p.stderr
    assert notification_count(judged) == before


def test_gf_check_over_a_copy_of_gf_notifications_finishes(judged):
    """The way the refusal says: copy the rows, then judge the copy. Every
    copied fix was judged already (each is a notification's own fix), so each
    call is stale and the notifications stay as they were."""
    before = notification_count(judged)
    p = subprocess.run(["sqlite3", "-bail", "-batch", str(judged)], capture_output=True, text=True, timeout=DEADLINE_S, input=f"""
.load mod_spatialite
.load {EXTENSION.with_suffix('')}
CREATE TEMP TABLE fixes AS SELECT subject_id, ts, lat, lon, accuracy_m FROM gf_notifications ORDER BY ts, id;
SELECT count(*), sum(gf_check(subject_id, ts, lat, lon, accuracy_m) = '[]') FROM fixes;
""")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"{before}|{before}"
    assert notification_count(judged) == before


def test_a_statement_that_only_reads_other_tables_is_not_refused(catalog, tmp_path):
    """The check looks at what each statement reads: a table of fixes, stepped
    while its calls write, is judged as before, with the same notifications
    as the command line."""
    copy = tmp_path / "copy.db"
    shutil.copy(catalog, copy)
    gf("judge", copy, "--fixes", SAMPLES / "fixes.csv")
    c = sqlite3.connect(catalog, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    c.execute("CREATE TEMP TABLE fixes (subject_id, ts, lat, lon, accuracy_m)")
    rows = [line.split(",") for line in (SAMPLES / "fixes.csv").read_text().splitlines()[1:]]
    c.executemany("INSERT INTO fixes VALUES (?, ?, ?, ?, ?)", rows)
    c.execute("CREATE TEMP TABLE ordered AS SELECT * FROM fixes ORDER BY gf_time(ts), rowid")
    c.execute("BEGIN IMMEDIATE")
    c.execute("SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM ordered ORDER BY rowid").fetchall()
    c.execute("COMMIT")
    c.close()
    listing = "SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications ORDER BY 1, 2, 3, 4, 5;"
    assert run("sqlite3", catalog, listing).stdout == run("sqlite3", copy, listing).stdout != ""


# -- 8: the output's name and its format -----------------------------------------------------------------------------

def test_judge_out_with_the_name_of_a_format_it_does_not_write_is_refused(catalog, tmp_path):
    """Before: `judge --out notes.geojson` wrote CSV into notes.geojson (now
    it writes GeoJSON, issue 36; a GeoPackage or Shapefile name is refused)."""
    before = run("sqlite3", catalog, ".dump").stdout
    for name in ("notes.gpkg", "notes.shp", "notes.fgb"):
        out = tmp_path / name
        p = gf("judge", catalog, "--fixes", SAMPLES / "fixes.csv", "--out", out, check=False)
        assert p.returncode == 64, (name, p.stderr)
        assert f"--out {out} names a" in p.stderr and "judge writes csv (.csv), ndjson (.ndjson, .jsonl), geojson (.geojson, .json)" in p.stderr, p.stderr
        assert not out.exists()
    assert run("sqlite3", catalog, ".dump").stdout == before      # refused before the run


def test_judge_out_and_format_that_disagree_are_refused_naming_both(catalog, tmp_path):
    for fmt, name in (("csv", "notes.ndjson"), ("ndjson", "notes.csv"), ("csv", "notes.geojson")):
        out = tmp_path / name
        p = gf("judge", catalog, "--fixes", SAMPLES / "fixes.csv", "--out", out, "--format", fmt, check=False)
        assert p.returncode == 64, p.stderr
        assert f"--format {fmt}" in p.stderr and f"--out {out}" in p.stderr, p.stderr
        assert not out.exists()
    # A name of no format follows --format, as before.
    out = tmp_path / "notes.txt"
    gf("judge", catalog, "--fixes", SAMPLES / "fixes.csv", "--out", out, "--format", "ndjson")
    assert json.loads(out.read_text().splitlines()[0])["subject_id"]


def test_export_follows_the_name(catalog, tmp_path):
    """Before: `export --out x.gpkg` wrote GeoJSON text into x.gpkg."""
    collection = gf("export", catalog).stdout
    gf("export", catalog, "--out", tmp_path / "a.json")
    assert (tmp_path / "a.json").read_text() == collection
    gf("export", catalog, "--out", tmp_path / "a.geojsonl")
    lines = (tmp_path / "a.geojsonl").read_text().splitlines()
    assert lines == gf("export", catalog, "--format", "geojsonseq").stdout.splitlines() and len(lines) == 4
    if shutil.which("ogr2ogr") is None:
        pytest.skip("needs GDAL's ogr2ogr (gdal-bin) to write a GeoPackage")
    gf("export", catalog, "--out", tmp_path / "a.gpkg")
    assert (tmp_path / "a.gpkg").read_bytes().startswith(b"SQLite format 3\0")
    db = tmp_path / "again.db"
    gf("init", db)
    gf("import", db, tmp_path / "a.gpkg", "--group", "G")
    assert gf("export", db).stdout == collection


def test_export_refuses_a_name_of_another_format_or_one_its_format_contradicts(catalog, tmp_path):
    for args, said in ((["--out", tmp_path / "a.csv"], "names a CSV file, which export does not write"),
                       (["--out", tmp_path / "a.gpkg", "--format", "geojson"], "--format geojson and --out"),
                       (["--out", tmp_path / "a.geojson", "--format", "gpkg"], "--format GPKG and --out")):  # the driver as GDAL names it
        p = gf("export", catalog, *args, check=False)
        assert p.returncode == 64, (args, p.stderr)
        assert said in p.stderr, p.stderr
        assert not Path(args[1]).exists()


def test_locate_pairs_go_only_into_a_csv_name(catalog, tmp_path):
    out = tmp_path / "pairs.json"
    p = gf("locate", catalog, "--fixes", SAMPLES / "fixes.csv", "--out", out, check=False)
    assert p.returncode == 64 and "names a JSON file, which locate --fixes does not write" in p.stderr, p.stderr
    assert not out.exists()
    gf("locate", catalog, "--fixes", SAMPLES / "fixes.csv", "--out", tmp_path / "pairs.csv")
    assert (tmp_path / "pairs.csv").read_text().startswith("row,area_id,verdict\n")


# -- 10: what the docs quote is what the build does -------------------------------------------------------------------

def test_docs_error_for_writing_gf_areas_without_spatialite(catalog):
    """docs/sql.md names the errors SQLite gives without SpatiaLite loaded, and
    what works without it."""
    page = (ROOT / "docs" / "sql.md").read_text()
    paragraph = page[page.index("No gf_ function needs SpatiaLite"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    quoted = re.findall(r"`(no such function: \w+)`", paragraph)
    insert = run("sqlite3", "-bail", catalog, "INSERT INTO gf_areas (area_id, geom) SELECT 'X', geom FROM gf_areas LIMIT 1;", check=False)
    update = run("sqlite3", "-bail", catalog, "UPDATE gf_areas SET geom = geom;", check=False)
    assert insert.returncode != 0 and update.returncode != 0
    said = [re.search(r"no such function: \w+", p.stderr).group(0) for p in (insert, update)]
    assert quoted == said, (quoted, said)
    # What the paragraph says works without it does.
    run("sqlite3", "-bail", catalog, "UPDATE gf_areas SET name = 'renamed' WHERE area_id = 'G#AREA_ID_001';")
    run("sqlite3", "-bail", catalog, "DELETE FROM gf_areas WHERE area_id = 'G#AREA_ID_002';")
    assert "renamed" in gf("areas", "show", catalog, "G#AREA_ID_001").stdout
    assert gf("areas", "show", catalog, "G#AREA_ID_002", check=False).returncode != 0


def test_a_number_with_spaces_at_its_ends_is_read_alike_everywhere(catalog, tmp_path):
    """docs/errors.md: a number written as text loses the spaces at its ends
    wherever it comes from (a CSV user writes `1, 35.7`). Before, the CSV, the
    NDJSON file, the inbox and SQL read ` 35.715`, but the options and the
    default_confidence setting refused it."""
    spaced = " 35.715 "
    expected = gf("locate", catalog, "--lat", "35.715", "--lon", "139.773", "--accuracy", "10", "--csv").stdout
    assert gf("locate", catalog, "--lat", spaced, "--lon", " 139.773", "--accuracy", "10 ", "--csv").stdout == expected
    gf("settings", catalog, "default_confidence", " 0.5 ")
    assert gf("settings", catalog, "default_confidence").stdout.strip() == "0.5"
    contains = f"SELECT gf_area_contains('G#AREA_ID_001', '{spaced}', ' 139.773', 10);"
    assert sql(catalog, contains).stdout.strip() == sql(catalog, contains.replace(spaced, "35.715")).stdout.strip() == "1"
    fixes = tmp_path / "f.csv"
    fixes.write_text(f"subject_id,ts,lat,lon,accuracy_m\ns,2026-11-20T09:00:00Z,{spaced},139.773, 10\n")
    p = gf("judge", catalog, "--fixes", fixes)
    assert "1 judged, 0 stale, 0 invalid" in p.stdout + p.stderr, (p.stdout, p.stderr)
    errors = (ROOT / "docs" / "errors.md").read_text()
    assert "a number written as text" in errors and "spaces at its ends" in errors


def test_an_area_id_holding_a_nul_written_by_sql_is_refused_where_met(catalog):
    """`import` refuses an area_id holding a NUL; one written into gf_areas by
    SQL was judged, and written into the subject's record, which no reader
    takes back: every later call of that subject failed. Met, it is now the
    catalog's error, naming the area, and the subject's state stays as it was."""
    p = sql(catalog, """
INSERT INTO gf_areas (area_id, kind, geom) VALUES (CAST(x'4e554c00414245' AS TEXT), 'polygon',
  GeomFromText('MULTIPOLYGON(((100 0, 170 0, 170 60, 100 60, 100 0)))', 4326));
SELECT gf_check('u1', '2026-11-20T00:00:00Z', 35.0, 139.0, 5);
""", check=False)
    assert p.returncode != 0 and "holding a NUL character (U+0000)" in p.stderr, p.stderr
    assert sql(catalog, "SELECT count(*) FROM gf_subject_state WHERE subject_id = 'u1';").stdout.split() == ["0"]
    # The message says how to remove it, in SQL (no command takes a NUL on its command line).
    delete = p.stderr[p.stderr.index("DELETE FROM gf_areas"):].strip()
    assert delete == "DELETE FROM gf_areas WHERE hex(area_id) = '4E554C00414245'", p.stderr
    sql(catalog, delete + "; SELECT gf_check('u1', '2026-11-20T00:00:00Z', 35.0, 139.0, 5);")
