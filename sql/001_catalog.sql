-- Schema version 1: the fence catalog (behaviour §1, §5) and settings.
-- Applied by `geofence init` in one transaction, with SpatiaLite's
-- InitSpatialMetadata before it. Every later version is a file NNN_*.sql that
-- upgrades the one before it in place.

CREATE TABLE gf_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Database-wide settings; `geofence settings` reads and writes them.
CREATE TABLE gf_settings (
    key   TEXT PRIMARY KEY,
    value TEXT
);
INSERT INTO gf_settings (key, value) VALUES
    ('default_timezone', 'UTC'),      -- IANA name: local time for conditions without their own zone
    ('default_confidence', '0'),      -- CEP confidence p for areas without their own; 0 = plain containment
    ('import_updated_at', NULL);      -- update time of the last imported area set (the seed's guard)

-- Areas. Polygons and multipolygons live in `geom` (SRID 4326, R*Tree index).
-- Circles keep centre and radius exactly; their `geom` is a polygon that
-- encloses the circle, so the spatial index and GIS tools see them too.
CREATE TABLE gf_areas (
    id                 INTEGER PRIMARY KEY,
    area_id            TEXT NOT NULL UNIQUE,
    group_id           TEXT,
    name               TEXT,
    kind               TEXT NOT NULL CHECK (kind IN ('polygon', 'circle')),
    center_lat         REAL,
    center_lon         REAL,
    radius_m           REAL,
    in_accuracy_max_m  REAL CHECK (in_accuracy_max_m IS NULL OR in_accuracy_max_m >= 0),
    in_confirm_count   INTEGER NOT NULL DEFAULT 1 CHECK (in_confirm_count >= 1),
    out_accuracy_max_m REAL CHECK (out_accuracy_max_m IS NULL OR out_accuracy_max_m >= 0),
    out_confirm_count  INTEGER NOT NULL DEFAULT 1 CHECK (out_confirm_count >= 1),
    valid_from         TEXT,   -- UTC, YYYY-MM-DDTHH:MM:SS[.ffffff]Z: text order is time order
    valid_until        TEXT,
    confidence         REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence < 1)),
    timezone           TEXT,
    properties         TEXT NOT NULL DEFAULT '{}',   -- the feature's other properties, JSON
    CHECK ((kind = 'circle') = (radius_m IS NOT NULL AND center_lat IS NOT NULL AND center_lon IS NOT NULL)),
    CHECK (radius_m IS NULL OR radius_m > 0)
);
SELECT AddGeometryColumn('gf_areas', 'geom', 4326, 'MULTIPOLYGON', 'XY', 1);
SELECT CreateSpatialIndex('gf_areas', 'geom');

-- Notification conditions. A condition needs an existing area; removing an
-- area removes its conditions (triggers, so it holds without PRAGMA foreign_keys).
CREATE TABLE gf_conditions (
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
CREATE INDEX gf_conditions_by_area ON gf_conditions (area_id, condition_id);

CREATE TRIGGER gf_conditions_need_area BEFORE INSERT ON gf_conditions
WHEN NOT EXISTS (SELECT 1 FROM gf_areas WHERE area_id = NEW.area_id)
BEGIN
    SELECT RAISE(ABORT, 'gf_conditions: area_id does not name an area in gf_areas');
END;

CREATE TRIGGER gf_conditions_need_area_on_update BEFORE UPDATE OF area_id ON gf_conditions
WHEN NOT EXISTS (SELECT 1 FROM gf_areas WHERE area_id = NEW.area_id)
BEGIN
    SELECT RAISE(ABORT, 'gf_conditions: area_id does not name an area in gf_areas');
END;

CREATE TRIGGER gf_areas_remove_conditions AFTER DELETE ON gf_areas
BEGIN
    DELETE FROM gf_conditions WHERE area_id = OLD.area_id;
END;
