#!/usr/bin/env bash
# Installs what the project needs on Debian (bookworm), as root, once:
# SQLite and SpatiaLite (library, loadable module, shells), GDAL's ogrinfo for
# the interoperability tests, tzdata, python3-venv for the reference tests, and
# strace and util-linux (taskset, runuser) for the tests of threads and of users.
# Safe to run again: it does nothing when everything is there. apt-get gets one
# retry, because dpkg has been seen to fail transiently here. Packages named
# as arguments are installed too (scripts/test.sh: Java for the Spark tests).
set -euo pipefail
packages=(sqlite3 libsqlite3-dev libspatialite-dev libsqlite3-mod-spatialite spatialite-bin gdal-bin tzdata pkg-config python3-venv
          strace util-linux "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  attempt() { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null; }
  attempt || { echo "apt-get failed; retrying once" >&2; sleep 5; attempt; }
fi
command -v swift >/dev/null || { echo "error: swift is not on PATH (Swift 6 toolchain needed)" >&2; exit 1; }
