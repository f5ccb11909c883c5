-- Schema version 3: counts of fixes the device filter dropped
-- (`geofence judge --device-filter`, the positioning settings a phone location library offers).

ALTER TABLE gf_runs ADD COLUMN dropped_accuracy INTEGER NOT NULL DEFAULT 0;  -- worse than the accuracy tier
ALTER TABLE gf_runs ADD COLUMN dropped_distance INTEGER NOT NULL DEFAULT 0;  -- closer than the distance filter
