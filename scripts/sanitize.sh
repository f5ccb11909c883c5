#!/usr/bin/env bash
# Runs the Swift test suite under AddressSanitizer and ThreadSanitizer.
#   bash scripts/sanitize.sh            # both
#   bash scripts/sanitize.sh address    # one
# Each sanitizer builds into its own folder (.build-asan, .build-tsan), so the
# normal build is untouched. Takes a few minutes per sanitizer on 2 cores; not
# part of scripts/test.sh, run it before a release or after touching memory
# handling (the SQL surface, BLOB codecs, the shape cache).
# The tests load Debian's mod_spatialite and libsqlite3, which are not
# instrumented: ASan still checks every access our code makes; TSan sees our
# threads (the concurrency tests use processes, which it cannot see).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(address thread)
for s in "${sanitizers[@]}"; do
  case "$s" in
    address) dir=.build-asan ;;
    thread) dir=.build-tsan ;;
    *) echo "unknown sanitizer '$s' (address or thread)" >&2; exit 2 ;;
  esac
  echo "== swift test --sanitize=$s"
  # detect_leaks=0: the Swift runtime's own one-time allocations read as leaks.
  GEOFENCE_SANITIZE=$s ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 TSAN_OPTIONS=halt_on_error=1 \
    swift test --sanitize="$s" --scratch-path "$dir"
done
echo "sanitizers passed: ${sanitizers[*]}"
