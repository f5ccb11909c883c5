"""Where `--out` may write: never over the database being read (or its -wal,
-shm, -journal file, under any name), directly into devices and FIFOs
instead of renaming over them, and every write or close error is a failed
command that leaves the old file (or none) and, for judge, an unchanged
database. The same rules hold for judge, export and locate."""
import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, SAMPLES, gf, run

FIXES = SAMPLES / "fixes.csv"
COMMANDS = {
    "judge": lambda db, out: ["judge", db, "--fixes", FIXES, "--out", out],
    "export": lambda db, out: ["export", db, "--out", out],
    "locate": lambda db, out: ["locate", db, "--fixes", FIXES, "--out", out],
}


def content(db):
    """The whole database as SQL text, and whether it is intact."""
    dump = run("sqlite3", db, ".dump").stdout
    assert run("sqlite3", db, "PRAGMA integrity_check;").stdout.strip() == "ok"
    return dump


def leftovers(directory):
    return sorted(p.name for p in Path(directory).iterdir() if ".partial" in p.name)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("target", ["database", "wal", "journal", "hard link", "wal of a hard link", "symlink",
                                    "through a symlinked directory"])
def test_out_never_writes_over_the_database(catalog, tmp_path, command, target):
    if target == "wal":
        run("sqlite3", catalog, "PRAGMA journal_mode=WAL;")
    out = {
        "database": catalog,
        "wal": Path(f"{catalog}-wal"),
        # Not there yet (rollback journal mode, no write in progress): caught by name.
        "journal": Path(f"{catalog}-journal"),
        "hard link": tmp_path / "another-name.db",
        # The live -wal of a writer that opened the database by another name.
        "wal of a hard link": tmp_path / "another-name.db-wal",
        "symlink": tmp_path / "link.db",
        "through a symlinked directory": tmp_path / "dirlink" / f"{catalog.name}-journal",
    }[target]
    if target == "hard link":
        os.link(catalog, out)
    elif target == "wal of a hard link":
        os.link(catalog, tmp_path / "another-name.db")
    elif target == "symlink":
        os.symlink(catalog, out)
    elif target == "through a symlinked directory":
        os.symlink(tmp_path, tmp_path / "dirlink")
    before = content(catalog)
    inode = os.stat(catalog).st_ino
    p = gf(*COMMANDS[command](catalog, out), check=False)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert "refusing to write over the" in p.stderr and "database being read" in p.stderr, p.stderr
    assert os.stat(catalog).st_ino == inode
    assert content(catalog) == before
    if target == "symlink":
        assert os.path.islink(out)
    if target in ("journal", "through a symlinked directory", "wal of a hard link"):
        assert not os.path.lexists(out)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("command", ["export", "locate"])
def test_standard_output_cannot_be_the_database(catalog, command):
    args = COMMANDS[command](catalog, "x")[:-2]
    before = content(catalog)
    with open(catalog, "ab") as stdout:
        p = subprocess.run([str(CLI), *map(str, args)], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=600)
    assert p.returncode == 1, p.stderr
    assert "standard output: refusing to write over the database being read" in p.stderr
    assert content(catalog) == before


def device_node(directory, name, minor):
    """A character device with the numbers of /dev/null (1, 3) or /dev/full
    (1, 7), made here so that a binary that renames over its --out replaces
    this node, never the machine's own /dev/null."""
    path = Path(directory) / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        with open(path, "w"):
            pass
    except PermissionError as e:
        pytest.skip(f"needs root (CAP_MKNOD) and a filesystem without nodev to make and open a device node: {e}")
    return path


def is_device(path, minor):
    st = os.lstat(path)
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, minor)


@pytest.mark.parametrize("command", COMMANDS)
def test_out_writes_into_devices_and_reports_their_errors(catalog, tmp_path, command):
    null, full = device_node(tmp_path, "null", 3), device_node(tmp_path, "full", 7)
    gf(*COMMANDS[command](catalog, null))
    assert is_device(null, 3)
    before = content(catalog)
    p = gf(*COMMANDS[command](catalog, full), check=False)
    assert p.returncode == 1, p.stderr
    assert f"{full}: cannot write: No space left on device" in p.stderr
    assert is_device(full, 7)
    if command == "judge":
        # judge writes a device (as a FIFO and standard output) only once its run
        # is committed, so a reader never gets the events of a run rolled back:
        # the run stands, and the message says how to list its notifications.
        assert "was committed: `geofence notifications" in p.stderr
        assert content(catalog) != before
    else:
        assert content(catalog) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("command", ["export", "locate"])
def test_write_errors_on_standard_output_fail(catalog, command):
    args = COMMANDS[command](catalog, "x")[:-2]
    with open("/dev/full", "w") as stdout:
        p = subprocess.run([str(CLI), *map(str, args)], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=600)
    assert p.returncode == 1, p.stderr
    assert "standard output: cannot write: No space left on device" in p.stderr


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs holding an earlier out.txt and filled to the last byte (.txt:
    a name of no format, which every command with --out writes in its own)."""
    mount = tmp_path / "small"
    mount.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"needs root and CAP_SYS_ADMIN to mount a small tmpfs to fill: {p.stderr.strip()}")
    try:
        (mount / "out.txt").write_text("earlier output\n")
        with open(mount / "filler", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
            try:
                while True:
                    f.write(b"\0")
            except OSError:
                pass
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_disk_fails_and_keeps_the_earlier_file(catalog, full_disk, command):
    before = content(catalog)
    out = full_disk / "out.txt"
    p = gf(*COMMANDS[command](catalog, out), check=False)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert f"{out}: cannot write: No space left on device" in p.stderr
    assert out.read_text() == "earlier output\n"
    assert sorted(q.name for q in full_disk.iterdir()) == ["filler", "out.txt"]
    assert content(catalog) == before


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case,message", [
    ("missing folder", "its folder 'nowhere' does not exist"),
    ("link into a missing folder", "its folder 'nowhere' does not exist"),
    ("a file as folder", "'plain' is not a folder"),
    ("link loop through a folder", "its folder 'loop' is behind a loop of symbolic links"),
])
def test_an_output_without_a_folder_to_go_in_says_why(catalog, tmp_path, monkeypatch, command, case, message):
    """Before: `cannot create a temporary file beside it: No such file or
    directory` (or `Too many levels of symbolic links`), naming no folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain").write_text("x")
    os.symlink("nowhere/x.txt", tmp_path / "dangling.txt")
    os.symlink("loop", tmp_path / "loop")
    out = {"missing folder": "nowhere/x.txt", "link into a missing folder": "dangling.txt",
           "a file as folder": "plain/x.txt", "link loop through a folder": "loop/x.txt"}[case]
    before = content(catalog)
    p = gf(*COMMANDS[command](catalog, out), check=False)
    assert p.returncode == 1, p
    assert f"error: {out}: {message}" in p.stderr, p.stderr
    assert content(catalog) == before
    assert not (tmp_path / "nowhere").exists() and (tmp_path / "plain").read_text() == "x"
