"""Progress of long commands: on a terminal, counts, rate and ETA rewritten in
place, then one final line with the time taken; on a pipe, nothing."""
import os
import pty
import subprocess

import pytest

from conftest import CLI, SAMPLES, gf


def stderr_on_a_terminal(*args):
    try:
        master, slave = pty.openpty()
    except OSError as e:  # a container or CI runner may have no terminal devices
        pytest.skip(f"needs a terminal: pty.openpty() failed: {e}")
    try:
        p = subprocess.run([str(CLI), *map(str, args)], stdout=subprocess.PIPE, stderr=slave, timeout=600)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return p.returncode, b"".join(chunks).decode()
    finally:
        os.close(master)


def test_judge_and_import_show_one_final_line_on_a_terminal(tmp_path):
    db = tmp_path / "p.db"
    gf("init", db)
    rc, err = stderr_on_a_terminal("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    assert rc == 0
    finals = [line for line in err.split("\r") if "100%" in line]
    assert len(finals) == 1 and finals[0].startswith("importing ") and " MB  100%" in finals[0] and " in " in finals[0]
    rc, err = stderr_on_a_terminal("judge", db, "--fixes", SAMPLES / "fixes.csv")
    assert rc == 0
    finals = [line for line in err.split("\r") if "100%" in line]
    assert len(finals) == 1 and finals[0].startswith("judging 11 / 11 fixes  100%") and "fixes/s" in finals[0], err


def test_nothing_on_a_pipe(tmp_path):
    db = tmp_path / "p.db"
    gf("init", db)
    p = gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    assert "importing" not in p.stderr and "%" not in p.stderr
    p = gf("judge", db, "--fixes", SAMPLES / "fixes.csv")
    assert "judging" not in p.stderr and "%" not in p.stderr + p.stdout


def test_an_import_from_gdal_counts_features_and_shows_one_final_line(tmp_path):
    gpkg = tmp_path / "areas.gpkg"
    subprocess.run(["ogr2ogr", "-f", "GPKG", gpkg, SAMPLES / "areas.geojson"], check=True, capture_output=True)
    db = tmp_path / "g.db"
    gf("init", db)
    rc, err = stderr_on_a_terminal("import", db, gpkg)
    assert rc == 0
    # A GeoPackage knows its feature count: progress in features, with a percentage.
    finals = [line for line in err.split("\r") if " in " in line]
    assert len(finals) == 1 and finals[0].startswith("importing ") and " features  100%" in finals[0], err
