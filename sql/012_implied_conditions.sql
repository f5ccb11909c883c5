-- Schema version 12: an area's default pair of conditions is implied by its
-- row, not stored as two (docs/catalog-size.md). Most catalogs give every
-- area the same two conditions, IN and OUT with nothing else set: at a
-- million fences those rows and their index were a seventh of the file, and
-- reading them was most of what an area's first touch cost gf_check.
--
--     SELECT * FROM gf_conditions WHERE area_id = 'A1';   -- as before: stored and implied rows
--     SELECT default_condition_id FROM gf_areas WHERE area_id = 'A1';   -- 41: IN is 41, OUT is 42
--
-- gf_areas.default_condition_id is the id of the area's implied IN
-- condition; its implied OUT is that id + 1; NULL: none implied. The ids
-- come from the same sequence as stored conditions' and never meet one.
-- Every other condition is a row of gf_condition_rows. gf_conditions is a
-- view of both with the columns and values it had as a table; INSERT,
-- UPDATE and DELETE on it go through the INSTEAD OF triggers below, which
-- first store an implied pair as rows when they meet one of its ids.

CREATE TABLE gf_condition_rows (
    condition_id           INTEGER PRIMARY KEY CHECK (condition_id >= 1),
    area_id                TEXT NOT NULL,
    timing                 TEXT NOT NULL CHECK (timing IN ('IN', 'OUT', 'DWELL')),
    dwell_s                INTEGER CHECK ((timing = 'DWELL') = (dwell_s IS NOT NULL) AND (dwell_s IS NULL OR dwell_s >= 0)),
    weekdays               TEXT,     -- e.g. 'Mon,Tue,Fri'; NULL = every day
    start_time             TEXT,     -- 'HH:MM' local, included
    end_time               TEXT,     -- 'HH:MM' local, excluded; start > end wraps midnight
    start_date             TEXT,     -- 'YYYY-MM-DD' local, inclusive
    end_date               TEXT,
    renotify_suppress_days INTEGER CHECK (renotify_suppress_days IS NULL OR renotify_suppress_days >= 0),
    timezone               TEXT      -- IANA; NULL = the area's, else default_timezone
);

-- The largest id it may hold leaves room for the OUT's id + 1.
ALTER TABLE gf_areas ADD COLUMN default_condition_id INTEGER
    CHECK (default_condition_id IS NULL OR (typeof(default_condition_id) = 'integer' AND default_condition_id BETWEEN 1 AND 9223372036854775806));

-- Both parts of the view seek by id: SQLite cannot seek the first index
-- through `default_condition_id + 1 = ?`, so the OUT's id has its own.
CREATE INDEX gf_areas_default_in ON gf_areas (default_condition_id) WHERE default_condition_id IS NOT NULL;
CREATE INDEX gf_areas_default_out ON gf_areas (default_condition_id + 1) WHERE default_condition_id IS NOT NULL;

-- @convert
-- (ImpliedConditionsConversion: each area's first stored default pair, an IN
-- and the OUT of the next id with nothing else set, becomes its
-- default_condition_id; every other row moves to gf_condition_rows; the
-- table gf_conditions, with its index and triggers, is dropped.)

CREATE INDEX gf_condition_rows_by_area ON gf_condition_rows (area_id, condition_id);

CREATE VIEW gf_conditions AS
SELECT condition_id, area_id, timing, dwell_s, weekdays, start_time, end_time, start_date, end_date, renotify_suppress_days, timezone
FROM gf_condition_rows
UNION ALL
SELECT default_condition_id, area_id, 'IN', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM gf_areas WHERE default_condition_id IS NOT NULL
UNION ALL
SELECT default_condition_id + 1, area_id, 'OUT', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM gf_areas WHERE default_condition_id IS NOT NULL;

-- A condition needs an existing area; removing an area removes its stored
-- conditions (its implied ones go with its row).
CREATE TRIGGER gf_condition_rows_need_area BEFORE INSERT ON gf_condition_rows
WHEN NOT EXISTS (SELECT 1 FROM gf_areas WHERE area_id = NEW.area_id)
BEGIN
    SELECT RAISE(ABORT, 'gf_conditions: area_id does not name an area in gf_areas');
END;

CREATE TRIGGER gf_condition_rows_need_area_on_update BEFORE UPDATE OF area_id ON gf_condition_rows
WHEN NOT EXISTS (SELECT 1 FROM gf_areas WHERE area_id = NEW.area_id)
BEGIN
    SELECT RAISE(ABORT, 'gf_conditions: area_id does not name an area in gf_areas');
END;

DROP TRIGGER IF EXISTS gf_areas_remove_conditions;
CREATE TRIGGER gf_areas_remove_conditions AFTER DELETE ON gf_areas
BEGIN
    DELETE FROM gf_condition_rows WHERE area_id = OLD.area_id;
END;

-- Ids stay unique across both parts. AFTER, not BEFORE: a row inserted
-- without an id has it only then.
CREATE TRIGGER gf_condition_rows_id_free AFTER INSERT ON gf_condition_rows
WHEN EXISTS (SELECT 1 FROM gf_areas WHERE default_condition_id BETWEEN NEW.condition_id - 1 AND NEW.condition_id)
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: gf_conditions.condition_id (an area''s implied default condition has this id)');
END;

CREATE TRIGGER gf_condition_rows_id_free_on_update AFTER UPDATE OF condition_id ON gf_condition_rows
WHEN EXISTS (SELECT 1 FROM gf_areas WHERE default_condition_id BETWEEN NEW.condition_id - 1 AND NEW.condition_id)
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: gf_conditions.condition_id (an area''s implied default condition has this id)');
END;

-- An import, which gives new areas ids above every id, drops this one for its inserts (ImportTriggers).
CREATE TRIGGER gf_areas_default_id_free AFTER INSERT ON gf_areas
WHEN NEW.default_condition_id IS NOT NULL AND (
    EXISTS (SELECT 1 FROM gf_condition_rows WHERE condition_id BETWEEN NEW.default_condition_id AND NEW.default_condition_id + 1)
    OR EXISTS (SELECT 1 FROM gf_areas WHERE default_condition_id BETWEEN NEW.default_condition_id - 1 AND NEW.default_condition_id + 1 AND id <> NEW.id))
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: gf_conditions.condition_id (gf_areas.default_condition_id names ids in use)');
END;

CREATE TRIGGER gf_areas_default_id_free_on_update AFTER UPDATE OF default_condition_id ON gf_areas
WHEN NEW.default_condition_id IS NOT NULL AND (
    EXISTS (SELECT 1 FROM gf_condition_rows WHERE condition_id BETWEEN NEW.default_condition_id AND NEW.default_condition_id + 1)
    OR EXISTS (SELECT 1 FROM gf_areas WHERE default_condition_id BETWEEN NEW.default_condition_id - 1 AND NEW.default_condition_id + 1 AND id <> NEW.id))
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: gf_conditions.condition_id (gf_areas.default_condition_id names ids in use)');
END;

-- An area's column set to NULL keeps its pair, as stored rows (a DELETE
-- through gf_conditions removes conditions). The INSTEAD OF triggers below
-- store an implied condition this way before anything else meets its id.
CREATE TRIGGER gf_areas_store_implied AFTER UPDATE OF default_condition_id ON gf_areas
WHEN OLD.default_condition_id IS NOT NULL AND NEW.default_condition_id IS NULL
BEGIN
    INSERT INTO gf_condition_rows (condition_id, area_id, timing)
    VALUES (OLD.default_condition_id, NEW.area_id, 'IN'), (OLD.default_condition_id + 1, NEW.area_id, 'OUT');
END;

-- An INSERT OR REPLACE of an area's row (a user's refresh of it) deletes
-- the old row without its delete triggers, and would take the pair with it
-- where the stored conditions stay: the pair is stored first, as above. (An
-- upsert's INSERT fires it too, as its conflict is found after BEFORE
-- triggers: the pair then stays, as rows. An import, which never replaces
-- a row and keeps the column in its upserts, drops it: ImportTriggers.)
CREATE TRIGGER gf_areas_replace_keeps_implied BEFORE INSERT ON gf_areas
WHEN NEW.default_condition_id IS NULL
BEGIN
    UPDATE gf_areas SET default_condition_id = NULL WHERE (area_id = NEW.area_id OR id = NEW.id) AND default_condition_id IS NOT NULL;
END;

-- Writing through the view, as on the table it was. Each first stores the
-- implied pair that holds the id it meets, if one does (the UPDATE finds
-- none for a stored row's id: no implied pair holds one), so that an
-- INSERT on that id meets a row (OR REPLACE replaces it, OR IGNORE keeps
-- it, else UNIQUE fails) and an UPDATE or DELETE changes a row and leaves
-- the other of the pair as it was. A new condition without an id takes
-- the one after the highest of both parts.
CREATE TRIGGER gf_conditions_insert INSTEAD OF INSERT ON gf_conditions
BEGIN
    UPDATE gf_areas SET default_condition_id = NULL WHERE default_condition_id BETWEEN NEW.condition_id - 1 AND NEW.condition_id;
    INSERT INTO gf_condition_rows (condition_id, area_id, timing, dwell_s, weekdays, start_time, end_time, start_date, end_date, renotify_suppress_days, timezone)
    VALUES (coalesce(NEW.condition_id, (
                SELECT iif(m < 9223372036854775807, m + 1,
                           RAISE(ABORT, 'gf_conditions: no condition_id is left after 9223372036854775807: give the new condition its id'))
                FROM (SELECT max(coalesce((SELECT max(condition_id) FROM gf_condition_rows), 0),
                                 coalesce((SELECT max(default_condition_id) FROM gf_areas WHERE default_condition_id IS NOT NULL) + 1, 0)) AS m))),
            NEW.area_id, NEW.timing, NEW.dwell_s, NEW.weekdays, NEW.start_time, NEW.end_time, NEW.start_date, NEW.end_date,
            NEW.renotify_suppress_days, NEW.timezone);
END;

CREATE TRIGGER gf_conditions_update INSTEAD OF UPDATE ON gf_conditions
BEGIN
    UPDATE gf_areas SET default_condition_id = NULL WHERE default_condition_id BETWEEN OLD.condition_id - 1 AND OLD.condition_id;
    UPDATE gf_condition_rows SET condition_id = NEW.condition_id, area_id = NEW.area_id, timing = NEW.timing, dwell_s = NEW.dwell_s,
        weekdays = NEW.weekdays, start_time = NEW.start_time, end_time = NEW.end_time, start_date = NEW.start_date, end_date = NEW.end_date,
        renotify_suppress_days = NEW.renotify_suppress_days, timezone = NEW.timezone
    WHERE condition_id = OLD.condition_id;
END;

CREATE TRIGGER gf_conditions_delete INSTEAD OF DELETE ON gf_conditions
BEGIN
    UPDATE gf_areas SET default_condition_id = NULL WHERE default_condition_id BETWEEN OLD.condition_id - 1 AND OLD.condition_id;
    DELETE FROM gf_condition_rows WHERE condition_id = OLD.condition_id;
END;

-- The catalog stamp (version 5) moves at every change of the stored rows;
-- an implied condition changes with its area's row, whose triggers move it.
CREATE TRIGGER gf_condition_rows_stamp_insert AFTER INSERT ON gf_condition_rows
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
CREATE TRIGGER gf_condition_rows_stamp_update AFTER UPDATE ON gf_condition_rows
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
CREATE TRIGGER gf_condition_rows_stamp_delete AFTER DELETE ON gf_condition_rows
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;

-- gf_last_notified (version 9) joined the suppressing conditions by id:
-- those are stored rows (an implied condition suppresses nothing).
DROP VIEW gf_last_notified;

CREATE VIEW gf_last_notified AS
SELECT st.subject_id AS subject_id, c.condition_id AS condition_id, json_extract(d.value, '$[1]') AS local_date
FROM gf_subject_state AS st, json_each(st.record, '$.days') AS d
JOIN gf_condition_rows AS c ON c.condition_id = json_extract(d.value, '$[0]') AND c.renotify_suppress_days > 0
UNION ALL
SELECT s.subject_id AS subject_id, g.condition_id AS condition_id,
       CASE WHEN g.day < -719528 THEN '-0001-12-31' WHEN g.day > 2932896 THEN '10000-01-01'
            ELSE date(g.day * 86400, 'unixepoch') END AS local_date
FROM (SELECT subject_key, condition_id, local_day AS day, max(id) FROM gf_notification_rows GROUP BY subject_key, condition_id) AS g
JOIN gf_subject_keys AS s ON s.subject_key = g.subject_key
WHERE EXISTS (SELECT 1 FROM gf_subject_state AS st WHERE st.subject_id = s.subject_id)
  AND NOT EXISTS (SELECT 1 FROM gf_condition_rows AS c WHERE c.condition_id = g.condition_id AND c.renotify_suppress_days > 0);
