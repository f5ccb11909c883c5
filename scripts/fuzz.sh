#!/usr/bin/env bash
# Coverage-guided fuzzing of the parsers that read untrusted bytes.
#   bash scripts/fuzz.sh            # 30 s per harness (what scripts/test.sh runs)
#   bash scripts/fuzz.sh 3600       # a longer run, an hour per harness
#   bash scripts/fuzz.sh 600 FuzzBlob
# Harnesses (fuzz/Sources): FuzzGeoJSON (streaming GeoJSON reader + area
# builder), FuzzBlob (SpatiaLite / gf_circle BLOB reader + the geometry the SQL
# functions run on it), FuzzTime (timestamp parser, TZif + POSIX-rule decoder),
# FuzzFixes (a fixes file, CSV or NDJSON, every row read and validated).
# Built with libFuzzer and AddressSanitizer. Each run starts from the seeds in
# fuzz/corpus/<name> (never modified) and keeps what it learns in
# out/fuzz/<name>; a crash, a leak, a hang (> 5 s on one input) or > 2 GiB of
# memory stops it with the reproducer in out/fuzz/artifacts/ and a non-zero
# exit. Reproduce one input:  fuzz/.build/release/FuzzBlob out/fuzz/artifacts/crash-…
# A reproducer that found a bug goes into fuzz/corpus/<name>, so every later
# run replays it first, and becomes a unit test of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzGeoJSON FuzzBlob FuzzTime FuzzFixes)

# lld: gold cannot link libFuzzer together with SwiftPM's renamed main.
swift build --package-path fuzz -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld

mkdir -p out/fuzz/artifacts
for t in "${targets[@]}"; do
  seeds="fuzz/corpus/$(echo "${t#Fuzz}" | tr 'A-Z' 'a-z')"
  work="out/fuzz/$t"
  mkdir -p "$work"
  echo "== $t: ${seconds}s from $seeds"
  log="$work.log"
  if ! "fuzz/.build/release/$t" "$work" "$seeds" \
      -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix=out/fuzz/artifacts/ -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "$t failed: reproducer in out/fuzz/artifacts/, full log $log" >&2
    exit 1
  fi
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$log" || true
done
