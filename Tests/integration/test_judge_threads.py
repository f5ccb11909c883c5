"""`geofence judge --threads N`: the same output whatever N, a clear error
for a number out of range, and a default that follows the CPUs the process
may use (its affinity mask), not the machine's count."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import CLI, gf, run
from test_judge_output_identity import NOTIFICATIONS, state, rows_of, workload


def test_threads_give_the_same_output(tmp_path):
    base, fixes, _, _ = workload(tmp_path)
    results = []
    for n in (1, 2, 3, 8):
        db = tmp_path / f"t{n}.db"
        shutil.copy(base, db)
        gf("judge", db, "--fixes", fixes, "--threads", n)
        results.append((rows_of(db, NOTIFICATIONS), state(db)))
    assert all(r == results[0] for r in results[1:])
    assert len(results[0][0]) > 3000


@pytest.mark.parametrize("value", ["0", "-2", "257", "two"])
def test_threads_out_of_range_is_refused(tmp_path, value):
    db = tmp_path / "d.db"
    gf("init", db)
    p = gf("judge", db, f"--threads={value}", check=False)
    assert p.returncode != 0 and "--threads" in p.stderr, p.stderr
    assert rows_of(db, "SELECT count(*) FROM gf_runs") == [(0,)]
    gf("judge", db, "--threads", "2")   # and a number in range is taken
    assert rows_of(db, "SELECT count(*) FROM gf_runs") == [(1,)]


def test_help_names_the_default():
    out = gf("judge", "--help").stdout
    assert "--threads" in out and "affinity" in out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs: this process may use one")
def test_default_follows_the_affinity_mask(tmp_path):
    """Limited to one CPU by its affinity mask, a judgement starts fewer
    threads than with two (counted by strace), and as many as --threads 1."""
    base, fixes, _, _ = workload(tmp_path)

    def threads_started(*prefix, extra=()):
        db = tmp_path / "a.db"
        shutil.copy(base, db)
        trace = tmp_path / "trace.txt"
        env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=0")   # no start-again for huge pages
        subprocess.run([*prefix, "strace", "-f", "-qq", "-e", "trace=clone,clone3", "-o", trace,
                        CLI, "judge", db, "--fixes", fixes, "--quiet", *extra], env=env, check=True, capture_output=True)
        # A thread is a clone that returned its id. Not every line naming clone:
        # when another thread makes a call meanwhile, strace splits one clone
        # into "<unfinished ...>" and "<... clone3 resumed> … = ID", and a clone
        # a signal interrupts shows "= ? ERESTARTNOINTR" before it is made again
        # (a busier machine counted 5 threads for 4 so).
        return sum(1 for line in trace.read_text().splitlines() if "clone" in line and re.search(r"= [1-9][0-9]*$", line))

    one_cpu = threads_started("taskset", "-c", "0")
    assert one_cpu < threads_started("taskset", "-c", "0,1")
    assert one_cpu == threads_started(extra=("--threads", "1"))
