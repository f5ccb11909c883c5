"""The catalog through the CLI: commands, formats, round trips, GIS interoperability."""
import csv
import io
import json

from conftest import CLI, SAMPLES, gf, run, snapshot, square, write_collection


def test_init_makes_a_spatialite_database_that_gis_tools_read(catalog):
    info = run("ogrinfo", "-so", "-ro", catalog, "gf_areas").stdout
    assert "Feature Count: 4" in info
    assert 'ID["EPSG",4326]' in info or "EPSG:4326" in info or 'AUTHORITY["EPSG","4326"]' in info
    assert "Multi Polygon" in info
    out = run("spatialite", "-bail", catalog, input="SELECT count(*) FROM gf_areas;\nSELECT CheckSpatialIndex('gf_areas', 'geom');\n").stdout
    assert out.split() == ["4", "1"]


def test_init_page_size_for_a_new_file_and_never_a_silent_one_for_an_existing_database(tmp_path):
    """--page-size sets SQLite's page size of a new or empty file (default
    SQLite's own); a database that already holds pages cannot take another
    without being rewritten, so asking for one is refused and changes nothing."""
    plain, new, empty, mine = (tmp_path / f"{n}.db" for n in ("plain", "new", "empty", "mine"))
    empty.touch()
    run("spatialite", mine, input="SELECT InitSpatialMetadata(1);\nCREATE TABLE my_rows (x);\n")
    gf("init", plain)
    gf("init", new, "--page-size", "32768")
    gf("init", empty, "--page-size", "65536")
    page = lambda db: run("sqlite3", db, "PRAGMA page_size; PRAGMA journal_mode;").stdout.split()
    assert page(plain) == ["4096", "wal"]
    assert page(new) == ["32768", "wal"]
    assert page(empty) == ["65536", "wal"]
    before = mine.read_bytes()
    p = gf("init", mine, "--page-size", "32768", check=False)
    assert p.returncode == 1
    assert "already holds pages of 4096 bytes" in p.stderr and "PRAGMA page_size = 32768; VACUUM" in p.stderr
    assert mine.read_bytes() == before and not (tmp_path / "mine.db-wal").exists()
    gf("init", mine, "--page-size", "4096")  # its own size: nothing to change
    assert page(mine) == ["4096", "wal"]
    for bad in ("1000", "256", "131072", "0"):
        p = gf("init", tmp_path / "bad.db", "--page-size", bad, check=False)
        assert p.returncode == 64 and "power of two from 512 to 65536" in p.stderr
    assert not (tmp_path / "bad.db").exists()


def test_a_refused_init_leaves_the_file_as_it_was_and_names_it(tmp_path):
    """From a new-user trial: init switched an existing catalog (in DELETE
    mode) to WAL before refusing it; its errors named no file; asked for
    another page size, it advised re-running init, which refused again."""
    db = tmp_path / "cat.db"
    gf("init", db)
    run("sqlite3", db, "PRAGMA journal_mode = DELETE")
    version = run("sqlite3", db, "SELECT value FROM gf_meta WHERE key = 'schema_version'").stdout.strip()
    before = db.read_bytes()
    p = gf("init", db, check=False)
    assert p.returncode == 2 and p.stderr.strip() == f"error: {db}: the database already holds a geofence catalog (schema version {version})"
    p = gf("init", db, "--page-size", "32768", check=False)
    assert p.returncode == 2 and "its pages are 4096 bytes" in p.stderr
    advised = "PRAGMA journal_mode = DELETE; PRAGMA page_size = 32768; VACUUM; PRAGMA journal_mode = WAL; PRAGMA default_cache_size = 2048"
    assert f"'{advised}'" in p.stderr
    assert db.read_bytes() == before and not (tmp_path / "cat.db-wal").exists()
    # What it advises does it: 32 KiB pages, and the suggested cache still 64 MiB of them (SuggestedCache).
    rewritten = tmp_path / "rewritten.db"
    rewritten.write_bytes(before)
    run("sqlite3", rewritten, advised)
    assert run("sqlite3", rewritten, "PRAGMA page_size; PRAGMA cache_size;").stdout.split() == ["32768", "2048"]
    folder = tmp_path / "a-folder"
    folder.mkdir()
    p = gf("init", folder, check=False)
    assert p.returncode == 1 and f"{folder} is a directory" in p.stderr
    p = gf("init", tmp_path / "missing" / "f.db", check=False)
    assert p.returncode == 2 and "its folder" in p.stderr and "missing or not writable" in p.stderr
    empty = tmp_path / "empty.db"
    empty.touch()
    p = gf("import", empty, SAMPLES / "areas.geojson", check=False)
    assert p.returncode == 2 and p.stderr.startswith(f"error: {empty}: no geofence catalog in this database"), p.stderr


def test_two_inits_of_one_new_file_at_once_make_one_catalog_of_the_winners_page_size(tmp_path):
    """From a new-user trial: two inits racing on a new file could both
    report success (one of them for a page size the file did not get), or
    fail with SQLite's raw `table gf_meta already exists`, or call the
    database busy after 0.03 s, or refuse the other's new catalog for its
    page size. The catalog is now made in one transaction taken before
    anything is read: one wins, the other waits and refuses it as a catalog."""
    import subprocess
    db = tmp_path / "race.db"
    for _ in range(40):
        for f in tmp_path.glob("race.db*"):
            f.unlink()
        procs = [subprocess.Popen([str(CLI), "init", str(db), "--page-size", size], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for size in ("32768", "1024")]
        results = [(size, p.wait(timeout=60), p.stderr.read()) for size, p in zip(("32768", "1024"), procs)]
        won = [size for size, rc, _ in results if rc == 0]
        assert len(won) == 1, results
        assert run("sqlite3", db, "PRAGMA page_size").stdout.strip() == won[0], results
        for size, rc, err in results:
            if rc != 0:
                assert rc == 2 and f"{db}: the database already holds a geofence catalog" in err, results


def test_init_waits_for_another_writer_then_makes_the_catalog(tmp_path):
    """From a new-user trial: on a database in rollback-journal mode whose
    write lock another connection held, init gave up at once (exit 3 after
    0.03 s, saying the lock had been held for over 10 s)."""
    import sqlite3
    import threading
    import time
    db = tmp_path / "theirs.db"
    run("spatialite", db, input="SELECT InitSpatialMetadata(1);\nCREATE TABLE my_rows (x);\n")
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(1.5, lambda: holder.execute("ROLLBACK")).start()
    started = time.monotonic()
    p = gf("init", db, check=False)
    holder.close()
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - started >= 1.4
    assert run("sqlite3", db, "PRAGMA journal_mode; SELECT count(*) > 0 FROM gf_meta;").stdout.split() == ["wal", "1"]


def test_list_show_formats(catalog):
    rows = json.loads(gf("areas", "list", catalog, "--json").stdout)
    assert [r["area_id"] for r in rows] == ["G#AREA_ID_001", "G#AREA_ID_002", "G#AREA_ID_003", "G#AREA_ID_004"]
    assert rows[0]["properties"] == {"category": "park"} and rows[0]["in_accuracy_max_m"] == 100
    table = list(csv.DictReader(io.StringIO(gf("areas", "list", catalog, "--csv").stdout)))
    assert table[2]["kind"] == "circle" and table[2]["valid_from"] == "2025-12-31T15:00:00Z"
    assert "G#AREA_ID_004" in gf("areas", "show", catalog, "G#AREA_ID_004").stdout
    feature = json.loads(gf("areas", "show", catalog, "G#AREA_ID_001", "--geojson").stdout)
    assert len(feature["geometry"]["coordinates"]) == 2, "polygon keeps its hole"
    conditions = json.loads(gf("conditions", "list", catalog, "--json").stdout)
    assert [(c["condition_id"], c["timing"]) for c in conditions[:2]] == [(1, "IN"), (2, "OUT")]


def test_export_then_import_gives_the_same_catalog(catalog, tmp_path):
    exported = tmp_path / "export.geojson"
    gf("export", catalog, "--out", exported)
    other = tmp_path / "copy.db"
    gf("init", other)
    gf("import", other, exported)
    assert gf("areas", "list", other, "--json").stdout == gf("areas", "list", catalog, "--json").stdout
    assert gf("export", other).stdout == gf("export", catalog).stdout


def test_add_remove_clear_and_conditions(catalog, tmp_path):
    gf("areas", "add", catalog, "--id", "station", "--circle", "35.681,139.767,300", "--in-confirm-count", "2")
    gf("areas", "add", catalog, "--id", "blk", "--geometry",
       '{"type":"Polygon","coordinates":[[[139,35],[139.01,35],[139.01,35.01],[139,35]]]}')
    gf("conditions", "add", catalog, "--area", "station", "--timing", "DWELL", "--dwell-s", "600",
       "--weekdays", "Mon,Fri", "--start-time", "22:00", "--end-time", "06:00", "--timezone", "Asia/Tokyo")
    shown = json.loads(gf("conditions", "show", catalog, "9", "--json").stdout)[0]
    assert shown["timing"] == "DWELL" and shown["dwell_s"] == 600 and shown["weekdays"] == "Mon,Fri"
    gf("areas", "remove", catalog, "station")
    assert gf("conditions", "show", catalog, "9", check=False).returncode == 1, "removing an area removes its conditions"
    gf("clear", catalog)
    assert json.loads(gf("areas", "list", catalog, "--json").stdout) == []
    assert json.loads(gf("conditions", "list", catalog, "--json").stdout) == []


def test_conditions_csv_import(catalog, tmp_path):
    good = tmp_path / "c.csv"
    good.write_text("condition_id,area_id,timing,dwell_s,weekdays,start_time,end_time,start_date,end_date,renotify_suppress_days,timezone\n"
                    "100,G#AREA_ID_001,IN,,Mon,09:00,18:00,2026-01-01,2026-12-31,1,Asia/Tokyo\n"
                    "101,G#AREA_ID_001,DWELL,300,,,,,,,\n")
    gf("conditions", "import", catalog, good)
    bad = tmp_path / "bad.csv"
    bad.write_text("condition_id,area_id,timing,start_time\n200,G#AREA_ID_001,IN,09:00\n201,G#AREA_ID_001,IN,9am\n")
    before = snapshot(catalog)
    p = gf("conditions", "import", catalog, bad, check=False)
    assert p.returncode == 1
    assert "bad.csv, row 2, id '201', start_time: expected HH:MM" in p.stderr
    assert snapshot(catalog) == before


def test_settings(catalog):
    gf("settings", catalog, "default_timezone", "Asia/Tokyo")
    assert gf("settings", catalog, "default_timezone").stdout.strip() == "Asia/Tokyo"
    p = gf("settings", catalog, "default_timezone", "Asia/Atlantis", check=False)
    assert p.returncode == 1 and "unknown time zone 'Asia/Atlantis'" in p.stderr
    assert gf("settings", catalog, "default_confidence", "1.5", check=False).returncode == 1


def test_server_import_replaces_and_guards_update_time(catalog, tmp_path):
    newer = write_collection(tmp_path / "newer.geojson", [square("X", 139, 35)], updated_at="2026-12-01T00:00:00+09:00")
    out = gf("import", catalog, newer, "--group", "SRV", "--replace", "--with-default-conditions").stdout
    assert "replacing" in out
    assert [r["area_id"] for r in json.loads(gf("areas", "list", catalog, "--json").stdout)] == ["SRV#X"]
    older = write_collection(tmp_path / "older.geojson", [square("Y", 139, 35)], updated_at="2026-11-01T00:00:00Z")
    before = snapshot(catalog)
    p = gf("import", catalog, older, "--group", "SRV", "--replace", check=False)
    assert p.returncode == 1
    assert "2026-11-01T00:00:00Z" in p.stderr and "2026-11-30T15:00:00Z" in p.stderr
    assert snapshot(catalog) == before


def test_version_and_schema_guard(catalog):
    assert gf("version").stdout.startswith("geofence 0.1.0")
    run("sqlite3", catalog, "UPDATE gf_meta SET value = '42' WHERE key = 'schema_version'")
    p = gf("areas", "list", catalog, check=False)
    assert p.returncode == 2 and "schema version 42, newer than this geofence" in p.stderr
    p = gf("areas", "list", catalog.parent / "missing.db", check=False)
    assert p.returncode == 2 and "no such database" in p.stderr


def test_locate(catalog):
    rows = json.loads(gf("locate", catalog, "--lat", "35.715", "--lon", "139.773", "--accuracy", "20", "--json").stdout)
    assert rows[0]["area_id"] == "G#AREA_ID_001" and rows[0]["verdict"] == "inside"
    rows = json.loads(gf("locate", catalog, "--lat", "35.7115", "--lon", "139.771", "--json").stdout)
    assert rows[0]["verdict"] == "outside", "the pond is a hole"


def test_locate_batch_csv_quotes_ids_that_need_it(tmp_path):
    """`locate --fixes` writes CSV a reader can take back: ids with a comma,
    a quote or a CRLF (one Character in Swift, equal to neither CR nor LF)
    are quoted, and come back exactly."""
    db = tmp_path / "q.db"
    gf("init", db)
    ids = ["plain", "a,b", 'say "hi"', "two\r\nlines"]
    write_collection(tmp_path / "q.geojson", [square(i, 139.0 + k * 0.1, 35.0) for k, i in enumerate(ids)])
    gf("import", db, tmp_path / "q.geojson")
    fixes = tmp_path / "fixes.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(f"s,{k},35.005,{139.005 + k * 0.1},0\n" for k in range(len(ids))))
    out = tmp_path / "pairs.csv"
    gf("locate", db, "--fixes", fixes, "--out", out)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["area_id"] for r in rows] == ids
