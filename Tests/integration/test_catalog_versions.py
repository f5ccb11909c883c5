"""Catalogs made by each earlier schema version open with this build, as
docs/versions.md promises: the first command that opens one upgrades it in
place, in one transaction; every documented read gives what the old build
gave; judging goes on as the old build went on; the extension refuses an
un-upgraded catalog naming the command that upgrades it; and a catalog newer
than this build is refused by every door, naming what to do.

The catalogs are Tests/fixtures/catalog_versions/vN/catalog.db.gz, each made
once by a build of schema version N with that folder's make.py, beside what
that build's reads gave (expected.json)."""
import gzip
import hashlib
import json
import signal
import sqlite3
import subprocess
import sys

import pytest

from conftest import CLI, ROOT, Stopped, current_schema_version, gf, run, sql, stored_rows

FIXTURES = ROOT / "Tests" / "fixtures" / "catalog_versions"
VERSIONS = sorted(int(p.name[1:]) for p in FIXTURES.glob("v*") if (p / "catalog.db.gz").exists())

# Each documented read: (table or view, the columns it may have, its order).
# A version's fixture records the columns that version had; the same are read
# after the upgrade.
READS = {
    "notifications": ("gf_notifications", "id run_id subject_id ts area_id condition_id transition lat lon accuracy_m", "id"),
    "subjects": ("gf_subjects", "subject_id last_ts last_lat last_lon last_accuracy_m judged_fixes", "subject_id"),
    "stays": ("gf_stays", "subject_id area_id state in_streak out_streak entered_at dwell_spent", "subject_id, area_id"),
    "last_notified": ("gf_last_notified", "subject_id condition_id local_date", "subject_id, condition_id"),
    "runs": ("gf_runs", "run_id kind source started_at fixes judged stale invalid transitions notifications filtered", "run_id"),
    "explain": ("gf_explain", "run_id subject_id ts area_id condition_id kind reason lat lon", None),
    "areas": ("gf_areas", "id area_id group_id name kind center_lat center_lon radius_m in_accuracy_max_m in_confirm_count "
              "out_accuracy_max_m out_confirm_count valid_from valid_until confidence timezone properties", "id"),
    "conditions": ("gf_conditions", "condition_id area_id timing dwell_s weekdays start_time end_time start_date end_date "
                   "renotify_suppress_days timezone", "condition_id"),
}


def columns_of(con, name):
    """The columns of READS[name] that this catalog's table or view has ([] without it)."""
    table, wanted, _ = READS[name]
    have = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
    return [c for c in wanted.split() if c in have]


def read_all(con, columns):
    """Every read of READS with the given columns, as JSON-ready rows (REALs as their repr: exact)."""
    out = {}
    for name, cols in columns.items():
        table, _, order = READS[name]
        if not cols:
            out[name] = None
            continue
        rows = con.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order or ', '.join(cols)}")
        out[name] = [[repr(v) if isinstance(v, float) else v for v in row] for row in rows]
    return json.loads(json.dumps(out))


def expected(version):
    return json.loads((FIXTURES / f"v{version}" / "expected.json").read_text())


def old_catalog(tmp_path, version):
    """A copy of the fixture's catalog, as the old build left it."""
    db = tmp_path / f"v{version}.db"
    db.write_bytes(gzip.decompress((FIXTURES / f"v{version}" / "catalog.db.gz").read_bytes()))
    return db


def stored(db, query):
    return stored_rows(db, query)


def meta(db, key):
    row = stored(db, f"SELECT value FROM gf_meta WHERE key = '{key}'")
    return row[0][0] if row else None


def reads(db, version):
    con = sqlite3.connect(db)
    try:
        return read_all(con, expected(version)["columns"])
    finally:
        con.close()


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_there_is_a_fixture_for_each_earlier_version():
    """Every schema version before this build's has its catalog kept
    (docs/versions.md: a new version adds the fixture of the one before)."""
    assert VERSIONS == list(range(1, int(current_schema_version()))), f"fixtures of versions {VERSIONS}"
    for v in VERSIONS:
        assert expected(v)["schema_version"] == v


@pytest.mark.parametrize("version", VERSIONS)
def test_the_fixture_is_the_old_catalog(tmp_path, version):
    """Before any upgrade the copy reads as the old build read it."""
    db = old_catalog(tmp_path, version)
    assert meta(db, "schema_version") == str(version)
    assert reads(db, version) == expected(version)["reads"]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_command_upgrades_it_in_place_keeping_every_read(tmp_path, version):
    db = old_catalog(tmp_path, version)
    gf("settings", db)
    assert meta(db, "schema_version") == current_schema_version()
    assert reads(db, version) == expected(version)["reads"]
    assert run("sqlite3", db, "PRAGMA integrity_check").stdout.strip() == "ok"
    # The package that upgraded it is recorded: a build older than it names it.
    assert meta(db, "created_by") == expected(version)["gf_meta"].get("created_by")
    assert meta(db, "upgraded_by") == "geofence " + gf("--version").stdout.split()[0]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_upgrade_is_one_transaction(tmp_path, version):
    """Killed with the upgrade's COMMIT about to run, the file is the old
    catalog still; the next command upgrades it."""
    db = old_catalog(tmp_path, version)
    Stopped([CLI, "settings", db], "committing").send(signal.SIGKILL)
    assert meta(db, "schema_version") == str(version)
    assert reads(db, version) == expected(version)["reads"]
    gf("settings", db)
    assert meta(db, "schema_version") == current_schema_version()


@pytest.mark.parametrize("version", VERSIONS)
def test_judging_on_gives_what_the_old_build_gave(tmp_path, version):
    """The upgraded catalog judges day three as the old build judged it
    (the new run's file name and start time are this run's own). A catalog
    of a version without judgement (1) judges it as a new catalog of the
    same areas, conditions and settings does."""
    db = old_catalog(tmp_path, version)
    gf("judge", db, "--fixes", FIXTURES / "next.csv", "--quiet")
    got, want = reads(db, version), expected(version)["after_next"]
    if want is None:
        fresh = tmp_path / "fresh.db"
        gf("init", fresh)
        gf("settings", fresh, "default_timezone", "Asia/Tokyo")
        gf("import", fresh, FIXTURES / "areas.geojson")
        gf("conditions", "import", fresh, FIXTURES / "conditions.csv")
        gf("judge", fresh, "--fixes", FIXTURES / "next.csv", "--quiet")
        got, want = read_all_of(db), read_all_of(fresh)
    for r in (got["runs"][-1], want["runs"][-1]):
        r[2] = r[3] = None
    assert got == want


def read_all_of(db):
    """Every read with all the columns this build's catalog has."""
    con = sqlite3.connect(db)
    try:
        return read_all(con, {name: columns_of(con, name) for name in READS})
    finally:
        con.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_gf_check_refuses_an_old_catalog_naming_the_upgrade(tmp_path, version):
    db = old_catalog(tmp_path, version)
    before = digest(db)
    p = sql(db, "SELECT gf_check('s1', '2026-11-08T00:00:00Z', 35.685, 139.705, 10);\n", check=False)
    assert p.returncode != 0
    assert f"schema version {version}" in p.stderr, p.stderr
    assert "geofence settings" in p.stderr, p.stderr
    assert digest(db) == before


WRITER = "geofence 9.8.7"   # the package a newer catalog names as its writer


@pytest.fixture(scope="module")
def newer_template(tmp_path_factory):
    """A catalog of this build's areas and conditions, marked as of the next
    schema version, last written by WRITER; made once, copied by each test."""
    db = tmp_path_factory.mktemp("newer") / "newer.db"
    gf("init", db)
    gf("import", db, FIXTURES / "areas.geojson")
    gf("conditions", "import", db, FIXTURES / "conditions.csv")
    newer = int(current_schema_version()) + 1
    run("sqlite3", db, f"UPDATE gf_meta SET value = '{newer}' WHERE key = 'schema_version';"
                       f"INSERT OR REPLACE INTO gf_meta VALUES ('upgraded_by', '{WRITER}');")
    return db, newer


def newer_catalog(tmp_path, template, writer=WRITER):
    """A copy of the template; writer None: a catalog naming no writer."""
    db = tmp_path / "newer.db"
    db.write_bytes(template[0].read_bytes())
    if writer is None:
        run("sqlite3", db, "DELETE FROM gf_meta WHERE key IN ('created_by', 'upgraded_by');")
    return db, template[1]


AT = ["--lat", "35.685", "--lon", "139.705"]
CLI_DOORS = [["settings", "{db}"], ["areas", "list", "{db}"], ["conditions", "list", "{db}"], ["locate", "{db}", *AT],
             ["nearest", "{db}", *AT], ["regions", "{db}", *AT], ["positioning", "{db}"], ["export", "{db}"],
             ["notifications", "{db}"], ["explain", "{db}"], ["state", "export", "{db}"],
             ["judge", "{db}", "--fixes", str(FIXTURES / "next.csv")],
             ["check", "{db}", "--subject", "s1", *AT, "--accuracy", "10", "--time", "2026-11-08T00:00:00Z"],
             ["import", "{db}", str(FIXTURES / "areas.geojson"), "--upsert"], ["clear", "{db}"], ["state", "show", "{db}"],
             ["conditions", "import", "{db}", str(FIXTURES / "conditions.csv")], ["init", "{db}"]]
SQL_DOORS = {"gf_check": "gf_check('s1', '2026-11-08T00:00:00Z', 35.685, 139.705, 10)", "gf_state_export": "gf_state_export('s1')",
             "gf_area_contains": "gf_area_contains('P', 35.685, 139.705, 10)",
             "gf_area_distance_m": "gf_area_distance_m('P', 35.685, 139.705)",
             "gf_area_inside_probability": "gf_area_inside_probability('P', 35.685, 139.705, 10)",
             "gf_area_contains of no area": "gf_area_contains('nowhere', 35.685, 139.705, 10)",
             "gf_nearest": "(SELECT area_id FROM gf_nearest(35.685, 139.705, 1))", "gf_regions": "gf_regions(35.685, 139.705, 2)",
             "gf_positioning": "gf_positioning(0, 50)"}


@pytest.mark.parametrize("door", CLI_DOORS, ids=lambda d: " ".join(w for w in d[:3] if w.isalpha()))
def test_a_newer_catalog_is_refused_by_every_command(tmp_path, newer_template, door):
    db, newer = newer_catalog(tmp_path, newer_template)
    before = digest(db)
    p = gf(*[a.format(db=db) for a in door], check=False)
    assert p.returncode != 0
    assert f"schema version {newer}, newer than this geofence" in p.stderr, p.stderr
    assert f"written by {WRITER}: use that version of geofence or a later one" in p.stderr, p.stderr
    assert digest(db) == before


@pytest.mark.parametrize("call", SQL_DOORS.values(), ids=SQL_DOORS.keys())
def test_a_newer_catalog_is_refused_by_every_function_that_reads_it(tmp_path, newer_template, call):
    db, newer = newer_catalog(tmp_path, newer_template)
    before = digest(db)
    p = sql(db, f"SELECT {call};\n", check=False)
    assert p.returncode != 0
    assert f"schema version {newer}, newer than this geofence" in p.stderr, p.stderr
    assert f"written by {WRITER}" in p.stderr, p.stderr
    assert digest(db) == before


def test_a_newer_catalog_written_by_a_build_of_the_same_version_names_its_schema(tmp_path, newer_template):
    """Every build before the first release is 0.1.0: the message must not send the user to the build refusing it."""
    db, newer = newer_catalog(tmp_path, newer_template)
    this = "geofence " + gf("--version").stdout.split()[0]
    run("sqlite3", db, f"UPDATE gf_meta SET value = '{this}' WHERE key IN ('created_by', 'upgraded_by')")
    p = gf("settings", db, check=False)
    assert p.returncode == 2 and f"written by another build of {this}" in p.stderr and f"knows schema version {newer}" in p.stderr, p.stderr


def test_a_newer_catalog_naming_no_writer_is_refused_saying_so(tmp_path, newer_template):
    db, newer = newer_catalog(tmp_path, newer_template, writer=None)
    p = gf("settings", db, check=False)
    assert p.returncode != 0
    assert f"schema version {newer}" in p.stderr and "use the version of geofence that wrote it, or a later one" in p.stderr


def test_the_arrow_task_refuses_a_newer_catalog_and_an_older_one(tmp_path, newer_template):
    """geofence.arrow and geofence.spark open the catalog through
    gf_task_open: a newer catalog is refused naming its writer, an older one
    naming the command that upgrades it; neither is written."""
    from task_scenario import this_build_env
    older = old_catalog(tmp_path, VERSIONS[-1])
    db, newer = newer_catalog(tmp_path, newer_template)
    for path, wanted in ((db, f"schema version {newer}, newer than this geofence"), (older, "geofence settings")):
        before = digest(path)
        p = subprocess.run([sys.executable, "-c", f"from geofence import arrow; arrow.Task({str(path)!r})"],
                           capture_output=True, text=True, env=this_build_env(), timeout=300)
        assert p.returncode != 0 and wanted in p.stderr, p.stderr
        assert digest(path) == before
