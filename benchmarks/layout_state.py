"""The candidate layouts for each subject's state write_layouts.py measures
(the `Layout` and its parameters: layout_notifications.py), and the state
of many subjects built from copies of the judged ones, for "who is inside
area A now".

State:
  today    gf_subjects + gf_stay_rows + gf_last_notified, the engine's upserts
  json_all one JSON record per subject holding every last-notified day, the
           subject dictionary (shared with the notifications), and gf_inside
           (area_key, subject_id) of INSIDE stays
  json     the same holding only the days a suppression reads (gf_last_notified
           then derived from the notifications, as b–e's views do)
  blob     the json record packed as a BLOB (no view can read it in plain SQL)
"""
from layout_notifications import ADD_SUBJECTS, NOTIFICATION_READS, Layout, ts_text_sql


STATE_READS = {
    "gf_subjects": "SELECT count(*), total(length(subject_id) + length(last_ts) + last_lat + last_lon + last_accuracy_m + judged_fixes) "
                   "FROM gf_subjects",
    "gf_stays": "SELECT count(*), total(length(subject_id) + length(area_id) + length(state) + in_streak + out_streak "
                "+ coalesce(length(entered_at), 0) + coalesce(length(dwell_spent), 0)) FROM gf_stays",
}
TODAY_INSIDE = "SELECT count(*), total(length(subject_id)) FROM gf_stays WHERE area_id = :area AND state = 'INSIDE'"
COMPACT_INSIDE = """SELECT count(*), total(length(subject_id)) FROM gf_inside
    WHERE area_key = (SELECT area_key FROM gf_area_keys WHERE area_id = :area)"""
# The same through subject keys and the dictionary: a lookup per subject inside.
KEYED_INSIDE = """SELECT count(*), total(length(s.subject_id)) FROM gf_inside_keys AS i JOIN gf_subject_keys AS s ON s.subject_key = i.subject_key
    WHERE i.area_key = (SELECT area_key FROM gf_area_keys WHERE area_id = :area)"""

COMPACT_TABLES = """
CREATE TABLE gf_area_keys (area_key INTEGER PRIMARY KEY, area_id TEXT NOT NULL UNIQUE);
-- The subject dictionary the notifications share: narrow rows, so a question over many subjects reads few pages.
CREATE TABLE gf_subject_keys (subject_key INTEGER PRIMARY KEY, subject_id TEXT NOT NULL UNIQUE);
-- One record per subject.
CREATE TABLE gf_subject_state (subject_key INTEGER PRIMARY KEY, record NOT NULL);
-- "Who is inside area A now": the INSIDE stays alone, by area, with the subject's id (the answer read in place).
CREATE TABLE gf_inside (area_key INTEGER NOT NULL, subject_id TEXT NOT NULL, PRIMARY KEY (area_key, subject_id)) WITHOUT ROWID;
"""
COMPACT_VIEWS = f"""
CREATE VIEW gf_subjects AS
SELECT k.subject_id, {ts_text_sql("json_extract(r.record, '$.ts')")} AS last_ts, json_extract(r.record, '$.lat') AS last_lat,
       json_extract(r.record, '$.lon') AS last_lon, json_extract(r.record, '$.acc') AS last_accuracy_m,
       json_extract(r.record, '$.n') AS judged_fixes
FROM gf_subject_state AS r JOIN gf_subject_keys AS k ON k.subject_key = r.subject_key;
CREATE VIEW gf_stays AS
SELECT k.subject_id, a.area_id,
       CASE json_extract(t.value, '$[1]') WHEN 1 THEN 'INSIDE' WHEN 2 THEN 'OUTSIDE' ELSE 'UNKNOWN' END AS state,
       json_extract(t.value, '$[2]') AS in_streak, json_extract(t.value, '$[3]') AS out_streak,
       {ts_text_sql("json_extract(t.value, '$[4]')")} AS entered_at,
       (SELECT group_concat(d.value, ',') FROM json_each(t.value, '$[5]') AS d) AS dwell_spent
FROM gf_subject_state AS r JOIN gf_subject_keys AS k ON k.subject_key = r.subject_key, json_each(r.record, '$.stays') AS t
JOIN gf_area_keys AS a ON a.area_key = json_extract(t.value, '$[0]');
"""
COMPACT_DAYS_VIEW = """
CREATE VIEW gf_last_notified AS
SELECT k.subject_id, json_extract(d.value, '$[0]') AS condition_id, date(json_extract(d.value, '$[1]') * 86400, 'unixepoch') AS local_date
FROM gf_subject_state AS r JOIN gf_subject_keys AS k ON k.subject_key = r.subject_key, json_each(r.record, '$.days') AS d;
"""


def compact_writes(column):
    """A run's statements for the compact layout storing `column` of the
    source records: the subjects added to the dictionary, each record
    upserted (the next run rewrites it whole);
    gf_inside filled, or on the next run every INSIDE pair deleted and
    written again (an upper bound: a run rewrites only the pairs that change)."""
    record = f"""INSERT INTO gf_subject_state (subject_key, record)
        SELECT subject_key, {column} FROM src.records{{run}} WHERE true
        ON CONFLICT (subject_key) DO UPDATE SET record = excluded.record"""
    inside = "INSERT INTO gf_inside (area_key, subject_id) SELECT area_key, subject_id FROM src.inside1 ORDER BY rowid"
    again = "DELETE FROM gf_inside WHERE (area_key, subject_id) IN (SELECT area_key, subject_id FROM src.inside1)"
    return {1: [ADD_SUBJECTS, record, inside], 2: [ADD_SUBJECTS, record, again, inside]}


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
        f"""{copies_cte} INSERT INTO gf_subject_keys (subject_key, subject_id)
            SELECT k * {span} + subject_key, printf('%05d/', k) || subject_id FROM k CROSS JOIN src.records1""",
        f"""{copies_cte} INSERT INTO gf_subject_state (subject_key, record)
            SELECT k * {span} + subject_key, json FROM k CROSS JOIN src.records1""",
        f"""{copies_cte} INSERT INTO gf_inside (area_key, subject_id)
            SELECT area_key, printf('%05d/', k) || subject_id FROM src.inside1 CROSS JOIN k""",
        "CREATE TABLE gf_inside_keys (area_key INTEGER NOT NULL, subject_key INTEGER NOT NULL, PRIMARY KEY (area_key, subject_key)) WITHOUT ROWID",
        f"""{copies_cte} INSERT INTO gf_inside_keys (area_key, subject_key)
            SELECT area_key, k * {span} + subject_key FROM src.inside1 CROSS JOIN k""",
    ])
    return {"today": today, "compact": compact}


SCALED_INSIDE = {
    "today, gf_stays view": ("today", TODAY_INSIDE),
    "today, gf_stay_rows": ("today", "SELECT count(*), total(length(subject_id)) FROM gf_stay_rows WHERE area_id = :area AND state = 'INSIDE'"),
    "compact, gf_inside (area_key, subject_id)": ("compact", COMPACT_INSIDE),
    "compact, (area_key, subject_key) + dictionary": ("compact", KEYED_INSIDE),
    "compact, gf_stays view over the records": ("compact", TODAY_INSIDE),
}
