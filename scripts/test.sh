#!/usr/bin/env bash
# Runs every test: Swift unit and SQL tests (swift test), then the integration
# and reference tests (pytest) against the release binaries in dist/.
#   bash scripts/test.sh
# Installs what it needs: Debian packages (scripts/install-deps.sh, with Java 17
# for the Spark tests) and a Python virtual environment .venv-test (pytest,
# shapely, pyproj, apsw, pyspark, pyarrow, pandas).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh openjdk-17-jre-headless
bash scripts/build.sh

venv=.venv-test
# Made anew whenever the pinned requirements change.
ready="$venv/.ready-$(cat Tests/requirements.txt Tests/wheel-requirements.txt | sha1sum | cut -c1-12)"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$ready" ]; then
  rm -rf "$venv"
  # Debian's python3: its sqlite3 module can load extensions.
  /usr/bin/python3 -m venv "$venv"
  pip=("$venv/bin/pip" -q --disable-pip-version-check)
  with_retry() { "$@" || { echo "pip failed; retrying once" >&2; sleep 5; "$@"; }; }
  with_retry "${pip[@]}" install -r Tests/requirements.txt
  # For test_wheel.py's own venv (installed from here, no index at test time), and Natural
  # Earth 1:110m countries (public domain), shipped inside geopandas 0.14's wheel.
  with_retry "${pip[@]}" download -d "$venv/wheels" -r Tests/wheel-requirements.txt
  with_retry "${pip[@]}" download --no-deps -d "$venv/wheels" geopandas==0.14.4
  touch "$ready"
fi
echo "== swift test"
swift test
echo "== pytest"
# -rs: every skip is printed with its reason; a test that hangs fails after 15 minutes.
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider --timeout=900 Tests/integration
echo "== fuzz (20 s per harness; longer runs: bash scripts/fuzz.sh 3600)"
bash scripts/fuzz.sh 20
