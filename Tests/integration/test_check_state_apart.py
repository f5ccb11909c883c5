"""gf_check with its state apart from the catalog (docs/state.md): a state
database as main, made by gf_state_init(), with the catalog ATTACHed
read-only. gf_check there gives, fix by fix, the notifications and the
state records gf_check gives on the catalog itself, and the catalog's bytes
stay as they were; a catalog attached to a main that is no state database
is refused, so no call can write into it."""
import os
import shutil
import sqlite3

from conftest import EXTENSION, sql
from task_scenario import digest, fixes_with_ties, write_rows

CHECK_ALL = """
CREATE TEMP TABLE fixes (subject_id TEXT, ts TEXT, lat REAL, lon REAL, accuracy_m REAL);
.import --csv --skip 1 {fixes} fixes
CREATE TEMP TABLE ordered AS SELECT * FROM fixes ORDER BY gf_time(ts), rowid;
SELECT count(gf_check(subject_id, ts, lat, lon, accuracy_m)) FROM ordered ORDER BY rowid;
"""
LISTING = """
SELECT 'N', * FROM gf_notifications ORDER BY id;
SELECT 'S', subject_id, gf_state_export(subject_id) FROM gf_subject_state ORDER BY subject_id;
SELECT 'I', area_id, subject_id FROM gf_inside ORDER BY 2, 3;
"""


def attach(catalog):
    return f"ATTACH 'file:{catalog}?mode=ro' AS catalog;\n"


def shared_catalog(tmp_path):
    """A catalog with five subjects' fixes (`fixes_with_ties`), copied read-only into a folder
    of its own as a shared one: (the catalog made, its read-only copy, the fixes, the copy's digest)."""
    db, rows = fixes_with_ties(tmp_path, subjects=5, per_subject=60)
    shared = tmp_path / "shared"
    shared.mkdir()
    catalog = shared / "fences.db"
    shutil.copy(db, catalog)
    catalog.chmod(0o444)
    return db, catalog, rows, digest(catalog)


def test_gf_check_on_a_state_database_gives_what_it_gives_on_the_catalog_and_never_writes_the_catalog(tmp_path):
    db, catalog, rows, before = shared_catalog(tmp_path)
    half = len(rows) // 2
    parts = [tmp_path / "first.csv", tmp_path / "second.csv"]
    write_rows(parts[0], rows[:half])
    write_rows(parts[1], rows[half:])

    reference = tmp_path / "reference.db"
    shutil.copy(db, reference)
    for part in parts:
        sql(reference, CHECK_ALL.format(fixes=part))
    expected = sql(reference, LISTING).stdout

    state = tmp_path / "state.db"
    assert sql(state, attach(catalog) + "SELECT gf_state_init();").stdout == "1\n"
    # Two connections, one after the other: the state is carried in state.db.
    for part in parts:
        sql(state, attach(catalog) + CHECK_ALL.format(fixes=part))
    got = sql(state, attach(catalog) + LISTING).stdout
    assert got == expected
    assert got.count("\nN|") > 20 and "\nS|" in got and "\nI|" in got
    assert digest(catalog) == before
    # The catalog's tables are not in the state database: they are read from the attached catalog.
    names = sql(state, "SELECT name FROM sqlite_master WHERE name GLOB 'gf_*' ORDER BY 1;").stdout.split()
    assert "gf_areas" not in names and "gf_conditions" not in names and "gf_meta" not in names
    assert {"gf_subject_state", "gf_inside", "gf_notification_rows", "gf_state_meta"} <= set(names)


def test_a_catalog_attached_to_a_database_that_is_no_state_database_is_refused(tmp_path):
    db, rows = fixes_with_ties(tmp_path, subjects=1, per_subject=5)
    before = digest(db)
    plain = tmp_path / "plain.db"
    call = "SELECT gf_check('u1', '2026-11-20T00:00:00Z', 35.712, 139.772, 10);"
    # Attached read-write, a call would write the catalog if main is not a state database: refused.
    p = sql(plain, f"ATTACH '{db}' AS catalog;\n" + call, check=False)
    assert p.returncode != 0 and "main is not a state database" in p.stderr and "gf_state_init()" in p.stderr, p.stderr
    assert digest(db) == before
    p = sql(plain, "SELECT gf_state_init();", check=False)
    assert p.returncode != 0 and "no catalog is attached" in p.stderr, p.stderr
    p = sql(db, attach(db) + "SELECT gf_state_init();", check=False)
    assert p.returncode != 0 and "main is a catalog itself" in p.stderr, p.stderr
    state = tmp_path / "state.db"
    sql(state, attach(db) + "SELECT gf_state_init();")
    p = sql(state, attach(db) + "SELECT gf_state_init();", check=False)
    assert p.returncode != 0 and "main has gf_" in p.stderr, p.stderr
    assert digest(db) == before
    assert not os.path.exists(f"{db}-journal")


def connect(path, catalog=None):
    """A connection of this process with SpatiaLite and the extension, the catalog attached read-only if given."""
    c = sqlite3.connect(f"file:{path}", uri=True, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(EXTENSION))
    if catalog:
        c.execute(f"ATTACH 'file:{catalog}?mode=ro' AS catalog")
    return c


def test_a_catalog_changed_by_another_connection_between_calls_is_judged_as_it_now_is(tmp_path):
    """gf_check's session keeps the catalog between calls while its stamp
    (in the catalog's gf_meta, changed by a trigger with every change of a
    condition) is the one it read: with the catalog attached, the stamp is
    read there, so a change by another connection is seen at the next call,
    as it is on the catalog itself."""
    db, rows = fixes_with_ties(tmp_path, subjects=4, per_subject=60)
    catalog, reference, state = tmp_path / "catalog.db", tmp_path / "reference.db", tmp_path / "state.db"
    shutil.copy(db, catalog)
    shutil.copy(db, reference)
    ordered = sorted(range(len(rows)), key=lambda i: (rows[i][1], i))
    on_state, on_reference = connect(state, catalog), connect(reference)
    on_state.execute("SELECT gf_state_init()")
    half = len(ordered) // 2
    listing = "SELECT * FROM gf_notifications ORDER BY id"
    for c in (on_state, on_reference):
        for i in ordered[:half]:
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", rows[i])
    before = on_state.execute(listing).fetchall()
    # Another connection drops the conditions of even ids from each catalog, between two calls.
    for path in (catalog, reference):
        w = sqlite3.connect(path, isolation_level=None)
        w.execute("DELETE FROM gf_conditions WHERE condition_id % 2 = 0")
        w.close()
    for c in (on_state, on_reference):
        for i in ordered[half:]:
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", rows[i])
    got, expected = on_state.execute(listing).fetchall(), on_reference.execute(listing).fetchall()
    assert got == expected
    later = got[len(before):]
    assert any(n[5] % 2 == 0 for n in before) and later and all(n[5] % 2 == 1 for n in later)
