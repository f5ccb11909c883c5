-- Schema version 11: notification ids given above a floor the deletes
-- raise, instead of by AUTOINCREMENT (docs/write-path.md). SQLite's
-- AUTOINCREMENT reads and writes its counter in sqlite_sequence at every
-- INSERT statement, and inside a gf_check call's savepoint that write costs
-- the call more than its own rows (~10,000 instructions a statement). A
-- rowid table without it gives the greatest id + 1, which is a new id as
-- long as the newest rows are never deleted; so every delete records the id
-- it took above the floor, and a writer finding the greatest id below the
-- floor gives its first row floor + 1 (`NotificationIds`). Ids are still
-- never handed out twice: a cursor (`WHERE id > :last_seen`) stays
-- exactly-once across deletes, prunes and `reset --notifications`.
--
-- One row: no notification id at or below `id` is given again.
CREATE TABLE gf_notification_floor (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    id        INTEGER NOT NULL CHECK (typeof(id) = 'integer')
);

-- @convert
-- (NotificationIdFloorConversion: AUTOINCREMENT taken off gf_notification_rows's
-- text, its counter the floor's first value.)

-- A delete above the floor raises it, and so does an id changed by hand
-- (through any of its names: `UPDATE … SET rowid = …` too, which an
-- `UPDATE OF id` trigger would not see).
-- The engine's own deletes (prune, reset) raise it to the greatest id
-- first, in one statement, so the trigger then costs their rows one small
-- lookup each.
CREATE TRIGGER gf_notification_rows_floor AFTER DELETE ON gf_notification_rows
WHEN OLD.id > coalesce((SELECT id FROM gf_notification_floor WHERE singleton = 1), 0)
BEGIN
    INSERT OR REPLACE INTO gf_notification_floor (singleton, id) VALUES (1, OLD.id);
END;
CREATE TRIGGER gf_notification_rows_floor_update AFTER UPDATE ON gf_notification_rows
WHEN OLD.id IS NOT NEW.id AND OLD.id > coalesce((SELECT id FROM gf_notification_floor WHERE singleton = 1), 0)
BEGIN
    INSERT OR REPLACE INTO gf_notification_floor (singleton, id) VALUES (1, OLD.id);
END;
