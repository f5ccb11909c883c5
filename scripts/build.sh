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
cp "$bin/geofence" dist/geofence
cp "$bin/libGeofenceExtension.so" dist/libgeofence.so
strip --strip-unneeded dist/libgeofence.so
echo "built dist/geofence and dist/libgeofence.so" >&2
