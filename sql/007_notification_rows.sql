-- Schema version 7: notifications stored as narrow integer rows
-- (docs/write-path.md, layout "b"), read through views with the columns and
-- values gf_notifications and gf_last_notified always had (docs/sql.md).
--
-- Subjects and areas are stored by key. A key is given the first time a
-- subject or an area notifies (by the engine's writer, in the run's own
-- transaction) and is never given to another id: an area removed and
-- imported again under the same id gets its old key back.
CREATE TABLE gf_subject_keys (
    subject_key INTEGER PRIMARY KEY,
    subject_id  TEXT UNIQUE NOT NULL
);
CREATE TABLE gf_area_keys (
    area_key INTEGER PRIMARY KEY,
    area_id  TEXT UNIQUE NOT NULL
);

-- One row per notification, in canonical order of id (subject, time, area,
-- condition within a run). AUTOINCREMENT: an id is never handed out twice,
-- even after the newest rows are deleted, so a consumer's cursor
-- (`WHERE id > :last_seen`) never skips a notification. transition: 0 IN,
-- 1 OUT, 2 DWELL (a BETWEEN, not an IN list: SQLite 3.40 builds an index per
-- row checked for one). local_day: days since 1970-01-01 of the
-- notification's local date in its condition's zone, what gf_last_notified
-- shows.
CREATE TABLE gf_notification_rows (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
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
);
CREATE INDEX gf_notification_rows_by_subject ON gf_notification_rows (subject_key, ts_us);

-- @convert
-- (NotificationRowsConversion: the old table's rows copied with their ids.)

DROP INDEX IF EXISTS gf_notifications_by_subject;
DROP TABLE gf_notifications;
-- Kept aside for version 8's upgrade, which reads the days a suppression
-- needs from it (it also holds days of notifications since deleted), and drops it.
ALTER TABLE gf_last_notified RENAME TO gf_last_notified_v6;

-- ts as Timestamp.storageText writes it: always six fraction digits,
-- floored for times before 1970.
CREATE VIEW gf_notifications AS
SELECT n.id AS id, n.run_id AS run_id, s.subject_id AS subject_id,
       strftime('%Y-%m-%dT%H:%M:%S', (n.ts_us - ((n.ts_us % 1000000 + 1000000) % 1000000)) / 1000000, 'unixepoch')
           || printf('.%06dZ', (n.ts_us % 1000000 + 1000000) % 1000000) AS ts,
       a.area_id AS area_id, n.condition_id AS condition_id,
       CASE n.transition WHEN 0 THEN 'IN' WHEN 1 THEN 'OUT' ELSE 'DWELL' END AS transition,
       n.lat AS lat, n.lon AS lon, n.accuracy_m AS accuracy_m
FROM gf_notification_rows AS n
JOIN gf_subject_keys AS s ON s.subject_key = n.subject_key
JOIN gf_area_keys AS a ON a.area_key = n.area_key;

-- Pruning: DELETE FROM gf_notifications WHERE … deletes the stored rows.
CREATE TRIGGER gf_notifications_delete INSTEAD OF DELETE ON gf_notifications
BEGIN
    DELETE FROM gf_notification_rows WHERE id = OLD.id;
END;

-- Per (subject, condition): the local date of its latest notification, the
-- one written last (the largest id: SQLite takes a bare column from the row
-- max() picks), as the table of versions 2 to 6 kept it.
-- A local date can fall outside the years 0000-9999 that date() writes only
-- for a time within 14 hours of either end of the storable range.
CREATE VIEW gf_last_notified AS
SELECT s.subject_id AS subject_id, g.condition_id AS condition_id,
       CASE WHEN g.day < -719528 THEN '-0001-12-31' WHEN g.day > 2932896 THEN '10000-01-01'
            ELSE date(g.day * 86400, 'unixepoch') END AS local_date
FROM (SELECT subject_key, condition_id, local_day AS day, max(id) FROM gf_notification_rows GROUP BY subject_key, condition_id) AS g
JOIN gf_subject_keys AS s ON s.subject_key = g.subject_key;
