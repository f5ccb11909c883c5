"""A subject record holds its counts exactly up to 2^53 (docs/subject-record.md),
and import accepts any such count: the judge then keeps `judged` at 2^53
rather than store a record it would refuse to read (the red team's finding:
one judged run past it, and every later run and export was refused)."""
import json

from conftest import gf
from test_last_notified_view import catalog

LIMIT = 2 ** 53


def test_judged_stops_at_the_most_a_record_holds(tmp_path):
    db = catalog(tmp_path)
    fixes = tmp_path / "f.csv"
    fixes.write_text("subject_id,ts,lat,lon,accuracy_m\nu1,2026-11-20T08:00:00Z,35.68,139.70,5\n")
    gf("judge", db, "--fixes", fixes)
    line = json.loads(gf("state", "export", db).stdout)
    line["record"]["judged"] = LIMIT - 1
    dump = tmp_path / "s.jsonl"
    dump.write_text(json.dumps(line) + "\n")
    gf("state", "import", db, dump, "--replace")
    more = tmp_path / "more.csv"
    more.write_text("subject_id,ts,lat,lon,accuracy_m\n"
                    + "".join(f"u1,2026-11-20T08:{m:02d}:00Z,35.68,139.70,5\n" for m in range(1, 6)))
    gf("judge", db, "--fixes", more)
    assert json.loads(gf("state", "export", db).stdout)["record"]["judged"] == LIMIT
    gf("judge", db, "--fixes", more)   # stale now, and still readable
