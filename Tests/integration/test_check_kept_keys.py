"""gf_check stores notifications by subject and area key (gf_subject_keys,
gf_area_keys), and a session keeps the keys it found from one call to the
next. A key given in a transaction that is then rolled back is gone, and a
key another connection (or a statement of this one) removes is gone too: a
kept key used after that would store notifications no view can name. Here a
stream of calls is cut into groups that are kept, undone by ROLLBACK TO a
savepoint, or undone with their whole transaction; the first groups that
give keys are undone, and between groups an area's notifications and its
key are removed, by another connection or by this one. The same kept calls
and the same removals on fresh connections must leave the same
notifications, and no stored row may name a key its dictionary lacks. Both
with the state in the catalog and in a state database of its own, where the
session keeps its catalog across other writers' commits and its own
statements (docs/state.md), so only the keys' own checks stand guard."""
import json
import random
import shutil
import sqlite3

import pytest

from conftest import EXTENSION, gf
from test_judgement import iso, scenario


def connect(db, catalog=None):
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    if catalog:
        c.execute(f"ATTACH 'file:{catalog}?mode=ro' AS catalog")
    return c


def start(path, catalog, apart):
    """A copy of the catalog to judge on, or (apart) an empty state database beside the catalog."""
    if not apart:
        shutil.copy(catalog, path)
        return path, None
    c = connect(path, catalog)
    c.execute("SELECT gf_state_init()")
    c.close()
    return path, catalog


def remove_area(c, area_id):
    """An area's notifications and its key, as a user pruning that area's history would remove them."""
    c.execute("BEGIN IMMEDIATE")
    c.execute("DELETE FROM gf_notification_rows WHERE area_key = (SELECT area_key FROM gf_area_keys WHERE area_id = ?)", (area_id,))
    c.execute("DELETE FROM gf_area_keys WHERE area_id = ?", (area_id,))
    c.execute("COMMIT")


def stored(db, catalog):
    c = sqlite3.connect(db)
    if catalog:
        c.execute(f"ATTACH 'file:{catalog}?mode=ro' AS catalog")
    dangling = c.execute("""SELECT count(*) FROM gf_notification_rows AS n
                            WHERE NOT EXISTS (SELECT 1 FROM gf_area_keys AS a WHERE a.area_key = n.area_key)
                               OR NOT EXISTS (SELECT 1 FROM gf_subject_keys AS s WHERE s.subject_key = n.subject_key)""").fetchone()[0]
    rows = c.execute("SELECT subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM gf_notifications ORDER BY id").fetchall()
    c.close()
    return dangling, rows


def plan(fixes, rng):
    """Groups of 1-5 calls, each ('keep' | 'savepoint' | 'transaction', calls), and removals between them."""
    steps, k, undone_first = [], 0, 3
    while k < len(fixes):
        n = rng.randint(1, 5)
        calls = fixes[k:k + n]
        k += n
        if undone_first > 0:
            fate = "savepoint" if undone_first % 2 else "transaction"
            undone_first -= 1
        else:
            fate = rng.choices(["keep", "savepoint", "transaction"], [6, 1, 1])[0]
        steps.append((fate, calls))
        if rng.random() < 0.25:
            steps.append(("remove", (f"A{rng.randrange(12):02d}", rng.choice(["other", "same"]))))
    return steps


@pytest.mark.parametrize("apart", [False, True], ids=["state-in-catalog", "state-database"])
def test_kept_keys_never_outlive_their_rows(tmp_path, apart):
    db, _, rows = scenario(tmp_path, subjects=5, per_subject=70, seed=38)
    fixes = [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]
    steps = plan(fixes, random.Random(38))
    assert sum(1 for fate, _ in steps if fate == "remove") >= 5
    session, catalog = start(tmp_path / "session.db", db, apart)
    fresh, _ = start(tmp_path / "fresh.db", db, apart)

    c = connect(session, catalog)
    for fate, what in steps:
        if fate == "remove":
            area, by = what
            if by == "same":
                remove_area(c, area)
            else:
                other = sqlite3.connect(session, isolation_level=None)
                remove_area(other, area)
                other.close()
            continue
        c.execute("BEGIN")
        c.execute("SAVEPOINT g")
        for f in what:
            c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        if fate == "savepoint":
            c.execute("ROLLBACK TO g")
        c.execute("RELEASE g")
        c.execute("ROLLBACK" if fate == "transaction" else "COMMIT")
    c.close()

    notified = 0
    for fate, what in steps:
        if fate == "remove":
            f = sqlite3.connect(fresh, isolation_level=None)
            remove_area(f, what[0])
            f.close()
        elif fate == "keep":
            for call in what:
                f = connect(fresh, catalog)
                notified += len(json.loads(f.execute("SELECT gf_check(?, ?, ?, ?, ?)", call).fetchone()[0]))
                f.close()

    dangling, got = stored(session, catalog)
    _, want = stored(fresh, catalog)
    assert dangling == 0
    assert notified >= 50 and len(want) >= 10, "the scenario must notify"
    assert got == want


# Found by a red team: a user's change of a dictionary and gf_check calls in
# one transaction, then rolled back together, restore the greatest key the
# check compares. Circles of 200 m, 1 km apart; a subject is put inside one or far away.
def small_catalog(tmp_path):
    features = [{"type": "Feature", "properties": {"area_id": f"A{i:02d}", "radius_m": 200},
                 "geometry": {"type": "Point", "coordinates": [139.0 + 0.01 * i, 35.0]}} for i in range(4)]
    areas = tmp_path / "small.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    db = tmp_path / "small.db"
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    return db


def check(c, subject, second, area=None):
    lat, lon = (36.0, 139.0) if area is None else (35.0, 139.0 + 0.01 * area)
    return json.loads(c.execute("SELECT gf_check(?, ?, ?, ?, 5)", (subject, f"2026-11-20T00:00:{second:02d}Z", lat, lon)).fetchone()[0])


def last_stored(c):
    return c.execute("SELECT subject_id, area_id, transition FROM gf_notifications ORDER BY id DESC LIMIT 1").fetchone()


CHANGES = {
    # A01's key (the greatest) deleted, and given to A02 inside the transaction.
    "the greatest key deleted": ["DELETE FROM gf_notification_rows WHERE area_key = 2", "DELETE FROM gf_area_keys WHERE area_key = 2"],
    "two ids swapped": ["UPDATE gf_area_keys SET area_id = 'tmp' WHERE area_key = 1", "UPDATE gf_area_keys SET area_id = 'A00' WHERE area_key = 2",
                        "UPDATE gf_area_keys SET area_id = 'A01' WHERE area_key = 1"],
}


@pytest.mark.parametrize("undo", ["ROLLBACK", "ROLLBACK TO"])
@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("apart", [False, True], ids=["state-in-catalog", "state-database"])
def test_keys_found_after_a_change_rolled_back_with_it_are_not_kept(tmp_path, apart, change, undo):
    session, catalog = start(tmp_path / "session.db", small_catalog(tmp_path), apart)
    c = connect(session, catalog)
    for second, area in ((1, 0), (2, None), (3, 1), (4, None)):   # A00 gets key 1, A01 key 2
        check(c, "s1", second, area)
    c.execute("BEGIN")
    c.execute("SAVEPOINT sp")
    for sql in CHANGES[change]:
        c.execute(sql)
    target = 2 if change == "the greatest key deleted" else 0
    check(c, "s2", 5, target)
    check(c, "s2", 6)
    c.execute("ROLLBACK" if undo == "ROLLBACK" else "ROLLBACK TO sp")
    if undo != "ROLLBACK":
        c.execute("RELEASE sp")
        c.execute("COMMIT")
    assert [n["area_id"] for n in check(c, "s3", 7, target)] == [f"A{target:02d}"]
    assert last_stored(c) == ("s3", f"A{target:02d}", "IN")
    c.close()
    assert stored(session, catalog)[0] == 0


def test_keys_given_below_the_greatest_are_not_kept(tmp_path):
    """Past a key of 2^63 - 1 SQLite gives keys at random: a rolled-back one leaves the greatest as it was."""
    db = small_catalog(tmp_path)
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO gf_area_keys (area_key, area_id) VALUES (9223372036854775807, 'elsewhere')")
    c = connect(db)
    for second, area in ((1, 0), (2, None), (3, 1), (4, None)):
        check(c, "s1", second, area)
    c.execute("BEGIN")
    check(c, "s2", 5, 2)
    c.execute("ROLLBACK")
    assert [n["area_id"] for n in check(c, "s2", 6, 2)] == ["A02"]
    assert last_stored(c) == ("s2", "A02", "IN")
    c.close()
    assert stored(db, None)[0] == 0


# Found by a second red team: a call inside a statement that writes the
# dictionary, a change counted only when the statement ends (and never if
# it fails and is undone whole).
STATEMENTS = {
    "a failed INSERT of a key below the greatest": (
        "INSERT INTO gf_area_keys (area_key, area_id) VALUES (0, 'A02'), (-5, CASE WHEN {call} IS NOT NULL THEN NULL END)", True),
    "a failed UPDATE renaming a key": (
        "UPDATE gf_area_keys SET area_id = CASE area_key WHEN 1 THEN 'A02' ELSE CASE WHEN {call} IS NOT NULL THEN NULL END END", True),
    "an UPDATE renaming a key, the call on its next row": (
        "UPDATE gf_area_keys SET area_id = CASE area_key WHEN 1 THEN 'gone' ELSE area_id || substr({call}, 1, 0) END", False),
}


@pytest.mark.parametrize("statement", list(STATEMENTS))
def test_keys_met_inside_a_statement_that_writes_the_dictionary_are_not_kept(tmp_path, statement):
    db = small_catalog(tmp_path)
    fresh = tmp_path / "fresh.db"
    shutil.copy(db, fresh)
    c = connect(db)
    for second, area in ((1, 0), (2, None), (3, 1), (4, None)):   # A00 gets key 1, A01 key 2
        check(c, "s1", second, area)
    sql, fails = STATEMENTS[statement]
    area = 2 if fails else 0
    inner = f"gf_check('s2', '2026-11-20T00:00:05Z', 35.0, {139.0 + 0.01 * area}, 5)"
    try:
        c.execute(sql.format(call=inner))
        assert not fails
    except sqlite3.IntegrityError:
        assert fails
    for second, place in ((6, 2), (7, None), (8, 2)):
        check(c, "s3", second, place)
    c.close()
    dangling, got = stored(db, None)
    assert dangling == 0
    if not fails:   # the call inside the statement: A00, whose key the statement renamed
        assert [r[2] for r in got if r[0] == "s2"] == ["A00"]
    # Every stored row names the area its call notified (the calls at A02 after the statement).
    assert [r[:3] for r in got[-3:]] == [("s3", "2026-11-20T00:00:06.000000Z", "A02"), ("s3", "2026-11-20T00:00:07.000000Z", "A02"),
                                         ("s3", "2026-11-20T00:00:08.000000Z", "A02")]


def test_keys_are_not_kept_over_a_main_replaced_by_deserialize(tmp_path):
    """Found by a third red team: sqlite3_deserialize replaces main whole, an
    image of the same catalog with two dictionary ids swapped, and no count
    a check reads moves (changes, data_version, the greatest key)."""
    db = small_catalog(tmp_path)
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA journal_mode = DELETE")   # a WAL image could not be written once deserialized
    c = connect(db)
    for second, area in ((1, 0), (2, None), (3, 1), (4, None)):   # A00 gets key 1, A01 key 2
        check(c, "s1", second, area)
    m = sqlite3.connect(":memory:", isolation_level=None)
    m.deserialize(c.serialize())
    for sql in CHANGES["two ids swapped"]:
        m.execute(sql)
    c.deserialize(m.serialize())
    m.close()
    assert [n["area_id"] for n in check(c, "s1", 5, 0)] == ["A00"]
    assert last_stored(c) == ("s1", "A00", "IN")
