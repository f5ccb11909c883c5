"""Writes docs/cli.md, the command-line reference, from the tool's own --help:
    python3 scripts/cli_reference.py [dist/geofence] > docs/cli.md
Every subcommand (and sub-subcommand) gets its help text as the tool prints it,
so the reference cannot drift from the options (Tests/integration/test_docs_cli.py
regenerates it and compares)."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def helptext(cli, *words):
    # COLUMNS fixes the wrapping, so the text does not depend on the terminal.
    p = subprocess.run([cli, *words, "--help"], capture_output=True, text=True, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    return p.stdout.rstrip() + "\n"


def subcommands(text):
    if "SUBCOMMANDS:" not in text:
        return []
    tail = text.split("SUBCOMMANDS:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)\b", tail, re.M)]


def main(cli):
    out = ["# Command-line reference", "",
           "Generated from `geofence … --help` by `scripts/cli_reference.py`; the",
           "[command guide](commands.md) says what each is for.", ""]
    top = helptext(cli)
    out += ["## geofence", "", "```text", top.rstrip(), "```", ""]
    for name in subcommands(top):
        text = helptext(cli, name)
        out += [f"## geofence {name}", "", "```text", text.rstrip(), "```", ""]
        for sub in subcommands(text):
            out += [f"### geofence {name} {sub}", "", "```text", helptext(cli, name, sub).rstrip(), "```", ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "dist" / "geofence"))
