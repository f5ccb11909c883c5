"""What a new user and a red team found in the catalog and state kept apart
(docs/state.md), each refused in the user's terms with nothing lost:

- two `judge --state` runs on one state file at once: the second is
  refused (a lock beside the file), not left to drop the first's state;
- `--out` and `--state` naming one file not made yet, or a dangling link
  to it; a state "file" that is a device; a catalog given as a URI; a
  catalog that does not exist (named as the user named it);
- the command-line tool on a state database says what it is;
- gf_state_init makes the state objects from the engine's own text, never
  from the attached catalog's (a hostile catalog's statements do not run);
- gf_check refuses a state database whose objects are missing, altered or
  shadow the catalog's, and a catalog attached read-write;
- gf_stays read on a state database fails, naming why, instead of reading
  the attached catalog's own view; gf_check on a read-only catalog points to one;
- a change of the attached catalog by another connection reaches the next
  gf_check even when the catalog's stamp did not move."""
import fcntl
import os
import shutil
import sqlite3

from conftest import EXTENSION, gf, sql
from task_scenario import digest, fixes_with_ties, write_rows

from test_check_state_apart import CHECK_ALL, attach


def scenario(tmp_path, subjects=3, per_subject=30):
    db, rows = fixes_with_ties(tmp_path, subjects=subjects, per_subject=per_subject)
    fixes = tmp_path / "fixes.csv"
    write_rows(fixes, rows)
    return db, fixes


def test_a_second_run_on_a_state_file_in_use_is_refused_and_the_state_kept(tmp_path):
    db, fixes = scenario(tmp_path)
    state = tmp_path / "state.jsonl"
    gf("judge", db, "--fixes", fixes, "--state", state, "--out", tmp_path / "n1.csv")
    before = digest(state)
    with open(str(state) + ".lock", "a") as held:   # another run holding the state file
        fcntl.flock(held, fcntl.LOCK_EX)
        p = gf("judge", db, "--fixes", fixes, "--state", state, "--out", tmp_path / "n2.csv", check=False)
    assert p.returncode != 0
    assert "another run is using this state file" in p.stderr and str(state) in p.stderr
    assert digest(state) == before and not (tmp_path / "n2.csv").exists()
    # Released (as when the other run ends, however it ends): the next run goes.
    gf("judge", db, "--fixes", fixes, "--state", state, "--out", tmp_path / "n3.csv")


def test_paths_that_would_lose_the_notifications_or_the_state_are_refused(tmp_path):
    db, fixes = scenario(tmp_path)
    os.chdir(tmp_path)
    os.symlink("s.jsonl", "link.csv")   # dangling: the state file is not made yet
    cases = [
        (["--state", "s.jsonl", "--out", "./s.jsonl"], "name the same file"),
        (["--state", "s.jsonl", "--out", "link.csv"], "name the same file"),
        (["--state", "/dev/stdout"], "not a regular file"),
    ]
    for options, said in cases:
        p = gf("judge", db, "--fixes", fixes, *options, check=False)
        assert p.returncode != 0 and said in p.stderr, (options, p.stderr)
        assert not os.path.exists("s.jsonl")
    p = gf("judge", f"file:{db}?mode=ro", "--fixes", fixes, "--state", "s.jsonl", check=False)
    assert p.returncode != 0 and "not as the URI" in p.stderr
    p = gf("judge", "nothere.db", "--fixes", fixes, "--state", "s.jsonl", check=False)
    assert p.returncode != 0 and "nothere.db: no such database" in p.stderr and "mode=ro" not in p.stderr


def state_database(tmp_path, catalog):
    state = tmp_path / "state.db"
    assert sql(state, attach(catalog) + "SELECT gf_state_init();").stdout == "1\n"
    return state


def test_the_cli_on_a_state_database_says_what_it_is(tmp_path):
    db, _ = scenario(tmp_path)
    state = state_database(tmp_path, db)
    for args in (["state", "export", state], ["notifications", state], ["init", state]):
        p = gf(*args, check=False)
        assert p.returncode != 0 and "this is a state database" in p.stderr, (args, p.stderr)


def test_gf_state_init_never_runs_the_attached_catalogs_text(tmp_path):
    db, _ = scenario(tmp_path)
    catalog = tmp_path / "hostile.db"
    shutil.copy(db, catalog)
    c = sqlite3.connect(catalog)
    c.execute("PRAGMA writable_schema = ON")
    c.execute("UPDATE sqlite_master SET sql = sql || '; CREATE TABLE pwned (x)' WHERE name = 'gf_runs'")
    c.commit()
    c.close()
    state = state_database(tmp_path, catalog)
    names = sql(state, "SELECT name FROM sqlite_master ORDER BY 1;").stdout.split()
    assert "pwned" not in names and "gf_runs" in names
    # What it made is the engine's text: that of a catalog `geofence init` makes.
    fresh = tmp_path / "fresh.db"
    gf("init", fresh)
    made = sqlite3.connect(state).execute("SELECT name, sql FROM sqlite_master WHERE name GLOB 'gf_*' AND name NOT IN "
                                          "('gf_state_meta', 'gf_stays', 'gf_last_notified')").fetchall()
    new = dict(sqlite3.connect(fresh).execute("SELECT name, sql FROM sqlite_master").fetchall())
    assert len(made) == 15 and all(new[name] == text for name, text in made)


def test_gf_check_refuses_a_damaged_state_database_or_a_writable_catalog(tmp_path):
    db, fixes = scenario(tmp_path)
    catalog = tmp_path / "fences.db"
    shutil.copy(db, catalog)
    damage = {
        "missing": "DROP TABLE gf_inside;",
        "altered": "DROP TABLE gf_inside; CREATE TABLE gf_inside (area_id, subject_id);",
        "shadow": "CREATE TABLE gf_conditions (condition_id);",
    }
    before = digest(catalog)
    for name, statement in damage.items():
        folder = tmp_path / name
        folder.mkdir()
        state = state_database(folder, catalog)
        sql(state, statement)
        p = sql(state, attach(catalog) + CHECK_ALL.format(fixes=fixes), check=False)
        assert p.returncode != 0 and "damaged state database" in p.stderr, (name, p.stderr)
    state = state_database(tmp_path, catalog)
    p = sql(state, f"ATTACH '{catalog}' AS catalog;\n" + CHECK_ALL.format(fixes=fixes), check=False)
    assert p.returncode != 0 and "attach it read-only" in p.stderr
    assert digest(catalog) == before


def test_gf_stays_on_a_state_database_fails_naming_why(tmp_path):
    db, _ = scenario(tmp_path)
    state = state_database(tmp_path, db)
    p = sql(state, attach(db) + "SELECT count(*) FROM gf_stays;", check=False)
    assert p.returncode != 0 and "not kept in a state database" in p.stderr


def test_a_catalog_changed_by_another_connection_is_seen_without_its_stamp(tmp_path):
    db, fixes = scenario(tmp_path)
    catalog = tmp_path / "fences.db"
    shutil.copy(db, catalog)
    state = state_database(tmp_path, catalog)
    c = sqlite3.connect(state)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(EXTENSION))
    c.execute(f"ATTACH 'file:{catalog}?mode=ro' AS catalog")
    row = ("u1", "2026-11-20T09:00:00Z", 35.0, 139.0, 10.0)
    c.execute("SELECT gf_check(?, ?, ?, ?, ?)", row).fetchone()
    # Another connection drops the stamp triggers, then changes the catalog: its stamp stays.
    other = sqlite3.connect(catalog)
    for (name,) in other.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB 'gf_*_stamp_*'").fetchall():
        other.execute(f'DROP TRIGGER "{name}"')
    other.execute("DELETE FROM gf_conditions")
    other.commit()
    other.close()
    try:
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", ("u1", "2026-11-20T09:01:00Z", 35.0, 139.0, 10.0)).fetchone()
        raise AssertionError("the changed catalog was not seen")
    except sqlite3.OperationalError as e:
        assert "is missing or altered" in str(e)


def test_gf_check_on_a_read_only_catalog_points_to_a_state_database(tmp_path):
    db, _ = scenario(tmp_path)
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    c.enable_load_extension(True)
    c.load_extension("mod_spatialite")
    c.load_extension(str(EXTENSION))
    try:
        c.execute("SELECT gf_check('u1', '2026-11-20T09:00:00Z', 35.0, 139.0, 10.0)").fetchone()
        raise AssertionError("a read-only catalog was written")
    except sqlite3.OperationalError as e:
        assert "read-only here" in str(e) and "gf_state_init" in str(e), str(e)
