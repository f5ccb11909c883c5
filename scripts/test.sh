#!/usr/bin/env bash
# Runs every test: Swift unit and SQL tests (swift test), then the integration
# and reference tests (pytest) against the release binaries in dist/.
#   bash scripts/test.sh
# Installs what it needs: Debian packages (scripts/install-deps.sh) and a
# Python virtual environment .venv-test (pytest, shapely, pyproj, apsw).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh

venv=.venv-test
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.ready-1" ]; then
  rm -rf "$venv"
  # Debian's python3: its sqlite3 module can load extensions.
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check pytest shapely pyproj apsw numpy
  # Natural Earth 1:110m countries (public domain), shipped inside geopandas 0.14's wheel.
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$venv/wheels" geopandas==0.14.4
  touch "$venv/.ready-1"
fi

echo "== swift test"
swift test
echo "== pytest"
"$venv/bin/python" -m pytest -q -p no:cacheprovider Tests/integration
echo "== fuzz (20 s per harness; longer runs: bash scripts/fuzz.sh 3600)"
bash scripts/fuzz.sh 20
