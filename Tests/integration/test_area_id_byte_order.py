"""Area ids are ordered by their UTF-8 bytes wherever the engine sorts or
merges them, as SQLite orders TEXT. Swift's own `<` compares canonical
forms, and for some text not in NFC it orders neither of two different
strings before the other; a subject's stays (read back from SQLite, in
byte order) merged with a fix's candidates in that order lost a stay's
streak between runs, or saw an exit and a re-entry where there was none.
Found by a new-user trial: two identical circles, the first confirming IN
after two fixes, two fixes inside both in two runs: the second fix must
give exactly "first id IN", as one run over both fixes gives."""
import csv
import json

import pytest

from conftest import gf, sql

PAIRS = [("\u0958", "\u0915"), ("\u0915", "\u0958"), ("A\u030a", "\u00c5x"), ("\u00c5x", "A\u030a")]
FIX1 = ("u1", "2026-11-22T17:23:00Z", 35.7, 139.7, 10)
FIX2 = ("u1", "2026-11-22T17:28:00Z", 35.7, 139.7, 10)
FAR = [("zz1", "2026-11-22T17:28:00Z", 10, 10, 5), ("zz2", "2026-11-22T17:28:00Z", 11, 11, 5)]


def catalog(tmp_path, first, second, name):
    def circle(area_id, **props):
        return {"type": "Feature", "properties": {"area_id": area_id, "radius_m": 800, **props},
                "geometry": {"type": "Point", "coordinates": [139.70, 35.70]}}
    areas = tmp_path / "areas.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [circle(first, in_confirm_count=2), circle(second)]}))
    db = tmp_path / f"{name}.db"
    gf("init", db)
    gf("import", db, areas, "--with-default-conditions")
    return db


def fixes(tmp_path, name, rows):
    p = tmp_path / f"{name}.csv"
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["subject_id", "ts", "lat", "lon", "accuracy_m"])
        w.writerows(rows)
    return p


def second_fix(db):
    return gf("notifications", db, "--since", FIX2[1], "--csv").stdout.splitlines()[1:]


@pytest.mark.parametrize("first,second", PAIRS, ids=["U+0958,U+0915", "U+0915,U+0958", "A+U+030A,U+00C5x", "U+00C5x,A+U+030A"])
def test_a_stay_carried_between_runs_merges_by_bytes(tmp_path, first, second):
    expected = [f"u1,{FIX2[1]},{first},1,IN,35.7,139.7,10.0"]
    one = catalog(tmp_path, first, second, "one")
    gf("judge", one, "--fixes", fixes(tmp_path, "both", [FIX1, FIX2]))
    assert second_fix(one) == expected
    for name, extra, flags in [("runs", [], []), ("explain", [], ["--explain"]), ("masks", FAR, [])]:
        db = catalog(tmp_path, first, second, name)
        gf("judge", db, "--fixes", fixes(tmp_path, f"{name}1", [FIX1]), *flags)
        gf("judge", db, "--fixes", fixes(tmp_path, f"{name}2", [FIX2] + extra), *flags)
        assert second_fix(db) == expected, name
    cli = catalog(tmp_path, first, second, "check")
    for s, t, lat, lon, acc in (FIX1, FIX2):
        gf("check", cli, "--subject", s, "--time", t, "--lat", lat, "--lon", lon, "--accuracy", acc)
    assert second_fix(cli) == expected
    sq = catalog(tmp_path, first, second, "sql")
    sql(sq, "".join(f"SELECT gf_check('{s}', '{t}', {lat}, {lon}, {acc});\n" for s, t, lat, lon, acc in (FIX1, FIX2)))
    assert second_fix(sq) == expected


def test_locate_and_nearest_list_ids_in_byte_order(tmp_path):
    db = catalog(tmp_path, "\u00c5x", "A\u030a", "c")
    out = tmp_path / "pairs.csv"
    gf("locate", db, "--fixes", fixes(tmp_path, "f", [FIX1] * 40), "--out", out)
    ids = [r[1] for r in csv.reader(out.open())][1:]
    assert ids[:2] == ["A\u030a", "\u00c5x"] and len(ids) == 80
    got = sql(db, "SELECT area_id FROM gf_nearest(35.7, 139.7, 2);").stdout.split()
    assert got == sorted(got, key=lambda s: s.encode()) == ["A\u030a", "\u00c5x"]


def test_who_is_inside_keeps_a_stay_whose_id_swift_orders_first(tmp_path):
    """gf_inside is kept by walking the stays before and after a fix side
    by side, in the map's byte order: with Swift's `<` ("e\\u0301x" after
    "\\u00e9a", as canonical forms) a subject that left the first area and
    stayed in the second lost the second from gf_inside ("who is inside
    B" said nobody while gf_stays said INSIDE)."""
    first, second = "e\u0301x", "\u00e9a"   # bytes 65 CC 81 78 before C3 A9 61

    def square(area_id, half):
        ring = [[139.7 - half, 35.7 - half], [139.7 + half, 35.7 - half], [139.7 + half, 35.7 + half],
                [139.7 - half, 35.7 + half], [139.7 - half, 35.7 - half]]
        return {"type": "Feature", "properties": {"area_id": area_id}, "geometry": {"type": "Polygon", "coordinates": [ring]}}
    areas = tmp_path / "squares.geojson"
    areas.write_text(json.dumps({"type": "FeatureCollection", "features": [square(first, 0.01), square(second, 0.5)]}))
    both = ("u1", "2026-11-22T17:23:00Z", 35.7, 139.7, 5)
    second_only = ("u1", "2026-11-22T17:28:00Z", 35.9, 139.7, 5)
    inside = "SELECT hex(area_id) FROM gf_inside ORDER BY 1;"
    batch = tmp_path / "batch.db"
    gf("init", batch)
    gf("import", batch, areas, "--with-default-conditions")
    gf("judge", batch, "--fixes", fixes(tmp_path, "both", [both]))
    assert sql(batch, inside).stdout.split() == ["65CC8178", "C3A961"]
    gf("judge", batch, "--fixes", fixes(tmp_path, "second", [second_only]))
    assert sql(batch, inside).stdout.split() == ["C3A961"]
    calls = tmp_path / "calls.db"
    gf("init", calls)
    gf("import", calls, areas, "--with-default-conditions")
    sql(calls, "".join(f"SELECT gf_check('{s}', '{t}', {lat}, {lon}, {acc});\n" for s, t, lat, lon, acc in (both, second_only)))
    assert sql(calls, inside).stdout.split() == ["C3A961"]
    assert sql(calls, "SELECT hex(area_id), state FROM gf_stays;").stdout.split() == ["C3A961|INSIDE"]
