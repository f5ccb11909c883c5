"""gf_check, gf_nearest and a state database's judging read the catalog in
the schema that holds it (`CatalogTables`). SQLite resolves a table named
without a database in `temp` first, so a TEMP table of the caller's named
like a catalog table (a scratch copy of gf_conditions, say) would otherwise
be read as the catalog's: its conditions would be the ones that notify, its
areas the ones judged. Each shadow here would change the answers if read;
the answers must be those of a connection without it, with the state
in the catalog and in a state database beside it."""
import json

import pytest

from test_check_kept_keys import connect, small_catalog, start

SHADOWS = {
    # Only DWELL conditions: read, the calls would notify no IN and no OUT.
    "gf_conditions": ["CREATE TEMP TABLE gf_conditions AS SELECT * FROM {cat}.gf_conditions WHERE 0",
                      "INSERT INTO temp.gf_conditions (condition_id, area_id, timing, dwell_s) "
                      "SELECT 900 + id, area_id, 'DWELL', 3600 FROM {cat}.gf_areas"],
    # Circles of 1 m: read, no fix would be inside one.
    "gf_areas": ["CREATE TEMP TABLE gf_areas AS SELECT * FROM {cat}.gf_areas", "UPDATE temp.gf_areas SET radius_m = 1"],
    # A confidence that is no number: read, every call would fail on it.
    "gf_settings": ["CREATE TEMP TABLE gf_settings AS SELECT * FROM {cat}.gf_settings",
                    "UPDATE temp.gf_settings SET value = 'none' WHERE key = 'default_confidence'"],
    # An empty index: read, no fix would meet a candidate.
    "idx_gf_areas_geom": ["CREATE VIRTUAL TABLE temp.idx_gf_areas_geom USING rtree(pkid, xmin, xmax, ymin, ymax)"],
}

FIXES = [(35.0, 139.0), (35.0, 139.01), (36.0, 139.0), (35.0, 139.02), (35.0, 139.03), (36.0, 139.03)]


def answers(db, catalog, shadow):
    c = connect(db, catalog)
    for sql in SHADOWS.get(shadow, []):
        c.execute(sql.format(cat="catalog" if catalog else "main"))
    out = [c.execute("SELECT gf_check('u', ?, ?, ?, 5)", (f"2026-11-20T00:00:0{k}Z", lat, lon)).fetchone()[0]
           for k, (lat, lon) in enumerate(FIXES)]
    out.append(c.execute("SELECT rank, area_id, round(distance_m, 3) FROM gf_nearest(35.0, 139.015, 3)").fetchall())
    c.close()
    return out


@pytest.mark.parametrize("apart", [False, True], ids=["state-in-catalog", "state-database"])
@pytest.mark.parametrize("shadow", list(SHADOWS))
def test_a_temp_table_named_like_a_catalog_table_is_not_read_as_the_catalog(tmp_path, shadow, apart):
    catalog = small_catalog(tmp_path)
    want = answers(*start(tmp_path / "plain.db", catalog, apart), None)
    assert sum(len(json.loads(r)) for r in want[:-1]) >= 6 and len(want[-1]) == 3
    assert answers(*start(tmp_path / "shadowed.db", catalog, apart), shadow) == want
