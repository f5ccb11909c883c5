"""Portable per-subject state (docs/state.md): `geofence state export` gives
the same bytes for the same state however it was built (one judge, gf_check
fix by fix, judge runs split by time), and state exported from one catalog
and imported into a fresh one of the same areas judges the next fixes as
the first would."""
import json
import shutil

from conftest import gf, sql
from test_judgement import scenario, write_fixes


def export(db):
    return gf("state", "export", db).stdout


def inside_rows(db):
    """gf_inside as (area_id, subject_id) rows, in order."""
    out = sql(db, "SELECT area_id || '|' || subject_id FROM gf_inside ORDER BY 1;").stdout
    return out.splitlines()


def inside_of(lines):
    """The (area, subject) pairs of the INSIDE stays the exported lines hold."""
    pairs = []
    for line in lines.splitlines():
        d = json.loads(line)
        pairs += [f"{s['area']}|{d['subject_id']}" for s in d["record"]["stays"] if s["phase"] == "INSIDE"]
    return sorted(pairs)


def rich(lines):
    """Whether exported state holds what the canonical claim is about:
    streaks under way (an entry or an exit being confirmed), DWELL spent and
    suppressed days."""
    records = [json.loads(line)["record"] for line in lines.splitlines()]
    stays = [s for r in records for s in r["stays"]]
    return (any((s["phase"] != "INSIDE" and s["in"] > 0) or (s["phase"] == "INSIDE" and s["out"] > 0) for s in stays)
            and any("dwell" in s for s in stays) and any(r["days"] for r in records))


def rich_cut(tmp_path, db, rows):
    """The first number of fixes (from half of them, by tens) after which
    the state is `rich`: the state to compare is one with streaks under way."""
    for cut in range(len(rows) // 2, len(rows), 10):
        scratch = tmp_path / "scratch.db"
        shutil.copy(db, scratch)
        part = tmp_path / "part.csv"
        write_fixes(part, rows[:cut])
        gf("judge", scratch, "--fixes", part)
        if rich(export(scratch)):
            return cut
    raise AssertionError("no cut of the scenario has streaks under way, DWELL spent and days")


def test_the_same_fixes_give_the_same_bytes_by_judge_by_gf_check_and_by_runs_split_by_time(tmp_path):
    """Several subjects, IN/OUT/DWELL conditions, suppressions and confirm
    counts above 1 (so that streaks are under way at the end): one judge,
    one gf_check per fix in the sqlite3 shell, and two judge runs split by
    time export byte-identical state."""
    db, _, rows = scenario(tmp_path, subjects=6, per_subject=90, seed=41)
    for i in range(12):  # a suppression on every area, so that records keep days
        gf("conditions", "add", db, "--area", f"A{i:02d}", "--timing", "IN", "--renotify-suppress-days", "2")
    rows = rows[:rich_cut(tmp_path, db, rows)]
    fixes = tmp_path / "fixes.csv"
    write_fixes(fixes, rows)
    copies = {k: tmp_path / f"{k}.db" for k in ("check", "split")}
    for p in copies.values():
        shutil.copy(db, p)

    gf("judge", db, "--fixes", fixes)
    whole = export(db)

    sql(copies["check"], f"""
CREATE TEMP TABLE fixes (subject_id TEXT, ts TEXT, lat REAL, lon REAL, accuracy_m REAL);
.import --csv --skip 1 {fixes} fixes
CREATE TEMP TABLE ordered AS SELECT * FROM fixes ORDER BY gf_time(ts), rowid;
SELECT gf_check(subject_id, ts, lat, lon, accuracy_m) FROM ordered ORDER BY rowid;
""")
    half = len(rows) // 2
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    write_fixes(first, rows[:half])
    write_fixes(second, rows[half:])
    gf("judge", copies["split"], "--fixes", first)
    gf("judge", copies["split"], "--fixes", second)

    assert export(copies["check"]) == whole
    assert export(copies["split"]) == whole

    # The state is the kind the claim is about: every subject, streaks under way, DWELL spent, suppressed days.
    records = [json.loads(line) for line in whole.splitlines()]
    assert [r["subject_id"] for r in records] == sorted(f"dev-{s}" for s in range(6))
    assert rich(whole), whole
    # Each line is the stored record verbatim, and gf_state_export gives the same text.
    for r in records[:2]:
        stored = sql(db, f"SELECT gf_state_export('{r['subject_id']}');").stdout.strip()
        assert stored == json.dumps(r["record"], separators=(",", ":"))
        assert f'"record":{stored}}}' in whole
    assert inside_rows(db) == inside_of(whole)


def test_state_carried_to_a_fresh_catalog_judges_the_next_fixes_as_the_first_catalog_does(tmp_path):
    """Export from catalog A after the first half of the fixes, import into
    a fresh catalog B of the same areas and conditions, judge the second
    half on both: the same notifications and the same exported state."""
    a, fixes, rows = scenario(tmp_path, subjects=5, per_subject=80, seed=7)
    b = tmp_path / "b.db"
    shutil.copy(a, b)  # the same areas and conditions, no state yet
    half = len(rows) // 2
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    write_fixes(first, rows[:half])
    write_fixes(second, rows[half:])
    gf("judge", a, "--fixes", first)
    carried = tmp_path / "state.jsonl"
    gf("state", "export", a, "--out", carried)
    assert carried.read_text() == export(a) and carried.read_text()
    out = gf("state", "import", b, carried).stdout
    assert out == f"imported the state of {len(carried.read_text().splitlines())} subjects\n"
    assert export(b) == export(a)
    assert inside_rows(b) == inside_rows(a)

    gf("judge", a, "--fixes", second, "--out", tmp_path / "a.csv")
    gf("judge", b, "--fixes", second, "--out", tmp_path / "b.csv")
    notified = (tmp_path / "a.csv").read_text()
    assert len(notified.splitlines()) > 10
    assert (tmp_path / "b.csv").read_text() == notified
    assert export(b) == export(a)
    assert inside_rows(b) == inside_rows(a)

    # Through SQL alone, one subject at a time, the same.
    c = tmp_path / "c.db"
    shutil.copy(a, c)
    gf("reset", c)
    lines = [json.loads(line) for line in export(a).splitlines()]
    script = "".join(f"SELECT gf_state_import('{r['subject_id']}', '{json.dumps(r['record'])}');\n" for r in lines)
    assert sql(c, script).stdout == "1\n" * len(lines)
    assert export(c) == export(a)
    assert inside_rows(c) == inside_rows(a)


def test_export_of_named_subjects_and_of_a_catalog_without_state(tmp_path):
    db, fixes, _ = scenario(tmp_path, subjects=3, per_subject=20, seed=3)
    assert export(db) == ""
    gf("judge", db, "--fixes", fixes)
    every = export(db).splitlines()
    named = gf("state", "export", db, "--subject", "dev-2", "--subject", "nobody", "--subject", "dev-0", "--subject", "dev-2").stdout
    assert named.splitlines() == [every[0], every[2]]
    # `geofence state DB` still shows the state, as before the group had subcommands.
    assert gf("state", db, "--subject", "dev-0", "--json").stdout == gf("state", "show", db, "--subject", "dev-0", "--json").stdout
    assert json.loads(gf("state", db, "--json").stdout)
