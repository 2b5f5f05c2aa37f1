"""A process that takes send turns as fast as ``bot.shared_limits.SharedTurns`` gives them.

Run as ``python tests/rate_limit_worker.py DB START GROUP_SENDS PRIVATE_SENDS``: at the wall-clock
time START it asks for every turn at once (one task each, as a busy worker's sends do), with small
limits (``RATES``) so that a test is short, and prints one JSON line: ``[[turn, chat], ...]``,
each turn the moment the database granted (seconds since the epoch, by the database's clock) —
not when the task woke up after it, which a loaded machine delays by any amount.
``tests/test_shared_limits.py`` runs two at once and checks the merged turns keep the limits.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

ROOT = __file__.rsplit("/tests/", 1)[0]
if ROOT not in sys.path:  # run as a script: make the project importable
    sys.path.insert(0, ROOT)

from bot.shared_limits import SharedTurns  # noqa: E402

GROUP = -100123
RATES = {"overall": (20.0, 1.0), "group": (5.0, 1.0)}  # (turns, per seconds)


async def main(db: str, start: float, group_sends: int, private_sends: int) -> list[tuple[float, int]]:
    turns = SharedTurns(db, overall=RATES["overall"], group=RATES["group"])
    await turns.open()

    async def send(chat: int) -> tuple[float, int]:
        at = await turns.take(chat, group=chat < 0)
        if at is None:
            raise RuntimeError("the database gave no turn")
        return at, chat

    chats = [GROUP] * group_sends + [1000 + i for i in range(private_sends)]
    await asyncio.sleep(max(0.0, start - time.time()))
    try:
        return list(await asyncio.gather(*(send(chat) for chat in chats)))
    finally:
        await turns.close()


if __name__ == "__main__":
    db, start, groups, privates = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(asyncio.run(main(db, start, groups, privates))))
