"""`geofence state import` and gf_state_import refuse what is not a state
record this engine writes, and a subject that has state already (unless
replacing), naming the file, the line and the subject; nothing is written
then, and a kill in the middle of an import leaves the catalog as before.
gf_inside stays in step with the imported INSIDE stays (docs/state.md)."""
import json
import re
import signal
import sqlite3

import pytest

from conftest import CLI, SAMPLES, Stopped, gf, sql

LAST = {"ts": "2026-11-20T00:25:00.000000Z", "lat": 35.72, "lon": 139.7745, "acc": 9.0}
A1 = "G#AREA_ID_001"


def record(**changes):
    r = {"v": 1, "last": dict(LAST), "judged": 6,
         "stays": [{"area": A1, "phase": "INSIDE", "in": 3, "out": 0, "entered": "2026-11-20T00:05:00.000000Z"}], "days": []}
    r.update(changes)
    return r


def line(subject, rec):
    return json.dumps({"subject_id": subject, "record": rec}) + "\n"


@pytest.fixture
def db(catalog):
    return catalog


def state_of(db):
    """Everything state import may change: the records and gf_inside."""
    c = sqlite3.connect(db)
    try:
        return (c.execute("SELECT subject_id, record FROM gf_subject_state ORDER BY 1").fetchall(),
                c.execute("SELECT area_id, subject_id FROM gf_inside ORDER BY 1, 2").fetchall())
    finally:
        c.close()


HOSTILE = [
    ("not JSON", '{"subject_id":"u2","record":{"v":1,\n', "line 2: is not a JSON object"),
    ("version 2", line("u2", record(v=2)), "line 2: the state record of subject 'u2' has no \"v\":1"),
    ("no version", line("u2", {k: v for k, v in record().items() if k != "v"}), "line 2: the state record of subject 'u2' has no \"v\":1"),
    ("streak past 2^53", line("u2", record(stays=[{"area": A1, "phase": "INSIDE", "in": 9007199254740993, "out": 0}])),
     "\"stays[0].in\" 9007199254740993, not an integer from 0 to 9007199254740992"),
    ("negative count", line("u2", record(judged=-1)), "\"judged\" -1, not an integer"),
    ("fractional count", line("u2", record(judged=1.5)), "\"judged\" 1.5, not an integer"),
    ("huge judged", '{"subject_id":"u2","record":{"v":1,"last":null,"judged":1e400}}\n', "\"judged\" 1e400, not an integer"),
    ("latitude out of range", line("u2", record(last={**LAST, "lat": 91.0})), "\"last.lat\" 91.0, not a finite number from -90.0 to 90.0"),
    ("infinite longitude", line("u2", record(last={**LAST, "lon": 1e999})).replace("Infinity", "1e999"), "\"last.lon\" 1e999, not a finite number"),
    ("negative accuracy", line("u2", record(last={**LAST, "acc": -1.0})), "\"last.acc\" -1.0, not a finite number of 0.0 or more"),
    ("entered after the last fix", line("u2", record(stays=[{"area": A1, "phase": "INSIDE", "in": 1, "out": 0, "entered": "2027-01-01T00:00:00Z"}])),
     "stays[0].entered"),
    ("never judged", line("u2", record(last=None, stays=[])), "\"last\" null"),
    ("empty subject", line("", record()), "line 2: the subject_id is empty"),
    ("extra member", json.dumps({"subject_id": "u2", "record": record(), "x": 1}) + "\n", "line 2: has a member 'x'"),
    ("record not an object", json.dumps({"subject_id": "u2", "record": "{}"}) + "\n", "line 2: has no \"record\" object for subject 'u2'"),
    ("twice the same subject", line("u1", record()), "line 2: subject 'u1' has a line above already"),
]


@pytest.mark.parametrize("what,bad,message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_bad_line_is_refused_naming_file_line_and_subject_and_nothing_is_written(db, tmp_path, what, bad, message):
    f = tmp_path / "state.jsonl"
    f.write_text(line("u1", record()) + bad + line("u3", record()))
    before = state_of(db)
    p = gf("state", "import", db, f, check=False)
    assert p.returncode == 1, (what, p.stdout, p.stderr)
    assert p.stderr.startswith(f"error: {f}, "), p.stderr
    assert message in p.stderr, p.stderr
    assert "geofence reset" not in p.stderr, "an imported line is not the catalog's record"
    assert state_of(db) == before


# The lines whose record reaches gf_state_import as it is (the others are about the line around it).
SQL_HOSTILE = [h for h in HOSTILE if h[0] not in ("not JSON", "extra member", "twice the same subject", "record not an object")]


@pytest.mark.parametrize("what,bad,message", SQL_HOSTILE, ids=[h[0] for h in SQL_HOSTILE])
def test_gf_state_import_refuses_the_same_records_with_the_same_words(db, what, bad, message):
    subject = json.loads(bad.replace("1e999", "0"))["subject_id"]
    text = re.search(r'"record":\s?(.*)}\s*$', bad).group(1)
    p = sql(db, f"SELECT gf_state_import('{subject}', '{text}');", check=False)
    assert p.returncode != 0
    assert p.stderr.startswith("Runtime error near line 3: gf_state_import: "), p.stderr
    assert message.split("line 2: ", 1)[-1] in p.stderr, p.stderr
    assert state_of(db) == ([], [])


def test_a_subject_with_state_is_refused_unless_replace_and_gf_inside_follows(db, tmp_path):
    gf("judge", db, "--fixes", SAMPLES / "fixes.csv")  # walker-01 and commuter-07 have state now
    before = state_of(db)
    assert before[0] and before[1]
    f = tmp_path / "state.jsonl"
    f.write_text(line("new-1", record()) + line("commuter-07", record(stays=[])))
    p = gf("state", "import", db, f, check=False)
    assert p.returncode == 1
    assert p.stderr == f"error: {f}, line 2: subject 'commuter-07' already has state in this catalog: --replace replaces it\n"
    assert state_of(db) == before
    p = sql(db, f"SELECT gf_state_import('commuter-07', '{json.dumps(record())}');", check=False)
    assert "gf_state_import: subject 'commuter-07' already has state in this catalog: gf_state_import(subject_id, record, 1) replaces it" in p.stderr
    assert state_of(db) == before

    assert gf("state", "import", db, f, "--replace").stdout == "imported the state of 2 subjects (1 replaced)\n"
    records, inside = state_of(db)
    # commuter-07 was inside AREA_ID_004: its row went with its old record; new-1 is inside A1.
    assert inside == [(A1, "new-1")]
    assert dict(records)["commuter-07"] == json.dumps(record(stays=[]), separators=(",", ":"))
    # gf_state_import with replace = 1 does the same for one subject.
    assert sql(db, f"SELECT gf_state_import('commuter-07', '{json.dumps(record())}', 1);").stdout == "1\n"
    assert state_of(db)[1] == [(A1, "commuter-07"), (A1, "new-1")]


def test_a_stay_of_an_area_the_catalog_lacks_is_kept_until_the_subjects_next_fix(db, tmp_path):
    stays = [{"area": "ELSEWHERE", "phase": "INSIDE", "in": 2, "out": 0, "entered": "2026-11-20T00:05:00.000000Z"}]
    f = tmp_path / "state.jsonl"
    f.write_text(line("u1", record(stays=stays, days=[[999, "2026-11-20"]])))
    gf("state", "import", db, f)
    assert gf("state", "export", db).stdout == line("u1", record(stays=stays, days=[[999, "2026-11-20"]])).replace(" ", "")
    assert state_of(db)[1] == [("ELSEWHERE", "u1")]
    assert sql(db, "SELECT count(*) FROM gf_stays;").stdout == "0\n"  # hidden: no such area
    gf("check", db, "--subject", "u1", "--lat", "35.0", "--lon", "139.0", "--accuracy", "5", "--time", "2026-11-21T00:00:00Z")
    r = json.loads(gf("state", "export", db).stdout)["record"]
    assert r["stays"] == [] and r["days"] == [] and r["judged"] == 7
    assert state_of(db)[1] == []


@pytest.mark.parametrize("point", ["began", "chunk", "committing"])
def test_a_kill_in_the_middle_of_an_import_leaves_the_catalog_as_before(db, tmp_path, point):
    gf("judge", db, "--fixes", SAMPLES / "fixes.csv")
    f = tmp_path / "state.jsonl"
    f.write_text("".join(line(f"u{i}", record()) for i in range(50)) + line("walker-01", record()))
    before = state_of(db)
    stopped = Stopped([CLI, "state", "import", db, f, "--replace"], point)
    code, _, _ = stopped.send(signal.SIGKILL)
    assert code == -signal.SIGKILL
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    c.close()
    assert state_of(db) == before
    # Left alone, the same import puts every line.
    assert gf("state", "import", db, f, "--replace").stdout == "imported the state of 51 subjects (1 replaced)\n"
    assert len(state_of(db)[0]) == 52
