"""docs/sql.md: every ```sql block runs, in order, in the stock sqlite3 shell on
the catalog the page describes, and prints what the ```output block under it
says; a block followed by an ```error block must fail with that error text
(the shell's `Runtime error near line N: ` taken off), so every error the
page quotes is the build's. GEOFENCE_DOCS_WRITE=1 rewrites the output and
error blocks (after a deliberate change; review the diff)."""
import os
import re
from pathlib import Path

from conftest import EXTENSION, ROOT, SAMPLES, gf, run

DOC = ROOT / "docs" / "sql.md"
BLOCK = re.compile(r"```(sql|output|error)\n(.*?)```", re.S)
# What the sqlite3 shell puts before an error's own text.
SHELL_PREFIX = re.compile(r"^(Runtime|Parse) error near line \d+: ", re.M)


def blocks(text):
    """(sql, expected output or None, span of the output block, whether it is an
    error block) for every sql block."""
    found = list(BLOCK.finditer(text))
    out = []
    for i, m in enumerate(found):
        if m.group(1) != "sql":
            continue
        nxt = found[i + 1] if i + 1 < len(found) else None
        follows = nxt is not None and nxt.group(1) in ("output", "error") and text[m.end():nxt.start()].strip() == ""
        out.append((m.group(2), nxt.group(2) if follows else None, nxt.span(2) if follows else None,
                    follows and nxt.group(1) == "error"))
    return out


def test_every_sql_example_runs_and_prints_what_the_page_says(tmp_path):
    db = tmp_path / "fences.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--group", "AREA_GROUPID_001", "--with-default-conditions")
    gf("conditions", "import", db, SAMPLES / "conditions.csv")
    text = DOC.read_text()
    examples = blocks(text)
    assert len(examples) >= 15
    loads = examples[0][0]
    assert ".load dist/libgeofence" in loads
    rewritten, shift, failures = text, 0, []
    errors = 0
    for sql_text, expected, span, is_error in examples[1:]:
        script = loads.replace("dist/libgeofence", str(EXTENSION.with_suffix(""))) + sql_text
        p = run("sqlite3", "-bail", "-batch", db, input=script, cwd=ROOT, check=not is_error)
        got = p.stdout
        if is_error:
            errors += 1
            got = SHELL_PREFIX.sub("", p.stderr) if p.returncode != 0 else f"(no error; printed: {p.stdout!r})\n"
        if span is None:
            continue
        if got != expected:
            failures.append(f"--- {sql_text}\nexpected:\n{expected}got:\n{got}")
        a, b = span[0] + shift, span[1] + shift
        rewritten = rewritten[:a] + got + rewritten[b:]
        shift += len(got) - (span[1] - span[0])
    assert errors >= 2, "the page's quoted errors are examples with an error block"
    # GEOFENCE_DOCS_WRITE=1 writes what the build prints into docs/sql.md, for review in the
    # diff; the test still fails, so that a run that rewrote the page never passes.
    written = bool(failures) and bool(os.environ.get("GEOFENCE_DOCS_WRITE"))
    if written:
        DOC.write_text(rewritten)
    assert not failures, "\n".join(failures) + ("\n(docs/sql.md rewritten: review the diff)" if written else "")
