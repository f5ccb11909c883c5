#!/usr/bin/env bash
# What the peer benchmarks need beyond the test environment: PostGIS (Debian)
# and psycopg, DuckDB with its spatial extension (PyPI, into .venv-test). apt-get retried once, as everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! [ -x /usr/lib/postgresql/15/bin/initdb ] || ! [ -f /usr/share/postgresql/15/extension/postgis.control ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  install() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15 postgresql-15-postgis-3 gdal-bin; }
  $sudo apt-get update -q || true
  install || { sleep 5; install; }
fi
[ -x .venv-test/bin/python ] || bash scripts/test.sh   # makes .venv-test
.venv-test/bin/python -c "import psycopg, matplotlib" 2>/dev/null || .venv-test/bin/pip install -q --disable-pip-version-check "psycopg[binary]" matplotlib
# DuckDB with its spatial extension from PyPI (the extension is loaded from
# the wheel's folder; nothing is downloaded at run time).
.venv-test/bin/python -c "import duckdb, duckdb_ext" 2>/dev/null \
  || .venv-test/bin/pip install -q --disable-pip-version-check duckdb==1.4.4 duckdb-ext-spatial==1.4.4.20260205
