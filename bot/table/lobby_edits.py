"""The lobby message's edits: made in the group's turn, from the table as it is then, never awaited.

A lobby press changes the table in storage, holding the chat's lock, and answers the press. The
lobby message was edited under that lock too, and a group's edits wait for its turn (20 a minute):
in a busy group the next press waited for the lock behind that edit, so its answer came seconds
late (36 s behind ten queued replies), after Telegram stops showing it. Now a press only asks for
the lobby to be shown again (``show``); one sender per table waits for the group's turn, then
takes the chat's lock just for reading the table and making the edit, so the edit shows the
latest state (changes made while it waited are shown together, once) and no press waits for a
turn it does not need.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram.error import TelegramError

from bot.ratelimit import chat_turn
from bot.table.runner import settle
from storage import StorageError

log = logging.getLogger(__name__)

Edit = Callable[[int, str | None], Awaitable[None]]  # (table id, the question it asks, if any)


class LobbyEdits:
    """One coalescing sender per table: ``show`` returns at once; ``close`` lets them finish."""

    def __init__(self, bot: Any, edit: Edit, lock: Callable[[int], contextlib.AbstractAsyncContextManager[None]]):
        self._bot = bot
        self._edit = edit
        self._lock = lock
        self._wanted: dict[int, tuple[int, str | None]] = {}  # table id -> (chat id, question)
        self._senders: dict[int, asyncio.Task[None]] = {}

    def show(self, table_id: int, chat_id: int, asking: str | None = None) -> None:
        """Show the table's lobby (asking ``asking``) as soon as the group has a turn."""
        self._wanted[table_id] = (chat_id, asking)
        running = self._senders.get(table_id)
        if running is None or running.done():  # (a sender that just ended has not yet left the dict)
            sender = asyncio.get_running_loop().create_task(self._send(table_id))
            self._senders[table_id] = sender
            sender.add_done_callback(self._ended)

    def _ended(self, sender: asyncio.Task[None]) -> None:
        for table_id, known in list(self._senders.items()):
            if known is sender:
                del self._senders[table_id]

    async def _send(self, table_id: int) -> None:
        while table_id in self._wanted:
            chat_id, _ = self._wanted[table_id]
            try:
                async with chat_turn(self._bot, chat_id), self._lock(chat_id):
                    _, asking = self._wanted.pop(table_id)
                    await self._edit(table_id, asking)
            except (TelegramError, StorageError) as error:  # the next change shows the lobby again
                self._wanted.pop(table_id, None)
                log.warning("lobby of table %s: %s", table_id, error)

    async def close(self, seconds: float) -> None:
        await settle(set(self._senders.values()), seconds)
