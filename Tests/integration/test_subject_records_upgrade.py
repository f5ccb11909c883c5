"""Schema version 8: a catalog whose state the earlier layout holds
(gf_subjects, gf_stay_rows, gf_last_notified) is upgraded in place to one
record per subject (gf_subject_state) and gf_inside. The catalog is made by
the build of the session's start (GEOFENCE_OLD_DIST, /work/dist-fc3bbd3):
conditions of every kind (a DWELL, suppressions), two judge runs leaving
streaks under way and DWELLs spent, then gf_check calls. Opened by this
build, gf_subjects and gf_stays read exactly what the earlier build read
(values and types), gf_inside holds the INSIDE stays, and a further judge
run gives the same notifications and state as the earlier build's own
further run. A user's trigger on a replaced table stops the upgrade, named,
with nothing changed; removed and re-imported areas take their stays as
before. Without the earlier build, the catalog of Tests/fixtures/catalog_v6
(made by it) checks the reads and a further batch alike."""
import csv
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

import test_judge_output_identity as identity
from conftest import ROOT, gf, run, sql
from test_judge_output_identity import iso

OLD = Path(os.environ.get("GEOFENCE_OLD_DIST", "/work/dist-fc3bbd3")) / "geofence"
needs_old = pytest.mark.skipif(not OLD.exists(), reason=f"needs the earlier build at {OLD} (GEOFENCE_OLD_DIST)")
FIXTURE = ROOT / "Tests" / "fixtures" / "catalog_v6"

STATE = {
    "subjects": "SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes, "
                "typeof(last_ts), typeof(last_lat), typeof(judged_fixes) FROM gf_subjects ORDER BY subject_id",
    "stays": "SELECT subject_id, area_id, state, in_streak, out_streak, entered_at, dwell_spent, "
             "typeof(in_streak), typeof(entered_at), typeof(dwell_spent) FROM gf_stays ORDER BY subject_id, area_id",
}
NOTIFICATIONS = "SELECT subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM gf_notifications WHERE run_id = ? ORDER BY id"


def rows(db, query, args=()):
    con = sqlite3.connect(db)
    try:
        return [tuple(r) for r in con.execute(query, args)]
    finally:
        con.close()


def old(*args):
    return run(OLD, *args)


def write_fixes(path, part):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        for r in part:
            w.writerow([r[0], iso(r[1], 9), r[2], r[3], r[4]])


@pytest.fixture(scope="module")
def judged_by_old(tmp_path_factory):
    """(catalog of the earlier schema after two runs and gf_check calls, fixes of a further run)."""
    tmp = tmp_path_factory.mktemp("upgrade")
    # The identity test's workload (areas, conditions of every kind), its catalog made by the earlier build.
    made_by = identity.gf
    identity.gf = old
    try:
        db, _, _, fixes = identity.workload(tmp)
    finally:
        identity.gf = made_by
    first, second, third = fixes[:4000], fixes[4000:8000], fixes[8000:]
    for n, part in enumerate([first, second]):
        write_fixes(tmp / f"part{n}.csv", part)
        old("judge", db, "--fixes", tmp / f"part{n}.csv")
    for subject, t, lat, lon, acc in third[:30]:
        old("check", db, "--subject", subject, "--lat", lat, "--lon", lon, "--accuracy", acc, "--time", iso(t, 9))
    write_fixes(tmp / "further.csv", third[30:])
    return db, tmp / "further.csv", tmp


@needs_old
def test_upgraded_state_reads_as_before_and_judges_the_same(judged_by_old, tmp_path):
    source, further, _ = judged_by_old
    assert rows(source, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [("6",)]
    before = {k: rows(source, q) for k, q in STATE.items()}
    stays = before["stays"]
    # What the upgrade has to carry: a streak under way, a DWELL spent, days a suppression reads.
    assert any(s[2] != "INSIDE" and s[3] > 0 for s in stays) or any(s[2] == "INSIDE" and s[4] > 0 for s in stays)
    assert any(s[6] is not None for s in stays)
    assert rows(source, "SELECT count(*) FROM gf_last_notified AS n JOIN gf_conditions AS c USING (condition_id) "
                        "WHERE c.renotify_suppress_days > 0")[0][0] > 0
    assert rows(source, "SELECT count(*) FROM gf_stay_rows AS r JOIN gf_subjects AS s USING (subject_id) "
                        "WHERE r.base_judged < s.judged_fixes AND (r.in_base > 0 OR r.out_base > 0)")[0][0] > 0, \
        "some stay rows hold their streaks as of an earlier fix"

    upgraded, reference = tmp_path / "new.db", tmp_path / "ref.db"
    shutil.copy(source, upgraded)
    shutil.copy(source, reference)
    gf("state", upgraded)  # opening upgrades
    assert rows(upgraded, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [("8",)]
    assert {k: rows(upgraded, q) for k, q in STATE.items()} == before
    assert rows(upgraded, "SELECT area_id, subject_id FROM gf_inside ORDER BY 1, 2") == \
        sorted((s[1], s[0]) for s in stays if s[2] == "INSIDE")
    assert rows(upgraded, "SELECT name FROM sqlite_master WHERE name IN ('gf_stay_rows', 'gf_subjects_remove_stays')") == []

    # A further run: the same notifications and state as the earlier build's.
    old("judge", reference, "--fixes", further)
    gf("judge", upgraded, "--fixes", further)
    last_ref = rows(reference, "SELECT max(run_id) FROM gf_runs")[0][0]
    last_new = rows(upgraded, "SELECT max(run_id) FROM gf_runs")[0][0]
    assert last_ref == last_new
    got = rows(upgraded, NOTIFICATIONS, (last_new,))
    assert len(got) > 100
    assert got == rows(reference, NOTIFICATIONS, (last_ref,))
    assert {k: rows(upgraded, q) for k, q in STATE.items()} == {k: rows(reference, q) for k, q in STATE.items()}


@needs_old
def test_a_users_trigger_on_the_stay_rows_stops_the_upgrade(judged_by_old, tmp_path):
    db = tmp_path / "trigger.db"
    shutil.copy(judged_by_old[0], db)
    run("sqlite3", db, "CREATE TABLE left_log (s); CREATE TRIGGER my_stay_log AFTER DELETE ON gf_stay_rows "
                       "BEGIN INSERT INTO left_log VALUES (OLD.subject_id); END;")
    before = db.read_bytes()
    p = gf("state", db, check=False)
    assert p.returncode != 0
    assert "'my_stay_log' on gf_stay_rows" in p.stderr and "gf_subject_state" in p.stderr, p.stderr
    assert db.read_bytes() == before


def upgraded_and_reference(judged_by_old, tmp_path):
    source, further, made = judged_by_old
    upgraded, reference = tmp_path / "new.db", tmp_path / "ref.db"
    shutil.copy(source, upgraded)
    shutil.copy(source, reference)
    gf("state", upgraded)
    return upgraded, reference, further, made


def judged_alike(upgraded, reference, further):
    """A further run by each build gives the same notifications and state."""
    old("judge", reference, "--fixes", further)
    gf("judge", upgraded, "--fixes", further)
    last = rows(reference, "SELECT max(run_id) FROM gf_runs")[0][0]
    got = rows(upgraded, NOTIFICATIONS, (last,))
    assert len(got) > 100
    assert got == rows(reference, NOTIFICATIONS, (last,))
    assert {k: rows(upgraded, q) for k, q in STATE.items()} == {k: rows(reference, q) for k, q in STATE.items()}


@needs_old
def test_removed_areas_take_their_stays_as_before(judged_by_old, tmp_path):
    """An area removed with an INSIDE stay, and one with an entry still being
    confirmed (an inside streak, not INSIDE): gf_stays no longer shows
    them, gf_inside loses the INSIDE one, and judging on is as before."""
    upgraded, reference, further, _ = upgraded_and_reference(judged_by_old, tmp_path)
    inside = rows(upgraded, "SELECT area_id FROM gf_stays WHERE state = 'INSIDE' ORDER BY area_id LIMIT 1")[0][0]
    pending = rows(upgraded, "SELECT area_id FROM gf_stays WHERE state <> 'INSIDE' AND in_streak > 0 AND area_id <> ? "
                             "ORDER BY area_id LIMIT 1", (inside,))[0][0]
    for area in (inside, pending):
        old("areas", "remove", reference, area)
        gf("areas", "remove", upgraded, area)
    assert {k: rows(upgraded, q) for k, q in STATE.items()} == {k: rows(reference, q) for k, q in STATE.items()}
    assert rows(upgraded, "SELECT count(*) FROM gf_inside WHERE area_id IN (?, ?)", (inside, pending)) == [(0,)]
    judged_alike(upgraded, reference, further)


@needs_old
def test_areas_imported_again_with_replace_start_without_stays_as_before(judged_by_old, tmp_path):
    """`import --replace` removes every area, so every stay: areas imported
    again under the same ids start with no stay (and no streak under way)."""
    upgraded, reference, further, made = upgraded_and_reference(judged_by_old, tmp_path)
    assert rows(upgraded, "SELECT count(*) FROM gf_stays WHERE state <> 'INSIDE' AND in_streak > 0")[0][0] > 0
    for cli, db in ((old, reference), (gf, upgraded)):
        cli("import", db, made / "areas.geojson", "--replace", "--with-default-conditions")
        cli("conditions", "import", db, made / "conditions.csv")
    assert rows(upgraded, "SELECT count(*) FROM gf_stays") == rows(upgraded, "SELECT count(*) FROM gf_inside") == [(0,)]
    assert {k: rows(upgraded, q) for k, q in STATE.items()} == {k: rows(reference, q) for k, q in STATE.items()}
    judged_alike(upgraded, reference, further)


def fixture_reads(db):
    """The fixture's reads of subjects, stays and notifications (REALs as their repr, as make.py wrote them)."""
    queries = {
        "notifications": "SELECT id, run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m "
                         "FROM gf_notifications ORDER BY id",
        "subjects": "SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes FROM gf_subjects ORDER BY subject_id",
        "stays": "SELECT subject_id, area_id, state, in_streak, out_streak, entered_at, dwell_spent FROM gf_stays ORDER BY subject_id, area_id",
    }
    return {k: [[repr(v) if isinstance(v, float) else v for v in row] for row in rows(db, q)] for k, q in queries.items()}


def test_the_fixture_catalog_of_version_6_reads_and_judges_on_as_that_build_did(tmp_path):
    """The catalog of Tests/fixtures/catalog_v6 (made by the fc3bbd3 build),
    upgraded: gf_subjects and gf_stays read what that build read, and its
    further batch leaves the notifications and state that build left."""
    db = tmp_path / "v6.db"
    gf("init", db, "--schema-version", "6")
    sql(db, (FIXTURE / "rows.sql").read_text())
    assert rows(db, "SELECT count(*) FROM gf_stay_rows AS r JOIN gf_subjects AS s USING (subject_id) "
                    "WHERE r.base_judged < s.judged_fixes AND (r.in_base > 0 OR r.out_base > 0)")[0][0] > 0
    gf("state", db)  # opening upgrades
    assert rows(db, "SELECT value FROM gf_meta WHERE key = 'schema_version'") == [("8",)]
    before = json.loads((FIXTURE / "reads.json").read_text())
    got = fixture_reads(db)
    assert any(s[6] is not None for s in got["stays"]), "a DWELL spent"
    for part in ("subjects", "stays"):
        assert got[part] == before[part], part
    gf("judge", db, "--fixes", FIXTURE / "next.csv")
    after = json.loads((FIXTURE / "next.json").read_text())
    got = fixture_reads(db)
    for part in ("notifications", "subjects", "stays"):
        assert got[part] == after[part], part
