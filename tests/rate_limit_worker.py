"""A process that sends as fast as ``TelegramRateLimiter`` lets it, its turns shared in a database.

Run as ``python tests/rate_limit_worker.py DB START GROUP_SENDS PRIVATE_SENDS``: at the wall-clock
time START it makes every send at once (one task each) through the real limiter with
``bot.shared_limits.SharedTurns`` on DB, with small limits (``RATES``) so that a test is short;
the "Bot API" records the time of each call. It prints one JSON line: ``[[time, chat], ...]``.
``tests/test_shared_limits.py`` runs two at once and checks the merged sends keep the limits.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

ROOT = __file__.rsplit("/tests/", 1)[0]
if ROOT not in sys.path:  # run as a script: make the project importable
    sys.path.insert(0, ROOT)

from bot.ratelimit import TelegramRateLimiter  # noqa: E402
from bot.shared_limits import SharedTurns  # noqa: E402

GROUP = -100123
RATES = {"overall": (20.0, 1.0), "group": (5.0, 1.0)}  # (turns, per seconds)


async def main(db: str, start: float, group_sends: int, private_sends: int) -> list[tuple[float, int]]:
    overall, group = RATES["overall"], RATES["group"]
    limiter = TelegramRateLimiter(overall_max_rate=overall[0], overall_time_period=overall[1],
                                  group_max_rate=group[0], group_time_period=group[1],
                                  shared=SharedTurns(db, overall=overall, group=group))
    await limiter.initialize()
    sent: list[tuple[float, int]] = []

    async def call(chat: int) -> bool:
        sent.append((time.time(), chat))
        return True

    async def send(chat: int) -> Any:
        data = {"chat_id": chat, "text": "x"}
        return await limiter.process_request(call, (chat,), {}, "sendMessage", data, None)

    chats = [GROUP] * group_sends + [1000 + i for i in range(private_sends)]
    await asyncio.sleep(max(0.0, start - time.time()))
    try:
        await asyncio.gather(*(send(chat) for chat in chats))
    finally:
        await limiter.shutdown()
    return sent


if __name__ == "__main__":
    db, start, groups, privates = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(asyncio.run(main(db, start, groups, privates))))
