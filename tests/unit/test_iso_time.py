"""``iso_time`` writes exactly what ``datetime.isoformat`` does, for any datetime the API shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from streamjobs.services.resources import iso_time

ZONES = st.sampled_from(
    [UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-9, minutes=-30)), None]
)


@given(st.datetimes(timezones=ZONES))
def test_iso_time_is_isoformat(moment: datetime) -> None:
    assert iso_time(moment) == moment.isoformat()


def test_whole_seconds_have_no_fraction() -> None:
    assert iso_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05+00:00"
