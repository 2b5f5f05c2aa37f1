"""A table without Telegram: what ``xuezhan play`` runs (and the browser tests and the benchmark).

It keeps the ledger in SQLite like the bot does, seats people with local user ids (1, 2, ...)
and computer players, and drives the same ``Tables``/``TableRunner`` the bot uses, with the web
hub as the only view and decision timers on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot.table.runner import Limits, TableRunner
from bot.table.tables import Tables
from storage import Storage
from storage.models import Table, TableStatus
from web.auth import seat_token
from web.hub import WebHub
from web.server import WebServer, new_seat_secret

LOCAL_CHAT_ID = 1  # the one "group" of a local ledger
PLAYER_NAMES = ("你", "朋友 2", "朋友 3", "朋友 4")


class LoopScheduler:
    """Decision timers on the event loop (``bot.table.runner.Scheduler``)."""

    def __init__(self) -> None:
        self._handles: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, name: str, delay: float, callback: Callable[[], Awaitable[None]]) -> None:
        self.cancel(name)
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._handles.pop(name, None)
            task = loop.create_task(callback())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        self._handles[name] = loop.call_later(delay, fire)

    def cancel(self, name: str) -> None:
        handle = self._handles.pop(name, None)
        if handle is not None:
            handle.cancel()

    def close(self) -> None:
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()


@dataclass(frozen=True, slots=True)
class SeatLink:
    seat: int
    name: str
    url: str


class LocalTables:
    """Tables played from browsers only: ``open_table`` seats people and computers and deals."""

    def __init__(self, storage: Storage, limits: Limits, *, seat_secret: bytes | None = None) -> None:
        self.storage = storage
        self.hub = WebHub(next_hand=self.next_hand)
        self.scheduler = LoopScheduler()
        self.tables = Tables(storage, self.hub, self.scheduler, limits)  # type: ignore[arg-type]
        self.secret = seat_secret or new_seat_secret()
        self.server = WebServer(self.hub, seat_secret=self.secret)

    async def open_table(self, people: int, names: Sequence[str] = PLAYER_NAMES,
                         first_user: int = 1) -> tuple[Table, TableRunner]:
        """A table of ``people`` persons (user ids from ``first_user``) and computers; deals hand 1."""
        if not 1 <= people <= 4:
            raise ValueError("a table seats 1 to 4 people")
        await self.storage.get_chat(LOCAL_CHAT_ID)
        table = await self.storage.create_table(LOCAL_CHAT_ID, first_user)
        for seat in range(people):
            user_id = first_user + seat
            await self.storage.save_user(user_id, names[seat], started_dm=False)
            player = await self.storage.player_for_user(LOCAL_CHAT_ID, user_id, names[seat])
            table = await self.storage.set_seat(table.id, seat, player.id)
        table = await self.tables.fill_with_computers(table)
        table = await self.storage.set_table_status(table.id, TableStatus.PLAYING)
        runner = await self.tables.start_hand(table)
        return table, runner

    def links(self, base_url: str, table: Table, runner: TableRunner) -> list[SeatLink]:
        """A signed link for each person's seat."""
        out = []
        for seat, player in enumerate(runner.seats):
            if player.user_id is not None:
                token = seat_token(self.secret, table.id, player.user_id)
                out.append(SeatLink(seat, player.name, f"{base_url}?seat={token}"))
        return out

    async def next_hand(self, table_id: int) -> None:
        """Deal on at the same table, the next dealer by the rules (asked from a page)."""
        runner = self.tables.runners.get(table_id)
        if runner is None or not runner.game.over:
            return
        dealer = runner.game.next_dealer()
        await self.tables.finished(table_id)
        await self.tables.start_hand(await self.storage.get_table(table_id), dealer)

    async def close(self) -> None:
        await self.server.stop()
        await self.tables.close()
        self.scheduler.close()
