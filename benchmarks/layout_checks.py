"""Whether a candidate layout gives back what today's layout holds: each
documented object (gf_notifications, gf_last_notified, gf_subjects,
gf_stays) the candidate has, as a table or a view over its new tables,
compared with the judged catalog's, row for row, before any timing."""
import sqlite3

import layout_notifications as lc


def same_rows(db, view, columns, reference):
    """Whether `view` in `db` holds exactly the rows of `reference` (the
    judged catalog's object, attached as `cat`) over `columns`: the same
    count and no row of either missing from the other."""
    cols = ", ".join(columns)
    counts = db.execute(f"SELECT (SELECT count(*) FROM main.{view}), (SELECT count(*) FROM cat.{reference})").fetchone()
    if counts[0] != counts[1]:
        return False
    for a, b in ((f"main.{view}", f"cat.{reference}"), (f"cat.{reference}", f"main.{view}")):
        if db.execute(f"SELECT count(*) FROM (SELECT {cols} FROM {a} EXCEPT SELECT {cols} FROM {b})").fetchone()[0]:
            return False
    return True


VIEW_CHECKS = {
    "gf_notifications": ("gf_notifications", lc.NOTIFICATION_COLUMNS.split(", ")),
    "gf_last_notified": ("gf_last_notified", ["subject_id", "condition_id", "local_date"]),
    "gf_subjects": ("gf_subjects", ["subject_id", "last_ts", "last_lat", "last_lon", "last_accuracy_m", "judged_fixes"]),
    "gf_stays": ("gf_stays", ["subject_id", "area_id", "state", "in_streak", "out_streak", "entered_at", "dwell_spent"]),
}


def verify(path, catalog):
    """{view: same as the judged catalog's} for every documented object the
    catalog at `path` has, whether a table or a view over the new tables."""
    db = sqlite3.connect(str(path), isolation_level=None, uri=True)
    db.execute(f"ATTACH 'file:{catalog}?mode=ro' AS cat")
    present = {r[0] for r in db.execute("SELECT name FROM main.sqlite_master")}
    checks = {name: same_rows(db, view, cols, name) for name, (view, cols) in VIEW_CHECKS.items() if view in present}
    db.close()
    return checks
