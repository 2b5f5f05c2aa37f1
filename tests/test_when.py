"""Times of day and time zones as admins type them on a phone, and zones on a machine without a
system time-zone database."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import time
from pathlib import Path

import pytest

from bot.when import read_clock, read_time_zone, zone_label
from storage import days


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("22:30", time(22, 30)),
        ("7:05", time(7, 5)),
        ("22：30", time(22, 30)),  # a Chinese input method's colon
        ("２２：３０", time(22, 30)),
        ("22.30", time(22, 30)),
        ("22点", time(22, 0)),
        ("22点半", time(22, 30)),
        ("7点05分", time(7, 5)),
        ("0:00", time(0, 0)),
    ],
)
def test_a_time_of_day_as_people_write_it(written: str, meant: time) -> None:
    assert read_clock(written) == meant


@pytest.mark.parametrize("written", ["24:00", "23:60", "7:5", "22:30:00", "noon", "", "二十二点", "22点61"])
def test_what_is_not_a_time_of_day_is_refused(written: str) -> None:
    with pytest.raises(days.CalendarError):
        read_clock(written)


def test_storage_refuses_a_digit_that_is_not_ascii_instead_of_failing() -> None:
    # "²".isdigit() is true and int("²") fails: the stored spelling is ASCII HH:MM only
    with pytest.raises(days.CalendarError):
        days.parse_summary_time("²:00")
    assert days.parse_summary_time("07:05") == time(7, 5)


@pytest.mark.parametrize(
    ("written", "zone", "shown"),
    [
        ("Asia/Shanghai", "Asia/Shanghai", "Asia/Shanghai"),
        ("asia/shanghai", "Asia/Shanghai", "Asia/Shanghai"),
        ("America/New York", "America/New_York", "America/New_York"),
        ("北京时间", "Asia/Shanghai", "Asia/Shanghai"),
        ("香港", "Asia/Hong_Kong", "Asia/Hong_Kong"),
        ("UTC+8", "Etc/GMT-8", "UTC+8"),  # the Etc zones' POSIX signs are the other way round
        ("gmt-5", "Etc/GMT+5", "UTC-5"),
        ("+8", "Etc/GMT-8", "UTC+8"),
        ("UTC+08:00", "Etc/GMT-8", "UTC+8"),
        ("ＵＴＣ＋８", "Etc/GMT-8", "UTC+8"),
        ("UTC", "UTC", "UTC"),
        ("UTC+0", "UTC", "UTC"),
    ],
)
def test_a_time_zone_as_people_name_it(written: str, zone: str, shown: str) -> None:
    assert read_time_zone(written) == zone
    assert zone_label(zone) == shown
    days.zone(zone)  # storage takes it


@pytest.mark.parametrize("written", ["Mars/Olympus", "UTC+15", "+5:30", "../../etc/passwd", "", "火星", "a" * 300])
def test_an_unknown_time_zone_is_refused(written: str) -> None:
    with pytest.raises(days.CalendarError):
        read_time_zone(written)


def test_zones_resolve_on_a_machine_without_a_system_time_zone_database() -> None:
    """Slim container images and Windows have no /usr/share/zoneinfo: the default zone, and those
    people name, come from the tzdata package then."""
    script = ("from bot.when import read_time_zone; from storage import days; "
              "print(days.zone('Asia/Shanghai').key, read_time_zone('纽约'), read_time_zone('europe/berlin'))")
    env = {**os.environ, "PYTHONTZPATH": ""}  # an empty search path: no system database
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.split() == ["Asia/Shanghai", "America/New_York", "Europe/Berlin"]
