#!/usr/bin/env bash
# The contributor's inner loop, without root and without installing anything:
# the release build into dist/, the Swift tests, and (when .venv-test exists,
# made once by scripts/test.sh) the integration tests named on the command line.
#   bash scripts/check.sh                                   # build + swift test
#   bash scripts/check.sh Tests/integration/test_judgement.py   # ... + those tests
# The full test command, which installs what it needs, is scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
swift test
if [ $# -gt 0 ]; then
  [ -x .venv-test/bin/python ] || { echo "error: .venv-test is missing; run bash scripts/test.sh once" >&2; exit 1; }
  .venv-test/bin/python -m pytest -q -p no:cacheprovider "$@"
fi
