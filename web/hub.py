"""The web table as a view of ``TableRunner``: frames for each connected seat, actions back in.

``WebHub`` is a presenter (``bot.table.runner.Presenter``). The runner calls it under the
table's lock right after a decision is logged, so the frames it builds there are exactly the
logged state; they are queued per socket and written by that socket's own task, so a slow
phone never holds up the table. Actions from a page go to ``TableRunner.press`` with the
decision's sequence, the same call a DM button makes: same lock, same checks, same log.

Who is not seated at the table watches it: the open table only (``web.frames.Moment.for_watcher``).
A page opened before the hand is dealt (a lobby, or between hands) gets the lobby
(``describe``: who sits where, the rules), refreshed every few seconds, until the hand starts.

``Fanout`` joins the hub to another presenter (the Telegram one) so one runner feeds both.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.table.runner import Presenter, Refusal, TableRunner
from engine.events import Event
from web.frames import Moment, events_since

log = logging.getLogger(__name__)

MAX_QUEUED_FRAMES = 256  # a socket further behind than this is closed; the page reconnects and catches up
LOBBY_REFRESH_SECONDS = 3.0

NextHand = Callable[[int], Awaitable[None]]
Describe = Callable[[int], Awaitable["dict[str, Any] | None"]]  # a table not being played, or None if unknown


class Socket(Protocol):
    async def send_str(self, data: str) -> None: ...

    async def close(self) -> Any: ...


@dataclass(eq=False)
class Viewer:
    """One open page: who (a checked user id) at which table, and its outgoing frames."""

    table_id: int
    user_id: int
    socket: Socket
    queue: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    writer: asyncio.Task[None] | None = None
    lobby: asyncio.Task[None] | None = None

    def push(self, frame: dict[str, Any]) -> None:
        self.push_text(encode(frame))

    def push_text(self, data: str) -> None:
        if self.queue.qsize() >= MAX_QUEUED_FRAMES:
            self.queue.put_nowait(None)  # the writer closes the socket
            return
        self.queue.put_nowait(data)

    def start(self) -> None:
        self.writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        while True:
            data = await self.queue.get()
            if data is None:
                await self.socket.close()
                return
            try:
                await self.socket.send_str(data)
            except (ConnectionError, RuntimeError):
                return

    async def stop(self) -> None:
        for task in (self.lobby, self.writer):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


def encode(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False)


class WebHub:
    """Every live table's web viewers. ``next_hand`` (``xuezhan play``) deals on from the page;
    ``describe`` tells a page about a table that is not being played (its lobby)."""

    def __init__(self, next_hand: NextHand | None = None, describe: Describe | None = None) -> None:
        self.runners: dict[int, TableRunner] = {}
        self.viewers: dict[int, set[Viewer]] = {}
        self.next_hand = next_hand
        self.describe = describe
        self._deadlines: dict[tuple[int, int], tuple[int | None, bool, float]] = {}

    # --- the Presenter protocol --------------------------------------------------------------

    async def hand_started(self, runner: TableRunner, resumed: bool) -> None:
        self.runners[runner.table_id] = runner
        self._broadcast(runner, ())

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None:
        self._broadcast(runner, events)

    async def prompt(self, runner: TableRunner, seat: int) -> None:
        self._broadcast(runner, (), only_seat=seat)

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None:
        self._broadcast(runner, ())

    async def attach(self, runner: TableRunner) -> None:
        """A hand another worker dealt, taken up here: its pages follow this runner."""
        self.runners[runner.table_id] = runner
        self._broadcast(runner, ())

    async def caught_up(self, runner: TableRunner) -> None:
        """The runner applied moves another worker logged: the pages show where the table is."""
        self._broadcast(runner, ())

    async def forget(self, table_id: int) -> None:
        """The table's hand is closed: a finished hand stays on the open pages until the next one
        (and is dropped with the last of them); a voided one is closed on every page."""
        runner = self.runners.get(table_id)
        if runner is None or (runner.game.over and self.viewers.get(table_id)):
            return
        self._drop(table_id)
        if not runner.game.over:
            for viewer in self.viewers.get(table_id, ()):
                viewer.push({"type": "closed"})

    def _drop(self, table_id: int) -> None:
        self.runners.pop(table_id, None)
        for seat in range(4):
            self._deadlines.pop((table_id, seat), None)

    async def close(self) -> None:
        """Shutting down: every socket is closed after its queued frames (the pages reconnect)."""
        for viewers in self.viewers.values():
            for viewer in viewers:
                if viewer.lobby is not None:
                    viewer.lobby.cancel()
                viewer.queue.put_nowait(None)
        await asyncio.gather(*(v.writer for vs in self.viewers.values() for v in vs if v.writer),
                             return_exceptions=True)
        self.viewers.clear()

    # --- pages ------------------------------------------------------------------------------

    async def join(self, viewer: Viewer, since: int | None = None) -> None:
        """Start a page: the whole picture now, with the events it missed since ``since``; or
        the table's lobby while no hand is being played there."""
        viewer.start()
        runner = self.runners.get(viewer.table_id)
        if runner is None:
            lobby = await self._lobby(viewer)
            if lobby is None:
                viewer.push({"type": "error", "key": "no_table"})
                viewer.queue.put_nowait(None)  # and close: there is nothing to show
                return
            viewer.push(lobby)
            if self.describe is not None:
                viewer.lobby = asyncio.get_running_loop().create_task(self._refresh_lobby(viewer, lobby))
        else:
            async with runner.lock:
                self._send_snapshot(runner, viewer, since)
        self.viewers.setdefault(viewer.table_id, set()).add(viewer)

    async def _lobby(self, viewer: Viewer) -> dict[str, Any] | None:
        if self.describe is None:
            return {"type": "lobby", "table": viewer.table_id, "names": [None] * 4, "you": None}
        try:
            about = await self.describe(viewer.table_id)
        except Exception:
            log.exception("table %s: could not describe its lobby", viewer.table_id)
            return None
        if about is None:
            return None
        seats = about.pop("user_ids")
        you = next((s for s, user in enumerate(seats) if user == viewer.user_id), None)
        return {"type": "lobby", "table": viewer.table_id, **about, "you": you}

    async def _refresh_lobby(self, viewer: Viewer, shown: dict[str, Any]) -> None:
        """Who joins, and the table's rules, until its hand starts (the hand's frames take over)."""
        while True:
            await asyncio.sleep(LOBBY_REFRESH_SECONDS)
            if viewer.table_id in self.runners:
                return
            lobby = await self._lobby(viewer)
            if viewer.table_id in self.runners:  # dealt while we asked: its frame is already sent
                return
            if lobby is not None and lobby != shown:
                viewer.push(lobby)
                shown = lobby

    def _send_snapshot(self, runner: TableRunner, viewer: Viewer, since: int | None) -> None:
        seat = runner.seat_of(viewer.user_id)
        missed = events_since(runner, seat, since) if since is not None else []
        moment = Moment(runner, missed, can_next=self.next_hand is not None)
        if seat is None:
            viewer.push_text(moment.for_watcher())
        else:
            viewer.push_text(moment.for_seat(seat, self._remaining(runner, seat)))

    async def leave(self, viewer: Viewer) -> None:
        viewers = self.viewers.get(viewer.table_id)
        if viewers is not None:
            viewers.discard(viewer)
            if not viewers:
                self.viewers.pop(viewer.table_id, None)
                runner = self.runners.get(viewer.table_id)
                if runner is not None and runner.closed:  # a finished table nobody looks at any more
                    self._drop(viewer.table_id)
        await viewer.stop()

    async def act(self, viewer: Viewer, message: dict[str, Any]) -> None:
        """A page's decision: ``{"seq": n, "code": "d5p"}``, or ``{"next": hand_id}`` after a hand."""
        runner = self.runners.get(viewer.table_id)
        if runner is None:
            viewer.push({"type": "refused", "key": "hand_over"})
            return
        if "next" in message:
            await self._next(runner, viewer, message["next"])
            return
        seq, code = message.get("seq"), message.get("code")
        if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(code, str) or len(code) > 8:
            viewer.push({"type": "refused", "key": "stale"})
            return
        try:
            await runner.press(viewer.user_id, seq, code)
        except Refusal as refusal:
            viewer.push({"type": "refused", "key": refusal.key})
        except Exception:  # the runner has already restored the game from its log
            log.exception("table %s: a web action %r failed", runner.table_id, message)
            viewer.push({"type": "refused", "key": "error"})

    async def _next(self, runner: TableRunner, viewer: Viewer, hand_id: object) -> None:
        if (self.next_hand is None or not runner.game.over or hand_id != runner.hand.id
                or runner.seat_of(viewer.user_id) is None):
            viewer.push({"type": "refused", "key": "stale"})
            return
        await self.next_hand(runner.table_id)

    # --- frames -------------------------------------------------------------------------------

    def _broadcast(self, runner: TableRunner, events: Sequence[Event], only_seat: int | None = None) -> None:
        viewers = self.viewers.get(runner.table_id)
        if not viewers:
            return
        moment = Moment(runner, events, can_next=self.next_hand is not None)
        for viewer in viewers:
            seat = runner.seat_of(viewer.user_id)
            if seat is None:
                if only_seat is None:
                    viewer.push_text(moment.for_watcher())
            elif only_seat is None or seat == only_seat:
                viewer.push_text(moment.for_seat(seat, self._remaining(runner, seat)))

    def _remaining(self, runner: TableRunner, seat: int) -> float | None:
        """Seconds left on the seat's decision: the runner's timer starts when its prompt opens
        (a new sequence, or the player's return from 托管), which is when we first see it."""
        state = runner.state[seat]
        key = (runner.table_id, seat)
        if state.prompt_seq is None or runner.controlled(seat):
            self._deadlines[key] = (None, runner.controlled(seat), 0.0)
            return None
        known_seq, was_auto, deadline = self._deadlines.get(key, (None, False, 0.0))
        if known_seq != state.prompt_seq or was_auto:
            deadline = time.monotonic() + runner.decision_seconds(seat)
            self._deadlines[key] = (state.prompt_seq, False, deadline)
        return round(max(0.0, deadline - time.monotonic()), 1)


class Fanout:
    """One presenter made of several: each hears every call, in order. The web hub goes first,
    since it only queues frames (about a millisecond for a table's four pages), while the
    Telegram presenter may wait for storage when a hand starts. The optional calls a runner or
    ``Tables`` makes when a presenter has them (``attach``, ``caught_up``, ``post_settlement``)
    reach every presenter that has them."""

    def __init__(self, *presenters: Presenter) -> None:
        self.presenters = presenters

    async def hand_started(self, runner: TableRunner, resumed: bool) -> None:
        for p in self.presenters:
            await p.hand_started(runner, resumed)

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None:
        for p in self.presenters:
            await p.changed(runner, events)

    async def prompt(self, runner: TableRunner, seat: int) -> None:
        for p in self.presenters:
            await p.prompt(runner, seat)

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None:
        for p in self.presenters:
            await p.seat_controlled(runner, seat, reason)

    async def attach(self, runner: TableRunner) -> None:
        await self._each("attach", runner)

    async def caught_up(self, runner: TableRunner) -> None:
        await self._each("caught_up", runner)

    async def post_settlement(self, runner: TableRunner) -> None:
        await self._each("post_settlement", runner)

    async def forget(self, table_id: int) -> None:
        await self._each("forget", table_id)

    async def close(self) -> None:
        for p in self.presenters:
            close = getattr(p, "close", None)
            if close is not None:
                await close()

    async def _each(self, name: str, *args: Any) -> None:
        for p in self.presenters:
            method = getattr(p, name, None)
            if method is not None:
                await method(*args)
