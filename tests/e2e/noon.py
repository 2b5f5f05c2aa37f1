"""A time zone where it is about noon now, for tests that ask for "today's" or "this month's" figures.

The ledger stamps real times and the bot reads the real clock, so a test that books chips and then
asks for the day's figures fails if a local midnight falls in between: at 16:00 UTC for a chat on
Asia/Shanghai, the default. In a zone where it is about noon when the test starts, the day (and
so the month) ends about eleven hours later.
"""

from __future__ import annotations

from datetime import UTC, datetime


def zone_at_noon(now: datetime | None = None) -> str:
    """The fixed-offset IANA zone whose local time at ``now`` (default: the real clock) is 12:xx.

    >>> zone_at_noon(datetime(2026, 12, 2, 16, 5, tzinfo=UTC))  # 12:05 four hours west of Greenwich
    'Etc/GMT+4'
    >>> zone_at_noon(datetime(2026, 12, 2, 0, 30, tzinfo=UTC)), zone_at_noon(datetime(2026, 12, 2, 23, 0, tzinfo=UTC))
    ('Etc/GMT-12', 'Etc/GMT+11')
    """
    east = 12 - (now or datetime.now(UTC)).astimezone(UTC).hour  # hours east of Greenwich: -11 to +12
    return "Etc/GMT" if east == 0 else f"Etc/GMT{-east:+d}"  # POSIX signs: Etc/GMT-8 is eight hours east
