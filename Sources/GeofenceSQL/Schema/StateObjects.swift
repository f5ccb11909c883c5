/// The state objects of a catalog of the current schema version, as
/// `sqlite_master.sql` holds them in a catalog `geofence init` made: what
/// `StateDatabase.create` makes in a state database, and what it requires
/// there before a call writes. The engine's own text, never an attached
/// catalog's (which a hostile file could extend with statements of its own).
/// Kept equal to a new catalog's by Tests/integration/test_check_state_apart.py.
enum StateObjects {
    static let all: [(name: String, sql: String)] = [
        ("gf_subject_keys", #"""
            CREATE TABLE gf_subject_keys (
                subject_key INTEGER PRIMARY KEY,
                subject_id  TEXT UNIQUE NOT NULL
            )
            """#),
        ("gf_area_keys", #"""
            CREATE TABLE gf_area_keys (
                area_key INTEGER PRIMARY KEY,
                area_id  TEXT UNIQUE NOT NULL
            )
            """#),
        ("gf_notification_rows", #"""
            CREATE TABLE gf_notification_rows (
                id           INTEGER PRIMARY KEY,
                run_id       INTEGER NOT NULL,
                subject_key  INTEGER NOT NULL,
                ts_us        INTEGER NOT NULL,   -- microseconds since 1970-01-01T00:00:00Z
                area_key     INTEGER NOT NULL,
                condition_id INTEGER NOT NULL,
                transition   INTEGER NOT NULL CHECK (transition BETWEEN 0 AND 2),
                lat          REAL NOT NULL,
                lon          REAL NOT NULL,
                accuracy_m   REAL NOT NULL,
                local_day    INTEGER NOT NULL
            )
            """#),
        ("gf_notification_rows_by_subject", #"""
            CREATE INDEX gf_notification_rows_by_subject ON gf_notification_rows (subject_key, ts_us)
            """#),
        ("gf_notification_floor", #"""
            CREATE TABLE gf_notification_floor (
                singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                id        INTEGER NOT NULL CHECK (typeof(id) = 'integer')
            )
            """#),
        ("gf_notification_rows_floor", #"""
            CREATE TRIGGER gf_notification_rows_floor AFTER DELETE ON gf_notification_rows
            WHEN OLD.id > coalesce((SELECT id FROM gf_notification_floor WHERE singleton = 1), 0)
            BEGIN
                INSERT OR REPLACE INTO gf_notification_floor (singleton, id) VALUES (1, OLD.id);
            END
            """#),
        ("gf_notification_rows_floor_update", #"""
            CREATE TRIGGER gf_notification_rows_floor_update AFTER UPDATE ON gf_notification_rows
            WHEN OLD.id IS NOT NEW.id AND OLD.id > coalesce((SELECT id FROM gf_notification_floor WHERE singleton = 1), 0)
            BEGIN
                INSERT OR REPLACE INTO gf_notification_floor (singleton, id) VALUES (1, OLD.id);
            END
            """#),
        ("gf_subject_state", #"""
            CREATE TABLE gf_subject_state (
                subject_id TEXT PRIMARY KEY,
                record     TEXT NOT NULL    -- SubjectRecord: docs/subject-record.md
            ) WITHOUT ROWID
            """#),
        ("gf_inside", #"""
            CREATE TABLE gf_inside (
                area_id    TEXT NOT NULL,
                subject_id TEXT NOT NULL,
                PRIMARY KEY (area_id, subject_id)
            ) WITHOUT ROWID
            """#),
        ("gf_runs", #"""
            CREATE TABLE gf_runs (
                run_id        INTEGER PRIMARY KEY,
                kind          TEXT NOT NULL,   -- 'judge' or 'check'
                source        TEXT,
                started_at    TEXT NOT NULL,
                fixes         INTEGER NOT NULL DEFAULT 0,
                judged        INTEGER NOT NULL DEFAULT 0,
                stale         INTEGER NOT NULL DEFAULT 0,
                invalid       INTEGER NOT NULL DEFAULT 0,
                transitions   INTEGER NOT NULL DEFAULT 0,
                notifications INTEGER NOT NULL DEFAULT 0,
                filtered      INTEGER NOT NULL DEFAULT 0
            , dropped_accuracy INTEGER NOT NULL DEFAULT 0, dropped_distance INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'done')
            """#),
        ("gf_explain", #"""
            CREATE TABLE gf_explain (
                run_id       INTEGER NOT NULL,
                subject_id   TEXT,
                ts           TEXT,
                area_id      TEXT,
                condition_id INTEGER,
                kind         TEXT NOT NULL,
                reason       TEXT NOT NULL
            , lat REAL, lon REAL)
            """#),
        ("gf_notifications", #"""
            CREATE VIEW gf_notifications AS
            SELECT n.id AS id, n.run_id AS run_id, s.subject_id AS subject_id,
                   strftime('%Y-%m-%dT%H:%M:%S', (n.ts_us - ((n.ts_us % 1000000 + 1000000) % 1000000)) / 1000000, 'unixepoch')
                       || printf('.%06dZ', (n.ts_us % 1000000 + 1000000) % 1000000) AS ts,
                   a.area_id AS area_id, n.condition_id AS condition_id,
                   CASE n.transition WHEN 0 THEN 'IN' WHEN 1 THEN 'OUT' ELSE 'DWELL' END AS transition,
                   n.lat AS lat, n.lon AS lon, n.accuracy_m AS accuracy_m
            FROM gf_notification_rows AS n
            JOIN gf_subject_keys AS s ON s.subject_key = n.subject_key
            JOIN gf_area_keys AS a ON a.area_key = n.area_key
            """#),
        ("gf_notifications_delete", #"""
            CREATE TRIGGER gf_notifications_delete INSTEAD OF DELETE ON gf_notifications
            BEGIN
                DELETE FROM gf_notification_rows WHERE id = OLD.id;
            END
            """#),
        ("gf_subjects", #"""
            CREATE VIEW gf_subjects AS
            SELECT subject_id,
                   json_extract(record, '$.last.ts') AS last_ts,
                   json_extract(record, '$.last.lat') AS last_lat,
                   json_extract(record, '$.last.lon') AS last_lon,
                   json_extract(record, '$.last.acc') AS last_accuracy_m,
                   json_extract(record, '$.judged') AS judged_fixes
            FROM gf_subject_state
            """#),
        ("gf_subjects_remove", #"""
            CREATE TRIGGER gf_subjects_remove INSTEAD OF DELETE ON gf_subjects
            BEGIN
                DELETE FROM gf_inside WHERE subject_id = OLD.subject_id AND area_id IN (
                    SELECT json_extract(t.value, '$.area') FROM gf_subject_state AS s, json_each(s.record, '$.stays') AS t
                    WHERE s.subject_id = OLD.subject_id);
                DELETE FROM gf_subject_state WHERE subject_id = OLD.subject_id;
            END
            """#),
    ]

    /// The CREATE text of the object `name` (one of `all`'s).
    static func sql(of name: String) -> String { all.first { $0.name == name }!.sql }
}
