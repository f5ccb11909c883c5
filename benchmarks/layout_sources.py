"""The rows a judged catalog's run stored, laid out once in a scratch database
(`sources.db`) in every shape the candidate layouts of write_layouts.py take
them in, so that each candidate's timed write is one INSERT … SELECT per
table and nothing else: no parsing, no Python per row, no conversion.

Each source comes twice: as the run stored it (run 1) and as the next run
would store it (run 2: the same rows a day later), for the candidates timed
on a catalog that already holds a run. The tables:

| table | rows | for |
|---|---|---|
| `subj`, `areas` | the subject and area dictionaries (`subject_key` in subject_id's byte order; `area_key` = gf_areas.id) | every integer-keyed layout |
| `zone_offsets` | each condition's UTC offset in seconds | each narrow row's `local_day` (the engine computes it with its zone rules) |
| `wide1`, `wide2` | gf_notifications' columns, in id order | today's layout |
| `narrow1`, `narrow2` | the same rows with integer keys, `ts_us`, transition 0/1/2, the local day | the narrow layouts |
| `spans1` | each subject's first and last row (in `narrow1`'s rowids) | the span layout |
| `subjects1/2`, `stays1/2`, `notified1/2` | gf_subjects, gf_stay_rows, gf_last_notified | today's state |
| `records1/2` | one compact record per subject: JSON (all days, or only days a suppression reads) and a packed BLOB | the compact state |
| `inside1` | (area_key, subject_key, subject_id) of every INSIDE stay | "who is inside A now" beside the records |
"""
import datetime
import json
import sqlite3
import struct
import zoneinfo

DAY_US = 86_400_000_000
EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
PHASES = {"UNKNOWN": 0, "INSIDE": 1, "OUTSIDE": 2}


def ts_us_sql(col):
    """SQL turning a stored time (`YYYY-MM-DDTHH:MM:SS[.ffffff]Z`, UTC) into
    integer microseconds since 1970: the whole seconds by unixepoch, the
    fraction's digits as they are (no floating point on the way)."""
    return (f"(unixepoch(substr({col}, 1, 19)) * 1000000 + "
            f"CASE WHEN length({col}) > 20 THEN CAST(substr({col}, 21, 6) AS INTEGER) ELSE 0 END)")


def shifted_text_sql(col):
    """SQL for a stored time one day later, in the same fixed-width form."""
    return f"(strftime('%Y-%m-%dT%H:%M:%S', substr({col}, 1, 19), '+1 day') || substr({col}, 20))"


def build(sources_path, catalog_path):
    """Writes every source table into a new `sources_path` from the judged
    catalog at `catalog_path` (opened read-only) and returns facts the report
    needs: row counts and whether each subject's notifications are one
    contiguous stretch of ids (the canonical order the span layout relies on).
    Raises if the catalog holds no notifications: there is nothing to replay."""
    db = sqlite3.connect(str(sources_path), isolation_level=None, uri=True)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -262144")
    db.execute(f"ATTACH 'file:{catalog_path}?mode=ro' AS cat")
    count = db.execute("SELECT count(*) FROM cat.gf_notifications").fetchone()[0]
    if count == 0:
        raise SystemExit(f"{catalog_path} holds no notifications: judge a workload into it first (see benchmarks/README.md)")
    _dictionaries(db)
    _zone_offsets(db)
    _notifications(db)
    _state_rows(db)
    db.execute("BEGIN")
    _records(db)
    db.execute("COMMIT")
    facts = {"notifications": count}
    for table in ("subj", "stays1", "notified1", "inside1", "spans1"):
        facts[table] = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    covered = db.execute("SELECT total(last - first + 1) FROM spans1").fetchone()[0]
    facts["subjects_contiguous"] = int(covered) == count
    facts["page_size"] = db.execute("PRAGMA cat.page_size").fetchone()[0]
    db.close()
    return facts


def _dictionaries(db):
    """Subjects keyed in subject_id's byte order (SQLite's BINARY collation,
    the engine's canonical order), so that keys follow the order rows are
    written in; areas keyed by gf_areas.id, as an import would fill the
    dictionary, plus any area a notification or stay names that the catalog
    no longer holds."""
    db.executescript("""
        CREATE TABLE subj (subject_key INTEGER PRIMARY KEY, subject_id TEXT NOT NULL UNIQUE);
        INSERT INTO subj (subject_id)
            SELECT subject_id FROM (SELECT subject_id FROM cat.gf_subjects UNION SELECT subject_id FROM cat.gf_notifications) ORDER BY 1;
        CREATE TABLE areas (area_key INTEGER PRIMARY KEY, area_id TEXT NOT NULL UNIQUE);
        INSERT INTO areas (area_key, area_id) SELECT id, area_id FROM cat.gf_areas;
        INSERT INTO areas (area_id)
            SELECT area_id FROM (SELECT area_id FROM cat.gf_notifications UNION SELECT area_id FROM cat.gf_stay_rows)
            WHERE area_id NOT IN (SELECT area_id FROM areas);
    """)


def _zone_offsets(db):
    """Each condition's offset from UTC at the run's first notification, in
    seconds: the condition's zone, else its area's, else the catalog's
    default (behaviour §5), for the local day of each notification (the day
    gf_last_notified shows). A fixed offset per condition is right for zones
    without a change during the run (the workloads' UTC and Asia/Tokyo); the
    engine, which computes every notification's day already, uses its zone rules."""
    default = db.execute("SELECT value FROM cat.gf_settings WHERE key = 'default_timezone'").fetchone()
    default = (default[0] if default else None) or "UTC"
    first = db.execute("SELECT min(ts) FROM cat.gf_notifications").fetchone()[0]
    when = datetime.datetime.fromisoformat(first[:19]).replace(tzinfo=datetime.timezone.utc)
    rows = db.execute("""SELECT c.condition_id, coalesce(c.timezone, a.timezone) FROM cat.gf_conditions AS c
                         LEFT JOIN cat.gf_areas AS a ON a.area_id = c.area_id""").fetchall()
    offsets = {}
    db.execute("CREATE TABLE zone_offsets (condition_id INTEGER PRIMARY KEY, offset_s INTEGER NOT NULL)")
    for cid, zone in rows:
        name = zone or default
        if name not in offsets:
            offsets[name] = int(when.astimezone(zoneinfo.ZoneInfo(name)).utcoffset().total_seconds())
        db.execute("INSERT INTO zone_offsets VALUES (?, ?)", (cid, offsets[name]))


def _notifications(db):
    """Today's rows in id order, their narrow form, the next run's of both,
    and each subject's stretch of rows."""
    db.executescript(f"""
        CREATE TABLE wide1 AS SELECT run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m
            FROM cat.gf_notifications ORDER BY id;
        CREATE TABLE wide2 AS SELECT run_id + 1 AS run_id, subject_id, {shifted_text_sql('ts')} AS ts, area_id, condition_id,
            transition, lat, lon, accuracy_m FROM wide1 ORDER BY rowid;
        CREATE TABLE narrow1 AS SELECT w.run_id, s.subject_key, {ts_us_sql('w.ts')} AS ts_us, a.area_key, w.condition_id,
            CASE w.transition WHEN 'IN' THEN 0 WHEN 'OUT' THEN 1 ELSE 2 END AS transition, w.lat, w.lon, w.accuracy_m,
            CAST(floor(({ts_us_sql('w.ts')} / 1000000.0 + coalesce(z.offset_s, 0)) / 86400) AS INTEGER) AS local_day
            FROM wide1 AS w JOIN subj AS s ON s.subject_id = w.subject_id JOIN areas AS a ON a.area_id = w.area_id
            LEFT JOIN zone_offsets AS z ON z.condition_id = w.condition_id
            ORDER BY w.rowid;
        CREATE TABLE narrow2 AS SELECT run_id + 1 AS run_id, subject_key, ts_us + {DAY_US} AS ts_us, area_key, condition_id,
            transition, lat, lon, accuracy_m, local_day + 1 AS local_day FROM narrow1 ORDER BY rowid;
        CREATE TABLE spans1 AS SELECT subject_key, min(rowid) AS first, max(rowid) AS last, min(run_id) AS run_id
            FROM narrow1 GROUP BY subject_key ORDER BY first;
    """)


def _state_rows(db):
    """Today's state rows as the run left them (run 1), and as the next run
    rewrites the same keys a day later (run 2)."""
    db.executescript(f"""
        CREATE TABLE subjects1 AS SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes
            FROM cat.gf_subjects ORDER BY subject_id;
        CREATE TABLE subjects2 AS SELECT subject_id, {shifted_text_sql('last_ts')} AS last_ts, last_lat, last_lon, last_accuracy_m,
            2 * judged_fixes AS judged_fixes FROM subjects1 ORDER BY rowid;
        CREATE TABLE stays1 AS SELECT subject_id, area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent
            FROM cat.gf_stay_rows ORDER BY subject_id, area_id;
        CREATE TABLE stays2 AS SELECT r.subject_id, r.area_id, r.state, r.in_base, r.out_base, r.base_judged + s.judged_fixes AS base_judged,
            CASE WHEN r.entered_at IS NULL THEN NULL ELSE {shifted_text_sql('r.entered_at')} END AS entered_at, r.dwell_spent
            FROM stays1 AS r JOIN subjects1 AS s ON s.subject_id = r.subject_id ORDER BY r.rowid;
        CREATE TABLE notified1 AS SELECT subject_id, condition_id, local_date FROM cat.gf_last_notified ORDER BY subject_id, condition_id;
        CREATE TABLE notified2 AS SELECT subject_id, condition_id, date(local_date, '+1 day') AS local_date FROM notified1 ORDER BY rowid;
        CREATE TABLE inside1 AS SELECT a.area_key, s.subject_key, s.subject_id FROM cat.gf_stay_rows AS r
            JOIN subj AS s ON s.subject_id = r.subject_id JOIN areas AS a ON a.area_id = r.area_id
            WHERE r.state = 'INSIDE' ORDER BY a.area_key, s.subject_id;
    """)


def _records(db):
    """One compact record per subject, in three encodings (`record_json`),
    for the run's end state and the next run's."""
    db.execute("""CREATE TABLE records1 (subject_key INTEGER PRIMARY KEY, subject_id TEXT NOT NULL,
                  json_all TEXT NOT NULL, json TEXT NOT NULL, blob BLOB NOT NULL)""")
    db.execute("CREATE TABLE records2 AS SELECT * FROM records1 WHERE 0")
    suppressing = {r[0] for r in db.execute("SELECT condition_id FROM cat.gf_conditions WHERE renotify_suppress_days > 0")}
    area_key = dict(db.execute("SELECT area_id, area_key FROM areas"))
    stays, days = {}, {}
    for row in db.execute(f"""SELECT subject_id, area_id, state, in_streak, out_streak,
                              CASE WHEN entered_at IS NULL THEN NULL ELSE {ts_us_sql('entered_at')} END, dwell_spent
                              FROM cat.gf_stays ORDER BY subject_id, area_id"""):
        dwell = [int(d) for d in row[6].split(",")] if row[6] else []
        stays.setdefault(row[0], []).append([area_key[row[1]], PHASES[row[2]], row[3], row[4], row[5], dwell])
    for sid, cid, day in db.execute("SELECT subject_id, condition_id, local_date FROM notified1 ORDER BY rowid"):
        days.setdefault(sid, []).append([cid, datetime.date.fromisoformat(day).toordinal() - EPOCH_ORDINAL])
    subjects = db.execute(f"""SELECT s.subject_key, s.subject_id, {ts_us_sql('f.last_ts')}, f.last_lat, f.last_lon,
                              f.last_accuracy_m, f.judged_fixes FROM subjects1 AS f JOIN subj AS s USING (subject_id)
                              ORDER BY s.subject_key""").fetchall()
    for run, table in ((0, "records1"), (1, "records2")):
        for key, sid, ts, lat, lon, acc, judged in subjects:
            record = Record(ts + run * DAY_US, (lat, lon, acc), judged * (1 + run), stays.get(sid, []))
            all_days = [[c, d + run] for c, d in days.get(sid, [])]
            read_days = [d for d in all_days if d[0] in suppressing]
            db.execute(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?)",
                       (key, sid, record.json(all_days), record.json(read_days), record.blob(read_days)))


class Record:
    """A subject's state as one value: its last judged fix, its count of
    judged fixes, its stays (area_key, phase 0/1/2, inside and outside
    streaks as of the record, entered_at in µs or null, DWELL condition ids
    spent) and last-notified days (condition id, days since 1970-01-01)."""

    def __init__(self, ts_us, position, judged, stays):
        self.ts_us, self.position, self.judged, self.stays = ts_us, position, judged, stays

    def json(self, days):
        """Compact JSON text that SQLite's json_each and json_extract read:
        the views of the compact layout are written over it."""
        lat, lon, acc = self.position
        body = {"ts": self.ts_us, "lat": lat, "lon": lon, "acc": acc, "n": self.judged, "stays": self.stays, "days": days}
        return json.dumps(body, separators=(",", ":"))

    def blob(self, days):
        """The same fields packed little-endian: header (ts, lat, lon, acc,
        count, number of stays, number of days), each stay (area_key, phase,
        streaks, entered_at or -2^63, count of spent ids, the ids), each day."""
        lat, lon, acc = self.position
        parts = [struct.pack("<qdddqII", self.ts_us, lat, lon, acc, self.judged, len(self.stays), len(days))]
        for area, phase, inside, outside, entered, dwell in self.stays:
            parts.append(struct.pack("<qBqqqH", area, phase, inside, outside, -(1 << 63) if entered is None else entered, len(dwell)))
            parts.append(struct.pack(f"<{len(dwell)}q", *dwell))
        for cid, day in days:
            parts.append(struct.pack("<qi", cid, day))
        return b"".join(parts)
