"""NDJSON events, byte for byte. `judge --out x.ndjson` and `notifications
--format ndjson` write each line straight as bytes; the lines must be exactly
the ones the JSON value tree wrote before. The events carry hostile text
(quotes, backslashes, control characters, U+2028, non-ASCII, emoji,
numeric-looking ids), negative coordinates, an accuracy with many digits,
times given as ISO 8601 text, Unix seconds and a REAL, and hand-written rows
with stored types a judgement never writes (text in a numeric column, an
unreadable time, an id beyond 2^53). Every line must be strict JSON holding
the stored values in column order, and each output must hash to what the
build before the rewrite wrote for the same database."""
import csv
import datetime
import hashlib
import json
import sqlite3
import subprocess

import pytest

from conftest import CLI, gf
from older_layouts import notifications_as_a_table

COLUMNS = ["subject_id", "ts", "area_id", "condition_id", "transition", "lat", "lon", "accuracy_m"]
AREA_IDS = ['q"uote\\back', "東京😀\u2028", "12345", "1e5", "tab\there\x01"]
SUBJECTS = ['s"1\\x', "007", "ctl\x01\x1f\x7f\r\nend", "ünï😀"]
# SHA-256 (16 hex digits) of each output as the JSON value tree wrote it
# (taken with the build before the rewrite).
EXPECTED = {
    "judge_csv_fixes": "f7191831ae3c7a20",
    "judge_inbox": "8091f77e63ea0da4",
    "notifications": "b148d3adb8c67838",
}


def square(area_id, lon, lat, size=0.01):
    ring = [[lon, lat], [lon + size, lat], [lon + size, lat + size], [lon, lat + size], [lon, lat]]
    return {"type": "Feature", "properties": {"area_id": area_id}, "geometry": {"type": "Polygon", "coordinates": [ring]}}


def hostile_catalog(tmp_path):
    """Five squares near Santiago (negative coordinates) with hostile ids;
    run 1 judges a CSV file, run 2 the inbox with REAL and text times; then
    hand-written rows of run 99."""
    db = tmp_path / "hostile.db"
    areas = tmp_path / "areas.geojson"
    features = [square(a, -70.66 + 0.02 * (i // 2), -33.46 + 0.02 * (i % 2)) for i, a in enumerate(AREA_IDS)]
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    fixes = tmp_path / "fixes.csv"
    with open(fixes, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([
            ["subject_id", "ts", "lat", "lon", "accuracy_m"],
            [SUBJECTS[0], "2026-11-20T09:00:00-03:00", -33.455, -70.655, "12.345678901234567"],
            [SUBJECTS[0], "1763640300.25", -33.435, -70.655, "5"],
            [SUBJECTS[1], "2026-11-20T09:10:00Z", -33.455, -70.635, "0.000001"],
            [SUBJECTS[1], "2026-11-20T09:20:00.123456+05:30", -33.435, -70.635, "3"],
            [SUBJECTS[2], "2026-11-20T09:20:00Z", -33.455, -70.615, "3"],
            [SUBJECTS[3], "2026-11-20T09:20:00Z", -33.455, -70.615, "3"],
        ])
    out1 = tmp_path / "run1.ndjson"
    gf("judge", db, "--fixes", fixes, "--out", out1, "--format", "ndjson")
    con = sqlite3.connect(db)
    with con:
        con.executemany("INSERT INTO gf_fixes VALUES (?, ?, ?, ?, ?)", [
            (SUBJECTS[3], 1795300000.75, -33.435, -70.615, 1e-9),               # REAL Unix seconds
            (SUBJECTS[3], "2026-11-22T18:00:00+09:00", -33.455, -70.615, 2.5),
            (SUBJECTS[1], 1795300001, -33.455, -70.635, 123456789.123),           # INTEGER Unix seconds
        ])
    out2 = tmp_path / "run2.ndjson"
    gf("judge", db, "--out", out2, "--format", "ndjson")
    notifications_as_a_table(con)
    with con:
        con.executemany("INSERT INTO gf_notifications (run_id, subject_id, ts, area_id, condition_id, transition, "
                        "lat, lon, accuracy_m) VALUES (99, ?, ?, ?, ?, ?, ?, ?, ?)", [
                            ("~hand", "2026-11-23T00:00:00.000001Z", "", "c7", "IN", "north", -70.6, "n/a"),
                            ("~hand", "yesterday", "\\u0041", 9007199254740993, "OUT", -0.0, 180, 1.2345678901234568e17),
                            ("~hand", "2026-11-23T00:00:01Z", "a\x1b[31m", 1, "DWELL", 1e-7, 1e15, 0),
                            ("~hand", "2026-11-23T00:00:02Z", "x", -5, "IN", -90, -179.99999999999997, 7),
                        ])
    con.close()
    return db, out1, out2


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def strict(line):
    """Python's JSON reader refusing what JSON forbids (NaN, Infinity) and
    keeping member order."""
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(line, parse_constant=refuse, object_pairs_hook=lambda pairs: pairs)


def instant(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def check_against_the_database(db, data, run=None):
    """Each line is strict JSON of the stored row, in canonical order."""
    con = sqlite3.connect(db)
    rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM gf_notifications WHERE ?1 IS NULL OR run_id = ?1 "
                       "ORDER BY subject_id, ts, area_id, condition_id", (run,)).fetchall()
    con.close()
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert len(lines) == len(rows) > 0
    for line, row in zip(lines, rows):
        members = strict(line.decode("utf-8"))
        assert [k for k, _ in members] == COLUMNS + ["geometry"]
        got = dict(members)
        for name, stored in zip(COLUMNS, row):
            value = got[name]
            if name == "ts":
                if value is None:                               # an unreadable stored time is null
                    with pytest.raises(ValueError):
                        instant(stored)
                else:
                    assert instant(value) == instant(stored), (value, stored)
            elif isinstance(stored, str):
                assert value == stored, (name, value, stored)
            else:
                assert type(value) in (int, float) and value == stored, (name, value, stored)
        lat, lon = row[5], row[6]
        if isinstance(lat, (int, float)) and isinstance(lon, (int, float)):
            assert got["geometry"] == [("type", "Point"), ("coordinates", [lon, lat])]
        else:
            assert got["geometry"] is None


def test_ndjson_events_are_strict_json_of_the_stored_rows_and_the_old_bytes(tmp_path):
    db, out1, out2 = hostile_catalog(tmp_path)
    listed = subprocess.run([CLI, "notifications", db, "--format", "ndjson"], capture_output=True, check=True).stdout
    outputs = {"judge_csv_fixes": out1.read_bytes(), "judge_inbox": out2.read_bytes(), "notifications": listed}
    check_against_the_database(db, outputs["judge_csv_fixes"], run=1)
    check_against_the_database(db, outputs["judge_inbox"], run=2)
    check_against_the_database(db, listed)
    # The hostile text went through: escapes and raw UTF-8 as the tree wrote them.
    assert b'"s\\"1\\\\x"' in listed and b'"ctl\\u0001\\u001f\x7f\\r\\nend"' in listed
    assert "東京😀\u2028".encode() in listed and b'"tab\\there\\u0001"' in listed
    assert b'"condition_id":9007199254740993' in listed and b'"condition_id":"c7"' in listed
    assert b'"lat":"north"' in listed and b'"lat":0.0,' in listed and b'"coordinates":[180,0]' in listed
    # Both writers are one: a run's --out file is that run's listing.
    run1 = subprocess.run([CLI, "notifications", db, "--run", "1", "--format", "ndjson"], capture_output=True, check=True).stdout
    assert run1 == outputs["judge_csv_fixes"]
    assert {name: digest(data) for name, data in outputs.items()} == EXPECTED


def test_hand_edited_numbers_that_are_not_json_become_strings(tmp_path):
    """Text a user wrote into a numeric column that Swift would read as a
    number but JSON does not allow (hex, a leading zero or plus, a bare
    point, spaces) is written as a string, so every line stays JSON."""
    db = tmp_path / "edited.db"
    gf("init", db)
    odd = ["0x10", "007", "+5", "5.", ".5", " 5", "1e5 ", "0X1p3", "1_0"]
    con = sqlite3.connect(db)
    notifications_as_a_table(con)
    with con:
        con.executemany("INSERT INTO gf_notifications (run_id, subject_id, ts, area_id, condition_id, transition, "
                        "lat, lon, accuracy_m) VALUES (1, ?, '2026-11-23T00:00:00Z', 'a', ?, 'IN', ?, 10, ?)",
                        [(f"s{i}", text, text, text) for i, text in enumerate(odd)])
    # The columns' REAL and INTEGER affinity keeps what SQLite reads as a number (007, +5, 5., .5, ' 5', '1e5 ') as one.
    stored = dict(con.execute("SELECT subject_id, lat FROM gf_notifications").fetchall())
    con.close()
    assert sum(isinstance(v, str) for v in stored.values()) >= 3
    listed = subprocess.run([CLI, "notifications", db, "--format", "ndjson"], capture_output=True, check=True).stdout
    lines = [dict(strict(line)) for line in listed.decode().splitlines()]
    assert len(lines) == len(odd)
    for line in lines:
        value = stored[line["subject_id"]]
        assert line["lat"] == value and line["accuracy_m"] == value, (line, value)
        assert (line["geometry"] is None) == isinstance(value, str)
