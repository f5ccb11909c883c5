"""Read-only catalogs, tried as an unprivileged user (CI runs as root, for whom
every file is writable): a catalog file the user cannot write, one in a folder
the user cannot write (a WAL catalog there has no -shm file), and a
`file:…?mode=ro` URI. Listings, export, locate, nearest, regions and the SQL
functions work; commands that write fail clearly and change nothing; an
older schema is refused with the command that upgrades it."""
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import CLI, EXTENSION, SAMPLES, gf, run

pytestmark = [
    pytest.mark.skipif(shutil.which("runuser") is None, reason="needs runuser to run commands as the user nobody"),
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root can run commands as the user nobody (runuser)"),
]

# The unprivileged user may not be able to enter the checkout (a clone in a
# private temporary folder): it runs copies of the binaries and the sample
# files from a folder anyone may read, made for this module and removed after.
TOOLS = Path(tempfile.gettempdir()) / f"gf-ro-tools-{os.getpid()}"
RO_CLI = TOOLS / "geofence"
RO_EXTENSION = TOOLS / "libgeofence.so"
RO_SAMPLES = TOOLS / "samples"


@pytest.fixture(scope="module", autouse=True)
def tools():
    """The copies above, readable by anyone; removed when the module ends."""
    shutil.rmtree(TOOLS, ignore_errors=True)
    TOOLS.mkdir(mode=0o755)
    TOOLS.chmod(0o755)
    try:
        shutil.copy2(CLI, RO_CLI)
        shutil.copy2(EXTENSION, RO_EXTENSION)
        shutil.copytree(SAMPLES, RO_SAMPLES)
        for path in [RO_SAMPLES, *RO_SAMPLES.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield TOOLS
    finally:
        shutil.rmtree(TOOLS, ignore_errors=True)


READS = [
    ["areas", "list", "--json"],
    ["conditions", "list", "--json"],
    ["export"],
    ["locate", "--lat", "35.715", "--lon", "139.773", "--accuracy", "20", "--json"],
    ["locate", "--fixes", str(RO_SAMPLES / "fixes.csv")],
    ["nearest", "--lat", "35.6812", "--lon", "139.7671", "-n", "3", "--json"],
    ["regions", "--lat", "35.6812", "--lon", "139.7671", "-n", "2"],
    ["settings", "--json"],
    ["state", "--json"],
    ["notifications", "--json"],
]

WRITES = [
    ["import", str(RO_SAMPLES / "areas.geojson"), "--upsert"],
    ["settings", "default_confidence", "0.5"],
    ["judge", "--fixes", str(RO_SAMPLES / "fixes.csv")],
    ["check", "--subject", "s", "--lat", "35.715", "--lon", "139.773", "--accuracy", "10", "--time", "2026-11-20T00:00:00Z"],
    ["conditions", "remove", "1"],
    ["clear"],
]


def as_nobody(*args, check=True):
    return run("runuser", "-u", "nobody", "--", *args, check=check)


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def places():
    """(catalog in a folder nobody may write, catalog nobody may write in a folder anyone may)."""
    root = Path(tempfile.mkdtemp(prefix="gf-ro-", dir="/tmp"))
    root.chmod(0o755)
    locked, open_folder = root / "locked", root / "open"
    locked.mkdir(mode=0o755)
    open_folder.mkdir()
    open_folder.chmod(0o777)
    source = root / "source.db"
    gf("init", source)
    gf("import", source, SAMPLES / "areas.geojson", "--with-default-conditions")
    gf("judge", source, "--fixes", SAMPLES / "fixes.csv")
    paths = []
    for folder in (locked, open_folder):
        db = folder / "catalog.db"
        shutil.copy(source, db)
        db.chmod(0o644)
        paths.append(db)
    yield paths
    shutil.rmtree(root)


def test_reads_work_and_writes_are_refused_as_an_unprivileged_user(places):
    locked, in_open_folder = places
    for db, name in [(locked, str(locked)), (in_open_folder, str(in_open_folder)),
                     (in_open_folder, f"file:{in_open_folder}?mode=ro"), (locked, f"file:{locked}?mode=ro")]:
        for cmd in READS:
            expected = gf(*cmd[:2], locked, *cmd[2:]) if cmd[0] in ("areas", "conditions") else gf(cmd[0], locked, *cmd[1:])
            args = [*cmd[:2], name, *cmd[2:]] if cmd[0] in ("areas", "conditions") else [cmd[0], name, *cmd[1:]]
            got = as_nobody(RO_CLI, *args, check=False)
            assert got.returncode == 0, (name, cmd, got.stderr)
            assert got.stdout == expected.stdout, (name, cmd)
        before = digest(db)
        for cmd in WRITES:
            args = [*cmd[:2], name, *cmd[2:]] if cmd[0] in ("conditions",) else [cmd[0], name, *cmd[1:]]
            p = as_nobody(RO_CLI, *args, check=False)
            assert p.returncode == 2, (name, cmd, p.stdout, p.stderr)
            assert "this command writes to the catalog, which is read-only here" in p.stderr, (name, cmd, p.stderr)
            assert "Traceback" not in p.stderr and "PRAGMA" not in p.stderr
        assert digest(db) == before
    # Export to a file the user may write works too.
    out = in_open_folder.parent / "export.geojson"
    as_nobody(RO_CLI, "export", locked, "--out", out)
    assert out.read_text() == gf("export", locked).stdout


def test_sql_functions_on_read_only_catalogs(places):
    locked, in_open_folder = places
    query = ("SELECT gf_area_contains('AREA_ID_001', 35.715, 139.773, 10), "
             "(SELECT count(*) FROM gf_areas WHERE gf_contains(geom, 35.715, 139.773, 10) = 1), "
             "(SELECT area_id FROM gf_nearest(35.6812, 139.7671, 1)), "
             "json_array_length(gf_regions(35.6812, 139.7671, 2), '$.ios');")
    load = [".load mod_spatialite", f".load {RO_EXTENSION.with_suffix('')}"]
    # In a folder nobody may write, SQLite reads a WAL database only when told it cannot change.
    for uri in [f"file:{locked}?immutable=1", f"file:{in_open_folder}?mode=ro", str(in_open_folder)]:
        p = as_nobody("sqlite3", "-bail", uri, *load, query, check=False)
        assert p.returncode == 0, (uri, p.stderr)
        assert p.stdout.strip().startswith("1|1|AREA_ID_002|"), (uri, p.stdout)


def test_an_older_schema_is_refused_with_the_command_that_upgrades_it(places):
    locked, _ = places
    db = locked.parent / "older" / "catalog.db"
    db.parent.mkdir(mode=0o755)
    shutil.copy(locked, db)
    run("sqlite3", db, "UPDATE gf_meta SET value = '4' WHERE key = 'schema_version'")
    db.chmod(0o644)
    before = digest(db)
    p = as_nobody(RO_CLI, "areas", "list", db, check=False)
    assert p.returncode == 2
    assert "schema version 4" in p.stderr and f"geofence settings {db}" in p.stderr, p.stderr
    assert digest(db) == before


def test_swapped_arguments_name_the_file_that_is_not_a_database(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    p = gf("import", SAMPLES / "areas.geojson", db, check=False)
    assert p.returncode == 2
    assert f"{SAMPLES / 'areas.geojson'}: not a SQLite database" in p.stderr and "PRAGMA" not in p.stderr


def test_committed_changes_in_a_wal_that_cannot_be_read_are_refused_not_ignored(places):
    """In a folder nobody may write, a WAL catalog without its -shm file can only
    be read as immutable, which ignores the -wal: a committed change there would
    silently not be seen. The tool refuses, saying how to checkpoint."""
    locked = places[0]
    folder = locked.parent
    folder.chmod(0o777)
    # A writer commits into the -wal and leaves without checkpointing.
    run("python3", "-c", f"""
import sqlite3, os
c = sqlite3.connect({str(locked)!r}, isolation_level=None)
c.execute("PRAGMA wal_autocheckpoint = 0")
c.execute("UPDATE gf_areas SET name = 'CHANGED-IN-WAL'")
os._exit(0)
""")
    Path(f"{locked}-shm").unlink(missing_ok=True)
    assert Path(f"{locked}-wal").stat().st_size > 0
    for p in (locked, Path(f"{locked}-wal")):
        p.chmod(0o644)
    folder.chmod(0o755)
    p = as_nobody(RO_CLI, "areas", "list", locked, "--csv", check=False)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "committed changes in its -wal file" in p.stderr and "wal_checkpoint" in p.stderr
    assert "CHANGED-IN-WAL" not in p.stdout


@pytest.mark.parametrize("where", ["locked folder", "read-only file"])
def test_a_hot_journal_that_cannot_be_rolled_back_is_refused_not_read(places, where):
    """A writer killed mid-transaction on a rollback-journal catalog leaves its
    uncommitted pages in the file and the originals in the -journal; only a
    writer can roll them back. Read as immutable, the catalog showed the
    uncommitted names (or seemed malformed); now it is refused, saying how."""
    db = places[0] if where == "locked folder" else places[1]
    folder = db.parent
    mode = folder.stat().st_mode & 0o777
    folder.chmod(0o777)
    db.chmod(0o666)
    run("sqlite3", db, "PRAGMA journal_mode = DELETE;")
    run("python3", "-c", f"""
import sqlite3, os, signal
c = sqlite3.connect({str(db)!r}, isolation_level=None)
c.execute("PRAGMA cache_size = 1")   # changed pages spill into the file before the commit
c.execute("BEGIN")
c.execute("UPDATE gf_areas SET name = 'UNCOMMITTED' || zeroblob(2000)")
c.execute("DELETE FROM gf_notifications")
os.kill(os.getpid(), signal.SIGKILL)
""", check=False)
    assert Path(f"{db}-journal").stat().st_size > 0
    for p in (db, Path(f"{db}-journal")):
        p.chmod(0o644)
    folder.chmod(mode)
    for command in (["areas", "list", db, "--csv"], ["notifications", db, "--csv"], ["state", db, "--csv"]):
        p = as_nobody(RO_CLI, *command, check=False)
        assert p.returncode == 2, (command, p.returncode, p.stdout, p.stderr)
        assert "left its -journal file" in p.stderr and "PRAGMA quick_check" in p.stderr, p.stderr
        assert "UNCOMMITTED" not in p.stdout
    # Its owner opening it rolls the transaction back: the committed catalog is intact.
    assert run("sqlite3", db, "SELECT count(*) FROM gf_areas WHERE name LIKE 'UNCOMMITTED%';").stdout.strip() == "0"
    assert as_nobody(RO_CLI, "areas", "list", db, "--csv").returncode == 0


def test_a_symbolic_link_into_a_folder_the_user_cannot_write(places):
    """SQLite follows a symbolic link and makes its side files beside the
    file it leads to. A link in a folder the user may write, to a catalog the
    user may write in a folder they may not, was opened for writing: every
    read-only command failed, naming "the database" (issue 35, defect 5)."""
    locked, in_open_folder = places
    locked.chmod(0o666)    # the file is writable; its folder is not
    link = in_open_folder.parent / "link.db"   # in the folder anyone may write
    link.symlink_to(locked)
    for cmd in READS:
        expected = gf(*cmd[:2], locked, *cmd[2:]) if cmd[0] in ("areas", "conditions") else gf(cmd[0], locked, *cmd[1:])
        args = [*cmd[:2], link, *cmd[2:]] if cmd[0] in ("areas", "conditions") else [cmd[0], link, *cmd[1:]]
        got = as_nobody(RO_CLI, *args, check=False)
        assert got.returncode == 0, (cmd, got.stderr)
        assert got.stdout == expected.stdout, cmd
    before = digest(locked)
    p = as_nobody(RO_CLI, "clear", link, check=False)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"error: {link}: this command writes to the catalog, which is read-only here" in p.stderr, p.stderr
    assert f"its folder {locked.parent} (where the symbolic link {link} leads) is not writable" in p.stderr, p.stderr
    assert "error: the database" not in p.stderr
    assert digest(locked) == before
