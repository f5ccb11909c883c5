"""Many writers on one WAL catalog (issue 40): gf_check from several
processes at once, in autocommit, inside BEGIN IMMEDIATE and inside a
deferred BEGIN, beside `geofence check` processes and a `geofence judge`.
Every connection sets its busy timeout the documented way (Python's
`timeout=`; the command's own 10 s) and nothing retries: a busy error that
reaches a caller fails the test.

What the end must be. Everything judgement keeps is per subject, and a
subject's fixes are judged in the order their calls commit, a fix not after
the subject's last judged one being stale (behaviour §2). So the fixes a run
judged, in time order per subject, are exactly the order they committed in;
judged again alone, on one connection, they must give the same
notifications (each once, ids contiguous) and, byte for byte, the same
subject records. A caller tells a judged fix from a stale one by whether its
connection changed a row during the call (sqlite3_total_changes): a stale
fix writes nothing. The processes start together on a line each reads from
its stdin; nothing waits on a clock. (One connection beside a writer:
test_check_beside_a_writer.py.)"""
import datetime
import json
import os
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

from conftest import CLI, EXTENSION, Stopped
from test_judgement import iso, scenario, write_fixes

PYTHON = sys.executable
READY_SECONDS = 120     # a deadline on each poll of the processes, not a wait

# A gf_check caller: connects (the busy timeout as docs/sql.md says), says
# "ready", waits for its start line, says "calling", and judges its fixes in
# its form; writes what each call did. No retry: any error ends it.
CALLER = r"""
import json, sqlite3, sys
db, ext, form, path, out = sys.argv[1:6]
fixes = json.load(open(path))
c = sqlite3.connect(db, timeout=60, isolation_level=None)
c.enable_load_extension(True)
c.load_extension(ext)
print("ready", flush=True)
sys.stdin.readline()
print("calling", flush=True)
done = []
def call(f):
    before = c.total_changes
    got = json.loads(c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchone()[0])
    done.append({"fix": f, "judged": c.total_changes > before, "notified": got})
size = 1 if form == "autocommit" else 6
for i in range(0, len(fixes), size):
    if form != "autocommit":
        c.execute("BEGIN IMMEDIATE" if form == "immediate" else "BEGIN")
    for f in fixes[i:i + size]:
        call(f)
    if form != "autocommit":
        c.execute("COMMIT")
json.dump(done, open(out, "w"))
"""

# The same through `geofence check`, one process per fix; a stale fix is
# the one the command warns of (its documented line on stderr).
CHECKER = r"""
import json, subprocess, sys
cli, db, path, out = sys.argv[1:5]
fixes = json.load(open(path))
print("ready", flush=True)
sys.stdin.readline()
print("calling", flush=True)
done = []
for s, ts, lat, lon, acc in fixes:
    p = subprocess.run([cli, "check", db, "--subject", s, "--lat", repr(lat), "--lon", repr(lon), "--accuracy", repr(acc),
                        "--time", ts, "--json"], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"geofence check of {s} at {ts} exited {p.returncode}: {p.stderr}")
    done.append({"fix": [s, ts, lat, lon, acc], "judged": "stale fix" not in p.stderr, "notified": json.loads(p.stdout or "[]")})
json.dump(done, open(out, "w"))
"""


def fixes_of(rows):
    """The scenario's rows as gf_check's arguments."""
    return [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]


def connect(db, timeout=60):
    """Python's sqlite3 in autocommit with the extension, the busy timeout set as docs/sql.md says."""
    c = sqlite3.connect(db, timeout=timeout, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    return c


class Writers:
    """Caller processes, each with its fixes; `start` lets them all go at once."""

    def __init__(self, tmp_path, db):
        self.tmp, self.db, self.procs = tmp_path, db, []
        (tmp_path / "caller.py").write_text(CALLER)
        (tmp_path / "checker.py").write_text(CHECKER)

    def add(self, form, fixes):
        """A caller in `form`: autocommit, immediate, deferred (gf_check) or cli (`geofence check`)."""
        k = len(self.procs)
        path, out = self.tmp / f"fixes{k}.json", self.tmp / f"done{k}.json"
        path.write_text(json.dumps(fixes))
        if form == "cli":
            args = [PYTHON, self.tmp / "checker.py", CLI, self.db, path, out]
        else:
            args = [PYTHON, self.tmp / "caller.py", self.db, EXTENSION, form, path, out]
        p = subprocess.Popen([str(a) for a in args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append((form, p, out))

    def wait_for(self, word):
        """Until every caller has printed `word` (a deadline on the poll, not a wait)."""
        deadline = time.monotonic() + READY_SECONDS
        waiting = {p.stdout.fileno(): p for _, p, _ in self.procs}
        while waiting:
            readable, _, _ = select.select(list(waiting), [], [], max(0.0, deadline - time.monotonic()))
            assert readable, f"{len(waiting)} caller(s) did not say {word!r} in time"
            for fd in readable:
                p = waiting.pop(fd)
                line = p.stdout.readline()
                assert line.strip() == word, f"a caller failed before {word!r}: {line}{p.stderr.read()}"

    def start(self):
        self.wait_for("ready")
        for _, p, _ in self.procs:
            p.stdin.write("go\n")
            p.stdin.flush()

    def finish(self):
        """Every call each caller made: {fix, judged, notified, form}; a caller that failed fails the test."""
        calls = []
        for form, p, out in self.procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, f"a {form} caller failed (a busy error the timeout should have absorbed?):\n{err}"
            calls += [{**d, "form": form} for d in json.loads(out.read_text())]
        return calls


def moment(ts):
    """A time as an instant: callers and the catalog write one instant in different texts."""
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))


def key(n):
    """A notification as its caller got it or as stored: subject, instant, area, condition, transition."""
    return (n["subject_id"], moment(n["ts"]), n["area_id"], int(n["condition_id"]), n["transition"])


def stored(db):
    """(notifications in id order, subject records, gf_inside rows) as the catalog holds them."""
    c = sqlite3.connect(db)
    c.row_factory = sqlite3.Row
    rows = [dict(r) for r in c.execute("SELECT id, subject_id, ts, area_id, condition_id, transition FROM gf_notifications ORDER BY id")]
    records = c.execute("SELECT subject_id, record FROM gf_subject_state ORDER BY subject_id").fetchall()
    inside = c.execute("SELECT area_id, subject_id FROM gf_inside ORDER BY area_id, subject_id").fetchall()
    c.close()
    return rows, [tuple(r) for r in records], [tuple(r) for r in inside]


def replayed(tmp_path, pristine, fixes):
    """`fixes` judged one after another on one connection, on a copy of the catalog before the writers."""
    db = tmp_path / "replay.db"
    shutil.copy(pristine, db)
    c = connect(db)
    for f in sorted(fixes, key=lambda f: (moment(f[1]), f[0])):
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
    c.close()
    return stored(db)


def assert_as_replayed(tmp_path, pristine, db, calls, batch_fixes=()):
    """The catalog after the writers holds what judging the judged fixes alone,
    per subject in time order, holds; every notification once, each given to
    the caller whose call made it; every fix not judged was stale."""
    judged = [c["fix"] for c in calls if c["judged"]]
    rows, records, inside = stored(db)
    ref_rows, ref_records, ref_inside = replayed(tmp_path, pristine, judged + list(batch_fixes))
    assert len(ref_rows) >= 10, "the scenario must notify"
    ids = [r["id"] for r in rows]
    assert ids == list(range(1, len(ids) + 1)), "notification ids are not contiguous"
    assert Counter(map(key, rows)) == Counter(map(key, ref_rows))
    assert len(set(map(key, rows))) == len(rows), "a notification was stored twice"
    assert records == ref_records
    assert inside == ref_inside
    batch_subjects = {f[0] for f in batch_fixes}
    returned = Counter(key(n) for c in calls for n in c["notified"])
    assert returned == Counter(key(r) for r in rows if r["subject_id"] not in batch_subjects)
    last = {}
    for s, ts, *_ in judged:
        last[s] = max(last.get(s, moment(ts)), moment(ts))
    for c in calls:
        if not c["judged"]:
            assert moment(c["fix"][1]) <= last[c["fix"][0]], f"{c['fix']} was neither judged nor stale"
            assert c["notified"] == []


def test_writers_of_their_own_subjects_store_what_one_writer_would(tmp_path):
    db, _, rows = scenario(tmp_path, subjects=8, per_subject=30, seed=40)
    pristine = tmp_path / "pristine.db"
    shutil.copy(db, pristine)
    fixes = fixes_of(rows)
    writers = Writers(tmp_path, db)
    for k, form in enumerate(["autocommit", "autocommit", "immediate", "deferred"]):
        writers.add(form, [f for f in fixes if int(f[0].split("-")[1]) % 4 == k])
    writers.start()
    calls = writers.finish()
    assert len(calls) == len(fixes) and all(c["judged"] for c in calls)
    assert_as_replayed(tmp_path, pristine, db, calls)


def test_writers_sharing_subjects_match_a_replay_in_commit_order(tmp_path):
    """Each subject's fixes dealt out to four callers in turn: what commits
    after a later fix of its subject is stale, the rest is judged in commit order."""
    db, _, rows = scenario(tmp_path, subjects=3, per_subject=60, seed=41)
    pristine = tmp_path / "pristine.db"
    shutil.copy(db, pristine)
    fixes = fixes_of(rows)
    writers = Writers(tmp_path, db)
    for k, form in enumerate(["autocommit", "autocommit", "immediate", "deferred"]):
        writers.add(form, fixes[k::4])
    writers.start()
    calls = writers.finish()
    assert len(calls) == len(fixes)
    assert_as_replayed(tmp_path, pristine, db, calls)


def test_check_commands_and_a_judge_alongside_gf_check_callers(tmp_path):
    """A judge holds the write lock (stopped just after its BEGIN IMMEDIATE)
    while gf_check callers and `geofence check` processes start; it goes on
    once all of them are calling, and all of them finish."""
    db, _, rows = scenario(tmp_path, subjects=5, per_subject=24, seed=42)
    pristine = tmp_path / "pristine.db"
    shutil.copy(db, pristine)
    fixes = fixes_of(rows)
    shared = [f for f in fixes if f[0] in ("dev-0", "dev-1")]
    batch = [r for r in rows if r[0] in ("dev-3", "dev-4")]
    batch_csv = tmp_path / "batch.csv"
    write_fixes(batch_csv, batch)
    writers = Writers(tmp_path, db)
    writers.add("autocommit", shared[0::3])
    writers.add("immediate", shared[1::3])
    writers.add("cli", shared[2::3] + [f for f in fixes if f[0] == "dev-2"][:8])
    judge = Stopped([CLI, "judge", db, "--fixes", batch_csv], "began")
    assert judge.reached, judge.result()[2]
    writers.start()
    writers.wait_for("calling")
    os.kill(judge.p.pid, signal.SIGCONT)
    judge.p.wait(timeout=300)
    code, out, err = judge.result()
    assert code == 0, err
    calls = writers.finish()
    assert_as_replayed(tmp_path, pristine, db, calls, batch_fixes=fixes_of(batch))
