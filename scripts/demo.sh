#!/usr/bin/env bash
# The main job on the embedded default: a local SQLite file, the sample area
# set, the sample fixes, and which areas contain each fix — computed by the
# real sqlite3 shell with SpatiaLite and libgeofence.so loaded.
#   bash scripts/demo.sh            (writes out/demo.db; safe to run again)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
mkdir -p out
db=out/demo.db
rm -f "$db" "$db-wal" "$db-shm"
dist/geofence init "$db"
dist/geofence import "$db" samples/areas.geojson --group AREA_GROUPID_001 --replace --with-default-conditions
dist/geofence areas list "$db"
echo
echo "Which areas contain each sample fix (sqlite3 + mod_spatialite + libgeofence.so):"
sqlite3 "$db" <<'SQL'
.load mod_spatialite
.load dist/libgeofence
CREATE TEMP TABLE fixes (subject_id TEXT, ts TEXT, lat REAL, lon REAL, accuracy_m REAL);
.import --csv --skip 1 samples/fixes.csv fixes
.mode box
-- Candidates from the R*Tree (box widened by ~3x accuracy), verdict per area:
-- inside, or undecided when the fix's accuracy is above the area's limit or
-- its error circle straddles the boundary at the area's confidence.
SELECT f.subject_id, f.ts, f.lat, f.lon, f.accuracy_m,
       coalesce((SELECT group_concat(a.area_id || CASE v WHEN 1 THEN '' ELSE ' (undecided)' END, ', ')
                 FROM (SELECT a.area_id, gf_area_contains(a.area_id, f.lat, f.lon, f.accuracy_m) AS v
                       FROM gf_areas AS a
                       WHERE a.id IN (SELECT pkid FROM idx_gf_areas_geom
                                      WHERE xmax >= f.lon - f.accuracy_m * 3 / 90000.0 AND xmin <= f.lon + f.accuracy_m * 3 / 90000.0
                                        AND ymax >= f.lat - f.accuracy_m * 3 / 110000.0 AND ymin <= f.lat + f.accuracy_m * 3 / 110000.0)
                       ORDER BY a.area_id) AS a
                 WHERE v IS NOT 0), '-') AS inside
FROM fixes AS f
ORDER BY f.subject_id, f.ts;
SQL
