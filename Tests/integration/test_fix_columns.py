"""Fix columns (`--fixes F.fixcols`), the binary door the Python wrappers
use: written here from the layout docs/inputs.md gives (not by the
wrapper's code), they must judge and locate exactly as the same fixes in a
CSV file do, carry every double's bits, and a file that breaks the layout
anywhere is an error naming the file that leaves the catalog as it was."""
import csv
import struct

import pytest

from conftest import SAMPLES, gf, run


def text_column(values):
    data = b"".join(v.encode("utf-8") if isinstance(v, str) else v for v in values)
    offsets, at = [0], 0
    for v in values:
        at += len(v.encode("utf-8") if isinstance(v, str) else v)
        offsets.append(at)
    return 2, struct.pack(f"<{len(offsets)}Q", *offsets) + data


def float_column(values):
    return 1, struct.pack(f"<{len(values)}d", *values)


def fixcols(path, rows, columns):
    """Writes `columns` (name -> (kind, data bytes)) as a fix columns file of `rows` rows."""
    head = b"GFFIXES1" + struct.pack("<QI", rows, len(columns))
    for name, (kind, data) in columns.items():
        n = name.encode("utf-8")
        head += struct.pack("<I", len(n)) + n + struct.pack("<BQ", kind, len(data))
    path.write_bytes(head + b"".join(data for _, data in columns.values()))
    return path


def catalog(folder):
    """A new catalog in `folder` with the sample areas and default conditions."""
    db = folder / "fences.db"
    gf("init", db)
    gf("import", db, SAMPLES / "areas.geojson", "--with-default-conditions")
    return db


def sample_fixes():
    with open(SAMPLES / "fixes.csv", newline="") as f:
        return list(csv.DictReader(f))


def sample_columns(rows):
    return {"subject_id": text_column([r["subject_id"] for r in rows]), "ts": text_column([r["ts"] for r in rows]),
            "lat": float_column([float(r["lat"]) for r in rows]), "lon": float_column([float(r["lon"]) for r in rows]),
            "accuracy_m": float_column([float(r["accuracy_m"]) for r in rows])}


def test_columns_judge_and_locate_as_the_same_csv_does(tmp_path):
    rows = sample_fixes()
    cols = fixcols(tmp_path / "fixes.fixcols", len(rows), sample_columns(rows))
    by_csv, by_columns = catalog(tmp_path / "a"), catalog(tmp_path / "b")
    a = gf("judge", by_csv, "--fixes", SAMPLES / "fixes.csv", "--out", tmp_path / "a.csv")
    b = gf("judge", by_columns, "--fixes", cols, "--out", tmp_path / "b.csv")
    assert a.stdout == b.stdout and "invalid" in a.stdout
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert len((tmp_path / "a.csv").read_text().splitlines()) > 3
    located = [gf("locate", by_csv, "--fixes", f).stdout for f in (SAMPLES / "fixes.csv", cols)]
    assert located[0] == located[1] and located[0].count("\n") > 3


@pytest.fixture(autouse=True)
def _folders(tmp_path):
    """The folders each test's catalogs go in."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir(exist_ok=True)


def test_every_double_arrives_with_its_bits(tmp_path):
    """-0.0, 1e-300, 0.1 + 0.2, the smallest subnormal and a latitude one ulp
    off a round number reach the engine as they were: the notification's lat
    is the fix's, bit for bit."""
    db = catalog(tmp_path / "a")
    lat = 35.70980000000001
    lats, lons = [-0.0, 1e-300, 0.1 + 0.2, 5e-324, lat], [139.774, -0.0, 1e-300, 0.1 + 0.2, 139.774]
    cols = {"subject_id": text_column(["s"] * 5), "ts": text_column([f"2026-11-20T09:0{k}:00+09:00" for k in range(5)]),
            "lat": float_column(lats), "lon": float_column(lons), "accuracy_m": float_column([0.1 + 0.2, 15.0, 1e-300, 5e-324, 15.0])}
    gf("judge", db, "--fixes", fixcols(tmp_path / "f.fixcols", 5, cols), "--out", tmp_path / "o.csv")
    lines = (tmp_path / "o.csv").read_text().splitlines()
    assert len(lines) > 1 and all(float(line.split(",")[5]) == lat for line in lines[1:]), lines
    located = gf("locate", db, "--fixes", tmp_path / "f.fixcols").stdout
    assert located.splitlines()[1:] and all(line.startswith("5,") for line in located.splitlines()[1:]), located


def test_missing_values_and_spaces_are_read_as_a_csv_field_is(tmp_path):
    """NaN is a missing number and empty text a missing value (invalid fixes,
    with the CSV reasons); spaces at the ends of a time are dropped, as in a
    CSV field, while a subject keeps them."""
    db = catalog(tmp_path / "a")
    nan = float("nan")
    cols = {"subject_id": text_column(["a", "b", "", " c "]),
            "ts": text_column(["2026-11-20T09:00:00+09:00", "", "2026-11-20T09:00:00+09:00", " 2026-11-20T09:00:00+09:00 "]),
            "lat": float_column([nan, 35.7, 35.7, 35.7098]), "lon": float_column([139.77, 139.77, 139.77, 139.774]),
            "accuracy_m": float_column([10, 10, 10, 15])}
    p = gf("judge", db, "--fixes", fixcols(tmp_path / "f.fixcols", 4, cols), "--explain")
    assert "4 fixes: 1 judged, 0 stale, 3 invalid" in p.stdout, p.stdout
    assert "the first: row 1: missing or NaN latitude" in p.stderr, p.stderr
    subjects = run("sqlite3", db, "SELECT quote(subject_id) FROM gf_subjects").stdout
    assert subjects == "' c '\n", subjects


def test_columns_are_found_by_the_feeds_names(tmp_path):
    rows = sample_fixes()
    named = dict(zip(["device_id", "timestamp", "latitude", "longitude", "acc"], sample_columns(rows).values()))
    db = catalog(tmp_path / "a")
    cols = fixcols(tmp_path / "f.fixcols", len(rows), named)
    p = gf("judge", db, "--fixes", cols, check=False)
    assert p.returncode != 0 and "f.fixcols: the file has no column 'subject_id'" in p.stderr, p.stderr
    p = gf("judge", db, "--fixes", cols, "--columns", "subject_id=device_id,ts=timestamp,lat=latitude,lon=longitude,accuracy_m=acc")
    assert f"{len(rows)} fixes" in p.stdout


def broken_files():
    """(name, file bytes, what the message says): the layout broken at each place."""
    rows = [{"subject_id": "a", "ts": "2026-11-20T09:00:00+09:00", "lat": "35.7", "lon": "139.7", "accuracy_m": "5"}] * 3
    good = sample_columns(rows)
    head = b"GFFIXES1" + struct.pack("<QI", 3, 5)
    body = b""
    for name, (kind, data) in good.items():
        body += struct.pack("<I", len(name)) + name.encode() + struct.pack("<BQ", kind, len(data))
    datas = b"".join(d for _, d in good.values())
    whole = head + body + datas
    subject_offsets = struct.pack("<4Q", 0, 1, 2, 3)
    yield "empty", b"", "ends inside its first 8 bytes"
    yield "magic", b"GFFIXES2" + whole[8:], "does not begin with GFFIXES1"
    yield "cut header", whole[:30], "not a fix columns file"
    yield "cut data", whole[:-1], "ends inside"
    yield "trailing", whole + b"x", "1 bytes follow the last column"
    yield "rows", b"GFFIXES1" + struct.pack("<QI", 1 << 60, 5) + whole[20:], "cannot fit"
    yield "columns", b"GFFIXES1" + struct.pack("<QI", 3, 1 << 30) + whole[20:], "cannot fit"
    yield "kind", whole.replace(b"lat\x01", b"lat\x07", 1), "kind 7"
    yield "length", whole.replace(b"lat\x01" + struct.pack("<Q", 24), b"lat\x01" + struct.pack("<Q", 16), 1), "not 3 doubles"
    yield "order", whole.replace(subject_offsets, struct.pack("<4Q", 0, 2, 1, 3), 1), "out of order"
    yield "first offset", whole.replace(subject_offsets, struct.pack("<4Q", 1, 1, 2, 3), 1), "out of order"
    yield "last offset", whole.replace(subject_offsets, struct.pack("<4Q", 0, 1, 2, 2), 1), "not the end of its text"
    yield "huge offset", whole.replace(subject_offsets, struct.pack("<4Q", 0, 1, 2, 1 << 62), 1), "past its text"
    twice = (b"GFFIXES1" + struct.pack("<QI", 3, 6) + body + struct.pack("<I", 3) + b"lat" + struct.pack("<BQ", 1, 24)
             + datas + struct.pack("<3d", 1, 2, 3))
    yield "twice", twice, "column 'lat' appears twice"


@pytest.mark.parametrize("name,data,said", list(broken_files()), ids=[b[0] for b in broken_files()])
def test_a_broken_file_is_an_error_naming_it_and_changes_nothing(tmp_path, name, data, said):
    db = catalog(tmp_path / "a")
    before = run("sqlite3", db, "SELECT count(*) FROM gf_runs; SELECT count(*) FROM gf_notifications;").stdout
    f = tmp_path / "broken.fixcols"
    f.write_bytes(data)
    for verb in (["judge", db, "--fixes", f], ["locate", db, "--fixes", f]):
        p = gf(*verb, check=False)
        assert p.returncode != 0 and str(f) in p.stderr and said in p.stderr, (name, p.stderr)
        assert "Fatal error" not in p.stderr and "Traceback" not in p.stderr
    assert run("sqlite3", db, "SELECT count(*) FROM gf_runs; SELECT count(*) FROM gf_notifications;").stdout == before


def test_text_that_is_not_utf8_fails_the_run_naming_the_row(tmp_path):
    db = catalog(tmp_path / "a")
    cols = sample_columns(sample_fixes()[:3])
    cols["subject_id"] = text_column(["a", b"\xff\xfe", "c"])
    p = gf("judge", db, "--fixes", fixcols(tmp_path / "f.fixcols", 3, cols), check=False)
    assert p.returncode != 0 and "row 2: column 'subject_id' is not UTF-8 text" in p.stderr, p.stderr
    assert run("sqlite3", db, "SELECT count(*) FROM gf_runs").stdout.strip() == "0"
