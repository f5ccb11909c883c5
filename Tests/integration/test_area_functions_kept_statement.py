"""gf_area_contains, gf_area_distance_m and gf_area_inside_probability read
an area's row through one statement the connection's session keeps
(preparing it was most of a call). It must be finalized with the connection
(SQLite's sqlite3_close refuses a connection with a statement left), and a
`gf_areas` of the caller's that calls these functions itself (a TEMP view)
must get an error, not a recursion without end: it overflowed the stack
and killed the process."""
import shutil
import sqlite3
import subprocess
import sys

import apsw
import pytest

from conftest import EXTENSION
from test_check_kept_keys import small_catalog

CALLS = "SELECT gf_area_contains('A01', 35.0, 139.01, 5), round(gf_area_distance_m('A00', 35.0, 139.01), 3), " \
        "round(gf_area_inside_probability('A02', 35.0, 139.02, 50), 6)"


def test_the_kept_statement_goes_with_the_connection(tmp_path):
    db = small_catalog(tmp_path)
    c = apsw.Connection(str(db))
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    first = [tuple(r) for r in c.execute(CALLS)]
    assert [tuple(r) for r in c.execute(CALLS)] == first
    assert first[0][0] == 1 and -800 < first[0][1] < -600   # outside A00 by ~712 m: negative
    c.close()   # apsw uses sqlite3_close: SQLITE_BUSY (an exception) with a statement left unfinalized


def test_a_gf_areas_that_calls_the_functions_gets_an_error(tmp_path):
    db = small_catalog(tmp_path)
    script = f"""
import sqlite3
c = sqlite3.connect({str(db)!r})
c.enable_load_extension(True)
c.load_extension({str(EXTENSION)!r})
c.execute("CREATE TEMP VIEW gf_areas AS SELECT * FROM main.gf_areas WHERE gf_area_distance_m(area_id, 0, 0) IS NOT NULL")
try:
    c.execute("SELECT gf_area_contains('A01', 35.0, 139.01, 5)").fetchone()
    print("no error")
except sqlite3.OperationalError as e:
    print(e)
c.execute("DROP VIEW temp.gf_areas")
print(c.execute("SELECT gf_area_contains('A01', 35.0, 139.01, 5)").fetchone()[0])
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    lines = p.stdout.splitlines()
    assert "called again while reading an area's row" in lines[0] and "TEMP view" in lines[0]
    assert lines[1] == "1"


@pytest.mark.parametrize("where", ["temp", "attached", "main"])
def test_a_table_of_the_users_named_gf_session(tmp_path, where):
    """The session table is named in main: a TEMP or attached table of that
    name does not hide it; one in main does, and then the area functions
    still answer (a statement per call) while gf_check says why it cannot run."""
    db = small_catalog(tmp_path)
    if where == "main":
        with sqlite3.connect(db) as c:
            c.execute("CREATE TABLE gf_session (user_id, token)")
    app = tmp_path / "app.db"
    with sqlite3.connect(app) as c:
        c.execute("CREATE TABLE gf_session (user_id, token)")
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    if where == "temp":
        c.execute("CREATE TEMP TABLE gf_session (x)")
    c.execute(f"ATTACH '{app}' AS app")
    assert c.execute(CALLS).fetchone()[0] == 1
    check = "SELECT gf_check('u', '2026-11-20T00:00:00Z', 35.0, 139.01, 5)"
    if where == "main":
        with pytest.raises(sqlite3.OperationalError, match="a table or view named gf_session in main hides"):
            c.execute(check).fetchone()
    else:
        assert "A01" in c.execute(check).fetchone()[0]
    c.close()
