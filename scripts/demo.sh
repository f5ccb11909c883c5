#!/usr/bin/env bash
# The main job on the embedded default: a local SQLite file (out/demo.db), the
# sample area set with IN/OUT conditions plus a few filtered ones, the sample
# fixes of two subjects judged in one batch, and the notifications it produced.
#   bash scripts/demo.sh            (safe to run again: it starts from a new file)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
mkdir -p out
db=out/demo.db
rm -f "$db" "$db-wal" "$db-shm" out/notifications.csv
gf=dist/geofence
$gf init "$db"
$gf settings "$db" default_timezone Asia/Tokyo >/dev/null
$gf import "$db" samples/areas.geojson --group AREA_GROUPID_001 --replace --with-default-conditions
$gf conditions import "$db" samples/conditions.csv
echo
$gf areas list "$db"
echo
$gf conditions list "$db"
echo
echo "== judging samples/fixes.csv"
$gf judge "$db" --fixes samples/fixes.csv --explain --out out/notifications.csv
echo
echo "== notifications (the seed app's layout)"
$gf notifications "$db" --seed
echo
echo "== why the rest did not count or notify"
sqlite3 -box "$db" "SELECT subject_id, ts, area_id, condition_id, kind, reason FROM gf_explain ORDER BY rowid"
echo
echo "== the same question in SQL: which areas contain each fix (sqlite3 + mod_spatialite + libgeofence.so)"
sqlite3 "$db" <<'SQL'
.load mod_spatialite
.load dist/libgeofence
CREATE TEMP TABLE fixes (subject_id TEXT, ts TEXT, lat REAL, lon REAL, accuracy_m REAL);
.import --csv --skip 1 samples/fixes.csv fixes
.mode box
SELECT f.subject_id, f.ts, f.accuracy_m,
       coalesce((SELECT group_concat(a.area_id || CASE v WHEN 1 THEN '' ELSE ' (undecided)' END, ', ')
                 FROM (SELECT a.area_id, gf_area_contains(a.area_id, f.lat, f.lon, f.accuracy_m) AS v
                       FROM gf_areas AS a
                       WHERE a.id IN (SELECT pkid FROM idx_gf_areas_geom
                                      WHERE xmax >= f.lon - 0.01 AND xmin <= f.lon + 0.01
                                        AND ymax >= f.lat - 0.01 AND ymin <= f.lat + 0.01)
                       ORDER BY a.area_id) AS a
                 WHERE v IS NOT 0), '-') AS inside
FROM fixes AS f
ORDER BY f.subject_id, gf_time(f.ts);
SQL
echo
echo "== regions for a phone at Tokyo Station: the 2 nearest areas as iOS CLCircularRegions, plus the re-sync region"
"$gf" regions "$db" --lat 35.6812 --lon 139.7671 -n 2 --platform ios
echo
echo "notifications also written to out/notifications.csv"
