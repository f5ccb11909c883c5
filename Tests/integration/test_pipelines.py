"""Events for pipelines (`judge --out`, `notifications` as CSV or NDJSON,
`-` for standard input and output) and the small things: the busy timeout
the message states, a stale `check` saying so, `--help` listing exit codes
and the --out columns."""
import csv
import io
import json
import subprocess
import time

from test_fix_rows import wait_until_read
from conftest import CLI, SAMPLES, gf, run, judge_while_another_writes


def fresh(tmp_path, name="d.db"):
    db = tmp_path / name
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    return db


def test_judge_out_to_standard_output_from_standard_input(tmp_path):
    reference = fresh(tmp_path, "ref.db")
    out = tmp_path / "n.csv"
    summary = gf("judge", reference, "--fixes", SAMPLES / "fixes.csv", "--out", out).stdout
    db = fresh(tmp_path)
    p = run(CLI, "judge", db, "--fixes", "-", "--out", "-", input=(SAMPLES / "fixes.csv").read_text())
    assert p.stdout == out.read_text()                     # only the events on stdout
    assert p.stderr.strip() == summary.strip()             # the summary on stderr
    assert p.stdout.startswith("subject_id,ts,area_id,condition_id,transition,lat,lon,accuracy_m\n")
    assert len(p.stdout.splitlines()) == 8


def test_ndjson_events_with_a_geojson_point(tmp_path):
    db = fresh(tmp_path)
    out = tmp_path / "n.ndjson"
    gf("judge", db, "--fixes", SAMPLES / "fixes.csv", "--out", out, "--format", "ndjson")
    events = [json.loads(line) for line in out.read_text().splitlines()]
    rows = list(csv.DictReader(io.StringIO(gf("notifications", db, "--format", "csv").stdout)))
    assert len(events) == len(rows) == 7
    for e, r in zip(events, rows):
        assert e["geometry"] == {"type": "Point", "coordinates": [float(r["lon"]), float(r["lat"])]}
        assert e["subject_id"] == r["subject_id"] and e["ts"] == r["ts"] and e["area_id"] == r["area_id"]
        assert e["condition_id"] == int(r["condition_id"]) and e["transition"] == r["transition"]
        assert e["accuracy_m"] == float(r["accuracy_m"])
    assert gf("notifications", db, "--format", "ndjson").stdout == out.read_text()


def test_ndjson_fixes_from_standard_input(tmp_path):
    rows = list(csv.DictReader((SAMPLES / "fixes.csv").open()))
    ndjson = "".join(json.dumps({"subject_id": r["subject_id"], "ts": r["ts"], "lat": float(r["lat"]), "lon": float(r["lon"]),
                                 "accuracy_m": float(r["accuracy_m"])}) + "\n" for r in rows)
    reference = fresh(tmp_path, "ref.db")
    expected = gf("judge", reference, "--fixes", SAMPLES / "fixes.csv", "--out", "-", "--format", "ndjson").stdout
    db = fresh(tmp_path)
    p = run(CLI, "judge", db, "--fixes", "-", "--fixes-format", "ndjson", "--format", "ndjson", "--out", "-", input=ndjson)
    assert p.stdout == expected and "11 judged" in p.stderr
    # --format is the output's: CSV on standard input stays CSV.
    db3 = fresh(tmp_path, "csv_in.db")
    p = run(CLI, "judge", db3, "--fixes", "-", "--format", "ndjson", "--out", "-", input=(SAMPLES / "fixes.csv").read_text())
    assert p.stdout == expected and "11 judged" in p.stderr
    db2 = fresh(tmp_path, "csv_out.db")
    p = run(CLI, "judge", db2, "--fixes", "-", "--fixes-format", "ndjson", "--out", "-", input=ndjson)
    assert p.stdout == gf("notifications", reference, "--format", "csv").stdout
    # Errors name standard input as such, in either format (not /dev/stdin).
    p = run(CLI, "judge", db2, "--fixes", "-", input="subject_id,ts,lat\n", check=False)
    assert p.returncode == 1 and "error: standard input, line 1: the header has no column 'lon'" in p.stderr, p.stderr


def test_the_busy_timeout_is_the_one_the_message_states(tmp_path):
    db = fresh(tmp_path)
    p, waited = judge_while_another_writes(db)
    assert p.returncode == 3 and "for over 10 s" in p.stderr
    assert 9.5 <= waited < 30, waited


def test_a_stale_check_says_so(tmp_path):
    db = fresh(tmp_path)
    gf("judge", db, "--fixes", SAMPLES / "fixes.csv")
    p = gf("check", db, "--subject", "walker-01", "--lat", "35.7", "--lon", "139.7", "--accuracy", "5",
           "--time", "2020-01-01T00:00:00Z")
    assert "stale fix: not after the last judged fix of subject 'walker-01'" in p.stderr
    assert p.stdout.startswith("subject_id")               # the (empty) table is unchanged
    p = gf("check", db, "--subject", "walker-01", "--lat", "35.7", "--lon", "139.7", "--accuracy", "5",
           "--time", "2020-01-01T00:00:00Z", "--json")
    assert json.loads(p.stdout) == [] and "stale fix" in p.stderr


def test_help_lists_exit_codes_and_out_columns():
    top = gf("--help").stdout
    for text in ("Exit status", "1 bad input", "2 a database problem", "3 busy", "64 a usage error",
                 "subject_id, ts,"):
        assert text in top, text
    judge = " ".join(gf("judge", "--help").stdout.split())
    assert "subject_id, ts, area_id, condition_id, transition (IN, OUT, DWELL), lat, lon, accuracy_m" in judge
    assert "--format" in judge and "standard output" in judge


def test_export_and_locate_use_the_standard_streams_for_dash(tmp_path):
    db = fresh(tmp_path)
    p = run(CLI, "export", db, "--out", "-", cwd=tmp_path)
    assert json.loads(p.stdout)["type"] == "FeatureCollection" and not (tmp_path / "-").exists()
    p = run(CLI, "locate", db, "--fixes", "-", "--out", "-", input=(SAMPLES / "fixes.csv").read_text(), cwd=tmp_path)
    assert p.stdout == gf("locate", db, "--fixes", SAMPLES / "fixes.csv").stdout and p.stdout.count("\n") > 2
    assert not (tmp_path / "-").exists()


def test_a_stalled_producer_does_not_hold_the_write_lock(tmp_path):
    """`producer | geofence judge DB --fixes -` took the write lock at once and
    held it until the producer ended: every other writer got busy errors. The
    stream is now read to its end first; meanwhile others write freely, and
    the run then judges what came."""
    reference = fresh(tmp_path, "ref.db")
    gf("judge", reference, "--fixes", SAMPLES / "fixes.csv")
    db = fresh(tmp_path)
    lines = (SAMPLES / "fixes.csv").read_text().splitlines(keepends=True)
    p = subprocess.Popen([str(CLI), "judge", str(db), "--fixes", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdin.write("".join(lines[:3]))
    p.stdin.flush()
    wait_until_read(p.stdin)  # judge has the first rows and waits for more
    # Another writer meanwhile: a check of a subject of its own. Were the lock held until the
    # producer ends, it would fail busy after the 10 s timeout (gf raises on its exit status).
    gf("check", db, "--subject", "other", "--lat", "35.6", "--lon", "139.7", "--accuracy", "5", "--time", "2026-11-20T00:00:00Z")
    out, err = p.communicate("".join(lines[3:]), timeout=60)
    assert p.returncode == 0, err
    def listing(d):
        return run("sqlite3", d, "SELECT subject_id, ts, area_id, condition_id, transition FROM gf_notifications "
                                 "WHERE subject_id <> 'other' ORDER BY id;").stdout
    assert listing(db) == listing(reference) and listing(db).count("\n") == 7
