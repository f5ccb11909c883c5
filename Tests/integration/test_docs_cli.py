"""docs/cli.md is the tool's own --help for every command, as built: a
changed option without a regenerated reference fails here
(`python3 scripts/cli_reference.py > docs/cli.md` after a deliberate change)."""
from conftest import CLI, ROOT, run


def test_the_cli_reference_is_the_help_of_this_build():
    generated = run("/usr/bin/python3", ROOT / "scripts" / "cli_reference.py", CLI).stdout
    assert generated.count("\n## geofence ") >= 17
    assert (ROOT / "docs" / "cli.md").read_text() == generated, \
        "docs/cli.md is stale: run python3 scripts/cli_reference.py > docs/cli.md"
