"""`geofence judge CATALOG --fixes F --state STATE` (docs/state.md): the
catalog opened read-only and never written, the subjects' state kept in a
file of `geofence state export`'s lines. Runs split by event time through
the state file give the notifications and the end state of one `geofence
judge` over all the fixes; the catalog's bytes and its folder's listing stay
as they were; a hostile state file is refused naming the file and the line,
and the old state is kept."""
import csv
import datetime
import io
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from conftest import CLI, Stopped, gf, run
from task_scenario import digest, fixes_with_ties, write_rows

COUNTS = re.compile(r"(\d+) fix(?:es)?: (\d+) judged, (\d+) stale, (\d+) invalid; (\d+) transitions?, (\d+) notifications?")


def split_by_time(rows):
    """The rows before the median time and the rest, each in file order
    (fixes of one time are on one side)."""
    times = sorted(datetime.datetime.fromisoformat(r[1]) for r in rows)
    cut = times[len(times) // 2]
    first = [r for r in rows if datetime.datetime.fromisoformat(r[1]) < cut]
    second = [r for r in rows if datetime.datetime.fromisoformat(r[1]) >= cut]
    return first, second


def csv_lines(*paths):
    """The data lines of notifications CSVs, each as written, in canonical
    order (subject and area by their bytes, then time and condition)."""
    lines = [line for path in paths for line in Path(path).read_text().splitlines(keepends=True)[1:]]
    def key(line):
        s, ts, area, cond = next(csv.reader(io.StringIO(line)))[:4]
        return (s.encode(), ts, area.encode(), int(cond))
    return sorted(lines, key=key)


def counts(stderr):
    """The counts of the runs' summary lines, summed."""
    found = [tuple(map(int, m.groups())) for m in COUNTS.finditer(stderr)]
    assert found, stderr
    return tuple(map(sum, zip(*found)))


def listing(folder):
    return sorted(os.listdir(folder))


@pytest.fixture
def split(tmp_path):
    """The scenario's catalog alone in a folder of its own, and its fixes
    (ties included) split by event time into two files."""
    db, rows = fixes_with_ties(tmp_path, subjects=6, per_subject=90)
    shared = tmp_path / "shared"
    shared.mkdir()
    catalog = shared / "fences.db"
    shutil.copy(db, catalog)
    first, second = split_by_time(rows)
    assert first and second
    paths = {name: tmp_path / f"{name}.csv" for name in ("all", "first", "second")}
    for name, part in (("all", rows), ("first", first), ("second", second)):
        write_rows(paths[name], part)
    return catalog, paths


def test_two_runs_through_a_state_file_give_one_judges_notifications_and_state_and_leave_the_catalog_as_it_was(tmp_path, split):
    catalog, fixes = split
    before, folder = digest(catalog), listing(catalog.parent)
    state = tmp_path / "state.jsonl"
    first = gf("judge", catalog, "--fixes", fixes["first"], "--state", state, "--out", tmp_path / "n1.csv")
    assert first.stdout == "" and "no state file yet" in first.stderr
    # The second run on a catalog nobody may write, in a folder nobody may write.
    catalog.chmod(0o444)
    catalog.parent.chmod(0o555)
    try:
        second = gf("judge", catalog, "--fixes", fixes["second"], "--state", state, "--out", tmp_path / "n2.csv")
    finally:
        catalog.parent.chmod(0o755)
    assert digest(catalog) == before
    assert listing(catalog.parent) == folder == ["fences.db"]

    reference = tmp_path / "reference.db"
    shutil.copy(catalog, reference)
    reference.chmod(0o644)
    one = gf("judge", reference, "--fixes", fixes["all"], "--out", tmp_path / "reference.csv")
    assert csv_lines(tmp_path / "n1.csv", tmp_path / "n2.csv") == csv_lines(tmp_path / "reference.csv")
    assert len(csv_lines(tmp_path / "reference.csv")) > 20
    assert state.read_bytes() == gf("state", "export", reference).stdout.encode()
    assert counts(first.stderr + second.stderr) == counts(one.stdout)
    # The notifications to standard output when there is no --out; the counts to standard error.
    again = tmp_path / "again.jsonl"
    out = gf("judge", catalog, "--fixes", fixes["all"], "--state", again)
    assert out.stdout == (tmp_path / "reference.csv").read_text()
    assert again.read_bytes() == state.read_bytes()
    assert digest(catalog) == before and listing(catalog.parent) == folder


@pytest.mark.parametrize("hostile", ["bad JSON", "another version", "a subject twice"])
def test_a_hostile_state_file_is_refused_naming_the_file_and_line_and_the_old_state_is_kept(tmp_path, split, hostile):
    catalog, fixes = split
    state = tmp_path / "state.jsonl"
    gf("judge", catalog, "--fixes", fixes["first"], "--state", state, "--out", tmp_path / "n1.csv")
    lines = state.read_text().splitlines(keepends=True)
    assert len(lines) >= 3
    if hostile == "bad JSON":
        lines[2] = lines[2][:40] + "\n"
    elif hostile == "another version":
        lines[2] = lines[2].replace('"record":{"v":1,', '"record":{"v":2,')
    else:
        lines[2] = lines[0]
    state.write_text("".join(lines))
    kept, before = state.read_bytes(), digest(catalog)
    p = gf("judge", catalog, "--fixes", fixes["second"], "--state", state, "--out", tmp_path / "n2.csv", check=False)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert f"error: {state}, line 3: " in p.stderr, p.stderr
    assert state.read_bytes() == kept
    assert not (tmp_path / "n2.csv").exists()
    assert sorted(os.listdir(tmp_path)) == sorted(["shared", "state.jsonl", "state.jsonl.lock", "n1.csv", "all.csv", "first.csv", "second.csv", "scenario.db",
                                                   "areas.geojson", "conditions.csv", "fixes.csv"])
    assert digest(catalog) == before and listing(catalog.parent) == ["fences.db"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_run_stopped_before_its_end_leaves_the_old_state_file(tmp_path, split, sig):
    """Stopped once its fixes are judged, before anything is put in place:
    the state file is as it was, the notifications file is not made, and
    the same run again gives what it would have given."""
    catalog, fixes = split
    state = tmp_path / "state.jsonl"
    gf("judge", catalog, "--fixes", fixes["first"], "--state", state, "--out", tmp_path / "n1.csv")
    kept = state.read_bytes()
    run_args = [CLI, "judge", catalog, "--fixes", fixes["second"], "--state", state, "--out", tmp_path / "n2.csv"]
    code, _, err = Stopped(run_args, "chunk").send(sig)
    assert code == -sig, (code, err)
    assert state.read_bytes() == kept
    assert not (tmp_path / "n2.csv").exists()
    if sig != signal.SIGKILL:  # after SIGKILL nothing can run: a .partial file stays
        assert not [n for n in os.listdir(tmp_path) if ".partial-" in n]
    assert listing(catalog.parent) == ["fences.db"]
    gf(*run_args[1:])
    reference = tmp_path / "reference.db"
    shutil.copy(catalog, reference)
    gf("judge", reference, "--fixes", fixes["all"], "--out", tmp_path / "reference.csv")
    assert csv_lines(tmp_path / "n1.csv", tmp_path / "n2.csv") == csv_lines(tmp_path / "reference.csv")
    assert state.read_bytes() == gf("state", "export", reference).stdout.encode()


@pytest.mark.parametrize("options, named", [
    (["--explain"], "--explain"),
    (["--keep"], "--keep"),
    (["--table", "my_fixes"], "--table"),
    (["--out", "STATE"], "--out and --state name the same file"),
    (["--fixes", "STATE"], "--fixes and --state name the same file"),
])
def test_options_that_need_the_catalog_written_are_refused_by_name(tmp_path, split, options, named):
    catalog, fixes = split
    state = tmp_path / "state.jsonl"
    options = [str(state) if o == "STATE" else o for o in options]
    head = [] if "--fixes" in options else ["--fixes", fixes["all"]]
    p = gf("judge", catalog, *head, "--state", state, *options, check=False)
    assert p.returncode != 0 and named in p.stderr, p.stderr
    p = gf("judge", catalog, "--state", state, check=False)
    assert p.returncode != 0 and "--state needs --fixes" in p.stderr, p.stderr
    assert not state.exists() and listing(catalog.parent) == ["fences.db"]


@pytest.mark.skipif(shutil.which("runuser") is None or os.geteuid() != 0,
                    reason="needs root and runuser to judge as the user nobody, for whom the catalog and its folder are read-only")
def test_a_user_who_cannot_write_the_catalog_or_its_folder_judges_with_a_state_file(tmp_path, split):
    """As root every file is writable: a user for whom the catalog and its
    folder are read-only shows that nothing is written (SQLite would fail
    to make a -wal or -shm there) and that the state goes to its own file."""
    catalog, fixes = split
    root = Path(tempfile.mkdtemp(prefix="gf-state-", dir="/tmp"))
    try:
        root.chmod(0o755)
        (root / "catalog").mkdir(mode=0o755)
        (root / "work").mkdir()
        (root / "work").chmod(0o777)
        shared = root / "catalog" / "fences.db"
        shutil.copy(catalog, shared)
        shared.chmod(0o444)
        tool = root / "geofence"
        shutil.copy2(CLI, tool)
        tool.chmod(0o755)
        for name in ("first", "second"):
            shutil.copy(fixes[name], root / "work" / f"{name}.csv")
        before = digest(shared)
        state = root / "work" / "state.jsonl"
        for name in ("first", "second"):
            run("runuser", "-u", "nobody", "--", tool, "judge", shared, "--fixes", root / "work" / f"{name}.csv",
                "--state", state, "--out", root / "work" / f"{name}-notes.csv")
        assert digest(shared) == before and listing(shared.parent) == ["fences.db"]
        reference = tmp_path / "reference.db"
        shutil.copy(catalog, reference)
        gf("judge", reference, "--fixes", fixes["all"])
        assert state.read_bytes() == gf("state", "export", reference).stdout.encode()
    finally:
        shutil.rmtree(root)
