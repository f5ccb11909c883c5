"""Schema version 8: a catalog whose state the earlier layout holds
(gf_subjects, gf_stay_rows, gf_last_notified) is upgraded in place to one
record per subject (gf_subject_state) and gf_inside. The catalog is the
fixture Tests/fixtures/v6_subject_records, made by the build of version 6
(fc3bbd3) with its make.py: conditions of every kind (a DWELL,
suppressions), two judge runs leaving streaks under way and DWELLs spent,
then `geofence check` calls. Opened by this build, gf_subjects and gf_stays
read exactly what the earlier build read (values and types), gf_inside holds
the INSIDE stays, and a further judge run gives the same notifications and
state as the earlier build's own further run (answers.json). A user's
trigger on a replaced table stops the upgrade, named, with nothing changed;
removed and re-imported areas take their stays as before."""
import json
import sqlite3

from conftest import ROOT, current_schema_version, gf, run
from older_layouts import version_6_catalog

FIXTURE = ROOT / "Tests" / "fixtures" / "v6_subject_records"

# The reads whose answers the fixture's make.py took from the version-6 build (it imports them from here).
STATE = {
    "subjects": "SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes, "
                "typeof(last_ts), typeof(last_lat), typeof(judged_fixes) FROM gf_subjects ORDER BY subject_id",
    "stays": "SELECT subject_id, area_id, state, in_streak, out_streak, entered_at, dwell_spent, "
             "typeof(in_streak), typeof(entered_at), typeof(dwell_spent) FROM gf_stays ORDER BY subject_id, area_id",
}
NOTIFICATIONS = "SELECT subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM gf_notifications WHERE run_id = ? ORDER BY id"
# The areas the removal test removes: the first with an INSIDE stay, and another with an entry under way.
REMOVED = {
    "inside": "SELECT area_id FROM gf_stays WHERE state = 'INSIDE' ORDER BY area_id LIMIT 1",
    "pending": "SELECT area_id FROM gf_stays WHERE state <> 'INSIDE' AND in_streak > 0 AND area_id <> ? ORDER BY area_id LIMIT 1",
}


def rows(db, query, args=()):
    """The query's rows as JSON gives them back (lists; REALs exact), as answers.json holds them."""
    con = sqlite3.connect(db)
    try:
        return json.loads(json.dumps(con.execute(query, args).fetchall()))
    finally:
        con.close()


def state(db):
    """The STATE reads, as answers.json holds each state."""
    return {k: rows(db, q) for k, q in STATE.items()}


def answers():
    """What the version-6 build gave (make.py's docstring says what each part is)."""
    return json.loads((FIXTURE / "answers.json").read_text())


def old_catalog(tmp_path):
    """The fixture's catalog of version 6, as the earlier build left it."""
    db = version_6_catalog(tmp_path / "old.db", FIXTURE / "rows.sql")
    assert rows(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [["6"]]
    return db


def upgraded(tmp_path):
    """The fixture's catalog, upgraded by the first command that opens it."""
    db = old_catalog(tmp_path)
    gf("state", db)  # opening upgrades
    return db


def judged_alike(db, want):
    """A further run gives the notifications and state the earlier build's
    further run gave (`want`: answers.json's "further" of the same case)."""
    gf("judge", db, "--fixes", FIXTURE / "further.csv")
    last = rows(db, "SELECT max(run_id) FROM gf_runs")[0][0]
    assert last == want["run_id"]
    got = rows(db, NOTIFICATIONS, (last,))
    assert len(got) > 100
    assert got == want["notifications"]
    assert state(db) == want["state"]


def test_upgraded_state_reads_as_before_and_judges_the_same(tmp_path):
    db = old_catalog(tmp_path)
    before = answers()["state"]
    assert state(db) == before   # the fixture's rows are what the earlier build read
    stays = before["stays"]
    # What the upgrade has to carry: a streak under way, a DWELL spent, days a suppression reads.
    assert any(s[2] != "INSIDE" and s[3] > 0 for s in stays) or any(s[2] == "INSIDE" and s[4] > 0 for s in stays)
    assert any(s[6] is not None for s in stays)
    assert rows(db, "SELECT count(*) FROM gf_last_notified AS n JOIN gf_conditions AS c USING (condition_id) "
                    "WHERE c.renotify_suppress_days > 0")[0][0] > 0
    assert rows(db, "SELECT count(*) FROM gf_stay_rows AS r JOIN gf_subjects AS s USING (subject_id) "
                    "WHERE r.base_judged < s.judged_fixes AND (r.in_base > 0 OR r.out_base > 0)")[0][0] > 0, \
        "some stay rows hold their streaks as of an earlier fix"

    gf("state", db)  # opening upgrades
    assert rows(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [[current_schema_version()]]
    assert state(db) == before
    assert rows(db, "SELECT area_id, subject_id FROM gf_inside ORDER BY 1, 2") == \
        sorted([s[1], s[0]] for s in stays if s[2] == "INSIDE")
    assert rows(db, "SELECT name FROM sqlite_master WHERE name IN ('gf_stay_rows', 'gf_subjects_remove_stays')") == []

    # A further run: the same notifications and state as the earlier build's.
    judged_alike(db, answers()["further"])


def test_a_users_trigger_on_the_stay_rows_stops_the_upgrade(tmp_path):
    db = old_catalog(tmp_path)
    run("sqlite3", db, "CREATE TABLE left_log (s); CREATE TRIGGER my_stay_log AFTER DELETE ON gf_stay_rows "
                       "BEGIN INSERT INTO left_log VALUES (OLD.subject_id); END;")
    before = db.read_bytes()
    p = gf("state", db, check=False)
    assert p.returncode != 0
    assert "my_stay_log on gf_stay_rows" in p.stderr and "gf_subject_state" in p.stderr, p.stderr
    assert "DROP TRIGGER my_stay_log;" in p.stderr, p.stderr
    assert db.read_bytes() == before


def test_removed_areas_take_their_stays_as_before(tmp_path):
    """An area removed with an INSIDE stay, and one with an entry still being
    confirmed (an inside streak, not INSIDE): gf_stays no longer shows
    them, gf_inside loses the INSIDE one, and judging on is as before."""
    db = upgraded(tmp_path)
    want = answers()["removed"]
    inside = rows(db, REMOVED["inside"])[0][0]
    pending = rows(db, REMOVED["pending"], (inside,))[0][0]
    assert [inside, pending] == want["areas"]
    assert rows(db, "SELECT count(*) FROM gf_inside WHERE area_id = ?", (inside,)) != [[0]]
    for area in (inside, pending):
        gf("areas", "remove", db, area)
    assert state(db) == want["state"]
    assert rows(db, "SELECT count(*) FROM gf_stays WHERE area_id IN (?, ?)", (inside, pending)) == [[0]]
    assert rows(db, "SELECT count(*) FROM gf_inside WHERE area_id IN (?, ?)", (inside, pending)) == [[0]]
    judged_alike(db, want["further"])


def test_areas_imported_again_with_replace_start_without_stays_as_before(tmp_path):
    """`import --replace` removes every area, so every stay: areas imported
    again under the same ids start with no stay (and no streak under way)."""
    db = upgraded(tmp_path)
    want = answers()["replaced"]
    assert rows(db, "SELECT count(*) FROM gf_stays WHERE state <> 'INSIDE' AND in_streak > 0")[0][0] > 0
    gf("import", db, FIXTURE / "areas.geojson", "--replace", "--with-default-conditions")
    gf("conditions", "import", db, FIXTURE / "conditions.csv")
    assert rows(db, "SELECT count(*) FROM gf_stays") == rows(db, "SELECT count(*) FROM gf_inside") == [[0]]
    assert state(db) == want["state"]
    judged_alike(db, want["further"])
