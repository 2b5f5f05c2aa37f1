"""A time of day or a time zone as a group's admin types it, read into what the tallies store.

Admins type these on a phone, in Chinese as often as not: ``22：30`` with the input method's
colon, ``22点半``, ``北京时间``, ``UTC+8``, ``asia/shanghai``. Storage keeps one spelling of each
(``HH:MM`` and an IANA name, checked by ``storage.days``), so every way a person writes one is
turned into it here, or refused with ``days.CalendarError``.
"""

from __future__ import annotations

import re
import unicodedata
import zoneinfo
from datetime import time
from functools import cache

from storage import days

# 22:30, 22.30, 22点, 22点30(分), 22点半; NFKC has already made ２２：３０ into 22:30.
_CLOCK = re.compile(r"(\d{1,2})(?:[:.](\d{2})|点(?:(\d{1,2})分?|(半))?)", re.ASCII)
# UTC+8, GMT-5, +8, UTC+08:00: whole hours, the offsets the Etc/GMT zones name.
_OFFSET = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?00)?", re.ASCII | re.IGNORECASE)
# The places Chinese-speaking players most often name instead of a zone.
_PLACES = {
    "北京": "Asia/Shanghai", "北京时间": "Asia/Shanghai", "上海": "Asia/Shanghai", "中国": "Asia/Shanghai",
    "香港": "Asia/Hong_Kong", "澳门": "Asia/Macau", "台北": "Asia/Taipei", "台湾": "Asia/Taipei",
    "新加坡": "Asia/Singapore", "吉隆坡": "Asia/Kuala_Lumpur", "东京": "Asia/Tokyo", "首尔": "Asia/Seoul",
    "悉尼": "Australia/Sydney", "墨尔本": "Australia/Melbourne", "伦敦": "Europe/London",
    "巴黎": "Europe/Paris", "柏林": "Europe/Berlin", "纽约": "America/New_York",
    "洛杉矶": "America/Los_Angeles", "旧金山": "America/Los_Angeles", "温哥华": "America/Vancouver",
    "多伦多": "America/Toronto",
}


def read_clock(text: str) -> time:
    """``"22：30"``, ``"22点半"`` -> ``time(22, 30)``."""
    found = _CLOCK.fullmatch(unicodedata.normalize("NFKC", text).strip())
    if found:
        hours, minutes = int(found[1]), int(found[2] or found[3] or (30 if found[4] else 0))
        if hours < 24 and minutes < 60:
            return time(hours, minutes)
    raise days.CalendarError(f"not a time of day: {text!r}")


def read_time_zone(text: str) -> str:
    """The IANA name of the zone ``text`` names: a zone in any case, a place, or a UTC offset."""
    written = unicodedata.normalize("NFKC", text).strip()
    if written in _PLACES:
        return _PLACES[written]
    offset = _OFFSET.fullmatch(written)
    if offset:
        hours = int(offset[2])
        if hours == 0:
            return "UTC"
        if hours <= (14 if offset[1] == "+" else 12):
            return f"Etc/GMT{'-' if offset[1] == '+' else '+'}{hours}"  # POSIX signs: Etc/GMT-8 is UTC+8
    if written.upper() in ("UTC", "GMT"):
        return "UTC"
    known = _zones_by_folded_name().get(written.replace(" ", "_").casefold())
    if known is None:
        days.zone(written)  # a key the list leaves out, or CalendarError
        return written
    return known


def zone_label(name: str) -> str:
    """How a stored zone is shown: ``Etc/GMT-8`` reads backwards to people, so it is ``UTC+8``."""
    if name.startswith("Etc/GMT") and name[7:8] in ("+", "-"):
        return f"UTC{'-' if name[7] == '+' else '+'}{name[8:]}"
    return name


@cache
def _zones_by_folded_name() -> dict[str, str]:
    """Every zone this machine knows, by its name in lower case (read from disk once, when first
    a name is not written exactly)."""
    return {name.casefold(): name for name in zoneinfo.available_timezones()}
