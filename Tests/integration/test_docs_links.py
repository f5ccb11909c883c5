"""The documents keep one job each, and their links hold (issue 37).

Every relative link in README.md, ARCHITECTURE.md, docs/ and benchmarks/
names a file of the repository and, with a `#fragment`, a heading of that
file (as GitHub makes anchors from headings). The README, ARCHITECTURE.md
and benchmarks/results.md stay within the lengths the issue sets, so a new
feature's documentation goes to a docs/ page with a line and a link in the
README, history goes to benchmarks/history.md, and detail to the pages of
each index. Nothing here runs a binary."""
import re
from pathlib import Path

from conftest import ROOT

LIMITS = {"README.md": 150, "ARCHITECTURE.md": 300, "benchmarks/results.md": 300}

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def documents():
    """The Markdown files a reader follows links through."""
    found = [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    found += sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "benchmarks").glob("*.md"))
    return [path for path in found if path.exists()]


def prose_lines(path):
    """The lines of a Markdown file outside fenced code blocks, where a
    bracket followed by a parenthesis is text, not a link."""
    inside = False
    for line in path.read_text().splitlines():
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        if not inside:
            yield line


def anchors(path):
    """The fragments GitHub gives the headings of a Markdown file: lower
    case, every character but letters, digits, spaces, hyphens and
    underscores dropped, spaces made hyphens; a repeated one gets -1, -2, …"""
    seen, result = {}, set()
    for line in prose_lines(path):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = "".join(c for c in match.group(1).lower() if c.isalnum() or c in " -_").replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def broken_links(path):
    """(link, what is wrong) for each relative link of `path` that does not resolve."""
    broken = []
    for line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto: — not the repository's
            name, _, fragment = target.partition("#")
            goal = (path.parent / name).resolve() if name else path
            if not goal.exists():
                broken.append((target, "no such file"))
            elif fragment and goal.suffix == ".md" and fragment not in anchors(goal):
                broken.append((target, f"no heading #{fragment} in {goal.relative_to(ROOT)}"))
    return broken


def test_every_relative_link_in_the_documents_resolves():
    problems = [f"{path.relative_to(ROOT)}: ({target}): {why}"
                for path in documents() for target, why in broken_links(path)]
    assert not problems, "\n".join(problems)


def test_the_documents_keep_within_their_lengths():
    """README ≤ 150 lines, ARCHITECTURE.md ≤ 300, benchmarks/results.md ≤ 300."""
    over = {name: n for name, limit in LIMITS.items()
            if (n := len((ROOT / name).read_text().splitlines())) > limit}
    assert not over, f"over their limits {LIMITS}: {over}; move detail to docs/ or benchmarks/history.md"


def test_the_anchor_rule_is_githubs():
    """The fragments this test expects are the ones GitHub makes."""
    page = ROOT / "docs" / "inputs.md"
    assert "other-formats-geopackage-shapefile-flatgeobuf-geojsonseq-" in anchors(page)
    assert "8-choices" in anchors(ROOT / "docs" / "behaviour.md")
