"""One hand at one table, played live: who may act, what gets logged, who acts for the absent.

The runner owns the table's ``asyncio.Lock`` and the only copy of the live ``Game``. Every
decision goes the same way, whoever makes it (a button, a computer player, an expired timer):
check it is that seat's current decision, ``Game.apply`` it, write the action and its chip
transfers to storage in one transaction, then tell the presenter. If the write fails the game
is rebuilt from the log, so memory never runs ahead of what is stored.

Telegram is not imported here: output goes through ``Presenter`` and timers through
``Scheduler``, so the table's logic reads (and tests) without the wire.

**Several workers** (``storage.shared``, PostgreSQL): any process may receive the next press for
a table, so each holds a copy of the hand. Every decision then runs under the table's lock across
processes (``storage.table_lock``) and first catches the copy up from the log: the actions other
workers logged since, and the seat states they saved (open prompts, 托管, left seats, run-out
timers, swap picks). At its end it saves the seat states and the table's timers, so the next
worker to hold the lock finds them. A copy that is behind therefore never writes a conflicting
action, and a press that reaches two workers applies once. A ``wake`` timer, pushed back by every
step, brings the table back on another worker if the one deciding for it dies mid-step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.table import callbacks
from bot.table.snapshots import snapshot_of
from bot.tasks import settle
from engine.actions import SEATS, Action, ActionType, GameError
from engine.ai import Player, player_for_level
from engine.ai_search import ThinkingShare
from engine.events import Event
from engine.game import Game, Phase
from engine.rules import RuleSet
from storage import HandClosed, InvalidWrite, NotFound, SequenceConflict, Storage, StorageError
from storage.models import JSON, Hand, HandStatus, SeatMessage

log = logging.getLogger(__name__)

WAKE_AFTER_SECONDS = 10.0  # beyond the longest decision: a table this quiet lost its worker
RETRY_FIRST_SECONDS = 0.2
RETRY_MAX_SECONDS = 5.0
STEP_RETRY_SECONDS = 30.0  # several workers: how long a step waits for the table's lock and log to come back
SLOW_STORAGE_NOTICE_SECONDS = 10.0
# A hand's snapshot is saved every this many logged actions (and at shut-down), so a restart after
# a crash applies at most this many actions to it instead of replaying the whole log.
SNAPSHOT_EVERY = 16
REFUSALS = (HandClosed, InvalidWrite, NotFound, SequenceConflict)  # storage said no: retrying cannot help


# Computer players think here, apart from the default pool that storage and rendering share.
_BACKGROUND: set[asyncio.Task[None]] = set()  # snapshot writes under way (the loop keeps weak references)
_THINKING = ThreadPoolExecutor(max_workers=2, thread_name_prefix="xz-computer")
# Hard players' searches together take at most half a core on average (they run beside the event
# loop in one interpreter): at a few tables each gets its full budget, at many they shrink.
_SEARCH_SHARE = ThinkingShare(share=0.5)


async def settle_background(timeout: float) -> None:
    """Shut-down: let the snapshot writes under way finish (for up to ``timeout`` seconds, then
    cancel them) before storage closes, so none is left pending when the event loop stops."""
    await settle(_BACKGROUND, timeout)


def parse_timer(key: str) -> tuple[str, int, int | None] | None:
    """``(kind, table id, seat)`` of a runner's timer key: ``xz-timer:<table>:<seat>`` is a decision's
    deadline, ``xz-wake:<table>`` the watch over a table whose worker may have died."""
    kind, _, rest = key.partition(":")
    parts = rest.split(":")
    if not all(p.lstrip("-").isdigit() for p in parts):
        return None
    if kind == "xz-timer" and len(parts) == 2:
        return "deadline", int(parts[0]), int(parts[1])
    if kind == "xz-wake" and len(parts) == 1:
        return "wake", int(parts[0]), None
    if kind == "xz-ping" and len(parts) == 2:
        return "ping", int(parts[0]), int(parts[1])
    return None


def ping_key(table_id: int, seat: int) -> str:
    """The timer key of a decision's turn ping (then its reminder), several workers: set by the
    worker whose DM showed the decision, fired by whichever worker claims it (``presenter.ping_due``)."""
    return f"xz-ping:{table_id}:{seat}"


def wake_key(table_id: int) -> str:
    """The timer key of a table's watch (several workers; see ``TableRunner._arm_wake``)."""
    return f"xz-wake:{table_id}"


def settlement_key(hand_id: int) -> str:
    """The outbox key of a hand's settlement card (written with its final action)."""
    return f"settlement:{hand_id}"


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    """Who sits in a seat: a ledger player, and the Telegram user behind it (None = computer)."""

    player_id: int
    name: str
    user_id: int | None

    @property
    def computer(self) -> bool:
        return self.user_id is None


@dataclass(frozen=True, slots=True)
class Limits:
    """Seconds a person has for a decision, and the pause before a computer player acts."""

    discard_seconds: float = 30
    claim_seconds: float = 15
    computer_delay: float = 0.0


class Presenter(Protocol):
    async def hand_started(self, runner: TableRunner, resumed: bool) -> None: ...

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None: ...

    async def prompt(self, runner: TableRunner, seat: int) -> None: ...

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None: ...


class Scheduler(Protocol):
    def start(self, name: str, delay: float, callback: Callable[[], Awaitable[None]]) -> None: ...

    def cancel(self, name: str) -> None: ...


class Refusal(Exception):
    """A press that changes nothing; ``key`` names the short answer the player gets."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


@dataclass
class SeatState:
    """What the runner tracks per seat beyond the game: the open prompt and 托管."""

    prompt_seq: int | None = None
    legal: tuple[Action, ...] = ()
    expiries: int = 0
    auto: bool = False  # 托管: a computer player acts until the player presses "I'm back"
    left: bool = False  # the person left (/leave) or was removed (/kick): a computer plays to the end
    swap_pick: list[int] = field(default_factory=list)  # positions in the sorted hand
    deadline: float | None = None  # when the open prompt's timer runs out (UTC timestamp), if it has one


class TableRunner:
    """A live hand. Create with ``TableRunner(...)``, then ``await start()``."""

    def __init__(
        self,
        *,
        table_id: int,
        chat_id: int,
        topic_id: int | None = None,
        hand: Hand,
        game: Game,
        seats: Sequence[SeatPlayer],
        storage: Storage,
        presenter: Presenter,
        scheduler: Scheduler,
        limits: Limits,
        on_storage_trouble: Callable[[TableRunner, bool], Awaitable[None]] | None = None,
    ) -> None:
        self.table_id = table_id
        self.on_storage_trouble = on_storage_trouble  # (runner, slow): a write waits long / is through
        self.chat_id = chat_id
        self.topic_id = topic_id  # the forum topic the table was opened in: its group posts go there
        self.hand = hand
        self.game = game
        self.seats = tuple(seats)
        self.storage = storage
        self.presenter = presenter
        self.scheduler = scheduler
        self.limits = limits
        self.logged = len(game.actions)
        self.state = [SeatState() for _ in range(SEATS)]
        self.lock = asyncio.Lock()
        self.last_events: tuple[Event, ...] = ()
        self._players: list[Player] = [
            player_for_level(game.rules.ai_level, game.rules, seed=hand.seed + seat, share=_SEARCH_SHARE)
            for seat in range(SEATS)
        ]
        self._driver: asyncio.Task[None] | None = None
        self.closed = False
        self.shared = bool(getattr(storage, "shared", False))  # other processes may decide for this table too
        self._saved_states: JSON | None = None  # the seat states as last saved or loaded
        self._unsure = False  # a write was cut off: this copy may be one action ahead of the log
        self._step_writes: list[Awaitable[Any]] = []
        # Several workers: the hand's table picture in the group (kept in the seat states: the id in
        # ``tables`` is the table's, an earlier hand's until this hand's is posted). Known once this
        # copy posted it or loaded seat states that say (None there: not posted yet).
        self.table_message: int | None = None
        self.table_message_known = False
        self._states_version = 0
        # Several workers: the hand's messages per (seat, kind) as stored (``storage.seat_messages``),
        # read at each step's catch-up; the presenter reads and writes them while it holds the table.
        self.messages: dict[tuple[int, str], SeatMessage] = {}

    # --- facts the presenter and handlers ask for ----------------------------------------

    @property
    def rules(self) -> RuleSet:
        return self.game.rules

    def seat_of(self, user_id: int) -> int | None:
        for seat, player in enumerate(self.seats):
            if player.user_id == user_id:
                return seat
        return None

    def human(self, seat: int) -> bool:
        return not self.seats[seat].computer

    def controlled(self, seat: int) -> bool:
        """True when a computer player decides for the seat (a computer seat, or 托管)."""
        return self.seats[seat].computer or self.state[seat].auto

    def waiting_on(self, seat: int) -> bool:
        return self.state[seat].prompt_seq is not None

    def decision_seconds(self, seat: int) -> float:
        claim = any(a.type is ActionType.PASS for a in self.state[seat].legal)
        return self.limits.claim_seconds if claim else self.limits.discard_seconds

    # --- life cycle --------------------------------------------------------------------

    async def start(self, resumed: bool = False) -> None:
        async with self._deciding():
            self._refresh_decisions()
            self._arm_wake()
        await self.presenter.hand_started(self, resumed)
        self._kick()

    async def attach(self) -> None:
        """Take up a hand another worker started (several workers): catch up, show nothing new."""
        async with self._deciding():
            self._refresh_decisions()  # prompts the seat states did not hold open (never saved, or older)
        attach = getattr(self.presenter, "attach", None)
        if attach is not None:
            await attach(self)
        self._kick()

    async def wake(self) -> None:
        """The table was quiet past every deadline (its worker may have died mid-step), or its
        worker stopped and handed it over: catch up, set the deadlines of the open decisions again
        (each with the time it had left, as the seat states say: a rolling restart gives nobody
        more time), and let the computer players go on."""
        async with self._deciding():
            if self.game.over or self.closed:
                return
            for seat in range(SEATS):
                state = self.state[seat]
                if state.prompt_seq is not None and not self.controlled(seat):
                    left = None if state.deadline is None else max(0.0, state.deadline - time.time())
                    self._start_timer(seat, state.prompt_seq, left)
        for seat in range(SEATS):
            if self.human(seat) and self.state[seat].prompt_seq is not None:
                await self.presenter.prompt(self, seat)
        self._kick()

    async def close(self) -> None:
        """Stop timers and the computer players (the hand itself stays as logged). With several
        workers the timers are the table's, not this copy's: they stay for whoever serves it."""
        self.closed = True
        for seat in range(SEATS):
            if not self.shared:
                self.scheduler.cancel(self._timer_name(seat))
        if self._driver is not None and self._driver is not asyncio.current_task():
            self._driver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._driver

    # --- decisions ---------------------------------------------------------------------

    def refusal(self, user_id: int, seq: int, code: str) -> str | None:
        """The ``Refusal`` key ``press`` would raise for this press in the state now, else None.

        Cheap and without the lock, so a press can be answered before its move is made (``press``
        checks again under the lock: the state may move on meanwhile)."""
        seat = self.seat_of(user_id)
        if seat is None:
            return "not_your_seat"
        if self.game.over or self.closed:
            return "hand_over"
        state = self.state[seat]
        if code == callbacks.BACK:
            return "stale" if not state.auto or state.left else None
        if state.prompt_seq is None or seq != state.prompt_seq or state.auto:
            return "stale"
        if not self._on_prompt(seat, code):
            return "stale"
        return None

    def _on_prompt(self, seat: int, code: str) -> bool:
        """Whether ``code`` is a button the seat's prompt can carry: a garbled or forged one is
        refused at once, not after the press has waited for the table (its answer would be silent)."""
        if code == callbacks.SWAP_CONFIRM or callbacks.parse_toggle(code) is not None:
            return self.game.phase is Phase.SWAP
        return any(callbacks.code_matches(code, action) for action in self.state[seat].legal)

    async def press(self, user_id: int, seq: int, code: str) -> None:
        """A button pressed by ``user_id``; raises ``Refusal`` when it changes nothing."""
        async with self._deciding():
            refused = self.refusal(user_id, seq, code)
            if refused is not None:
                raise Refusal(refused)
            seat = self.seat_of(user_id)
            assert seat is not None
            state = self.state[seat]
            if code == callbacks.BACK:
                state.auto = False
                state.expiries = 0
                self._refresh_decisions(force={seat})
                await self.presenter.prompt(self, seat)
                return
            toggle = callbacks.parse_toggle(code)
            if toggle is not None:
                self._toggle_swap(seat, toggle)
                await self.presenter.prompt(self, seat)
                return
            action = self._action_for(seat, code)
            state.expiries = 0
            await self._commit(action)
            self._arm_wake()
        self._kick()

    def _toggle_swap(self, seat: int, position: int) -> None:
        if self.game.phase is not Phase.SWAP or not 0 <= position < len(self.game.hand(seat)):
            raise Refusal("stale")
        pick = self.state[seat].swap_pick
        if position in pick:
            pick.remove(position)
        elif len(pick) < 3:
            pick.append(position)
        else:
            raise Refusal("swap_three_only")

    def _action_for(self, seat: int, code: str) -> Action:
        legal = self.state[seat].legal
        if code == callbacks.SWAP_CONFIRM:
            hand = self.game.hand(seat)
            picked = sorted(hand[i] for i in self.state[seat].swap_pick)
            action = Action.swap(seat, picked)
            if action not in legal:
                raise Refusal("swap_one_suit")
            return action
        for action in legal:
            if callbacks.code_matches(code, action):
                return action
        raise Refusal("stale")

    async def _commit(self, action: Action) -> None:
        """Apply, log, then present one decision. Must hold the lock."""
        events = self.game.apply(action)
        transfers = [e.transfer for e in events if e.transfer is not None]
        result = self.result() if self.game.over else None
        try:
            await self._write(action, transfers, result)
        except Exception:
            log.exception("table %s: could not log %s; rebuilding from the log", self.table_id, action)
            self.game = await self._replay_from_log()
            raise
        except BaseException:  # cancelled mid-write (shut-down): it may or may not have landed
            self._unsure = True  # the next catch-up rebuilds the copy from the log
            raise
        self.logged += 1
        if self.logged % SNAPSHOT_EVERY == 0 and not self.game.over:
            self._save_snapshot()
        self.last_events = tuple(events)
        self._refresh_decisions()
        await self.presenter.changed(self, events)

    def _save_snapshot(self) -> None:
        """The state now, written in the background: a snapshot only saves a restart time, the log
        is the truth (one that lands late, or not at all, leaves more of the log to apply)."""
        seq, state = snapshot_of(self.game)

        async def save() -> None:
            try:
                await self.storage.save_snapshot(self.hand.id, seq, state)
            except HandClosed:  # the hand ended (or another worker ended it) meanwhile
                pass
            except Exception as error:
                log.warning("table %s: could not save the snapshot of hand %s: %s", self.table_id, self.hand.id,
                            error)

        _BACKGROUND.add(task := asyncio.get_running_loop().create_task(save()))
        task.add_done_callback(_BACKGROUND.discard)

    async def _write(self, action: Action, transfers: Sequence[Any], result: dict[str, Any] | None) -> None:
        """Log one action, retrying with backoff while storage cannot write (disk full, locked).

        Writing the same action at the same sequence number again is a no-op in storage, so a
        retry after a write that did land changes nothing. A refusal (a bad write, a closed
        hand) is not retried: it would be refused again. The hand's final action owes the group its
        settlement card, in the same transaction (the outbox), so a crash right after it
        cannot lose the card. The group hears once if the wait grows long, and again when it ends.
        """
        owe = settlement_key(self.hand.id) if result is not None else None
        delay, started, told = RETRY_FIRST_SECONDS, time.monotonic(), False
        while True:
            try:
                await self.storage.append_action(
                    self.hand.id, self.logged, action.to_dict(), transfers, result=result, owe=owe
                )
            except REFUSALS:
                raise
            except Exception as error:
                if self.closed:
                    raise
                log.warning("table %s: could not log action %s (%s); retrying in %.1f s",
                            self.table_id, self.logged, error, delay)
                if not told and time.monotonic() - started >= SLOW_STORAGE_NOTICE_SECONDS:
                    told = True
                    await self._tell_storage(slow=True)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)
                continue
            if told:
                await self._tell_storage(slow=False)
            return

    async def _tell_storage(self, slow: bool) -> None:
        if self.on_storage_trouble is not None:
            try:
                await self.on_storage_trouble(self, slow)
            except Exception:
                log.exception("table %s: could not tell the group about storage", self.table_id)

    async def _replay_from_log(self) -> Game:
        logged = await self.storage.hand_actions(self.hand.id)
        actions = [Action.from_dict(a.action) for a in logged]
        self.logged = len(actions)
        return Game.replay(self.game.rules, self.hand.seed, self.hand.dealer, actions)

    def result(self) -> dict[str, Any]:
        """What storage keeps about a finished hand (and what history shows)."""
        game = self.game
        return {
            "chips": game.chips(),
            "wins": [w.to_dict() for w in game.wins],
            "end": game.end.value if game.end else None,
            "next_dealer": game.next_dealer(),
            "names": [p.name for p in self.seats],
        }

    # --- whose decision, timers, computer players -----------------------------------------

    def _refresh_decisions(self, force: frozenset[int] | set[int] = frozenset()) -> None:
        """Open a new prompt for every seat whose decision changed; keep the others running."""
        pending = set(self.game.pending_seats()) if not self.game.over else set()
        for seat in range(SEATS):
            state = self.state[seat]
            legal = tuple(self.game.legal_actions(seat)) if seat in pending else ()
            if seat not in pending:
                self._cancel_timers(seat, ping=state.prompt_seq is not None)
                state.prompt_seq, state.legal, state.deadline = None, (), None
                if self.game.phase is not Phase.SWAP:
                    state.swap_pick.clear()
                continue
            if state.prompt_seq is not None and legal == state.legal and seat not in force:
                continue
            self._cancel_timers(seat, ping=state.prompt_seq is not None)
            state.prompt_seq, state.legal, state.deadline = self.logged, legal, None
            if not self.controlled(seat):
                self._start_timer(seat, self.logged)

    def _start_timer(self, seat: int, seq: int, seconds: float | None = None) -> None:
        """The seat's deadline for decision ``seq``, ``seconds`` from now (the decision's full time)."""
        name = self._timer_name(seat)
        seconds = self.decision_seconds(seat) if seconds is None else seconds
        self.state[seat].deadline = time.time() + seconds
        if self.shared:  # any worker may fire it: the timer carries the decision it is for
            self.scheduler.start(name, seconds, lambda: self.expire(seat, seq), data={"seq": seq})  # type: ignore[call-arg]
        else:
            self.scheduler.start(name, seconds, lambda: self.expire(seat, seq))

    def _timer_name(self, seat: int) -> str:
        return f"xz-timer:{self.table_id}:{seat}"

    def _cancel_timers(self, seat: int, ping: bool = True) -> None:
        """The seat's decision closed (or passed to the computer): its deadline goes, and with several
        workers its turn ping too (``ping``: a decision was open; a ping is otherwise the presenter's,
        armed once the DM shows it)."""
        self.scheduler.cancel(self._timer_name(seat))
        if self.shared and ping:
            self.scheduler.cancel(ping_key(self.table_id, seat))

    def _arm_wake(self) -> None:
        """Several workers: push back the table's watch after a step (cancel it once the hand is over)."""
        if not self.shared:
            return
        name = wake_key(self.table_id)
        if self.game.over:
            self.scheduler.cancel(name)
            return
        seconds = max(self.limits.discard_seconds, self.limits.claim_seconds) + WAKE_AFTER_SECONDS
        self.scheduler.start(name, seconds, self.wake)

    # --- several workers: one decision at a time across processes ---------------------------

    @contextlib.asynccontextmanager
    async def _deciding(self) -> AsyncIterator[None]:
        """Hold the table for one step. With several workers: under the table's lock across
        processes, caught up from the log first, and the seat states and timers saved after."""
        async with self.lock:
            if not self.shared:
                yield
                return
            async with contextlib.AsyncExitStack() as held:
                await self._begin_step(held)
                try:
                    yield
                finally:
                    await self._save_step()

    async def _begin_step(self, held: contextlib.AsyncExitStack) -> None:
        """Take the table's lock into ``held`` and catch up, trying again with backoff (for up to
        STEP_RETRY_SECONDS) while the database is away: nothing of the step has happened yet, and a
        press already answered must not be dropped because PostgreSQL was restarting."""
        delay, started = RETRY_FIRST_SECONDS, time.monotonic()
        while True:
            attempt = contextlib.AsyncExitStack()
            try:
                await attempt.enter_async_context(self.storage.table_lock(self.table_id))
                await self._catch_up()
            except StorageError as error:
                await attempt.aclose()
                if isinstance(error, REFUSALS) or self.closed or time.monotonic() - started >= STEP_RETRY_SECONDS:
                    raise
                log.warning("table %s: a step waits for the database (%s); retrying in %.1f s",
                            self.table_id, error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)
                continue
            held.push_async_exit(attempt)
            return

    async def _catch_up(self) -> None:
        """Apply what other workers logged since this copy's last step, and take their seat states."""
        if self._unsure:
            self.game, self._unsure = await self._replay_from_log(), False
        progress = await self.storage.hand_progress(self.hand.id, self.logged)
        self.messages = {(m.seat, m.kind): m for m in progress.messages}
        events: list[Event] = []
        try:
            for logged in progress.actions:
                events += self.game.apply(Action.from_dict(logged.action))
                self.logged += 1
        except GameError:
            log.exception("table %s: the log does not apply to this copy; replaying it", self.table_id)
            self.game = await self._replay_from_log()
        if progress.hand.status is not HandStatus.PLAYING and not self.game.over:
            self.closed = True  # voided elsewhere (/cancel on another worker)
        moved, reopened = bool(progress.actions), False
        if progress.version != self._states_version and progress.seat_states is not None:
            reopened = not self._load_states(progress.seat_states)
            self._states_version = progress.version
            moved = True
        if moved:
            if events:
                self.last_events = tuple(events)
            self._refresh_decisions()
            caught_up = getattr(self.presenter, "caught_up", None)
            if caught_up is not None:
                await caught_up(self)
        if reopened:
            # The worker that logged the latest action could not save its prompts (the database
            # went away between the two, or the worker died): they open again here, and this
            # worker's saving them makes that worker's pending DM updates stand down (``behind``),
            # so this one shows them, or a person might never see their decision.
            for seat in range(SEATS):
                if self.human(seat) and self.state[seat].prompt_seq is not None and not self.state[seat].auto:
                    await self.presenter.prompt(self, seat)

    @contextlib.asynccontextmanager
    async def current(self) -> AsyncIterator[None]:
        """Hold the table while one of its views is sent. With several workers: under the table's
        lock and caught up, so that no worker moves the table while the view is on its way, and
        a view never lands after a newer one another worker sent (a check before sending would
        not be atomic with the send: a DM regressed to fewer swap picks, and its person picked
        again)."""
        if not self.shared:
            yield
            return
        async with self._deciding():
            yield

    async def behind(self) -> bool:
        """Several workers: whether another worker moved the table on since this copy's last step
        (its views then show a newer state than this copy would draw)."""
        if not self.shared:
            return False
        try:
            progress = await self.storage.hand_progress(self.hand.id, self.logged)
        except Exception:  # cannot tell: show what this copy has
            return False
        return bool(progress.actions) or progress.version != self._states_version

    def _states(self) -> JSON:
        return {"logged": self.logged, "table": self.table_message, "seats": [
            {"prompt": s.prompt_seq, "auto": s.auto, "left": s.left, "expiries": s.expiries, "pick": list(s.swap_pick),
             "deadline": s.deadline}
            for s in self.state
        ]}

    def _load_states(self, saved: JSON) -> bool:
        """Take the seat states another worker saved. Its open prompts hold only if they were saved
        after the latest logged action (a worker that died between the two saved older ones): the
        others open again (``_refresh_decisions``), with new deadlines. False when they were older."""
        pending = set(self.game.pending_seats()) if not self.game.over else set()
        current = saved["logged"] == self.logged
        if "table" in saved:  # (seat states saved before the hand's table picture was kept say nothing)
            self.table_message, self.table_message_known = saved["table"], True
        for seat, (state, kept) in enumerate(zip(self.state, saved["seats"], strict=True)):
            state.auto, state.left, state.expiries = kept["auto"], kept["left"], kept["expiries"]
            state.swap_pick = list(kept["pick"])
            state.prompt_seq = kept["prompt"] if seat in pending and current else None
            state.legal = tuple(self.game.legal_actions(seat)) if state.prompt_seq is not None else ()
            state.deadline = kept.get("deadline") if state.prompt_seq is not None else None
        self._saved_states = self._states()
        return bool(current)

    def write_with_step(self, write: Awaitable[Any]) -> None:
        """Several workers, during a step: a write to make at its end together with its timers and
        seat states (one transaction), before the table is let go. It must not raise."""
        self._step_writes.append(write)

    async def _save_step(self) -> None:
        """After a step: the seat states (if they changed), the timers it set and the writes asked
        for (``write_with_step``), for other workers. All are asked for at once, so the group
        commit writes them in one transaction."""
        states = self._states()
        flush = getattr(self.scheduler, "flush", None)
        writes = [flush()] if flush is not None else []
        writes += self._step_writes
        self._step_writes = []
        if states != self._saved_states and not self.game.over:
            writes.append(self._save_states(states))
        await asyncio.gather(*writes)

    async def _save_states(self, states: JSON) -> None:
        try:
            self._states_version = await self.storage.save_seat_states(self.hand.id, states)
            self._saved_states = states
        except Exception:  # the next step saves them; the log is the truth for the game itself
            log.exception("table %s: could not save the seat states", self.table_id)

    async def expire(self, seat: int, seq: int) -> None:
        """Time ran out: a computer player decides; the second expiry in a row hands over the seat."""
        async with self._deciding():
            state = self.state[seat]
            if self.closed or self.game.over or state.prompt_seq != seq or state.auto:
                return
            state.expiries += 1
            if state.expiries >= 2:
                state.auto = True
            await self._commit(await self._computer_choice(seat))
            self._arm_wake()
            if state.auto:
                await self.presenter.seat_controlled(self, seat, "timeout")
        self._kick()

    async def take_over(self, seat: int, reason: str) -> None:
        """Put a seat under computer control (托管), e.g. when its player blocked the bot."""
        async with self._deciding():
            if self.state[seat].auto or self.seats[seat].computer:
                return
            self.state[seat].auto = True
            self._cancel_timers(seat)
        await self.presenter.seat_controlled(self, seat, reason)
        self._kick()

    async def hand_to_computer(self, seat: int) -> bool:
        """The seat's person left (/leave) or was removed (/kick): a computer plays it to the end."""
        async with self._deciding():
            state = self.state[seat]
            if self.seats[seat].computer or state.left or self.game.over or self.closed:
                return False
            state.auto = state.left = True
            self._cancel_timers(seat)
        await self.presenter.prompt(self, seat)
        self._kick()
        return True

    async def _computer_choice(self, seat: int) -> Action:
        """The seat's computer player decides in a worker thread on a snapshot of its view, so a
        thinking hard player (up to ~60 ms a discard) does not hold up other tables' presses."""
        view, legal = self.game.view(seat), self.game.legal_actions(seat)
        return await asyncio.get_running_loop().run_in_executor(_THINKING, self._players[seat].choose, view, legal)

    def _kick(self) -> None:
        if self.closed or (self._driver is not None and not self._driver.done()):
            return
        self._driver = asyncio.get_running_loop().create_task(self._drive(), name=f"xz-table-{self.table_id}")

    async def _drive(self) -> None:
        """Let computer players (and seats under 托管) decide until a person must. A step that
        cannot begin (several workers: the table's lock or the log out of reach while the database
        restarts) is tried again with backoff, as a write is."""
        delay = RETRY_FIRST_SECONDS
        while not self.closed:
            if self.limits.computer_delay:
                await asyncio.sleep(self.limits.computer_delay)
            try:
                if await self._drive_step():
                    return
            except Exception as error:
                if self.closed:
                    return
                log.warning("table %s: the computer players wait for the database (%s); retrying in %.1f s",
                            self.table_id, error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)
                continue
            delay = RETRY_FIRST_SECONDS

    async def _drive_step(self) -> bool:
        """One computer decision; True when there is none to make (or it cannot be made)."""
        async with self._deciding():
            if self.game.over or self.closed:
                return True
            seat = next((s for s in self.game.pending_seats() if self.controlled(s)), None)
            if seat is None:
                return True
            try:
                await self._commit(await self._computer_choice(seat))
                self._arm_wake()
            except GameError:
                log.exception("table %s: computer player chose an illegal action", self.table_id)
                return True
            except Exception:  # storage refused the write (retries cover a storage that is away)
                log.exception("table %s: a computer player's move could not be logged", self.table_id)
                return True
        return False
