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
# A wheel carries the library and the command it was made with, and the
# Python package's sources: if any is not what dist/ and python/ now hold,
# the wheel would install another engine; it goes (scripts/wheel.sh makes it
# again).
for w in dist/geofence-*.whl; do
  [ -f "$w" ] || continue
  if ! /usr/bin/python3 - "$w" <<'PY' 2>/dev/null; then
import pathlib, sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
now = {"geofence/libgeofence.so": pathlib.Path("dist/.libgeofence.so.new"), "geofence/bin/geofence": pathlib.Path("dist/geofence")}
now.update({f"geofence/{p.name}": p for p in pathlib.Path("python/geofence").glob("*.py")})
packed = {n for n in wheel.namelist() if n.startswith("geofence/") and not n.endswith("/")}
sys.exit(packed != set(now) or any(wheel.read(n) != p.read_bytes() for n, p in now.items()))
PY
    rm -f "$w"; echo "removed $w, made from another build: bash scripts/wheel.sh makes it again" >&2
  fi
done
mv -f dist/.libgeofence.so.new dist/libgeofence.so
echo "built dist/geofence and dist/libgeofence.so" >&2
