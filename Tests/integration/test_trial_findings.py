"""What a new user's trial found (issues 35, 36): PostgreSQL's hour-only
offsets, offset-less times read in the catalog's zone said out loud, a
--columns mapping given twice or naming a header with a comma, and an init
that fails on a full disk leaving no empty file behind."""
import os

import pytest

from conftest import gf, small_tmpfs
from test_feeds import STANDARD, fence, notifications


def test_an_hour_only_offset_is_read_as_postgresql_writes_it(tmp_path):
    """PostgreSQL's timestamptz text is `2026-11-20 10:00:35.246912+09`:
    ISO 8601 allows ±HH alone; it is +09:00."""
    db = fence(tmp_path / "a")
    pg = tmp_path / "pg.csv"
    pg.write_text(STANDARD + "u1,2026-11-21 06:25:00.5+09,35,139,5\nu2,2026-11-20 21:26:00-00,35,139,5\n")
    got, p = notifications(db, tmp_path, "--fixes", pg)
    assert "0 invalid" in p.stdout, p.stderr
    assert [r[1] for r in got] == ["2026-11-20T21:25:00.500000Z", "2026-11-20T21:26:00Z"], got
    # A lone hour is a whole offset, never a half-read one.
    bad = tmp_path / "bad.csv"
    bad.write_text(STANDARD + "u1,2026-11-21 06:25:00+9,35,139,5\nu1,2026-11-21 06:26:00+09:,35,139,5\n")
    assert "2 invalid" in gf("judge", fence(tmp_path / "b"), "--fixes", bad).stdout


def test_times_read_in_the_catalogs_zone_are_counted_on_standard_error(tmp_path):
    """A catalog that set its zone for its conditions reads offset-less
    times as local time there: never silently (a feed of naive UTC times
    would be off by the offset)."""
    db = fence(tmp_path)
    gf("settings", db, "default_timezone", "Asia/Tokyo")
    feed = tmp_path / "naive.csv"
    feed.write_text(STANDARD + "u1,2026-11-21 06:25:00,35,139,5\nu1,2026-11-21 06:26:00Z,35,139,5\nu2,2026-11-21 06:27:00,35,139,5\n")
    p = gf("judge", db, "--fixes", feed)
    assert "2 times without a UTC offset read as local time in Asia/Tokyo (the catalog's default_timezone)" in p.stderr, p.stderr
    p = gf("judge", db, "--fixes", feed, "--quiet")
    assert "without a UTC offset" not in p.stderr


def test_columns_may_be_given_twice_and_name_a_header_with_commas(tmp_path):
    db = fence(tmp_path / "a")
    feed = tmp_path / "feed.csv"
    feed.write_text('"Device ID",Latitude,Longitude,"GPS Time","acc, m"\n'
                    "u1,35.1,139.0,1795132800,5\nu1,35.0,139.0,1795133100,5\n")
    got, p = notifications(db, tmp_path, "--fixes", feed, "--columns", "subject_id=Device ID,lat=Latitude,lon=Longitude",
                           "--columns", "ts=GPS Time,accuracy_m=acc, m")
    assert "2 judged" in p.stdout and len(got) == 1, (p.stdout, got)
    p = gf("judge", fence(tmp_path / "b"), "--fixes", feed, "--columns", "lat=Latitude", "--columns", "lat=Longitude", check=False)
    assert p.returncode != 0 and "lat is mapped twice" in p.stderr, p.stderr


def test_an_init_that_fails_on_a_full_disk_leaves_no_empty_file(tmp_path):
    with small_tmpfs(tmp_path / "small", "200k") as small:
        p = gf("init", small / "a.db", check=False)
        assert p.returncode != 0 and "a.db" in p.stderr, p.stderr
        assert not (small / "a.db").exists(), os.listdir(small)


def test_errors_point_at_the_line_a_quote_opened_on_and_one_line_of_ndjson(tmp_path):
    db = fence(tmp_path)
    csv_file = tmp_path / "q.csv"
    csv_file.write_text(STANDARD + "a,2026-01-01T00:00:00Z,1,1,5\nb,\"2026-01-01T00:00:00Z,1,1,5\nc,\"2026-01-01T00:00:01Z\",1,1,5\n")
    p = gf("judge", db, "--fixes", csv_file, check=False)
    assert p.returncode != 0 and "q.csv, line 3: field 2, quoted, goes on after its closing quote" in p.stderr, p.stderr
    assert "its quote opened on line 3 and closed on line 4" in p.stderr, p.stderr
    nd = tmp_path / "q.ndjson"
    nd.write_text('{"subject_id":"a","ts":"2026-01-01T00:00:00Z","lat":1,"lon":1,"accuracy_m":5}\n'
                  '{"subject_id":"a","ts":"2026-01-01T00:00:01Z","lat":1,"lon":1,"accuracy_m":5\n')
    p = gf("judge", db, "--fixes", nd)
    assert "row 2: line 2: not a JSON object (column 77: unexpected end of input" in p.stderr, p.stderr


@pytest.mark.parametrize("command", ["export", "judge"])
def test_a_compressed_out_name_is_refused_not_written_plain(tmp_path, command):
    db = fence(tmp_path)
    out = tmp_path / "x.geojson.gz"
    args = ["export", db] if command == "export" else ["judge", db, "--fixes", tmp_path / "none.csv"]
    p = gf(*args, "--out", out, check=False)
    assert p.returncode != 0 and "names a compressed file (.gz)" in p.stderr and "gzip" in p.stderr, p.stderr
    assert not out.exists()
