"""What the new-user trial of issue 37 found (the test fails on the build it
tried): `geofence state` showed stored times with their six fraction digits,
where every other listing shows the short form."""
import json

from conftest import gf
from test_feeds import STANDARD, fence


def test_state_shows_times_as_every_listing_does(tmp_path):
    db = fence(tmp_path)
    feed = tmp_path / "f.csv"
    feed.write_text(STANDARD + "u1,2026-11-20T08:20:00Z,35,139,5\nu1,2026-11-20T08:21:00.25Z,35,139,5\n")
    gf("judge", db, "--fixes", feed)
    [row] = json.loads(gf("state", db, "--json").stdout)
    assert (row["last_ts"], row["entered_at"]) == ("2026-11-20T08:21:00.250000Z", "2026-11-20T08:20:00Z"), row
    listed = json.loads(gf("notifications", db, "--json").stdout)
    assert listed[0]["ts"] == row["entered_at"]
