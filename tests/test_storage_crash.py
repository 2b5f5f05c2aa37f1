"""Kill -9 a process that is writing hands, at random moments, and check the file each time.

After every kill: the ledger sums to zero per hand, cached balances equal the ledger, no
hand is half-settled, voided hands are fully restored, and every unfinished hand's log
replays to a legal state with exactly the chips its actions booked. See crash_worker.py.
"""

from __future__ import annotations

import os

from crash_worker import crash_loop

KILLS = int(os.environ.get("XUEZHAN_CRASH_KILLS", "50"))


async def test_sigkill_at_random_moments_never_corrupts_the_books(tmp_path):
    seen = await crash_loop(str(tmp_path / "crash.db"), KILLS, seed=5)
    assert seen["kills"] == KILLS >= 50
    assert seen["writing"] >= 10 and seen["anytime"] >= 10
    assert seen["finished"] > 0 and seen["records"] > 0
