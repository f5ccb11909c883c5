"""What `judge --resume` records of its input (gf_run_inputs): the file's
size and SHA-256, which must be the file's own, whatever its length falls on
(the hash's 64-byte blocks, the 1 MiB reads): a wrong hash would take two
different files for one and skip the second."""
import hashlib
import os
import sqlite3

from conftest import gf
from test_judge_out_streamed import catalog

HEADER = "subject_id,ts,lat,lon,accuracy_m,pad"


def recorded(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT size, sha256 FROM gf_run_inputs ORDER BY run_id").fetchall()


def test_the_recorded_hash_is_the_files_own_at_every_length_around_a_block(tmp_path):
    db = catalog(tmp_path, ["A"])
    expected = []
    for size in [*range(55, 73), *range(119, 130)]:
        f = tmp_path / f"h{size}.csv"
        f.write_text(HEADER + "x" * (size - len(HEADER) - 1) + "\n")
        gf("judge", db, "--fixes", f, "--resume")
        expected.append((size, hashlib.sha256(f.read_bytes()).hexdigest()))
    # Past one read of 1 MiB: rows of fixes, with a pad column.
    big = tmp_path / "big.csv"
    big.write_text(HEADER + "\n" + "".join(f"s{k % 50},2026-01-05T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z,0,0,5,{'p' * (k % 7)}\n"
                                            for k in range(40_000)))
    assert big.stat().st_size > (1 << 20) + 64
    gf("judge", db, "--fixes", big, "--resume", "--chunk-fixes", "5000")
    expected.append((big.stat().st_size, hashlib.sha256(big.read_bytes()).hexdigest()))
    assert recorded(db) == expected


def test_a_pipe_is_refused_for_resume(tmp_path):
    """Hashing a pipe would consume the fixes the run is to read (and a resumed run reads its input again)."""
    db = catalog(tmp_path, ["A"])
    fifo = tmp_path / "fixes.csv"
    os.mkfifo(fifo)
    p = gf("judge", db, "--fixes", fifo, "--resume", check=False)
    assert p.returncode == 1 and "--resume needs a regular file" in p.stderr, p.stderr
