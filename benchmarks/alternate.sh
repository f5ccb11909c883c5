#!/usr/bin/env bash
# Two (or more) builds of the CLI judged in alternation on one database and
# fixes file, in ABBA order, so that a slow stretch of a shared machine falls
# on every build alike; prints each build's wall and CPU times and medians.
#   [GF_JUDGE_ARGS=--explain] bash benchmarks/alternate.sh RUNS DB FIXES.csv BIN_A BIN_B [BIN ...]
# e.g. build two commits' dist/geofence, copy them aside, then
#   bash benchmarks/alternate.sh 8 medium.db fixes.csv /tmp/a/geofence /tmp/b/geofence
# A contender written BIN@OTHER.db judges OTHER.db instead of DB: two catalogs
# of the same areas (made with other `init --page-size`, say) by one build:
#   bash benchmarks/alternate.sh 4 a4k.db fixes.csv dist/geofence dist/geofence@a32k.db
# Each run starts from a reset state (the reset is not timed); every run must
# give the same transitions, which it checks.
set -euo pipefail
[ $# -ge 5 ] || { sed -n 2,12p "$0"; exit 2; }
runs=$1 db=$2 fixes=$3; shift 3
bins=("$@")
declare -A wall cpu
transitions=""
median() { tr ' ' '\n' <<< "$*" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for ((i = 1; i <= runs; i++)); do
  order=("${bins[@]}")
  if ((i % 2 == 0)); then
    order=(); for ((k = ${#bins[@]} - 1; k >= 0; k--)); do order+=("${bins[k]}"); done
  fi
  for b in "${order[@]}"; do
    bin=${b%%@*} target=$db
    [ "$bin" = "$b" ] || target=${b#*@}
    "$bin" reset "$target" --notifications >/dev/null
    # shellcheck disable=SC2086  # GF_JUDGE_ARGS: more options for every run (e.g. --explain), split on spaces
    read -r w u s < <({ /usr/bin/time -f "%e %U %S" "$bin" judge "$target" --fixes "$fixes" --quiet ${GF_JUDGE_ARGS:-} >/dev/null; } 2>&1 | tail -1)
    wall[$b]="${wall[$b]:-} $w"
    cpu[$b]="${cpu[$b]:-} $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')"
    t=$(sqlite3 "$target" "SELECT transitions FROM gf_runs ORDER BY run_id DESC LIMIT 1")
    [ -z "$transitions" ] || [ "$t" = "$transitions" ] || { echo "error: $b gave $t transitions, another build $transitions" >&2; exit 1; }
    transitions=$t
  done
done
for b in "${bins[@]}"; do
  echo "$b: wall${wall[$b]} (median $(median ${wall[$b]}) s); CPU${cpu[$b]} (median $(median ${cpu[$b]}) s)"
done
echo "transitions: $transitions (every run)"
