"""The candidate layouts for notifications write_layouts.py measures (those
for the state: layout_state.py): for each, its tables,
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
  a3  today's with its CHECK written without an IN list (SQLite 3.40 builds an
      ephemeral index per row for `CHECK (transition IN ('IN', 'OUT', 'DWELL'))`)
  b   narrow integer rows (subject and area dictionaries, ts in µs, transition
      0/1/2, the local day gf_last_notified shows, so that it is a view in
      plain SQL) with a (subject_key, ts_us) index kept during the write
  c   b with the index built at the end (a later run into a non-empty
      table is b again)
  d   b as a WITHOUT ROWID table keyed by (subject_key, ts_us, area_key,
      condition_id), no second index; id an ordinary column
  e   narrow rows without subject or run (rowid = id, no index) and one
      span per subject and run (subject_key, first_id, last_id, run_id):
      the canonical order already groups a run's rows by subject, so a
      subject's rows are found through its spans, not a per-row index
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
"""
FILL_DICTIONARIES = """
INSERT INTO gf_area_keys (area_key, area_id) SELECT area_key, area_id FROM src.areas;
"""
# A run adds the subjects it meets to the dictionary (timed with the notifications: the
# state's own dictionary would serve, but today's layout has none to share).
ADD_SUBJECTS = "INSERT OR IGNORE INTO gf_subject_keys (subject_key, subject_id) SELECT subject_key, subject_id FROM src.subj"

NARROW_ROWS = """
CREATE TABLE gf_notification_rows (
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_key INTEGER NOT NULL, ts_us INTEGER NOT NULL,
    area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL, transition INTEGER NOT NULL CHECK (transition BETWEEN 0 AND 2),
    lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL,
    local_day INTEGER NOT NULL);  -- days since 1970-01-01 in the condition's zone: what gf_last_notified shows
"""
NARROW_INDEX = "CREATE INDEX gf_notification_rows_by_subject ON gf_notification_rows (subject_key, ts_us)"
NARROW_INSERT = """INSERT INTO gf_notification_rows (run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m,
        local_day)
    SELECT run_id, subject_key, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, local_day FROM src.narrow{run} ORDER BY rowid"""
NARROW_VIEWS = f"""
CREATE VIEW gf_notifications AS
SELECT n.id, n.run_id, s.subject_id, {ts_text_sql('n.ts_us')} AS ts, a.area_id, n.condition_id, {TRANSITION_TEXT} AS transition,
       n.lat, n.lon, n.accuracy_m
FROM gf_notification_rows AS n JOIN gf_subject_keys AS s ON s.subject_key = n.subject_key JOIN gf_area_keys AS a ON a.area_key = n.area_key;
CREATE VIEW gf_last_notified AS
SELECT s.subject_id, g.condition_id, date(g.day * 86400, 'unixepoch') AS local_date
FROM (SELECT subject_key, condition_id, max(local_day) AS day FROM gf_notification_rows GROUP BY subject_key, condition_id) AS g
JOIN gf_subject_keys AS s ON s.subject_key = g.subject_key;
"""

WITHOUT_ROWID_ROWS = """
CREATE TABLE gf_notification_rows (
    subject_key INTEGER NOT NULL, ts_us INTEGER NOT NULL, area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL,
    id INTEGER NOT NULL, run_id INTEGER NOT NULL, transition INTEGER NOT NULL CHECK (transition BETWEEN 0 AND 2),
    lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL, local_day INTEGER NOT NULL,
    PRIMARY KEY (subject_key, ts_us, area_key, condition_id)) WITHOUT ROWID;
"""
WITHOUT_ROWID_INSERT = """INSERT INTO gf_notification_rows (subject_key, ts_us, area_key, condition_id, id, run_id, transition, lat, lon,
        accuracy_m, local_day)
    SELECT subject_key, ts_us, area_key, condition_id, :base + rowid, run_id, transition, lat, lon, accuracy_m, local_day
    FROM src.narrow{run} ORDER BY rowid"""

SPAN_TABLES = """
CREATE TABLE gf_notification_rows (
    id INTEGER PRIMARY KEY, ts_us INTEGER NOT NULL, area_key INTEGER NOT NULL, condition_id INTEGER NOT NULL,
    transition INTEGER NOT NULL CHECK (transition BETWEEN 0 AND 2), lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL,
    local_day INTEGER NOT NULL);
-- One row per subject and run (per gf_check call that notifies): its rows are ids first_id..last_id.
CREATE TABLE gf_notification_spans (
    subject_key INTEGER NOT NULL, first_id INTEGER NOT NULL, last_id INTEGER NOT NULL, run_id INTEGER NOT NULL,
    PRIMARY KEY (subject_key, first_id)) WITHOUT ROWID;
"""
SPAN_INSERTS = [
    """INSERT INTO gf_notification_rows (id, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, local_day)
       SELECT :base + rowid, ts_us, area_key, condition_id, transition, lat, lon, accuracy_m, local_day FROM src.narrow{run} ORDER BY rowid""",
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
SELECT s.subject_id, g.condition_id, date(g.day * 86400, 'unixepoch') AS local_date
FROM (SELECT p.subject_key, n.condition_id, max(n.local_day) AS day FROM {SPAN_ROWS} GROUP BY p.subject_key, n.condition_id) AS g
JOIN gf_subject_keys AS s ON s.subject_key = g.subject_key;
"""

RAW_READ = ("SELECT count(*), total(id + ts_us + area_key + condition_id + transition + lat + lon + accuracy_m) "
            "FROM gf_notification_rows")
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
# The narrow layouts' own rows, integers as stored (what a consumer reading them without the views pays).
NARROW_READS = {**NOTIFICATION_READS, "all rows, stored integers": RAW_READ}


def notification_layouts(today_ddl):
    """The notification candidates; `today_ddl` maps today's table and index
    names to their CREATE statements, read from the judged catalog."""
    wide_insert = """INSERT INTO gf_notifications (run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m)
        SELECT run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM src.wide{run} ORDER BY rowid"""
    today = today_ddl["gf_notifications"] + ";"
    # Today's gf_last_notified is a state table: its read is the state layout's.
    reads = {k: v for k, v in NOTIFICATION_READS.items() if k != "gf_last_notified"}
    index = today_ddl["gf_notifications_by_subject"]
    # SQLite 3.40 codes a CHECK's `IN (list)` as a new ephemeral index per row checked; the same rule with `=` and OR does not.
    today_or = today.replace("CHECK (transition IN ('IN', 'OUT', 'DWELL'))",
                             "CHECK (transition = 'IN' OR transition = 'OUT' OR transition = 'DWELL')")
    assert today_or != today, "today's gf_notifications has no CHECK (transition IN ('IN', 'OUT', 'DWELL')) to rewrite"
    rowid_base = "SELECT coalesce(max(id), 0) FROM gf_notification_rows"
    return [
        Layout("a", "today: text rows, (subject_id, ts) index kept", f"{today}\n{index};", {1: [wide_insert], 2: [wide_insert]}, reads=reads),
        Layout("a2", "today, index built at the end", today, {1: [wide_insert, index], 2: None}, reads=reads),
        Layout("a3", "today's, its CHECK without an IN list", f"{today_or}\n{index};", {1: [wide_insert], 2: [wide_insert]},
               reads=reads),
        Layout("b", "narrow rows, (subject_key, ts_us) index kept", DICTIONARIES + NARROW_ROWS + NARROW_INDEX + ";" + NARROW_VIEWS,
               {1: [ADD_SUBJECTS, NARROW_INSERT], 2: [ADD_SUBJECTS, NARROW_INSERT]}, fill=FILL_DICTIONARIES,
               base_sql=rowid_base, reads=NARROW_READS),
        Layout("c", "narrow rows, index built at the end", DICTIONARIES + NARROW_ROWS + NARROW_VIEWS,
               {1: [ADD_SUBJECTS, NARROW_INSERT, NARROW_INDEX], 2: None}, fill=FILL_DICTIONARIES,
               base_sql=rowid_base, reads=NARROW_READS),
        Layout("d", "narrow, WITHOUT ROWID keyed (subject, ts, area, condition)", DICTIONARIES + WITHOUT_ROWID_ROWS + NARROW_VIEWS,
               {1: [ADD_SUBJECTS, WITHOUT_ROWID_INSERT], 2: [ADD_SUBJECTS, WITHOUT_ROWID_INSERT]}, fill=FILL_DICTIONARIES,
               base_sql="SELECT coalesce(max(id), 0) FROM gf_notification_rows", reads=NARROW_READS),
        Layout("e", "narrow rows by id, no index, a span per subject and run", DICTIONARIES + SPAN_TABLES + SPAN_VIEWS,
               {1: [ADD_SUBJECTS, *SPAN_INSERTS], 2: [ADD_SUBJECTS, *SPAN_INSERTS]}, fill=FILL_DICTIONARIES,
               base_sql=rowid_base, reads=NARROW_READS),
    ]
