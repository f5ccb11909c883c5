"""An import into a catalog without conditions builds gf_conditions_by_area
once at its end (sorted, pages packed) instead of entry by entry with each
default condition (about 12 % of the index's bytes unused, 5 MiB at a
million areas). The index is init's, answers as before, and a failed import
leaves it as it was; an import into a catalog that has conditions keeps it."""
import sqlite3
import subprocess

from conftest import gf, square, write_collection

INDEX_SQL = "CREATE INDEX gf_conditions_by_area ON gf_conditions (area_id, condition_id)"


def squares(prefix, n):
    return [square(f"{prefix}{i:06d}", -170.0 + (i % 300) * 0.05, -60.0 + (i // 300) * 0.05) for i in range(n)]


def index_state(db):
    """(its sqlite_master text, unused bytes / page bytes from dbstat, whether SQLite searches by it)."""
    con = sqlite3.connect(db)
    text = con.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'gf_conditions_by_area'").fetchone()
    plan = " ".join(r[-1] for r in con.execute("EXPLAIN QUERY PLAN SELECT condition_id FROM gf_conditions WHERE area_id = 'A000001' ORDER BY condition_id"))
    con.close()
    # The stock shell has dbstat; Python's sqlite3 may not.
    out = subprocess.run(["sqlite3", db, "SELECT sum(unused), sum(pgsize) FROM dbstat WHERE name = 'gf_conditions_by_area';"],
                         capture_output=True, text=True, check=True).stdout.strip().split("|")
    unused, size = (int(v) for v in out)
    return (text[0] if text else None), unused / size, "USING INDEX gf_conditions_by_area" in plan or "USING COVERING INDEX gf_conditions_by_area" in plan


def conditions_of(db, area_id):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT condition_id, timing FROM gf_conditions WHERE area_id = ? ORDER BY condition_id", (area_id,)).fetchall()
    con.close()
    return rows


def test_an_import_into_a_catalog_without_conditions_packs_the_index(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", squares("A", 12_000)), "--with-default-conditions")
    text, unused, searched = index_state(db)
    assert (text, searched) == (INDEX_SQL, True)
    assert unused < 0.03, f"{unused:.1%} of the index unused"
    assert conditions_of(db, "A000001") == [(3, "IN"), (4, "OUT")]
    # A later import adds to it entry by entry, and it answers for both sets.
    gf("import", db, write_collection(tmp_path / "b.geojson", squares("B", 50)), "--with-default-conditions")
    assert index_state(db)[0::2] == (INDEX_SQL, True)
    assert conditions_of(db, "B000049") == [(24099, "IN"), (24100, "OUT")]
    # --replace clears the conditions first: the index is packed again.
    gf("import", db, write_collection(tmp_path / "a.geojson", squares("A", 12_000)), "--with-default-conditions", "--replace")
    text, unused, searched = index_state(db)
    assert (text, searched) == (INDEX_SQL, True) and unused < 0.03
    # An area removed takes its conditions (the trigger finds them by the index).
    gf("areas", "remove", db, "A000001")
    assert conditions_of(db, "A000001") == []


def test_a_failed_import_leaves_the_index(tmp_path):
    db = tmp_path / "c.db"
    gf("init", db)
    bad = squares("A", 100) + [square("A000000", 10.0, 10.0)]   # a duplicate id last
    p = gf("import", db, write_collection(tmp_path / "a.geojson", bad), "--with-default-conditions", check=False)
    assert p.returncode == 1
    assert index_state(db)[0::2] == (INDEX_SQL, True)
