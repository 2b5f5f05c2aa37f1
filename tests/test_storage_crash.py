"""Kill -9 a process that is writing hands, at random moments, and check the database each time
(a SQLite file, and a PostgreSQL database whose server sees its client vanish mid-transaction).

After every kill: the ledger sums to zero per hand, cached balances equal the ledger, no
hand is half-settled, voided hands are fully restored, and every unfinished hand's log
replays to a legal state with exactly the chips its actions booked. See crash_worker.py.
"""

from __future__ import annotations

import os

import pytest
from crash_worker import crash_loop

KILLS = int(os.environ.get("XUEZHAN_CRASH_KILLS", "50"))


@pytest.mark.both_backends
async def test_sigkill_at_random_moments_never_corrupts_the_books(db_url, backend):
    # PostgreSQL keeps a killed client's transaction atomic on the server's side; a third of the
    # kills are enough to show the worker's resume-and-retry path is right there too. Its writes take
    # a round trip to the server each, so each life plays longer before its kill, for hands to
    # reach their settlement.
    kills, linger = (KILLS, 0.25) if backend == "sqlite" else (KILLS // 3, 1.0)
    seen = await crash_loop(db_url, kills, seed=5, linger=linger)
    assert seen["kills"] == kills >= 16
    assert seen["writing"] >= 5 and seen["anytime"] >= 5
    assert seen["finished"] > 0 and seen["records"] > 0
