"""Source files stay small: a Swift, Python or shell file of the repository
over 300 lines must say why near its top, in a comment line holding
"Longer than 300 lines:" and the reason. Prints the files that do not; exit 1
if any. Generated files (EmbeddedSQL.swift) are exempt.
    python3 scripts/check_file_lengths.py"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 300
EXEMPT = {"Sources/GeofenceSQL/Schema/EmbeddedSQL.swift"}


def main() -> int:
    files = subprocess.run(["git", "ls-files", "*.swift", "*.py", "*.sh"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    for name in files:
        if name in EXEMPT or not (ROOT / name).exists():
            continue
        lines = (ROOT / name).read_text(errors="replace").splitlines()
        if len(lines) > LIMIT and not any("Longer than 300 lines:" in line for line in lines[:15]):
            bad.append(f"{name}: {len(lines)} lines, and no 'Longer than 300 lines: <reason>' near its top")
    print("\n".join(bad) if bad else f"every file is at most {LIMIT} lines or says why")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
