"""The page cache a catalog suggests (docs/sql.md): `geofence init`,
an in-place upgrade and gf_state_init write 64 MiB into the file's header
(`PRAGMA default_cache_size`), which SQLite gives every connection that opens
the file; a size of the user's own in the header is kept, and a connection's
own `PRAGMA cache_size` still decides."""
from conftest import gf, run, sql, stored_rows

SUGGESTED = 64 * 1024 * 1024


def opened_cache(db):
    """The cache size (pages) a fresh connection to `db` starts with, in Python's sqlite3 and in the sqlite3 shell."""
    shell = int(run("sqlite3", db, "PRAGMA cache_size;").stdout)
    assert stored_rows(db, "PRAGMA cache_size") == [(shell,)]
    return shell


def test_a_new_catalog_suggests_64_mib_of_its_pages(tmp_path):
    small, large = tmp_path / "small.db", tmp_path / "large.db"
    gf("init", small)
    gf("init", large, "--page-size", "32768")
    assert opened_cache(small) == SUGGESTED // 4096
    assert opened_cache(large) == SUGGESTED // 32768


def test_an_upgrade_writes_it_where_the_header_has_none_and_keeps_a_users(tmp_path):
    bare, own = tmp_path / "bare.db", tmp_path / "own.db"
    for db in (bare, own):
        gf("init", db, "--schema-version", "10")
    # A catalog of an older version is made as its build made it, nothing in the header; or its user wrote a size there.
    assert opened_cache(bare) == -2000
    run("sqlite3", own, "PRAGMA default_cache_size = 500;")
    gf("settings", bare)
    gf("settings", own)
    assert stored_rows(bare, "SELECT value FROM gf_meta WHERE key = 'schema_version'")[0][0] != "10"
    assert opened_cache(bare) == SUGGESTED // 4096
    assert opened_cache(own) == 500


def test_a_current_catalog_is_not_written_when_opened(tmp_path):
    """Only creation and an upgrade write the header: opening a current catalog
    of an earlier build (nothing in its header) changes no byte of it."""
    db = tmp_path / "fences.db"
    gf("init", db)
    run("sqlite3", db, "PRAGMA default_cache_size = 0;")
    before = db.read_bytes()
    gf("settings", db)
    assert db.read_bytes() == before
    assert opened_cache(db) == -2000


def test_init_of_a_database_with_a_size_of_its_own_keeps_it(tmp_path):
    """init may make the catalog in an existing SpatiaLite database (or an
    empty file) whose user wrote a size into the header: it stays theirs."""
    spatial, empty = tmp_path / "spatial.db", tmp_path / "empty.db"
    run("sqlite3", spatial, input=".load mod_spatialite\nSELECT InitSpatialMetadata(1);\nPRAGMA default_cache_size = 500;\nCREATE TABLE mine (x);\n")
    run("sqlite3", empty, "PRAGMA default_cache_size = 200;")
    gf("init", spatial)
    gf("init", empty)
    assert opened_cache(spatial) == 500 and opened_cache(empty) == 200


def test_a_state_database_suggests_it_and_the_callers_own_cache_is_kept(tmp_path):
    catalog, state = tmp_path / "fences.db", tmp_path / "state.db"
    gf("init", catalog)
    out = sql(state, f"""
        PRAGMA cache_size = -1000;
        ATTACH 'file:{catalog}?mode=ro' AS catalog;
        SELECT gf_state_init();
        PRAGMA main.cache_size;
        """).stdout.split()
    assert out == ["1", "-1000"]
    assert opened_cache(state) == SUGGESTED // 4096
    # An application's database made a state database keeps a size its user wrote.
    app = tmp_path / "app.db"
    run("sqlite3", app, "PRAGMA default_cache_size = 300; CREATE TABLE app (x);")
    sql(app, f"ATTACH 'file:{catalog}?mode=ro' AS catalog;\nSELECT gf_state_init();")
    assert opened_cache(app) == 300
    # A refused gf_state_init (no catalog attached) writes nothing into the header.
    empty = tmp_path / "empty.db"
    p = sql(empty, "CREATE TABLE t (x);\nSELECT gf_state_init();", check=False)
    assert p.returncode != 0 and "no catalog is attached" in p.stderr
    assert opened_cache(empty) == -2000
