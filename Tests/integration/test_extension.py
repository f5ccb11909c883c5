"""libgeofence.so in the hosts users have: the sqlite3 shell, Debian's python3, apsw (its own SQLite)."""
import os
import random
import subprocess
import sys

from conftest import EXTENSION, ROOT, run, sql


def test_shell_loads_and_answers(catalog):
    out = sql(catalog, """
SELECT gf_version();
SELECT gf_contains(gf_circle(35.681, 139.767, 500), 35.682, 139.768, 10);
SELECT round(gf_cep_factor(0.95), 2);
SELECT area_id FROM gf_areas WHERE gf_contains(geom, 35.715, 139.773, 20) = 1;
SELECT gf_area_contains('G#AREA_ID_004', 35.6586, 139.7454, 10);
""").stdout.split()
    assert out == ["0.1.0", "1", "1.62", "G#AREA_ID_001", "1"]


def test_errors_are_sql_errors_not_crashes(catalog):
    p = sql(catalog, "SELECT gf_contains(x'00112233', 35, 139, 5);", check=False)
    assert p.returncode != 0 and "gf_contains: argument 1 (area)" in p.stderr
    p = sql(catalog, "SELECT gf_distance_m(geom, 95, 139) FROM gf_areas;", check=False)
    assert "argument 2 (lat) must be a latitude" in p.stderr


def test_no_function_needs_spatialite(tmp_path, catalog):
    # Without mod_spatialite the gf_ functions still work (they read the BLOBs
    # themselves); writing areas needs SpatiaLite's triggers and says so.
    p = run("sqlite3", "-bail", catalog, input=f".load {EXTENSION.with_suffix('')}\n"
            "SELECT gf_area_contains('G#AREA_ID_001', 35.715, 139.773, 5);\n")
    assert p.stdout.split() == ["1"]
    p = run("sqlite3", "-bail", catalog, check=False, input=f".load {EXTENSION.with_suffix('')}\n"
            "INSERT INTO gf_areas (area_id, kind, geom) SELECT 'copy', kind, geom FROM gf_areas LIMIT 1;\n")
    assert p.returncode != 0 and "no such function" in p.stderr


def python_host(code, python="/usr/bin/python3"):
    return subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)


def test_debian_python_sqlite3_module(catalog):
    p = python_host(f"""
import sqlite3
c = sqlite3.connect({str(catalog)!r})
c.enable_load_extension(True)
c.load_extension({str(EXTENSION)!r})
print(c.execute("SELECT gf_version(), gf_area_contains('G#AREA_ID_001', 35.715, 139.773, 5)").fetchone())
""")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "('0.1.0', 1)"


def test_apsw_host_with_its_own_sqlite(catalog):
    # apsw carries a different SQLite: the extension must use the host's routines.
    p = python_host(f"""
import apsw
c = apsw.Connection({str(catalog)!r})
c.enable_load_extension(True)
c.load_extension({str(EXTENSION)!r})
print(apsw.sqlitelibversion(), list(c.execute("SELECT gf_area_contains('G#AREA_ID_002', 35.681, 139.765, 5)")))
""", python=sys.executable)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("[(1,)]")


def test_garbage_blobs_never_crash_the_host(catalog):
    # Truncations and random flips of real geometry BLOBs, and random bytes:
    # each call must return a value or an SQL error, never kill the process.
    p = python_host(f"""
import random, sqlite3
random.seed(7)
c = sqlite3.connect({str(catalog)!r})
c.enable_load_extension(True)
c.load_extension('mod_spatialite')
c.load_extension({str(EXTENSION)!r})
blobs = [r[0] for r in c.execute("SELECT geom FROM gf_areas")]
cases = []
for b in blobs:
    cases += [b[:n] for n in range(0, len(b), 3)]
    for _ in range(300):
        m = bytearray(b); i = random.randrange(len(m)); m[i] = random.randrange(256); cases.append(bytes(m))
cases += [bytes(random.randrange(256) for _ in range(random.randrange(80))) for _ in range(500)]
ok = err = 0
for blob in cases:
    for q in ("SELECT gf_contains(?, 35.7, 139.77, 30, 0.9)", "SELECT gf_distance_m(?, 35.7, 139.77)",
              "SELECT gf_inside_probability(?, 35.7, 139.77, 30)"):
        try:
            c.execute(q, (blob,)).fetchone(); ok += 1
        except sqlite3.Error:
            err += 1
print(ok, err)
""")
    assert p.returncode == 0, p.stderr
    ok, err = map(int, p.stdout.split())
    assert ok > 0 and err > 0


def test_a_second_sqlite_library_in_one_process_is_refused_not_a_crash():
    """Python's sqlite3 module and apsw each carry a SQLite: the engine keeps the
    first one's routines, so loading it through the second is refused with an
    error, never driven through the wrong library (which crashed)."""
    script = f"""
import sqlite3, apsw
c = sqlite3.connect(':memory:'); c.enable_load_extension(True); c.load_extension({str(EXTENSION)!r})
print(c.execute('SELECT gf_version()').fetchone()[0])
a = apsw.Connection(':memory:'); a.enable_load_extension(True)
try:
    a.load_extension({str(EXTENSION)!r})
    print(list(a.execute('SELECT gf_version()')))
except apsw.Error as e:
    print('refused:', e)
print(c.execute('SELECT gf_contains(gf_circle(35, 139, 100), 35, 139, 0)').fetchone()[0])
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr)
    lines = p.stdout.splitlines()
    assert lines[1].startswith("refused:") and "already loaded by another SQLite library" in lines[1], p.stdout
    assert lines[2] == "1"
