"""Edits of a message that changes with presses: made in the chat's turn, from its state then,
never awaited by the press.

A press changes some state holding a lock, and answers the press. The message was edited under
that lock too, and a group's edits wait for its turn (20 a minute): in a busy group the next press
waited for the lock behind that edit, so its answer came seconds late (36 s behind ten queued
replies, for a table's lobby), after Telegram stops showing it. Now a press only asks for the
message to be shown again (``show``); one sender per message waits for the chat's turn, then
takes the lock just for reading the state and making the edit, so the edit shows the latest state
(changes made while it waited are shown together, once) and no press waits for a turn it does not
need. Used for a table's lobby and for a photo's correction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from telegram.error import TelegramError

from bot.ratelimit import chat_turn
from bot.tasks import settle
from storage import StorageError

log = logging.getLogger(__name__)

Edit = Callable[[Any, Any], Awaitable[None]]  # (the message's key, what the last show asked for)
Lock = Callable[[Any, int], contextlib.AbstractAsyncContextManager[Any]]  # (key, chat id): the state's lock


class LatestEdits:
    """One coalescing sender per message key: ``show`` returns at once; ``close`` lets them finish."""

    def __init__(self, bot: Any, edit: Edit, lock: Lock, what: str):
        self._bot = bot
        self._edit = edit
        self._lock = lock
        self._what = what  # for the log: "lobby of table", "correction"
        self._wanted: dict[Hashable, tuple[int, Any]] = {}  # key -> (chat id, what the last show asked for)
        self._senders: dict[Hashable, asyncio.Task[None]] = {}

    def show(self, key: Hashable, chat_id: int, asking: Any = None) -> None:
        """Show the message of ``key`` again (asking ``asking``) as soon as its chat has a turn."""
        self._wanted[key] = (chat_id, asking)
        running = self._senders.get(key)
        if running is None or running.done():  # (a sender that just ended has not yet left the dict)
            sender = asyncio.get_running_loop().create_task(self._send(key))
            self._senders[key] = sender
            sender.add_done_callback(self._ended)

    def _ended(self, sender: asyncio.Task[None]) -> None:
        for key, known in list(self._senders.items()):
            if known is sender:
                del self._senders[key]

    async def _send(self, key: Hashable) -> None:
        while key in self._wanted:
            chat_id, _ = self._wanted[key]
            try:
                async with chat_turn(self._bot, chat_id), self._lock(key, chat_id):
                    _, asking = self._wanted.pop(key)
                    await self._edit(key, asking)
            except (TelegramError, StorageError) as error:  # the next change shows the message again
                self._wanted.pop(key, None)
                log.warning("%s %s: %s", self._what, key, error)
            except Exception:  # a defect: said with its stack, not left in a task nobody awaits
                self._wanted.pop(key, None)
                log.exception("%s %s: could not be shown", self._what, key)

    async def close(self, seconds: float) -> None:
        await settle(set(self._senders.values()), seconds)
