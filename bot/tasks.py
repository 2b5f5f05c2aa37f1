"""Background tasks the bot owns, and letting them finish when it stops.

Tables, review offers and message senders each keep their own tasks; at a stop each gives them a
few seconds and then cancels the rest, the same way (``settle``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def settle(tasks: set[asyncio.Task[Any]], timeout: float) -> None:
    """Wait up to ``timeout`` seconds for ``tasks`` (a set they leave when done), then cancel the
    rest and wait for them to end: a task still pending when the event loop stops is destroyed
    mid-way ("Task was destroyed but it is pending!")."""
    pending = {task for task in tasks if not task.done()}
    if pending:
        _, pending = await asyncio.wait(pending, timeout=timeout)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
