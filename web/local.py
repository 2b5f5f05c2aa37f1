"""A table without Telegram: what ``xuezhan play`` runs (and the browser tests and the benchmark).

It keeps the ledger in SQLite like the bot does, seats people with local user ids (1, 2, ...)
and computer players, and drives the same ``TableRunner`` the bot uses, with the web hub as the
only view (its presenter) and decision timers on the event loop. A table may have rules of its
own (``open_table(rules=...)``, stored as the table's rules like the bot's "Table rules"); every
hand at it is dealt under them.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot.table.runner import Limits, SeatPlayer, TableRunner
from engine.game import Game
from engine.rules import RuleSet
from storage import Storage
from storage.models import PlayerKind, Table, TableStatus
from web.auth import seat_token
from web.hub import WebHub
from web.lobby import describe_table
from web.server import WebServer, new_seat_secret

LOCAL_CHAT_ID = 1  # the one "group" of a local ledger
PLAYER_NAMES = ("你", "朋友 2", "朋友 3", "朋友 4")
COMPUTER_NAMES = ("AI-1", "AI-2", "AI-3")


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
        self.limits = limits
        self.hub = WebHub(next_hand=self.next_hand, describe=lambda table_id: describe_table(storage, table_id))
        self.scheduler = LoopScheduler()
        self.runners: dict[int, TableRunner] = {}
        self.secret = seat_secret or new_seat_secret()
        self.server = WebServer(self.hub, seat_secret=self.secret)

    async def open_table(self, people: int, names: Sequence[str] = PLAYER_NAMES, first_user: int = 1,
                         rules: RuleSet | None = None) -> tuple[Table, TableRunner]:
        """A table of ``people`` persons (user ids from ``first_user``) and computers, under
        ``rules`` (default: the local chat's); deals hand 1."""
        if not 1 <= people <= 4:
            raise ValueError("a table seats 1 to 4 people")
        await self.storage.get_chat(LOCAL_CHAT_ID)
        table = await self.storage.create_table(LOCAL_CHAT_ID, first_user)
        if rules is not None:
            table = await self.storage.set_table_rules(table.id, rules.to_dict())
        for seat in range(4):
            if seat < people:
                user_id = first_user + seat
                await self.storage.save_user(user_id, names[seat], started_dm=False)
                player = await self.storage.player_for_user(LOCAL_CHAT_ID, user_id, names[seat])
            else:
                player = await self.storage.named_player(LOCAL_CHAT_ID, COMPUTER_NAMES[seat - people],
                                                         PlayerKind.COMPUTER)
            table = await self.storage.set_seat(table.id, seat, player.id)
        table = await self.storage.set_table_status(table.id, TableStatus.PLAYING)
        return table, await self.start_hand(table, secrets.randbelow(4))

    async def start_hand(self, table: Table, dealer: int) -> TableRunner:
        """Deal a hand under the table's rules (else the local chat's) and the chat's base stake,
        and start its runner."""
        chat = await self.storage.get_chat(table.chat_id)
        chosen = table.rules if table.rules is not None else chat.rules
        rules = RuleSet.from_dict(chosen).with_changes(base=chat.base_stake)
        seed = secrets.randbits(62)
        hand = await self.storage.start_hand(table.id, rules.to_dict(), seed, dealer)
        players = [await self.storage.get_player(p) for p in hand.seats]
        runner = TableRunner(
            table_id=table.id, chat_id=table.chat_id, hand=hand, game=Game(rules, seed, dealer),
            seats=[SeatPlayer(p.id, p.name, p.user_id if p.kind is PlayerKind.USER else None) for p in players],
            storage=self.storage, presenter=self.hub, scheduler=self.scheduler, limits=self.limits,
        )
        self.runners[table.id] = runner
        await runner.start()
        return runner

    def watch_link(self, base_url: str, table: Table) -> str:
        """The page for someone who is not seated: the open table, every hand face down."""
        return f"{base_url}?table={table.id}"

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
        runner = self.runners.get(table_id)
        if runner is None or not runner.game.over:
            return
        await runner.close()
        await self.start_hand(await self.storage.get_table(table_id), runner.game.next_dealer())

    async def close(self) -> None:
        await self.server.stop()
        for runner in self.runners.values():
            await runner.close()
        self.runners.clear()
        self.scheduler.close()
