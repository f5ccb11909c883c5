"""SQLite alone writing gf_check's rows from C (floor_calls.c), two ways:
in blocks of a thousand calls (the target's floor) and each call's rows in
a savepoint of its own, as gf_check must write them: a call is all or
nothing inside the caller's transaction. check_targets.py runs both after
each round and reports the time above no conditions against each.

    floor = CallFloor(work, per_call, subjects, record_bytes)
    floor.seconds("call")   # one run, a fresh database

Subjects are written as s0, s1, … in order of first appearance (a feed's
ids may hold spaces; distinct ids stay distinct); the rows are the ones
the first pass stored.
"""
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


class CallFloor:
    def __init__(self, work, per_call, subjects, record_bytes):
        self.work, self.record_bytes = work, record_bytes
        self.program = work / "floor_calls"
        subprocess.run(["cc", "-O2", "-o", str(self.program), str(HERE / "floor_calls.c"), "-lsqlite3"], check=True)
        self.rows = work / "floor-calls.txt"
        tokens = {}
        with open(self.rows, "w") as f:
            for subject, rows in zip(subjects, per_call):
                token = tokens.setdefault(subject, f"s{len(tokens)}")
                f.write(f"{token} {len(rows)}\n")
                for r in rows:
                    f.write(" ".join(repr(v) for v in r) + "\n")

    def seconds(self, way):
        """One run of `way` ("block" or "call") on a fresh database: its seconds, COMMIT included."""
        db = self.work / "floor-calls.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        out = subprocess.run([str(self.program), str(self.rows), str(db), way, str(self.record_bytes)],
                             check=True, capture_output=True, text=True).stdout
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        return float(out)
