#!/usr/bin/env bash
# Release-builds the CLI and the loadable extension into dist/:
#   dist/geofence          the command-line tool
#   dist/libgeofence.so    the SQLite extension
# Both are self-contained: they need libc, libstdc++ and the system's libsqlite3,
# never a Swift toolchain (the executable links the Swift runtime statically;
# the extension does through its -static-stdlib linker setting). The same flag
# goes to every call, so they share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-c release --static-swift-stdlib)
swift build "${flags[@]}" --product geofence >&2
swift build "${flags[@]}" --product GeofenceExtension >&2
bin=$(swift build "${flags[@]}" --show-bin-path)
mkdir -p dist
# Copy, then rename: a running geofence (a benchmark, a judgement) keeps its
# old file, and a process loading the extension never sees half a library.
cp "$bin/geofence" dist/.geofence.new && mv -f dist/.geofence.new dist/geofence
cp "$bin/libGeofenceExtension.so" dist/.libgeofence.so.new
strip --strip-unneeded dist/.libgeofence.so.new
# A wheel carries the library it was made with: if the library just built is
# another, the wheel would install the old engine; it goes (scripts/wheel.sh
# makes it again).
for w in dist/geofence-*.whl; do
  [ -f "$w" ] || continue
  if ! /usr/bin/python3 -c 'import sys, zipfile; sys.exit(zipfile.ZipFile(sys.argv[1]).read("geofence/libgeofence.so") != open(sys.argv[2], "rb").read())' \
       "$w" dist/.libgeofence.so.new 2>/dev/null; then
    rm -f "$w"; echo "removed $w, made with another build: bash scripts/wheel.sh makes it again" >&2
  fi
done
mv -f dist/.libgeofence.so.new dist/libgeofence.so
echo "built dist/geofence and dist/libgeofence.so" >&2
