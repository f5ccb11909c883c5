-- Schema version 6: where each explanation happened.
-- A gf_explain row is about one fix; `lat` and `lon` are that fix's
-- position as judged (WGS 84 degrees), so reasons can be listed and drawn
-- as GeoJSON Points (`geofence explain`). NULL where the fix had no readable
-- position (an invalid fix whose latitude or longitude is missing, not a
-- number or off the globe), and in rows written before this version.

ALTER TABLE gf_explain ADD COLUMN lat REAL;
ALTER TABLE gf_explain ADD COLUMN lon REAL;
