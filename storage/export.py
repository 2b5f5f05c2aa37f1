"""A chat's ledger as CSV, for spreadsheets and for settling up outside the bot.

One row per ledger row, oldest first, with the time both in UTC and in the chat's own
time zone (the one its daily tallies use), so the file can be checked against ``/today``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

from storage import days
from storage.models import LedgerEntry

HEADER = (
    "id",
    "time_utc",
    "time_local",
    "source",
    "source_id",
    "payer_id",
    "payer",
    "payee_id",
    "payee",
    "amount",
    "reason",
)


def write_ledger_csv(entries: Iterable[LedgerEntry], out: TextIO, timezone: str) -> int:
    """Write ``entries`` to ``out``; returns the number of rows written (header excluded)."""
    tz = days.zone(timezone)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    count = 0
    for entry in entries:
        if entry.hand_id is not None:
            source, source_id = "hand", entry.hand_id
        else:
            source, source_id = "record", entry.record_id
        writer.writerow(
            (
                entry.id,
                entry.at.isoformat(timespec="seconds"),
                entry.at.astimezone(tz).isoformat(timespec="seconds"),
                source,
                source_id,
                entry.payer_id,
                entry.payer_name,
                entry.payee_id,
                entry.payee_name,
                entry.amount,
                entry.reason,
            )
        )
        count += 1
    return count
