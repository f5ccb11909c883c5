"""A batch that prepares areas on demand asks whether the catalog stores
any condition rows each time it reads areas, not once at its start: a
user's trigger on the run's own notifications may turn an area's implied
pair (the default IN and OUT, a column of gf_areas) into stored rows
between two chunks, and an area first read after that must be judged with
those rows, as the catalog then holds them (red team: it was judged with no
condition at all, when gf_condition_rows had been empty at the start).

Two subjects, a chunk each (`--resume --chunk-fixes 1`), 40 areas and 3
fixes (fewer fixes than areas: on demand): subject a's IN on Z00 fires the
trigger; subject b, in the next chunk, enters Z39 (and leaves it)."""
import json
import sqlite3

import pytest

from conftest import gf, stored_rows

# Z39's pair is conditions 79 (IN) and 80 (OUT); b's fixes: inside Z39, then 5.5 km away.
TRIGGERS = {
    # Setting the column to NULL keeps the pair, as stored rows (behaviour).
    "column set to NULL": ("UPDATE gf_areas SET default_condition_id = NULL WHERE area_id = 'Z39' AND default_condition_id IS NOT NULL",
                           [("b", "Z39", 79, "IN"), ("b", "Z39", 80, "OUT")]),
    # Deleting the IN through gf_conditions keeps the OUT, as a stored row.
    "its IN deleted": ("DELETE FROM gf_conditions WHERE condition_id = (SELECT default_condition_id FROM gf_areas WHERE area_id = 'Z39')",
                       [("b", "Z39", 80, "OUT")]),
}


def catalog(tmp_path, change):
    features = [{"type": "Feature", "properties": {"area_id": f"Z{i:02d}", "radius_m": 300},
                 "geometry": {"type": "Point", "coordinates": [139 + 0.1 * (i % 8), 35 + 0.1 * (i // 8)]}} for i in range(40)]
    (tmp_path / "a.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    db = tmp_path / "c.db"
    gf("init", db)
    gf("import", db, tmp_path / "a.geojson", "--with-default-conditions")
    with sqlite3.connect(db) as c:
        c.execute(f"CREATE TRIGGER t AFTER INSERT ON gf_notification_rows BEGIN {change}; END")
    return db


def judged(tmp_path, db, fixes):
    f = tmp_path / "f.csv"
    f.write_text("subject_id,ts,lat,lon,accuracy_m\n" + "".join(f"{s},{t},{lat},{lon},5\n" for s, t, lat, lon in fixes))
    gf("judge", db, "--fixes", f, "--resume", "--chunk-fixes", "1", "--quiet")
    return stored_rows(db, "SELECT subject_id, area_id, condition_id, transition FROM gf_notifications ORDER BY id")


@pytest.mark.parametrize("name", TRIGGERS)
def test_an_implied_pair_stored_by_the_runs_own_trigger_is_read_by_a_later_chunk(tmp_path, name):
    change, expected_b = TRIGGERS[name]
    fixes = [("a", "2026-01-01T00:00:00Z", 35.0, 139.0), ("b", "2026-01-01T00:00:00Z", 35.4, 139.7),
             ("b", "2026-01-01T00:05:00Z", 35.45, 139.7)]
    db = catalog(tmp_path, change)
    got = judged(tmp_path, db, fixes)
    assert got == [("a", "Z00", 1, "IN")] + expected_b, (name, got)
    # The trigger did run, and left Z39's conditions as stored rows.
    assert stored_rows(db, "SELECT default_condition_id FROM gf_areas WHERE area_id = 'Z39'") == [(None,)]
    assert stored_rows(db, "SELECT condition_id FROM gf_condition_rows WHERE area_id = 'Z39' ORDER BY 1") == [(c,) for *_, c, _ in expected_b]
