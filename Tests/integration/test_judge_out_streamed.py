"""`judge --out FILE` is written while the run stores its notifications,
not read back from gf_notifications afterwards; the file must still be
byte for byte what reading the run back gives (`geofence notifications
--run N --format F`, the documented canonical order and stored values).
These are the places where what the judge holds and what SQLite stores or
orders could differ: area ids whose Swift order is not their byte order,
-0.0 positions (SQLite stores a whole REAL as an integer: it reads back as
0.0), a user's trigger that changes the stored rows, and outputs that
cannot be started over (standard output, a FIFO: spooled)."""
import json
import os
import sqlite3
import subprocess
import threading

import pytest

from conftest import CLI, gf, square, write_collection

# Not canonically equivalent (no batch refuses them), but ordered one way by
# their UTF-8 bytes (e + U+0301 before U+00E9) and the other way by Swift,
# which compares composed forms ("éa" before "éz").
DECOMPOSED, COMPOSED = "e\u0301z", "\u00e9a"


def catalog(tmp_path, ids):
    db = tmp_path / "c.db"
    gf("init", db)
    # Overlapping squares around (0, 0): one fix enters them all at once.
    feats = [square(a, -0.01 - 0.001 * k, -0.01 - 0.001 * k, 0.02 + 0.002 * k) for k, a in enumerate(ids)]
    gf("import", db, write_collection(tmp_path / "a.geojson", feats), "--with-default-conditions")
    return db


def fixes(tmp_path, rows):
    """NDJSON, whose numbers keep a -0.0 as -0.0 up to the judge."""
    p = tmp_path / "fixes.ndjson"
    p.write_text("".join(f'{{"subject_id":{json.dumps(s)},"ts":"{t}","lat":{lat},"lon":{lon},"accuracy_m":{a}}}\n'
                         for s, t, lat, lon, a in rows))
    return p


WALK = [("s1", "2026-01-05T09:00:00Z", "-0.0", "-0.0", "-0.0"), ("s1", "2026-01-05T09:05:00Z", "0.5", "0.5", "5"),
        ("s1", "2026-01-05T09:10:00Z", "0.001", "-0.0", "7.25"), ("s2", "2026-01-05T09:00:00Z", "0.002", "0.003", "0"),
        ("s2", "2026-01-05T09:30:00Z", "1", "1", "3"), ("\u00e9", "2026-01-05T09:00:00Z", "0", "0", "1"),
        ("e\u0301", "2026-01-05T09:01:00Z", "0", "0", "1")]


def read_back(db, fmt):
    return gf("notifications", db, "--run", "1", "--format", fmt).stdout


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "geojson", "geojsonseq"])
def test_a_streamed_file_is_what_reading_the_run_back_gives(tmp_path, fmt):
    db = catalog(tmp_path, ["A", "B1", "Z"])
    out = tmp_path / f"out.{fmt}"
    gf("judge", db, "--fixes", fixes(tmp_path, WALK), "--out", out, "--format", fmt)
    text = out.read_text()
    assert text == read_back(db, fmt)
    assert "-0.0" not in text and (",0.0,0.0,0.0\n" in text if fmt == "csv" else '"lat":0.0,"lon":0.0,"accuracy_m":0.0' in text)


@pytest.mark.parametrize("name,fmt", [("out.ndjson", "ndjson"), ("out.jsonl", "ndjson"), ("out.csv", "csv"), ("out.txt", "csv"),
                                      ("out.geojson", "geojson"), ("out.json", "geojson"), ("out.geojsonl", "geojsonseq")])
def test_without_format_the_name_says_it(tmp_path, name, fmt):
    """As --fixes is read: `--out x.ndjson` alone used to write CSV."""
    db = catalog(tmp_path, ["A", "B1", "Z"])
    out = tmp_path / name
    gf("judge", db, "--fixes", fixes(tmp_path, WALK), "--out", out)
    assert out.read_text() == read_back(db, fmt)
    # --format wins over a name of no format; a name of the other format is
    # refused, naming both, before the run (the earlier file stays).
    (tmp_path / "again").mkdir()
    db2 = catalog(tmp_path / "again", ["A", "B1", "Z"])
    other = "csv" if fmt == "ndjson" else "ndjson"
    p = gf("judge", db2, "--fixes", fixes(tmp_path, WALK), "--out", out, "--format", other, check=False)
    if name == "out.txt":
        assert p.returncode == 0, p.stderr
        assert out.read_text() == read_back(db2, other)
    else:
        assert p.returncode == 64 and f"--format {other} and --out {out} disagree" in p.stderr, p.stderr
        assert out.read_text() == read_back(db, fmt)


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "geojson", "geojsonseq"])
def test_ids_whose_swift_order_is_not_their_byte_order_come_in_byte_order(tmp_path, fmt):
    db = catalog(tmp_path, ["A", "B1", DECOMPOSED, COMPOSED, "Z"])
    out = tmp_path / f"out.{fmt}"
    gf("judge", db, "--fixes", fixes(tmp_path, WALK), "--out", out, "--format", fmt)
    text = out.read_text()
    assert text == read_back(db, fmt)
    # The case that makes the orders differ is there: one fix, both ids, in bytes order.
    first = [line for line in text.splitlines() if DECOMPOSED in line or COMPOSED in line][:2]
    assert DECOMPOSED in first[0] and COMPOSED in first[1], first


def test_a_trigger_that_changes_stored_rows_is_seen_in_the_file(tmp_path):
    db = catalog(tmp_path, ["A", "B"])
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TRIGGER mine AFTER INSERT ON gf_notification_rows
        BEGIN UPDATE gf_notification_rows SET accuracy_m = 1234.5
              WHERE id = NEW.id AND NEW.area_key = (SELECT area_key FROM gf_area_keys WHERE area_id = 'B'); END;""")
    con.close()
    out = tmp_path / "out.csv"
    gf("judge", db, "--fixes", fixes(tmp_path, WALK), "--out", out)
    text = out.read_text()
    assert text == read_back(db, "csv") and ",1234.5\n" in text


@pytest.mark.parametrize("ids", [["A", "B1"], ["A", DECOMPOSED, COMPOSED]], ids=["streamed", "read back"])
def test_standard_output_and_a_fifo_get_the_same_bytes(tmp_path, ids):
    """Neither can be started over: the lines go to a spool, copied out when
    the run is done (standard output only once it is committed)."""
    f = fixes(tmp_path, WALK)
    db = catalog(tmp_path, ids)
    assert gf("judge", db, "--fixes", f, "--out", "-").stdout == read_back(db, "csv")
    (tmp_path / "2").mkdir()
    db2 = catalog(tmp_path / "2", ids)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    gf("judge", db2, "--fixes", f, "--out", fifo, "--format", "ndjson")
    reader.join(timeout=60)
    assert got == [read_back(db2, "ndjson")]


def test_no_room_for_a_spool_reads_the_run_back(tmp_path):
    db = catalog(tmp_path, ["A", "B1"])
    env = {**os.environ, "TMPDIR": str(tmp_path / "missing")}
    p = subprocess.run([str(CLI), "judge", str(db), "--fixes", str(fixes(tmp_path, WALK)), "--out", "-"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == read_back(db, "csv") and p.stdout.count("\n") > 10


# Found by a new-user trial of the streamed --out: what it must read back for.

def judged_with(tmp_path, script, fmt="csv"):
    db = catalog(tmp_path, ["A", "B1"])
    con = sqlite3.connect(db)
    con.executescript(script)
    con.close()
    out = tmp_path / f"out.{fmt}"
    gf("judge", db, "--fixes", fixes(tmp_path, WALK), "--out", out, "--format", fmt)
    return out.read_text(), read_back(db, fmt)


@pytest.mark.parametrize("script", [
    # A retention trigger on another table the run writes.
    "CREATE TRIGGER keep_in AFTER UPDATE ON gf_runs BEGIN DELETE FROM gf_notifications WHERE run_id = NEW.run_id AND transition = 'OUT'; END;",
    # A chain: gf_subjects feeds a table whose trigger changes the rows.
    "CREATE TABLE seen (n); CREATE TRIGGER t1 AFTER INSERT ON gf_subject_state BEGIN INSERT INTO seen VALUES (1); END;"
    "CREATE TRIGGER t2 AFTER INSERT ON seen BEGIN UPDATE gf_notification_rows SET accuracy_m = 77.5; END;",
    # The table's name in another case, as SQLite allows.
    "CREATE TRIGGER upd AFTER INSERT ON GF_Notification_Rows BEGIN UPDATE gf_notification_rows SET lat = 1.5 WHERE id = NEW.id; END;",
    "CREATE TEMP TRIGGER upd AFTER INSERT ON main.GF_NOTIFICATION_ROWS BEGIN UPDATE gf_notification_rows SET lat = 1.5 WHERE id = NEW.id; END;",
], ids=["gf_runs", "chain", "case", "temp"])
def test_a_trigger_anywhere_that_changes_notifications_is_seen_in_the_file(tmp_path, script):
    streamed, stored = judged_with(tmp_path, script)
    assert streamed == stored


def test_a_table_rebuilt_with_a_collation_and_other_types_is_read_back(tmp_path):
    script = """
        PRAGMA legacy_alter_table = ON;
        DROP TABLE gf_notification_rows;
        CREATE TABLE gf_notification_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, subject_key INTEGER NOT NULL,
            ts_us INTEGER NOT NULL, area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL, transition INTEGER NOT NULL,
            lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m INTEGER NOT NULL, local_day INTEGER NOT NULL);
        DROP TABLE gf_subject_keys;
        CREATE TABLE gf_subject_keys (subject_key INTEGER PRIMARY KEY, subject_id TEXT UNIQUE NOT NULL COLLATE NOCASE);"""
    db = catalog(tmp_path, ["A", "B1"])
    con = sqlite3.connect(db)
    con.executescript(script)
    con.close()
    rows = [("a", "2026-01-05T09:00:00Z", "0", "0", "5"), ("B", "2026-01-05T09:00:00Z", "0", "0", "5")]
    out = tmp_path / "out.csv"
    gf("judge", db, "--fixes", fixes(tmp_path, rows), "--out", out)
    text = out.read_text()
    assert text == read_back(db, "csv")
    assert text.splitlines()[1].startswith("a,") and ",5\n" in text


def test_a_fifo_gets_its_lines_only_once_the_run_is_committed(tmp_path):
    """A reader that stops early (`head -c 100`) used to kill the run before
    its commit; the lines now go to a spool and out after the commit."""
    db = catalog(tmp_path, ["A", "B1"])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read(100)))
    reader.start()
    many = [(f"s{k}", f"2026-01-05T09:{k % 60:02d}:{k // 60:02d}Z", "0", "0", "5") for k in range(3000)]
    p = subprocess.run([str(CLI), "judge", str(db), "--fixes", str(fixes(tmp_path, many)), "--out", str(fifo)],
                       capture_output=True, text=True, timeout=120)
    reader.join(timeout=60)
    assert len(got[0]) == 100
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM gf_runs").fetchone()[0] == 1, p.stderr
    assert con.execute("SELECT count(*) FROM gf_notifications").fetchone()[0] == 6000


def test_a_symbolic_link_is_followed_not_replaced(tmp_path):
    db = catalog(tmp_path, ["A", "B1"])
    f = fixes(tmp_path, WALK)
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    os.chmod(target, 0o2640)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    gf("judge", db, "--fixes", f, "--out", link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == read_back(db, "csv")
    assert os.stat(target).st_mode & 0o7777 == 0o2640
    # A link that stands for a stream (through /proc or /dev) is written through.
    (tmp_path / "2").mkdir()
    db2 = catalog(tmp_path / "2", ["A", "B1"])
    to_stdout = tmp_path / "stdout-link"
    to_stdout.symlink_to("/proc/self/fd/1")
    p = gf("judge", db2, "--fixes", f, "--out", to_stdout)
    assert to_stdout.is_symlink()
    assert read_back(db2, "csv") in p.stdout


def test_an_empty_out_name_is_refused_before_the_run(tmp_path):
    db = catalog(tmp_path, ["A"])
    p = gf("judge", db, "--fixes", fixes(tmp_path, WALK), "--out", "", check=False)
    assert p.returncode == 64 and "--out" in p.stderr
    assert sqlite3.connect(db).execute("SELECT count(*) FROM gf_runs").fetchone()[0] == 0


def test_a_link_to_this_process_standard_output_appends_to_it(tmp_path):
    """A link through /proc/self/fd/1 is written to the descriptor as it is,
    not opened anew (from the start of an append-mode log, over its lines)."""
    db = catalog(tmp_path, ["A", "B1"])
    link = tmp_path / "lnk"
    link.symlink_to("/proc/self/fd/1")
    log = tmp_path / "app.log"
    log.write_text("earlier line\n" * 8)
    with log.open("a") as out:
        p = subprocess.run([str(CLI), "judge", str(db), "--fixes", str(fixes(tmp_path, WALK)), "--out", str(link), "--quiet"],
                           stdout=out, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    text = log.read_text()
    assert text.startswith("earlier line\n" * 8) and read_back(db, "csv") in text


@pytest.mark.parametrize("command", ["export", "locate"])
def test_an_empty_out_name_is_refused_by_every_command(tmp_path, command):
    db = catalog(tmp_path, ["A"])
    args = ["export", db, "--out", ""] if command == "export" else ["locate", db, "--fixes", fixes(tmp_path, WALK), "--out", ""]
    p = gf(*args, check=False)
    assert p.returncode == 64 and "--out" in p.stderr
