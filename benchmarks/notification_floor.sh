#!/usr/bin/env bash
# What SQLite itself takes to store a judged catalog's notifications, with no
# engine in the way: the rows of gf_notifications copied by the sqlite3 shell
# (INSERT … SELECT from a temporary table, one transaction, WAL) into
#   wide:   a table of gf_notifications' shape, its (subject_id, ts) index kept
#           during the insert, then the same with the index built afterwards;
#   narrow: the same rows with integer keys (a subject number, the time in
#           milliseconds, the area id as an integer, the transition as 0/1/2),
#           which a view could turn back into today's columns.
# The floor below which no writer of these rows can go on this machine.
#   bash benchmarks/notification_floor.sh JUDGED.db [PARENT_DIR]   # scratch: a new folder in it (default /tmp)
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,11p "$0"; exit 2; }
src=$(realpath "$1")
# A folder of its own, so that no file of the caller's is ever written over.
work=$(mktemp -d "${2:-/tmp}/notification-floor.XXXXXX")
trap 'rm -rf "$work"' EXIT
run() {  # $1: label, $2: index during the insert (1) or after (0)
  sqlite3 "$work/floor.db" <<SQL 2>&1 | awk -v l="$1" '/^Run Time/ {n++; t[n]=$4} END {printf "%-26s insert %6.3f s  commit %6.3f s  index %6.3f s  total %6.3f s\n", l, t[2], t[3], t[4], t[2]+t[3]+t[4]}'
PRAGMA journal_mode=WAL;
ATTACH '$src' AS s;
CREATE TEMP TABLE subj AS SELECT DISTINCT subject_id FROM s.gf_notifications ORDER BY 1;
CREATE TEMP TABLE src_wide AS SELECT id, run_id, subject_id, ts, area_id, condition_id, transition, lat, lon, accuracy_m FROM s.gf_notifications;
CREATE TEMP TABLE src_narrow AS SELECT n.id, n.run_id, subj.rowid, CAST((julianday(n.ts) - 2440587.5) * 86400000 AS INTEGER),
  CAST(n.area_id AS INTEGER), n.condition_id, CASE n.transition WHEN 'IN' THEN 0 WHEN 'OUT' THEN 1 ELSE 2 END, n.lat, n.lon, n.accuracy_m
  FROM s.gf_notifications n JOIN subj USING (subject_id);
DROP TABLE IF EXISTS wide; DROP TABLE IF EXISTS narrow;
CREATE TABLE wide (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_id TEXT NOT NULL, ts TEXT NOT NULL, area_id TEXT NOT NULL,
  condition_id INTEGER NOT NULL, transition TEXT NOT NULL CHECK (transition IN ('IN', 'OUT', 'DWELL')), lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL);
CREATE TABLE narrow (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, subject_key INTEGER NOT NULL, ts_ms INTEGER NOT NULL, area_key INTEGER NOT NULL,
  condition_id INTEGER NOT NULL, transition INTEGER NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL, accuracy_m REAL NOT NULL);
$( [ "$2" = 1 ] && echo "CREATE INDEX ${3}_i ON $3 (${4});" )
.timer on
BEGIN;  -- timed first, and dropped
INSERT INTO $3 SELECT * FROM src_$3;
COMMIT;
$( [ "$2" = 0 ] && echo "CREATE INDEX ${3}_i ON $3 (${4});" || echo "SELECT 1;" )
SQL
}
echo "$(sqlite3 "$src" 'SELECT count(*) FROM gf_notifications') rows of gf_notifications, sqlite3 $(sqlite3 --version | cut -d' ' -f1)"
for i in 1 2; do
  run "wide, index kept" 1 wide "subject_id, ts"
  run "wide, index afterwards" 0 wide "subject_id, ts"
  run "narrow, index kept" 1 narrow "subject_key, ts_ms"
  run "narrow, index afterwards" 0 narrow "subject_key, ts_ms"
done
