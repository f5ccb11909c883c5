"""A batch run finds each notifying area's key in gf_area_keys one
statement at a time until it has found 4,096 that way; then it reads the
whole dictionary at once (OutputKeys). Judged again after a reset, a
catalog of 5,000 notifying areas must store its notifications under the
keys the first run gave, give no key twice, and read back the same through
the documented view. A dictionary row whose id is not UTF-8 (written by
hand, CAST of a BLOB) reads as a String with U+FFFD in place of the bad
byte: it must not stand for the real area whose id is that repaired text,
which notifies after the whole dictionary was read."""
import csv
import sqlite3

from conftest import gf, square, stored_rows, write_collection

AREAS = 5000
REPAIRED = "A\ufffdB"   # what the bytes 41 FF 42 read as


def fixes(path):
    """One subject stepping into each area and out again, the repaired-id area last."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        t = 1_700_000_000
        for i in range(AREAS + 1):
            lon, lat = (i % 100) * 0.02, (i // 100) * 0.02
            w.writerow(["s1", t, lat + 0.005, lon + 0.005, 5])
            w.writerow(["s1", t + 60, lat + 0.015, lon + 0.015, 5])
            t += 120


def keys_of(db):
    return dict(stored_rows(db, "SELECT area_id, area_key FROM gf_area_keys WHERE CAST(area_id AS BLOB) <> X'41FF42'"))


def test_second_run_reads_the_dictionary_whole(tmp_path):
    areas = [square(f"a{i:05d}", (i % 100) * 0.02, (i // 100) * 0.02) for i in range(AREAS)]
    areas.append(square(REPAIRED, (AREAS % 100) * 0.02, (AREAS // 100) * 0.02))
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, write_collection(tmp_path / "a.geojson", areas), "--with-default-conditions")
    fixes(tmp_path / "f.csv")

    gf("judge", db, "--fixes", tmp_path / "f.csv", "--quiet")
    first = stored_rows(db, "SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications ORDER BY id")
    keys = keys_of(db)
    assert len(first) == 2 * (AREAS + 1) and len(keys) == AREAS + 1
    # A row of the user's whose id bytes are not UTF-8; its key is above the real area's.
    con = sqlite3.connect(db)
    with con:
        con.execute("INSERT INTO gf_area_keys (area_id) VALUES (CAST(X'41FF42' AS TEXT))")
    con.close()
    assert stored_rows(db, "SELECT count(*) FROM gf_area_keys") == [(AREAS + 2,)]

    gf("reset", db)
    gf("judge", db, "--fixes", tmp_path / "f.csv", "--quiet")
    second = stored_rows(db, """SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications
                                WHERE run_id = (SELECT max(run_id) FROM gf_runs) ORDER BY id""")
    assert second == first
    assert keys_of(db) == keys, "no area was given a second key"
    stored = stored_rows(db, """SELECT DISTINCT k.area_id, n.area_key FROM gf_notification_rows AS n
                                JOIN gf_area_keys AS k USING (area_key)
                                WHERE n.run_id = (SELECT max(run_id) FROM gf_runs)""")
    assert dict(stored) == keys, "each area's rows are stored under its own key, the repaired id's too"
