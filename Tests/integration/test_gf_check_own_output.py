"""gf_check never runs inside a statement that reads or writes
gf_notifications, the table its calls add to (docs/sql.md, "Not over its own
output"). Such a statement meets the rows its own calls write and never ends.
These are the ways a red team got past the first check: an UPDATE or DELETE
scanning the table (it opens the table to write, not to read), and a view
redefined over the table after the same SQL had been judged once (the
verdict kept for the statement outlived the schema it was reached under).

Each statement runs under a deadline with the file bounded by
max_page_count, so on a build that lets it through the test fails with a
full database instead of filling the disk."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import EXTENSION, SAMPLES, gf, run
from test_defects_35 import judged, notification_count  # noqa: F401 (judged is a fixture)

DEADLINE_S = 120
# Each fix gf_notifications holds, judged for a new subject: most are a first fix inside an area, so a notification.
AGAIN = "gf_check(subject_id || '-again', ts, lat, lon, accuracy_m)"
# The same over the stored rows, whose columns are integers.
AGAIN_ROWS = "gf_check('again-' || subject_key, ts_us / 1000000, lat, lon, accuracy_m)"
COLUMNS = "run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m"
# The refusal's opening, the same before this check also looked at writes.
REFUSAL = "gf_check: this statement, or another left running on this connection, reads gf_notifications"



def bounded_shell(db, script):
    """Runs `script` in the sqlite3 shell with the extension, the file allowed
    to grow by 2,000 pages at most, under the deadline."""
    pages = int(run("sqlite3", db, "PRAGMA page_count;").stdout)
    head = f".load mod_spatialite\n.load {EXTENSION.with_suffix('')}\nPRAGMA max_page_count = {pages + 2000};\n"
    return subprocess.run(["sqlite3", "-bail", "-batch", str(db)], input=head + script, capture_output=True, text=True,
                          timeout=DEADLINE_S)


ROWS = "run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, local_day"
# Through the gf_notifications view, or on the rows it reads (gf_notification_rows), which the calls write.
REFUSED = {
    "UPDATE scanning it": f"UPDATE gf_notification_rows SET lat = lat WHERE {AGAIN_ROWS} IS NOT NULL;",
    "DELETE scanning it": f"DELETE FROM gf_notifications WHERE {AGAIN} = 'never';",
    "INSERT … SELECT from it": f"INSERT INTO gf_notification_rows ({ROWS}) SELECT run_id, subject_key, ts_us, area_key, condition_id, "
                               f"transition, lat, lon, accuracy_m, length({AGAIN_ROWS}) FROM gf_notification_rows;",
    "INSERT … VALUES into it": f"INSERT INTO gf_notification_rows ({ROWS}) VALUES (0, 1, 0, 1, 1, 0, 35.659, 139.745, 60, "
                               "length(gf_check('x', '2026-11-20T10:30:00Z', 35.659, 139.745, 60)));",
    "a CTE of it": f"WITH c AS (SELECT * FROM gf_notifications) SELECT count({AGAIN}) FROM c;",
    "a copy sorted first": f"SELECT count({AGAIN}) FROM (SELECT * FROM gf_notifications ORDER BY lat + 0);",
    "a subquery in another table's WHERE": "CREATE TEMP TABLE one (a); INSERT INTO one VALUES (1);\n"
                                           "SELECT gf_check('x', '2026-11-20T10:30:00Z', 35.659, 139.745, 60) FROM one "
                                           "WHERE EXISTS (SELECT 1 FROM gf_notifications);",
    "a TEMP table of its name, which takes the calls' rows": "CREATE TEMP TABLE gf_notification_rows AS SELECT * FROM main.gf_notification_rows;\n"
                                                             f"SELECT count({AGAIN_ROWS}) FROM temp.gf_notification_rows;",
    "a TEMP trigger updating it": "CREATE TEMP TABLE poke (a);\n"
                                  "CREATE TEMP TRIGGER again AFTER INSERT ON poke BEGIN "
                                  f"UPDATE gf_notification_rows SET lat = lat WHERE {AGAIN_ROWS} IS NOT NULL; END;\n"
                                  "INSERT INTO poke VALUES (1);",
}


@pytest.mark.parametrize("statement", REFUSED)
def test_a_statement_reading_or_writing_gf_notifications_is_refused_before_it_writes(judged, statement):
    """Before: the UPDATE, the DELETE and the trigger's UPDATE ran until the
    file was full (the table grows under the scan); INSERT … VALUES added its
    row. The others were refused already and stay so."""
    before = notification_count(judged)
    p = bounded_shell(judged, REFUSED[statement] + "\n")
    assert p.returncode != 0, p.stdout
    assert REFUSAL in p.stderr, p.stderr
    assert "CREATE TEMP TABLE fixes AS SELECT" in p.stderr, p.stderr
    assert notification_count(judged) == before


def test_gf_check_over_an_attached_copy_or_into_a_new_table_is_not_refused(judged, tmp_path):
    """Another database's gf_notifications is not the table the calls write,
    and a table the statement creates is not it either: both finish."""
    copy = tmp_path / "copy.db"
    shutil.copy(judged, copy)
    before = notification_count(judged)
    p = bounded_shell(judged, f"""
ATTACH '{copy}' AS other;
SELECT count({AGAIN}) FROM other.gf_notifications;
CREATE TEMP TABLE fixes AS SELECT subject_id, ts, lat, lon, accuracy_m FROM gf_notifications;
CREATE TABLE judged_again AS SELECT gf_check(subject_id || '-twice', ts, lat, lon, accuracy_m) AS result FROM fixes;
SELECT count(*) FROM judged_again;
""")
    assert p.returncode == 0, p.stderr
    max_pages, over_copy, stored = p.stdout.split()        # the shell prints the PRAGMA's value first
    assert over_copy == str(before), p.stdout
    assert int(stored) > before, p.stdout                   # a row per fix, the attached run's notifications among them
    assert notification_count(judged) > int(stored)


# The same SQL judged over a copy, then over gf_notifications once the view is
# redefined: through the statement Python keeps for it (re-prepared by SQLite in
# place) or through one prepared anew (which may get the finalized one's address).
REDEFINED_VIEW = """
import sqlite3, sys
db, extension, cached = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = sqlite3.connect(db, isolation_level=None, cached_statements=cached)
c.enable_load_extension(True)
c.load_extension("mod_spatialite")
c.load_extension(extension)
c.execute("PRAGMA max_page_count = " + str(c.execute("PRAGMA page_count").fetchone()[0] + 2000))
c.execute("CREATE TEMP TABLE copied AS SELECT * FROM gf_notifications")
c.execute("CREATE TEMP VIEW v AS SELECT * FROM temp.copied")
q = "SELECT count(gf_check(subject_id || '-again', ts, lat, lon, accuracy_m)) FROM v"
print("over the copy", c.execute(q).fetchone()[0])
print("notifications", c.execute("SELECT count(*) FROM gf_notifications").fetchone()[0])
c.execute("DROP VIEW v")
c.execute("CREATE TEMP VIEW v AS SELECT * FROM main.gf_notifications")
try:
    print("over gf_notifications", c.execute(q).fetchone()[0])
except sqlite3.Error as e:
    print("refused:", e)
print("notifications", c.execute("SELECT count(*) FROM gf_notifications").fetchone()[0])
"""


@pytest.mark.parametrize("cached", [1, 0], ids=["the statement kept", "a statement prepared anew"])
def test_the_same_sql_is_judged_again_after_its_view_is_redefined(judged, cached):
    """Before: the second run reused the first run's verdict (not reading
    gf_notifications) and ran until the file was full."""
    before = notification_count(judged)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(REDEFINED_VIEW), str(judged), str(EXTENSION), str(cached)],
                       capture_output=True, text=True, timeout=DEADLINE_S)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == f"over the copy {before}", p.stdout
    after_copy = int(lines[1].split()[1])
    assert after_copy > before, p.stdout         # the run over the copy judged, and kept what it wrote
    assert lines[2].startswith(f"refused: {REFUSAL}"), p.stdout
    assert lines[3] == f"notifications {after_copy}", p.stdout     # the refused run wrote nothing
    assert notification_count(judged) == after_copy


# A service's connection with many statements left unfinished (cursors it has not read to the end).
MANY_RUNNING = """
import sqlite3, sys
db, extension = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db, isolation_level=None)
c.enable_load_extension(True)
c.load_extension("mod_spatialite")
c.load_extension(extension)
c.execute("CREATE TEMP TABLE mine (n)")
c.executemany("INSERT INTO mine VALUES (?)", [(i,) for i in range(3)])
cursors = []
for i in range(100):
    k = c.cursor()
    k.execute(f"SELECT n + {i} FROM mine")
    k.fetchone()
    cursors.append(k)
compiled = []
# SQLite asks the authorizer about every column a statement reads as it compiles it: once per cursor compiled.
def authorize(action, table, column, database, source):
    if action == sqlite3.SQLITE_READ and table == "mine":
        compiled.append(column)
    return sqlite3.SQLITE_OK
c.set_authorizer(authorize)
c.execute("BEGIN")
for minute in range(30, 35):
    c.execute("SELECT gf_check('many', ?, 35.659, 139.745, 60)", (f"2026-11-20T10:{minute}:00Z",)).fetchone()
    print(len(compiled))
    compiled.clear()
c.execute("COMMIT")
"""


def test_each_running_statement_is_compiled_once_however_many_there_are(catalog):
    """Each statement running beside a call is compiled once with EXPLAIN
    and its verdict kept. Before: past 64 kept verdicts all were dropped, so
    with 100 cursors left open every call compiled all of them again (70 ×
    slower a call). Counted by the connection's authorizer, which SQLite
    asks as it compiles a statement, not timed."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(MANY_RUNNING), str(catalog), str(EXTENSION)],
                       capture_output=True, text=True, timeout=DEADLINE_S)
    assert p.returncode == 0, p.stderr
    first, *later = map(int, p.stdout.split())
    assert first == 100, p.stdout                  # each cursor once (the calling statement reads no table of mine)
    assert later == [0, 0, 0, 0], p.stdout


# The opening of a script of the tests below: a connection with the extension that keeps no statement cached
# (Python finalizes each statement once its cursor is closed).
UNCACHED = """
import sqlite3, sys
db, extension = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db, isolation_level=None, cached_statements=0)
c.enable_load_extension(True)
c.load_extension("mod_spatialite")
c.load_extension(extension)
"""

# User code that runs inside a call (here a trace callback) closes a reader of gf_notifications that was
# stepping when the call began: the call checks the statements running when it checks, not a list kept
# from its start, which would name the freed statement (its SQL text read from freed memory).
CLOSED_DURING_THE_CALL = UNCACHED + """
for second in range(2):   # the session made and its statements prepared before the hook is armed
    c.execute("SELECT gf_check('seed', ?, 35.715, 139.773, 5)", (f"2026-11-20T23:00:0{second}Z",))
reader = c.execute("SELECT id FROM gf_notifications")
reader.fetchone()
armed = [True]
def close_once(sql):
    if armed[0] and "gf_check" not in sql:
        armed[0] = False
        reader.close()
c.set_trace_callback(close_once)
print(c.execute("SELECT gf_check('closer', '2026-11-21T00:00:00Z', 35.659, 139.745, 60)").fetchone()[0][:2])
"""


def test_a_reader_closed_by_user_code_inside_the_call_is_not_read_after(judged):
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(CLOSED_DURING_THE_CALL), str(judged), str(EXTENSION)],
                       capture_output=True, text=True, timeout=DEADLINE_S, env={**os.environ, "MALLOC_PERTURB_": "165"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[{", p.stdout


# A reader of gf_notifications stepping when the call began, closed by the user's authorizer while the
# call compiles another running statement (`victim`): by the time the call writes, nothing reads the rows.
CLOSED_WHILE_ANOTHER_COMPILES = UNCACHED + """
c.execute("SELECT gf_check('seed', '2026-11-20T23:00:00Z', 35.715, 139.773, 5)")
c.execute("CREATE TEMP TABLE victim (x)")
c.execute("INSERT INTO victim VALUES (1), (2)")
reader = c.execute("SELECT id FROM gf_notifications, (SELECT 1 UNION ALL SELECT 2)")
reader.fetchone()
other = c.execute("SELECT x FROM victim")
other.fetchone()
armed = [True]
def authorize(action, table, *rest):
    if armed[0] and action == sqlite3.SQLITE_READ and table == "victim":
        armed[0] = False
        reader.close()
    return sqlite3.SQLITE_OK
c.set_authorizer(authorize)
print(c.execute("SELECT gf_check('closer', '2026-11-21T00:00:00Z', 35.659, 139.745, 60)").fetchone()[0][:2], armed[0])
"""


def test_a_reader_closed_while_another_statement_is_compiled_is_not_refused(judged):
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(CLOSED_WHILE_ANOTHER_COMPILES), str(judged), str(EXTENSION)],
                       capture_output=True, text=True, timeout=DEADLINE_S)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["[{", "False"], p.stdout
