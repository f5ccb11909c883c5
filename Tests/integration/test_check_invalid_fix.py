"""An invalid fix given to gf_check is refused before the connection's
session is asked for anything, so the session keeps what it holds: its
statements, the areas it prepared and the dictionary keys it trusts. A call
that fails inside the session drops all of that, and a feed's invalid fixes
(iOS reports accuracy -1 for a fix it has no accuracy for) had every later
call of the transaction read its areas and keys again.

What the session prepares is counted by the authorizer, which SQLite asks
for every table a statement reads as it is prepared: the stream with an
invalid fix after every fifth call must prepare exactly what the stream
without them prepares, refuse each invalid fix in its own words, and leave
the same notifications and state."""
import shutil
import sqlite3

import pytest

from conftest import EXTENSION
from test_judgement import iso, scenario

READ_TABLES = ("gf_areas", "gf_condition_rows", "gf_area_keys", "gf_subject_keys")


def judged(db, fixes, invalid_every=None):
    """Checks `fixes` in one transaction (with an invalid fix of the same
    subject after every `invalid_every`-th); returns the session's prepared
    reads of the catalog and dictionaries, the refusals, and the outputs."""
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    prepared = []

    def count(action, table, *_):
        if action == sqlite3.SQLITE_READ and table in READ_TABLES:
            prepared.append(table)
        return sqlite3.SQLITE_OK

    c.set_authorizer(count)
    refusals = []
    c.execute("BEGIN")
    for k, f in enumerate(fixes):
        c.execute("SELECT gf_check(?, ?, ?, ?, ?)", f).fetchall()
        if invalid_every and k % invalid_every == invalid_every - 1:
            with pytest.raises(sqlite3.OperationalError) as e:
                c.execute("SELECT gf_check(?, ?, ?, ?, ?)", [f[0], f[1], f[2], f[3], -1]).fetchall()
            refusals.append(str(e.value))
    c.execute("COMMIT")
    c.set_authorizer(None)
    out = [c.execute(q).fetchall() for q in (
        "SELECT id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM gf_notifications ORDER BY id",
        "SELECT subject_id, record FROM gf_subject_state ORDER BY 1",
        "SELECT * FROM gf_last_notified ORDER BY 1, 2")]
    c.close()
    return prepared, refusals, out


def test_invalid_fixes_leave_the_session_whole(tmp_path):
    db, _, rows = scenario(tmp_path, subjects=5, per_subject=40, seed=3)
    fixes = [[s, iso(t), lat, lon, acc] for s, t, lat, lon, acc in rows]
    plain, mixed = tmp_path / "plain.db", tmp_path / "mixed.db"
    shutil.copy(db, plain)
    shutil.copy(db, mixed)

    prepared, refusals, out = judged(plain, fixes)
    prepared_mixed, refusals_mixed, out_mixed = judged(mixed, fixes, invalid_every=5)

    assert not refusals and len(refusals_mixed) == len(fixes) // 5
    assert all(r == "gf_check: argument 5 (accuracy_m) makes the fix invalid: negative accuracy -1.0"
               for r in refusals_mixed)
    assert out[0] and out_mixed == out
    # Each statement the session needs was prepared once, in both streams.
    assert sorted(prepared_mixed) == sorted(prepared)
    assert set(prepared) >= {"gf_areas", "gf_condition_rows", "gf_area_keys", "gf_subject_keys"}
