#!/usr/bin/env bash
# The test command on a loaded machine, as a slower, busier CI runner is:
# ROUNDS runs (default 3) with two CPU-burning processes beside the tests
# (stress-ng --cpu 2), then one with the whole suite pinned to one core
# (taskset -c 0). Stops at the first failure; prints each run's time.
#   bash scripts/test-loaded.sh        # 3 loaded runs + 1 pinned run
#   bash scripts/test-loaded.sh 1      # 1 loaded run + 1 pinned run
# Installs stress-ng (Debian) if it is missing, as root, with one retry.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
if ! command -v stress-ng >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  attempt() { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq stress-ng >/dev/null; }
  attempt || { echo "apt-get failed; retrying once" >&2; sleep 5; attempt; }
fi
log=${TMPDIR:-/tmp}/geofence-test-loaded
mkdir -p "$log"
burner=""
stop_burner() { [ -n "$burner" ] && kill "$burner" 2>/dev/null && wait "$burner" 2>/dev/null; burner=""; }
trap stop_burner EXIT
for k in $(seq 1 "$rounds"); do
  stress-ng --cpu 2 --quiet & burner=$!
  start=$(date +%s)
  if ! bash scripts/test.sh >"$log/loaded-$k.log" 2>&1; then
    echo "loaded run $k FAILED after $(( $(date +%s) - start )) s: $log/loaded-$k.log" >&2; tail -30 "$log/loaded-$k.log" >&2; exit 1
  fi
  stop_burner
  echo "loaded run $k of $rounds (stress-ng --cpu 2 beside it) passed in $(( $(date +%s) - start )) s: $(grep -E '^[0-9]+ passed' "$log/loaded-$k.log" | tail -1)"
done
start=$(date +%s)
if ! taskset -c 0 bash scripts/test.sh >"$log/one-core.log" 2>&1; then
  echo "one-core run FAILED after $(( $(date +%s) - start )) s: $log/one-core.log" >&2; tail -30 "$log/one-core.log" >&2; exit 1
fi
echo "one-core run (taskset -c 0) passed in $(( $(date +%s) - start )) s: $(grep -E '^[0-9]+ passed' "$log/one-core.log" | tail -1)"
