"""Listings of notifications read only what they list, in canonical order
(subject, time, area, condition, then the order written): `check` and
`judge --out` after earlier runs give exactly their own run's rows, whether
the run is a small part of the table (read by its id range) or most of it
(read through the subject index); `notifications --subject` and `--run`
agree with a plain SQL reference, ties included."""
import csv
import io
import sqlite3

from conftest import SAMPLES, gf

COLUMNS = "subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m"


def reference(db, where, values=()):
    con = sqlite3.connect(db)
    rows = con.execute(f"SELECT {COLUMNS} FROM gf_notifications WHERE {where} "
                       "ORDER BY subject_id, ts, area_id, condition_id, id", values).fetchall()
    con.close()
    return rows


def listed(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[1:]


def same(csv_rows, sql_rows):
    assert len(csv_rows) == len(sql_rows)
    for got, want in zip(csv_rows, sql_rows):
        assert got[0] == want[0] and got[2] == want[2] and int(got[3]) == want[3] and got[4] == want[4]
        assert (float(got[5]), float(got[6]), float(got[7])) == tuple(want[5:8])


def test_a_runs_listing_is_its_rows_after_earlier_runs(tmp_path, catalog):
    # Earlier runs fill the table: the same fixes judged under many subject names.
    fixes = (SAMPLES / "fixes.csv").read_text().splitlines()
    big = tmp_path / "big.csv"
    big.write_text("\n".join([fixes[0]] + [f"{k}-{line}" for k in range(40) for line in fixes[1:]]) + "\n")
    gf("judge", catalog, "--fixes", big)
    before = sqlite3.connect(catalog).execute("SELECT count(*) FROM gf_notifications").fetchone()[0]
    assert before > 100
    # A small run now: its rows are a small part of the table.
    out = tmp_path / "small.csv"
    gf("judge", catalog, "--fixes", SAMPLES / "fixes.csv", "--out", out)
    run = sqlite3.connect(catalog).execute("SELECT max(run_id) FROM gf_runs").fetchone()[0]
    same(listed(out.read_text()), reference(catalog, "run_id = ?", (run,)))
    assert listed(out.read_text())
    # A check after them: exactly its own notifications.
    p = gf("check", catalog, "--subject", "0-walker-01", "--lat", "35.6812", "--lon", "139.7671", "--accuracy", "5",
           "--time", "2030-01-01T00:00:00Z", "--csv")
    run = sqlite3.connect(catalog).execute("SELECT max(run_id) FROM gf_runs").fetchone()[0]
    same(listed(p.stdout), reference(catalog, "run_id = ?", (run,)))
    # A subject's listing and a run's, against SQL.
    p = gf("notifications", catalog, "--subject", "7-" + fixes[1].split(",")[0], "--format", "csv")
    same(listed(p.stdout), reference(catalog, "subject_id = ?", ("7-" + fixes[1].split(",")[0],)))
    p = gf("notifications", catalog, "--run", "1", "--since", "2026-01-01T00:00:00Z", "--format", "csv")
    same(listed(p.stdout), reference(catalog, "run_id = 1 AND ts >= '2026-01-01T00:00:00.000000Z'"))


def test_rows_equal_in_all_four_keys_keep_the_order_written(tmp_path, catalog):
    con = sqlite3.connect(catalog)
    us = 1_795_392_000 * 1_000_000   # 2026-11-23T00:00:00Z
    with con:
        con.execute("INSERT OR IGNORE INTO gf_subject_keys (subject_id) VALUES ('s')")
        con.execute("INSERT OR IGNORE INTO gf_area_keys (area_id) VALUES ('a')")
        con.executemany("INSERT INTO gf_notification_rows (run_id, subject_key, ts_us, area_key, condition_id, transition, "
                        "lat, lon, accuracy_m, local_day) VALUES (7, (SELECT subject_key FROM gf_subject_keys WHERE subject_id = 's'), "
                        "?, (SELECT area_key FROM gf_area_keys WHERE area_id = 'a'), 1, ?, 1, 2, ?, ? / 86400000000)",
                        [(us, 0, 30.0, us), (us, 1, 10.0, us), (us, 2, 20.0, us), (us, 0, 5.0, us)])
    con.close()
    for args in (["--run", "7"], ["--subject", "s"], []):
        p = gf("notifications", catalog, *args, "--format", "csv")
        rows = [r for r in listed(p.stdout) if r[0] == "s"]
        assert [r[7] for r in rows] == ["30.0", "10.0", "20.0", "5.0"], args


def test_one_subjects_reset_state_and_one_areas_conditions(tmp_path, catalog):
    """`reset --subject`, `state --subject` and `conditions list --area` touch
    exactly their subject's or area's rows (now through the indexes)."""
    fixes = (SAMPLES / "fixes.csv").read_text().splitlines()
    two = tmp_path / "two.csv"
    two.write_text("\n".join([fixes[0]] + [f"{k}-{line}" for k in range(2) for line in fixes[1:]]) + "\n")
    gf("judge", catalog, "--fixes", two)
    con = sqlite3.connect(catalog)
    tables = ["gf_subjects", "gf_stays", "gf_inside", "gf_last_notified", "gf_notifications"]

    def counts():
        return {t: dict(con.execute(f"SELECT subject_id LIKE '0-%', count(*) FROM {t} GROUP BY 1").fetchall()) for t in tables}
    before = counts()
    assert all(before[t].get(1, 0) > 0 and before[t].get(0, 0) > 0 for t in ["gf_subjects", "gf_notifications"])
    subject = "0-" + fixes[1].split(",")[0]
    state = gf("state", catalog, "--subject", subject, "--csv").stdout
    assert {line.split(",")[0] for line in state.splitlines()[1:]} == {subject}
    assert gf("reset", catalog, "--subject", subject, "--notifications").stdout.strip() == "reset 1 subject and their notifications"
    # A new-user trial's mistyped id reset nothing without a word.
    again = gf("reset", catalog, "--subject", subject + " ").stdout.strip()
    assert again == f"reset 0 subjects (no subject '{subject} ' has state here; ids are compared as written)", again
    after = counts()
    for t in tables:
        assert after[t].get(0) == before[t].get(0), t           # the other subjects' rows stay
        left = con.execute(f"SELECT count(*) FROM {t} WHERE subject_id = ?", (subject,)).fetchone()[0]
        assert left == 0, t
    area = con.execute("SELECT area_id FROM gf_conditions LIMIT 1").fetchone()[0]
    listed = gf("conditions", "list", catalog, "--area", area, "--csv").stdout.splitlines()[1:]
    want = con.execute("SELECT condition_id FROM gf_conditions WHERE area_id = ? ORDER BY condition_id", (area,)).fetchall()
    assert [int(line.split(",")[0]) for line in listed] == [w[0] for w in want] and len(want) >= 2
