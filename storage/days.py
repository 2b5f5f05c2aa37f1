"""Local calendar days of a chat turned into UTC instants, and when a daily summary is due.

Tallies are per local calendar day in the chat's time zone (default Asia/Shanghai); the
ledger stores UTC milliseconds. These pure functions do the conversion with ``zoneinfo`` so
that days of 23 or 25 hours (daylight saving) still begin and end at local midnight.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from storage.interface import InvalidWrite


class CalendarError(InvalidWrite):
    """A time zone or a summary time that cannot be used; the message says which."""


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long for a file name
        raise CalendarError(f"unknown time zone {name!r} (use an IANA name such as Asia/Shanghai)") from None


def parse_summary_time(text: str) -> time:
    """``"23:59"`` -> ``time(23, 59)``; anything else is a clear error.

    >>> parse_summary_time("7:05")
    datetime.time(7, 5)
    """
    found = re.fullmatch(r"(\d{1,2}):(\d{2})", text.strip(), re.ASCII)
    if found and int(found[1]) < 24 and int(found[2]) < 60:
        return time(int(found[1]), int(found[2]))
    raise CalendarError(f"summary time must be HH:MM between 00:00 and 23:59, not {text!r}")


def to_ms(moment: datetime) -> int:
    """An aware datetime -> integer UTC milliseconds (naive datetimes are refused: ambiguous)."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: give storage aware datetimes (e.g. datetime.now(UTC))")
    return round(moment.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def day_start_ms(day: date, tz: ZoneInfo) -> int:
    """The UTC instant (ms) of local midnight at the start of ``day``."""
    return to_ms(datetime.combine(day, time(0), tzinfo=tz))


def day_bounds_ms(first: date, last: date, tz: ZoneInfo) -> tuple[int, int]:
    """Half-open UTC range [start of ``first``, start of the day after ``last``) in ms.

    >>> day_bounds_ms(date(2026, 1, 1), date(2026, 1, 1), ZoneInfo("Asia/Shanghai"))
    (1767196800000, 1767283200000)
    """
    if last < first:
        raise ValueError(f"empty date range: {first} .. {last}")
    return day_start_ms(first, tz), day_start_ms(last + timedelta(days=1), tz)


def local_date(moment: datetime, tz: ZoneInfo) -> date:
    return moment.astimezone(tz).date()


def summary_day(now: datetime, tz: ZoneInfo, summary_time: time) -> date:
    """The latest local day whose summary time has passed at ``now``.

    Before today's summary time that is yesterday, so a summary missed while the bot was
    down is still found when it comes back.
    """
    local = now.astimezone(tz)
    return local.date() if local.time() >= summary_time else local.date() - timedelta(days=1)


def next_summary_at(now: datetime, tz: ZoneInfo, summary_time: time) -> datetime:
    """The next instant (aware, in ``tz``) at which the daily summary should be posted."""
    local = now.astimezone(tz)
    candidate = datetime.combine(local.date(), summary_time, tzinfo=tz)
    if candidate <= local:
        candidate = datetime.combine(local.date() + timedelta(days=1), summary_time, tzinfo=tz)
    return candidate
