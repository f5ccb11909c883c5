"""gf_check_stream judges a fix as gf_check does and returns the same
notifications, but stores none of them (docs/sql.md): the subject's state is
stored as always. Here one stream of hops across a region of overlapping
areas (IN, OUT, DWELL and a suppressed IN) goes through gf_check on one copy
of a catalog and gf_check_stream on another, and through both mixed on a
third: every call must return the same text, every state the same record,
and only gf_check's calls may leave notification rows."""
import json
import random
import shutil
import sqlite3

import pytest

from conftest import EXTENSION, sql
from task_scenario import digest, write_rows
from test_check_state_apart import CHECK_ALL, LISTING, attach, shared_catalog
from test_check_whole_index import hops, region
from test_judgement import iso


def connect(db):
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    return c


def returns(db, rows, function_of):
    """Each call's returned text, the calls in one transaction; `function_of(i)` names the i-th call's function."""
    c = connect(db)
    c.execute("BEGIN")
    out = [c.execute(f"SELECT {function_of(i)}(?, ?, ?, ?, ?)", (s, iso(t), lat, lon, acc)).fetchone()[0]
           for i, (s, t, lat, lon, acc) in enumerate(rows)]
    c.execute("COMMIT")
    c.close()
    return out


def stored(db):
    """The state as stored (records, the inside index, the suppressing days) and the notification ids."""
    c = sqlite3.connect(db)
    out = {"records": c.execute("SELECT subject_id, record FROM gf_subject_state ORDER BY subject_id").fetchall(),
           "inside": c.execute("SELECT area_id, subject_id FROM gf_inside ORDER BY area_id, subject_id").fetchall(),
           "suppressing days": c.execute("""SELECT l.* FROM gf_last_notified AS l JOIN gf_conditions USING (condition_id)
                                            WHERE renotify_suppress_days > 0 ORDER BY 1, 2""").fetchall(),
           "notification ids": [r[0] for r in c.execute("SELECT id FROM gf_notifications ORDER BY id")],
           "runs": c.execute("SELECT count(*) FROM gf_runs").fetchone()[0]}
    c.close()
    return out


@pytest.fixture
def scenario(tmp_path):
    rng = random.Random(41)
    db = region(tmp_path, rng)
    return tmp_path, db, hops(rng)


def side_by_side(scenario, function_of):
    """The scenario's calls through gf_check on one copy of its catalog and through
    `function_of(i)` on another, each call returning the same text: (the two copies, the texts)."""
    tmp_path, db, rows = scenario
    checked, other = tmp_path / "checked.db", tmp_path / "other.db"
    shutil.copy(db, checked)
    shutil.copy(db, other)
    want = returns(checked, rows, lambda i: "gf_check")
    assert returns(other, rows, function_of) == want
    return checked, other, want


def test_stream_returns_what_gf_check_returns_and_stores_the_same_state_without_notifications(scenario):
    checked, streamed, want = side_by_side(scenario, lambda i: "gf_check_stream")
    assert sum(text.count('"transition"') for text in want) > 300, "the scenario must notify"
    assert all(f'"transition":"{t}"' in "".join(want) for t in ("IN", "OUT", "DWELL"))
    a, b = stored(checked), stored(streamed)
    assert len(a["notification ids"]) == sum(text.count('"transition"') for text in want)
    assert b["notification ids"] == [] and b["runs"] == a["runs"]
    assert a["suppressing days"], "the scenario must keep a suppression's day"
    for part in ("records", "inside", "suppressing days"):
        assert b[part] == a[part], part


def test_mixed_calls_store_exactly_the_notifications_of_gf_checks_calls(scenario):
    """Every third call streamed: the stored rows are the other calls' notifications, in their order."""
    checked, mixed, want = side_by_side(scenario, lambda i: "gf_check_stream" if i % 3 == 0 else "gf_check")
    fields = ("subject_id", "area_id", "condition_id", "transition", "lat", "lon", "accuracy_m")
    expected = [tuple(n[f] for f in fields) for i, text in enumerate(want) if i % 3 for n in json.loads(text)]
    c = sqlite3.connect(mixed)
    kept = c.execute(f"SELECT {', '.join(fields)} FROM gf_notifications ORDER BY id").fetchall()
    c.close()
    assert len(expected) > 100 and kept == expected
    assert stored(mixed)["records"] == stored(checked)["records"]


def test_stream_may_read_the_notifications_gf_check_may_not(catalog):
    """gf_check refuses a statement that reads gf_notifications (it would meet
    its own rows); gf_check_stream writes none, so such a statement may call it."""
    c = connect(catalog)
    c.execute("SELECT gf_check('w', '2026-11-20T09:05:00+09:00', 35.7098, 139.7740, 15)")
    with pytest.raises(sqlite3.OperationalError, match="gf_check"):
        c.execute("SELECT gf_check('v', '2026-11-20T09:06:00+09:00', 35.7098, 139.7740, 15) FROM gf_notifications").fetchall()
    got = c.execute("SELECT gf_check_stream('v', '2026-11-20T09:06:00+09:00', 35.7098, 139.7740, 15) "
                    "FROM gf_notifications").fetchall()
    assert len(got) == 1 and '"subject_id":"v"' in got[0][0] and '"transition":"IN"' in got[0][0]
    assert c.execute("SELECT count(*) FROM gf_notifications").fetchone()[0] == 1
    assert c.execute("SELECT judged_fixes FROM gf_subjects WHERE subject_id = 'v'").fetchone()[0] == 1


def test_stream_refusals_name_gf_check_stream(catalog):
    c = connect(catalog)
    with pytest.raises(sqlite3.OperationalError, match=r"^gf_check_stream: argument 5 \(accuracy_m\) makes the fix invalid"):
        c.execute("SELECT gf_check_stream('w', '2026-11-20T09:05:00Z', 35.7, 139.7, -1)")
    plain = sqlite3.connect(":memory:")
    plain.enable_load_extension(True)
    plain.load_extension(str(EXTENSION))
    with pytest.raises(sqlite3.OperationalError, match=r"^gf_check_stream: no geofence catalog in this database"):
        plain.execute("SELECT gf_check_stream('w', '2026-11-20T09:05:00Z', 35.7, 139.7, 5)")
    c.execute("CREATE VIEW v AS SELECT gf_check_stream('w', '2026-11-20T09:05:00Z', 35.7, 139.7, 5) AS n")
    with pytest.raises(sqlite3.OperationalError, match="unsafe use of gf_check_stream"):
        c.execute("SELECT * FROM v")


def test_stream_with_the_state_apart_stores_gf_checks_state_and_no_notification(tmp_path):
    """With a state database as main and the catalog attached read-only
    (docs/state.md), gf_check_stream stores what gf_check stores there but
    the notifications, and the catalog's bytes stay as they were."""
    _, catalog, rows, before = shared_catalog(tmp_path)
    fixes = tmp_path / "fixes.csv"
    write_rows(fixes, rows)
    outputs = {}
    for function in ("gf_check", "gf_check_stream"):
        state = tmp_path / f"{function}.db"
        assert sql(state, attach(catalog) + "SELECT gf_state_init();").stdout == "1\n"
        calls = CHECK_ALL.format(fixes=fixes).replace("count(gf_check(", f"group_concat({function}(")
        outputs[function] = (sql(state, attach(catalog) + calls).stdout, sql(state, attach(catalog) + LISTING).stdout)
    (returned, listed), (streamed, streamed_listing) = outputs["gf_check"], outputs["gf_check_stream"]
    assert streamed == returned and returned.count('"transition"') > 20
    assert listed.count("\nN|") > 20 and "\nN|" not in "\n" + streamed_listing
    assert [line for line in listed.splitlines() if not line.startswith("N|")] == streamed_listing.splitlines()
    assert digest(catalog) == before


def test_the_transactions_and_the_sessions_refusals_name_the_function_called(catalog):
    """gf_check and gf_check_stream share the connection's session and its
    call transaction: each refusal of theirs names the function the caller
    called, and a call refused inside the other's names both (red team)."""
    c = connect(catalog)
    call = "SELECT {}('u', '2026-11-20T09:00:00Z', 35.7098, 139.7740, 10)"
    c.execute("CREATE TEMP TABLE t (x)")
    c.execute("BEGIN")
    with pytest.raises(sqlite3.OperationalError, match=r"^gf_check_stream: cannot run inside a statement that writes .* "
                                                       r"select gf_check_stream\(…\) on its own"):
        c.execute("INSERT INTO t " + call.format("gf_check_stream"))
    c.execute("ROLLBACK")
    for inner, outer in (("gf_check_stream", "gf_check"), ("gf_check", "gf_check_stream")):
        c.execute(f"CREATE TEMP TRIGGER inner AFTER INSERT ON gf_inside BEGIN SELECT {inner}('v', '2026-11-20T09:00:00Z', 35.7, 139.7, 5); END")
        with pytest.raises(sqlite3.OperationalError, match=rf"^{inner}: cannot be called from a trigger on a table {outer} writes .* "
                                                           rf"runs inside a {outer} call"):
            c.execute(call.format(outer).replace("'u'", f"'{outer}'"))
        c.execute("DROP TRIGGER inner")
    with pytest.raises(sqlite3.OperationalError, match=r"^gf_check_stream: .*epoch milliseconds\? gf_check_stream takes seconds"):
        c.execute("SELECT gf_check_stream('u', 1795133100000, 35.7, 139.7, 10)")
    c.execute("DROP TRIGGER gf_notification_rows_floor")
    with pytest.raises(sqlite3.OperationalError, match=r"^gf_check_stream: .*gf_notification_rows_floor"):
        c.execute(call.format("gf_check_stream"))
    c.close()
    c = connect(catalog)
    c.execute("PRAGMA journal_mode = OFF")
    with pytest.raises(sqlite3.OperationalError, match=r"^gf_check_stream: the database's journal_mode is OFF"):
        c.execute(call.format("gf_check_stream"))

