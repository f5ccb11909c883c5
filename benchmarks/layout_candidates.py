"""The candidate layouts write_layouts.py measures: for each, its tables,
the documented read surface rebuilt over them (views with today's columns
and values), what a run writes into it (one INSERT … SELECT per table from
layout_sources.py's tables, attached as `src`), and the questions read back.

A `Layout`'s statements are plain SQL with two parameters: `:base`, the
last notification id before the run (its rows take `:base + n`), and
`:run`, 1 for the run into an empty catalog and 2 for the next run into a
catalog holding it. `{run}` in a statement picks the source of that run.

Notifications (issue 38's (a)–(e)):
  a   today's text rows, (subject_id, ts) index kept during the write
  a2  today's, index built at the end (what the engine does into an empty table)
  b   narrow integer rows (subject and area dictionaries, ts in µs, transition
      0/1/2) with a (subject_key, ts_us) index kept during the write
  c   b with the index built at the end (a later run into a non-empty
      table is b again)
  d   b as a WITHOUT ROWID table keyed by (subject_key, ts_us, area_key,
      condition_id), no second index; id an ordinary column
  e   narrow rows without subject or run (rowid = id, no index) and one
      span per subject and run (subject_key, first_id, last_id, run_id):
      the canonical order already groups a run's rows by subject, so a
      subject's rows are found through its spans, not a per-row index
State:
  today    gf_subjects + gf_stay_rows + gf_last_notified, the engine's upserts
  json_all one JSON record per subject holding every last-notified day, and
           gf_inside (area_key, subject_key) of INSIDE stays
  json     the same holding only the days a suppression reads (gf_last_notified
           then derived from the notifications, as b–e's views do)
  blob     the json record packed as a BLOB (no view can read it in plain SQL)
"""
from dataclasses import dataclass, field

NOTIFICATION_COLUMNS = "id, run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m"


def ts_text_sql(us):
    """SQL turning integer microseconds since 1970 back into the text the
    engine stores (`YYYY-MM-DDTHH:MM:SS.ffffffZ`, the fraction always
    written: Timestamp.storageText), flooring for times before 1970."""
    frac = f"((({us}) % 1000000 + 1000000) % 1000000)"
    return f"(strftime('%Y-%m-%dT%H:%M:%S', (({us}) - {frac}) / 1000000, 'unixepoch') || printf('.%06dZ', {frac}))"


TRANSITION_TEXT = "CASE n.transition WHEN 0 THEN 'IN' WHEN 1 THEN 'OUT' ELSE 'DWELL' END"


@dataclass
class Layout:
    """One candidate: `schema` runs before the clock on an empty catalog
    (tables, indexes kept during the write, views), `fill` too (what an
    import fills: the area dictionary); `write[run]` is timed as one
    transaction, None for a run the layout does not differ in; `base_sql`
    finds `:base` before the clock; `reads` are the questions timed on the
    run's result, by name."""
    key: str
    label: str
    schema: str
    write: dict
    fill: str = ""
    base_sql: str = ""
    reads: dict = field(default_factory=dict)


DICTIONARIES = """
CREATE TABLE gf_subject_keys (subject_key INTEGER PRIMARY KEY, subject_id TEXT NOT NULL UNIQUE);
CREATE TABLE gf_area_keys (area_key INTEGER PRIMARY KEY, area_id TEXT NOT NULL UNIQUE);
-- A stand-in for the zone function a derived gf_last_notified calls (layout_sources.zone_offsets).
CREATE TABLE gf_zone_offsets (condition_id INTEGER PRIMARY KEY, offset_s INTEGER NOT NULL);
"""
FILL_DICTIONARIES = """
INSERT INTO gf_area_keys (area_key, area_id) SELECT area_key, area_id FROM src.areas;
INSERT INTO gf_zone_offsets SELECT condition_id, offset_s FROM src.zone_offsets;
"""
# A run adds the subjects it meets to the dictionary (timed with the notifications: the
# state's own dictionary would serve, but today's layout has none to share).
ADD_SUBJECTS = "INSERT OR IGNORE INTO gf_subject_keys (subject_key, subject_id) SELECT subject_key, subject_id FROM src.subj"

NARROW_ROWS = """
CREATE TABLE gf_notification_rows (
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_key INTEGER NOT NULL, ts_us INTEGER NOT NULL,
    area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL, transition INTEGER NOT NULL CHECK (transition IN (0, 1, 2)),
    lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL);
"""
NARROW_INDEX = "CREATE INDEX gf_notification_rows_by_subject ON gf_notification_rows (subject_key, ts_us)"
NARROW_INSERT = """INSERT INTO gf_notification_rows (run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m)
    SELECT run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m FROM src.narrow{run} ORDER BY rowid"""
NARROW_VIEWS = f"""
CREATE VIEW gf_notifications AS
SELECT n.id, n.run_id, s.subject_id, {ts_text_sql('n.ts_us')} AS ts, a.area_id, n.condition_id, {TRANSITION_TEXT} AS transition,
       n.lat, n.lon, n.accuracy_m
FROM gf_notification_rows AS n JOIN gf_subject_keys AS s ON s.subject_key = n.subject_key JOIN gf_area_keys AS a ON a.area_key = n.area_key;
CREATE VIEW gf_last_notified AS
SELECT s.subject_id, g.condition_id, date(g.last_us / 1000000 + z.offset_s, 'unixepoch') AS local_date
FROM (SELECT subject_key, condition_id, max(ts_us) AS last_us FROM gf_notification_rows GROUP BY subject_key, condition_id) AS g
JOIN gf_subject_keys AS s ON s.subject_key = g.subject_key JOIN gf_zone_offsets AS z ON z.condition_id = g.condition_id;
"""

WITHOUT_ROWID_ROWS = """
CREATE TABLE gf_notification_rows (
    subject_key INTEGER NOT NULL, ts_us INTEGER NOT NULL, area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL,
    id INTEGER NOT NULL, run_id INTEGER NOT NULL, transition INTEGER NOT NULL CHECK (transition IN (0, 1, 2)),
    lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL,
    PRIMARY KEY (subject_key, ts_us, area_key, condition_id)) WITHOUT ROWID;
"""
WITHOUT_ROWID_INSERT = """INSERT INTO gf_notification_rows (subject_key, ts_us, area_key, condition_id, id, run_id, transition, lat, lon, accuracy_m)
    SELECT subject_key, ts_us, area_key, condition_id, :base + rowid, run_id, transition, lat, lon, accuracy_m FROM src.narrow{run} ORDER BY rowid"""

SPAN_TABLES = """
CREATE TABLE gf_notification_rows (
    id INTEGER PRIMARY KEY, ts_us INTEGER NOT NULL, area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL,
    transition INTEGER NOT NULL CHECK (transition IN (0, 1, 2)), lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL);
-- One row per subject and run (per gf_check call that notifies): its rows are ids first_id..last_id.
CREATE TABLE gf_notification_spans (
    subject_key INTEGER NOT NULL, first_id INTEGER NOT NULL, last_id INTEGER NOT NULL, run_id INTEGER NOT NULL,
    PRIMARY KEY (subject_key, first_id)) WITHOUT ROWID;
"""
SPAN_INSERTS = [
    """INSERT INTO gf_notification_rows (id, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m)
       SELECT :base + rowid, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m FROM src.narrow{run} ORDER BY rowid""",
    """INSERT INTO gf_notification_spans (subject_key, first_id, last_id, run_id)
       SELECT subject_key, :base + first, :base + last, run_id + :run - 1 FROM src.spans1 ORDER BY subject_key""",
]
SPAN_ROWS = "gf_notification_spans AS p JOIN gf_notification_rows AS n ON n.id BETWEEN p.first_id AND p.last_id"
SPAN_VIEWS = f"""
CREATE VIEW gf_notifications AS
SELECT n.id, p.run_id, s.subject_id, {ts_text_sql('n.ts_us')} AS ts, a.area_id, n.condition_id, {TRANSITION_TEXT} AS transition,
       n.lat, n.lon, n.accuracy_m
FROM gf_subject_keys AS s JOIN gf_notification_spans AS p ON p.subject_key = s.subject_key
JOIN gf_notification_rows AS n ON n.id BETWEEN p.first_id AND p.last_id JOIN gf_area_keys AS a ON a.area_key = n.area_key;
CREATE VIEW gf_last_notified AS
SELECT s.subject_id, g.condition_id, date(g.last_us / 1000000 + z.offset_s, 'unixepoch') AS local_date
FROM (SELECT p.subject_key, n.condition_id, max(n.ts_us) AS last_us FROM {SPAN_ROWS} GROUP BY p.subject_key, n.condition_id) AS g
JOIN gf_subject_keys AS s ON s.subject_key = g.subject_key JOIN gf_zone_offsets AS z ON z.condition_id = g.condition_id;
"""

NOTIFICATION_READS = {
    # Every row through the documented columns, each column evaluated, summed so no row crosses into Python.
    "all rows": "SELECT count(*), total(id + run_id + length(subject_id) + length(ts) + length(area_id) + condition_id "
                "+ length(transition) + lat + lon + accuracy_m) FROM gf_notifications",
    # A consumer's poll: the rows after its cursor, in id order, fetched (the last 1 % of the run).
    "incremental": f"SELECT {NOTIFICATION_COLUMNS} FROM gf_notifications WHERE id > :cursor ORDER BY id",
    # One subject's notifications in time order, fetched.
    "one subject": f"SELECT {NOTIFICATION_COLUMNS} FROM gf_notifications WHERE subject_id = :subject ORDER BY ts, id",
    "gf_last_notified": "SELECT count(*), total(length(subject_id) + condition_id + length(local_date)) FROM gf_last_notified",
}


def notification_layouts(today_ddl):
    """The notification candidates; `today_ddl` maps today's table and index
    names to their CREATE statements, read from the judged catalog."""
    wide_insert = """INSERT INTO gf_notifications (run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m)
        SELECT run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM src.wide{run} ORDER BY rowid"""
    today = today_ddl["gf_notifications"] + ";"
    # Today's gf_last_notified is a state table: its read is the state layout's.
    reads = {k: v for k, v in NOTIFICATION_READS.items() if k != "gf_last_notified"}
    index = today_ddl["gf_notifications_by_subject"]
    rowid_base = "SELECT coalesce(max(id), 0) FROM gf_notification_rows"
    return [
        Layout("a", "today: text rows, (subject_id, ts) index kept", f"{today}\n{index};", {1: [wide_insert], 2: [wide_insert]}, reads=reads),
        Layout("a2", "today, index built at the end", today, {1: [wide_insert, index], 2: None}, reads=reads),
        Layout("b", "narrow rows, (subject_key, ts_us) index kept", DICTIONARIES + NARROW_ROWS + NARROW_INDEX + ";" + NARROW_VIEWS,
               {1: [ADD_SUBJECTS, NARROW_INSERT], 2: [ADD_SUBJECTS, NARROW_INSERT]}, fill=FILL_DICTIONARIES,
               base_sql=rowid_base, reads=NOTIFICATION_READS),
        Layout("c", "narrow rows, index built at the end", DICTIONARIES + NARROW_ROWS + NARROW_VIEWS,
               {1: [ADD_SUBJECTS, NARROW_INSERT, NARROW_INDEX], 2: None}, fill=FILL_DICTIONARIES,
               base_sql=rowid_base, reads=NOTIFICATION_READS),
        Layout("d", "narrow, WITHOUT ROWID keyed (subject, ts, area, condition)", DICTIONARIES + WITHOUT_ROWID_ROWS + NARROW_VIEWS,
               {1: [ADD_SUBJECTS, WITHOUT_ROWID_INSERT], 2: [ADD_SUBJECTS, WITHOUT_ROWID_INSERT]}, fill=FILL_DICTIONARIES,
               base_sql="SELECT coalesce(max(id), 0) FROM gf_notification_rows", reads=NOTIFICATION_READS),
        Layout("e", "narrow rows by id, no index, a span per subject and run", DICTIONARIES + SPAN_TABLES + SPAN_VIEWS,
               {1: [ADD_SUBJECTS, *SPAN_INSERTS], 2: [ADD_SUBJECTS, *SPAN_INSERTS]}, fill=FILL_DICTIONARIES,
               base_sql=rowid_base, reads=NOTIFICATION_READS),
    ]


STATE_READS = {
    "gf_subjects": "SELECT count(*), total(length(subject_id) + length(last_ts) + last_lat + last_lon + last_accuracy_m + judged_fixes) "
                   "FROM gf_subjects",
    "gf_stays": "SELECT count(*), total(length(subject_id) + length(area_id) + length(state) + in_streak + out_streak "
                "+ coalesce(length(entered_at), 0) + coalesce(length(dwell_spent), 0)) FROM gf_stays",
}
TODAY_INSIDE = "SELECT count(*), total(length(subject_id)) FROM gf_stays WHERE area_id = :area AND state = 'INSIDE'"
COMPACT_INSIDE = """SELECT count(*), total(length(s.subject_id)) FROM gf_inside AS i JOIN gf_subject_state AS s ON s.subject_key = i.subject_key
    WHERE i.area_key = (SELECT area_key FROM gf_area_keys WHERE area_id = :area)"""

COMPACT_TABLES = """
CREATE TABLE gf_area_keys (area_key INTEGER PRIMARY KEY, area_id TEXT NOT NULL UNIQUE);
-- One record per subject; the table is also the subject dictionary.
CREATE TABLE gf_subject_state (subject_key INTEGER PRIMARY KEY, subject_id TEXT NOT NULL UNIQUE, record NOT NULL);
-- "Who is inside area A now": the INSIDE stays alone, by area.
CREATE TABLE gf_inside (area_key INTEGER NOT NULL, subject_key INTEGER NOT NULL, PRIMARY KEY (area_key, subject_key)) WITHOUT ROWID;
"""
COMPACT_VIEWS = f"""
CREATE VIEW gf_subjects AS
SELECT subject_id, {ts_text_sql("json_extract(record, '$.ts')")} AS last_ts, json_extract(record, '$.lat') AS last_lat,
       json_extract(record, '$.lon') AS last_lon, json_extract(record, '$.acc') AS last_accuracy_m, json_extract(record, '$.n') AS judged_fixes
FROM gf_subject_state;
CREATE VIEW gf_stays AS
SELECT s.subject_id, a.area_id,
       CASE json_extract(t.value, '$[1]') WHEN 1 THEN 'INSIDE' WHEN 2 THEN 'OUTSIDE' ELSE 'UNKNOWN' END AS state,
       json_extract(t.value, '$[2]') AS in_streak, json_extract(t.value, '$[3]') AS out_streak,
       {ts_text_sql("json_extract(t.value, '$[4]')")} AS entered_at,
       (SELECT group_concat(d.value, ',') FROM json_each(t.value, '$[5]') AS d) AS dwell_spent
FROM gf_subject_state AS s, json_each(s.record, '$.stays') AS t JOIN gf_area_keys AS a ON a.area_key = json_extract(t.value, '$[0]');
"""
COMPACT_DAYS_VIEW = """
CREATE VIEW gf_last_notified AS
SELECT s.subject_id, json_extract(d.value, '$[0]') AS condition_id, date(json_extract(d.value, '$[1]') * 86400, 'unixepoch') AS local_date
FROM gf_subject_state AS s, json_each(s.record, '$.days') AS d;
"""


def compact_writes(column):
    """A run's statements for the compact layout storing `column` of the
    source records: each record upserted (the next run rewrites it whole);
    gf_inside filled, or on the next run every INSIDE pair deleted and
    written again (an upper bound: a run rewrites only the pairs that change)."""
    record = f"""INSERT INTO gf_subject_state (subject_key, subject_id, record)
        SELECT subject_key, subject_id, {column} FROM src.records{{run}} WHERE true
        ON CONFLICT (subject_key) DO UPDATE SET record = excluded.record"""
    inside = "INSERT INTO gf_inside (area_key, subject_key) SELECT area_key, subject_key FROM src.inside1 ORDER BY rowid"
    again = "DELETE FROM gf_inside WHERE (area_key, subject_key) IN (SELECT area_key, subject_key FROM src.inside1)"
    return {1: [record, inside], 2: [record, again, inside]}


def state_layouts(today_ddl):
    """The state candidates; `today_ddl` as for `notification_layouts`."""
    names = ("gf_subjects", "gf_stay_rows", "gf_stay_rows_by_area", "gf_stays", "gf_last_notified", "gf_stays_delete",
             "gf_subjects_remove_stays")
    today = ";\n".join(today_ddl[n] for n in names) + ";"
    writes = [
        """INSERT INTO gf_subjects (subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes)
           SELECT subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes FROM src.subjects{run} WHERE true
           ON CONFLICT (subject_id) DO UPDATE SET last_ts = excluded.last_ts, last_lat = excluded.last_lat,
           last_lon = excluded.last_lon, last_accuracy_m = excluded.last_accuracy_m, judged_fixes = excluded.judged_fixes""",
        """INSERT OR REPLACE INTO gf_stay_rows (subject_id, area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent)
           SELECT subject_id, area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent FROM src.stays{run} ORDER BY rowid""",
        """INSERT INTO gf_last_notified (subject_id, condition_id, local_date)
           SELECT subject_id, condition_id, local_date FROM src.notified{run} WHERE true
           ON CONFLICT (subject_id, condition_id) DO UPDATE SET local_date = excluded.local_date""",
    ]
    fill_areas = "INSERT INTO gf_area_keys (area_key, area_id) SELECT area_key, area_id FROM src.areas;"
    today_reads = {**STATE_READS, "gf_last_notified": NOTIFICATION_READS["gf_last_notified"], "inside A": TODAY_INSIDE}
    compact_reads = {**STATE_READS, "inside A": COMPACT_INSIDE}
    return [
        Layout("today", "gf_subjects + gf_stay_rows + gf_last_notified rows", today, {1: writes, 2: writes},
               reads=today_reads),
        Layout("json_all", "a JSON record per subject (every notified day) + gf_inside", COMPACT_TABLES + COMPACT_VIEWS + COMPACT_DAYS_VIEW,
               compact_writes("json_all"), fill=fill_areas,
               reads={**compact_reads, "gf_last_notified": NOTIFICATION_READS["gf_last_notified"]}),
        Layout("json", "a JSON record per subject (days a suppression reads) + gf_inside", COMPACT_TABLES + COMPACT_VIEWS,
               compact_writes("json"), fill=fill_areas, reads=compact_reads),
        Layout("blob", "a BLOB record per subject (days a suppression reads) + gf_inside", COMPACT_TABLES,
               compact_writes("blob"), fill=fill_areas, reads={"inside A": COMPACT_INSIDE}),
    ]


def scaled_state(today_ddl, copies):
    """Statements building a state of `copies` × the judged catalog's
    subjects (copy k of subject u is `kkkkk/u`, its key k × the key span + u's
    key), today's and compact, for "who is inside A now" among many subjects.
    Last-notified days are left out of both (the compact one keeps none
    where no suppression reads them). Returns {layout: (schema, statements)}."""
    copies_cte = f"WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k + 1 < {copies})"
    today_names = ("gf_subjects", "gf_stay_rows", "gf_stay_rows_by_area", "gf_stays")
    today = (";\n".join(today_ddl[n] for n in today_names) + ";", [
        f"""{copies_cte} INSERT INTO gf_subjects (subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes)
            SELECT printf('%05d/', k) || subject_id, last_ts, last_lat, last_lon, last_accuracy_m, judged_fixes
            FROM k CROSS JOIN src.subjects1""",
        f"""{copies_cte} INSERT INTO gf_stay_rows (subject_id, area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent)
            SELECT printf('%05d/', k) || subject_id, area_id, state, in_base, out_base, base_judged, entered_at, dwell_spent
            FROM k CROSS JOIN src.stays1""",
    ])
    span = "(SELECT max(subject_key) + 1 FROM src.subj)"
    compact = (COMPACT_TABLES + COMPACT_VIEWS, [
        "INSERT INTO gf_area_keys (area_key, area_id) SELECT area_key, area_id FROM src.areas",
        f"""{copies_cte} INSERT INTO gf_subject_state (subject_key, subject_id, record)
            SELECT k * {span} + subject_key, printf('%05d/', k) || subject_id, json FROM k CROSS JOIN src.records1""",
        f"""{copies_cte} INSERT INTO gf_inside (area_key, subject_key)
            SELECT area_key, k * {span} + subject_key FROM src.inside1 CROSS JOIN k""",
    ])
    return {"today": today, "compact": compact}


SCALED_INSIDE = {
    "today, gf_stays view": ("today", TODAY_INSIDE),
    "today, gf_stay_rows": ("today", "SELECT count(*), total(length(subject_id)) FROM gf_stay_rows WHERE area_id = :area AND state = 'INSIDE'"),
    "compact, gf_inside": ("compact", COMPACT_INSIDE),
    "compact, gf_stays view over the records": ("compact", TODAY_INSIDE),
}
