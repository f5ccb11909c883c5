#!/usr/bin/env bash
# Release-builds the CLI and the loadable extension into dist/:
#   dist/geofence          the command-line tool
#   dist/libgeofence.so    the SQLite extension (self-contained: no Swift runtime needed)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product geofence >&2
swift build -c release --product GeofenceExtension >&2
bin=$(swift build -c release --show-bin-path)
mkdir -p dist
# Copy, then rename: a running geofence (a benchmark, a judgement) keeps its
# old file, and a process loading the extension never sees half a library.
cp "$bin/geofence" dist/.geofence.new && mv -f dist/.geofence.new dist/geofence
cp "$bin/libGeofenceExtension.so" dist/.libgeofence.so.new
strip --strip-unneeded dist/.libgeofence.so.new
mv -f dist/.libgeofence.so.new dist/libgeofence.so
echo "built dist/geofence and dist/libgeofence.so" >&2
