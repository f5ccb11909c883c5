-- Schema version 5: a stamp of the catalog's content.
-- A connection that caches the catalog between calls (gf_check's session)
-- must notice every change to it, including one made and then rolled back on
-- that same connection, which no change counter shows. So every change of
-- an area, a condition or a setting replaces `catalog_stamp` with a random
-- value, inside the changing transaction: a rollback restores the old stamp
-- along with the old rows, and a cache is used only while the stamp it was
-- read with is the one the database shows.
-- A file handed to the engine may already carry triggers of these names (a
-- hostile or damaged catalog): they are replaced, never trusted. The same
-- texts are the reference that CatalogStamp checks and repairs.

INSERT OR REPLACE INTO gf_meta (key, value) VALUES ('catalog_stamp', random());

DROP TRIGGER IF EXISTS gf_areas_stamp_insert;
CREATE TRIGGER gf_areas_stamp_insert AFTER INSERT ON gf_areas
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_areas_stamp_update;
CREATE TRIGGER gf_areas_stamp_update AFTER UPDATE ON gf_areas
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_areas_stamp_delete;
CREATE TRIGGER gf_areas_stamp_delete AFTER DELETE ON gf_areas
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_conditions_stamp_insert;
CREATE TRIGGER gf_conditions_stamp_insert AFTER INSERT ON gf_conditions
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_conditions_stamp_update;
CREATE TRIGGER gf_conditions_stamp_update AFTER UPDATE ON gf_conditions
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_conditions_stamp_delete;
CREATE TRIGGER gf_conditions_stamp_delete AFTER DELETE ON gf_conditions
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_settings_stamp_insert;
CREATE TRIGGER gf_settings_stamp_insert AFTER INSERT ON gf_settings
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_settings_stamp_update;
CREATE TRIGGER gf_settings_stamp_update AFTER UPDATE ON gf_settings
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
DROP TRIGGER IF EXISTS gf_settings_stamp_delete;
CREATE TRIGGER gf_settings_stamp_delete AFTER DELETE ON gf_settings
BEGIN UPDATE gf_meta SET value = random() WHERE key = 'catalog_stamp'; END;
