"""gf_check writes its notifications, their dictionaries and the subjects'
state in `main`. SQLite resolves a table named without a database in `temp`
first, so a TEMP table of the same name on the caller's connection (a
scratch copy a user made, say) would otherwise take those rows: a TEMP
gf_area_keys gave a notification a key main's dictionary lacks, and the
stored notification vanished from gf_notifications. Here each table gf_check
writes is shadowed by a TEMP table of its name (with the same columns), and
the documented views, read on another connection, must show what a
connection without shadows stores."""
import shutil
import sqlite3

import pytest

from conftest import EXTENSION
from test_check_kept_keys import small_catalog

SHADOWED = ["gf_area_keys", "gf_subject_keys", "gf_notification_rows", "gf_subject_state", "gf_inside"]


def calls(db, shadow):
    c = sqlite3.connect(db, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(str(EXTENSION))
    if shadow:
        # The same columns, empty but for a row that would collide if it were used.
        sql = c.execute("SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", (shadow,)).fetchone()[0]
        c.execute(sql.replace(f"CREATE TABLE {shadow}", f"CREATE TEMP TABLE {shadow}", 1))
        if shadow in ("gf_area_keys", "gf_subject_keys"):
            c.execute(f"INSERT INTO temp.{shadow} VALUES (77, 'A01')" if shadow == "gf_area_keys" else f"INSERT INTO temp.{shadow} VALUES (77, 'u')")
    returned = []
    for k, (lat, lon) in enumerate([(35.0, 139.0), (35.0, 139.01), (36.0, 139.0), (35.0, 139.02)]):
        returned.append(c.execute("SELECT gf_check('u', ?, ?, ?, 5)", (f"2026-11-20T00:00:0{k}Z", lat, lon)).fetchone()[0])
    c.close()
    return returned


def views(db):
    c = sqlite3.connect(db)
    out = [c.execute(f"SELECT * FROM {v} ORDER BY 1, 2").fetchall() for v in ("gf_notifications", "gf_stays", "gf_inside", "gf_subjects")]
    c.close()
    return out


@pytest.mark.parametrize("shadow", SHADOWED)
def test_a_temp_table_of_the_same_name_takes_none_of_gf_checks_rows(tmp_path, shadow):
    db = small_catalog(tmp_path)
    plain = tmp_path / "plain.db"
    shutil.copy(db, plain)
    want = calls(plain, None)
    assert calls(db, shadow) == want
    assert views(db) == views(plain)
    assert len(views(db)[0]) >= 5
