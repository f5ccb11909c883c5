#!/usr/bin/env bash
# Builds the Python package: dist/geofence-<version>-py3-none-linux_x86_64.whl,
# holding python/geofence/ (load, judge, locate), the extension libgeofence.so
# and the geofence command (also installed on PATH by pip).
#   bash scripts/wheel.sh
#   pip install dist/geofence-*.whl
# Neither binary needs a Swift toolchain (scripts/build.sh links the Swift
# runtime statically); both need the system's libsqlite3 (Debian: libsqlite3-0),
# which the manylinux policy does not allow, so the tag is the plain
# linux_<arch>. The wheel is made with Python's standard library only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
version=$(dist/geofence --version)
/usr/bin/python3 scripts/make_wheel.py "$version" dist
