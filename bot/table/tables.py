"""The live tables of one running bot: starting hands, resuming them after a restart, ending them.

One ``Tables`` lives in the Application's services. It builds a ``TableRunner`` per playing
hand from what storage holds (the action log is the truth; the runner replays it) and wires it
to the Telegram presenter and to PTB's ``JobQueue`` for decision timers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.jobstores.base import JobLookupError
from telegram.error import BadRequest, TelegramError
from telegram.ext import ContextTypes, Job, JobQueue

from bot.i18n import Translator, supported
from bot.messaging import holds_no_picture
from bot.table.presenter import TelegramPresenter
from bot.table.runner import (
    REFUSALS,
    RETRY_FIRST_SECONDS,
    RETRY_MAX_SECONDS,
    Limits,
    SeatPlayer,
    TableRunner,
    parse_timer,
    settle_background,
    settlement_key,
    wake_key,
)
from bot.table.snapshots import restore_game, snapshot_of
from bot.tasks import settle
from engine.actions import Action, GameError
from engine.game import Game
from engine.rules import RuleSet
from storage import HandClosed, Storage, StorageError
from storage.models import Hand, PlayerKind, Table, TableStatus, Timer

log = logging.getLogger(__name__)

SeatTexts = Callable[[TableRunner, int], Translator]  # a seat's language, as the Telegram presenter chose it

COMPUTER_NAMES = ("AI-1", "AI-2", "AI-3", "AI-4")
ORPHAN_POLL_SECONDS = 0.5
ORPHAN_GRACE_SECONDS = 3.0
OWED_TICK_SECONDS = 10.0
OWED_FIRST_RETRY_SECONDS = 20.0
OWED_MAX_RETRY_SECONDS = 600.0
SETTLE_SECONDS = 10.0  # shut-down: how long presses and writes under way may take to finish
RESUME_TIMER = "xz-resume:"  # + table id: a hand to resume after a start (several workers: once, by one)


class JobQueueScheduler:
    """Decision timers on PTB's ``JobQueue``, one named job per seat.

    The jobs it set are kept by name until they fire or are cancelled: a step cancels the timers of
    all four seats, and ``JobQueue.get_jobs_by_name`` builds a ``Job`` for every job of the bot
    to find them (every table's timers: ~0.1 ms a call at 4 tables, growing with the tables)."""

    def __init__(self, job_queue: JobQueue[Any]) -> None:
        self.job_queue = job_queue
        self._jobs: dict[str, list[Job[Any]]] = {}

    def start(self, name: str, delay: float, callback: Callable[[], Awaitable[None]]) -> None:
        async def fire(context: ContextTypes.DEFAULT_TYPE) -> None:
            self._forget(name, context.job)
            await callback()

        self._jobs.setdefault(name, []).append(self.job_queue.run_once(fire, when=delay, name=name))

    def cancel(self, name: str) -> None:
        for job in self._jobs.pop(name, ()):
            with contextlib.suppress(JobLookupError):  # due already: on its way to fire, as before
                job.schedule_removal()

    def _forget(self, name: str, job: Job[Any] | None) -> None:
        jobs = self._jobs.get(name, [])
        if job in jobs:
            jobs.remove(job)
        if not jobs:
            self._jobs.pop(name, None)


async def table_languages(storage: Storage, default_language: str, runner: TableRunner) -> tuple[str, list[str]]:
    """The group's language and each seat's: a person's own choice (/lang in their DM), else the
    bot's default, never the group's, so switching a group to English leaves alone the DMs of
    people who never chose a language (as every other DM of theirs does)."""
    chat = await storage.get_chat(runner.chat_id)
    group = supported(chat.language) or default_language
    seats = []
    for player in runner.seats:
        user = await storage.get_user(player.user_id) if player.user_id is not None else None
        seats.append(supported(user.language if user else None) or default_language)
    return group, seats


class Tables:
    """The live hands of this process. With several workers (``storage.shared``) they are copies:
    ``live_runner`` finds (or takes up) a table's hand in play as the database has it, and the
    timers any worker set fire here through ``fire``."""

    def __init__(self, storage: Storage, presenter: TelegramPresenter, scheduler: Any,
                 limits: Limits) -> None:
        self.storage = storage
        self.presenter = presenter
        self.scheduler = scheduler
        self.limits = limits
        self.bot = presenter.bot  # kept apart: another feature may wrap the presenter
        self._group_texts = presenter.group_texts
        self.seat_texts: SeatTexts = presenter.seat_texts  # each person's language, for what other features send
        self._ping_due = presenter.ping_due  # the turn pings are Telegram's alone: the web hub has none
        self._repost_table = presenter.repost_table
        self.runners: dict[int, TableRunner] = {}
        self._chat_locks: dict[int, asyncio.Lock] = {}
        self._votes: dict[tuple[int, str], set[int]] = {}
        self.away: dict[int, list[int]] = {}  # chat id -> tables closed while the bot was out of the group
        self._closing: dict[int, asyncio.Task[None]] = {}
        self._owed_attempts: dict[str, tuple[int, float]] = {}  # key -> (tries so far, next try at)
        self.shared = storage.shared
        self._taking_up: dict[int, asyncio.Lock] = {}  # table id -> one worker task takes a hand up at a time
        self._presses: set[asyncio.Task[Any]] = set()  # presses answered first, still being made

    def keep(self, press: asyncio.Task[Any]) -> None:
        """A press answered before its move was made goes on in the background: shut-down lets it
        finish (``close``) rather than leave it pending when the event loop stops."""
        self._presses.add(press)
        press.add_done_callback(self._presses.discard)

    @contextlib.asynccontextmanager
    async def chat_lock(self, chat_id: int) -> AsyncIterator[None]:
        """Serialises a chat's lobby changes (updates are handled concurrently), across workers too."""
        async with self._chat_locks.setdefault(chat_id, asyncio.Lock()), self.storage.chat_lock(chat_id):
            yield

    async def seat_players(self, seat_ids: tuple[int, ...]) -> list[SeatPlayer]:
        players = [await self.storage.get_player(pid) for pid in seat_ids]
        return [SeatPlayer(p.id, p.name, p.user_id if p.kind is PlayerKind.USER else None) for p in players]

    async def fill_one_computer(self, table: Table) -> Table:
        """A computer player in the first empty seat (each seat a distinct ledger player)."""
        seat = table.seats.index(None)
        for name in COMPUTER_NAMES:
            player = await self.storage.named_player(table.chat_id, name, PlayerKind.COMPUTER)
            if player.id not in table.seats:
                return await self.storage.set_seat(table.id, seat, player.id)
        raise RuntimeError("more computer seats than computer names")

    async def fill_with_computers(self, table: Table) -> Table:
        while None in table.seats:
            table = await self.fill_one_computer(table)
        return table

    async def start_hand(self, table: Table, dealer: int | None = None) -> TableRunner:
        """Deal the table's next hand under its opener's rules (else the chat's current ones) and the
        chat's base stake: the stake is the admins' to set, never a table's."""
        chat = await self.storage.get_chat(table.chat_id)
        chosen = table.rules if table.rules is not None else chat.rules
        rules = RuleSet.from_dict(chosen).with_changes(base=chat.base_stake)
        seed = secrets.randbits(62)
        dealer = secrets.randbelow(4) if dealer is None else dealer
        hand = await self.storage.start_hand(table.id, rules.to_dict(), seed, dealer)
        return await self._start_dealt(table, hand, rules)

    async def _start_dealt(self, table: Table, hand: Hand, rules: RuleSet) -> TableRunner:
        """Show and play a hand storage has dealt, trying again while the database is away.

        Once dealt, the hand is the table's hand in play, and only its runner shows it and arms its
        timers: given up here (the database restarting between the deal and the runner's first step),
        it would stay dealt, unseen and without a timer, and the table would wait for ever. The step
        before the presenter is told changes nothing shared, so starting over from the deal is safe.
        """
        delay = RETRY_FIRST_SECONDS
        while True:
            try:
                runner = await self._runner(table, hand, Game(rules, hand.seed, hand.dealer))
                await runner.start()
                return runner
            except REFUSALS:
                raise
            except StorageError as error:
                log.warning("table %s: hand %s is dealt but cannot start yet (%s); trying again in %.1f s",
                            table.id, hand.id, error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)

    async def resume_all(self) -> None:
        """After a restart: every playing hand continues where its log ends (from its snapshot
        where that agrees with the log), or is voided. With several workers starting together,
        each hand is resumed once, by the worker that claims its resume timer.

        A worker that starts while others run (one worker restarted, or one more added) resumes
        nothing: the others serve the tables, and a hand whose worker stopped is taken up quietly
        by its watch (``close`` makes it due at once; after a kill it comes due by itself), so the
        groups are not told "the bot is back" when the bot never left."""
        if self.shared:
            if await self.storage.join_workers():
                return
            hands = await self.storage.unfinished_hands()
            timers: dict[str, tuple[float, Any] | None] = {
                f"{RESUME_TIMER}{u.table.id}": (0, {"hand": u.hand.id}) for u in hands}
            # The resume shows the hand again and arms its watch: a watch left from before would
            # take the hand up without showing it.
            timers.update({wake_key(u.table.id): None for u in hands})
            await self.storage.set_timers(timers, keep_existing=True)
            return  # owed cards: retry_owed, under each chat's lock
        snapshots = await self.storage.hand_snapshots()
        for unfinished in await self.storage.unfinished_hands():
            hand, table = unfinished.hand, unfinished.table
            try:
                rules = RuleSet.from_dict(hand.rules)
                actions = [Action.from_dict(a.action) for a in unfinished.actions]
                game = restore_game(rules, hand, actions, snapshots.get(hand.id))
            except (GameError, ValueError, KeyError) as error:
                log.error("hand %s cannot be replayed (%s); voiding it", hand.id, error)
                await self.storage.void_hand(hand.id, f"could not be replayed: {error}")
                continue
            runner = await self._runner(table, hand, game)
            await runner.start(resumed=True)
        await self.post_owed()

    async def live_runner(self, table_id: int) -> TableRunner | None:
        """The table's runner for its hand in play (or its finished hand's, which answers "hand over").

        With several workers the hand may have been dealt, or moved on, by another worker: the
        database says which hand is in play, and a copy of it is taken up here when this worker
        has none (restored from the log; the runner catches up at each step anyway)."""
        local = self.runners.get(table_id)
        if not self.shared:
            return local
        async with self._taking_up.setdefault(table_id, asyncio.Lock()):
            hand_id = await self.storage.playing_hand(table_id)
            local = self.runners.get(table_id)
            if hand_id is None or (local is not None and local.hand.id == hand_id):
                return local
            log.info("table %s: taking up hand %s as the database has it", table_id, hand_id)
            if local is not None:  # this worker's copy of an earlier hand: its messages are not this hand's
                await self.presenter.forget(table_id)
            hand, table = await self.storage.get_hand(hand_id), await self.storage.get_table(table_id)
            actions = [Action.from_dict(a.action) for a in await self.storage.hand_actions(hand_id)]
            game = restore_game(RuleSet.from_dict(hand.rules), hand, actions, None)
            runner = await self._runner(table, hand, game)
            await runner.attach()
            return runner

    async def fire(self, timer: Timer) -> None:
        """A timer from the database, claimed by this worker: a decision's deadline or turn ping, a
        table's watch, or a hand to resume after a start."""
        if timer.key.startswith(RESUME_TIMER):
            await self._resume_one(int(timer.key[len(RESUME_TIMER):]))
            return
        parsed = parse_timer(timer.key)
        if parsed is None:
            log.warning("unknown timer %r; dropped", timer.key)
            return
        kind, table_id, seat = parsed
        runner = await self.live_runner(table_id)
        if runner is None or runner.game.over:
            return  # the hand is over (or voided): its timers are spent
        if kind == "deadline" and seat is not None:
            await runner.expire(seat, int(timer.data.get("seq", -1)))
        elif kind == "ping" and seat is not None:
            await self._ping_due(runner, seat, int(timer.data.get("seq", -1)), str(timer.data.get("stage", "ping")))
        else:
            await runner.wake()

    async def _resume_one(self, table_id: int) -> None:
        """Several workers: after a start, one worker says the hand goes on and shows it again."""
        async with self._taking_up.setdefault(table_id, asyncio.Lock()):
            hand_id = await self.storage.playing_hand(table_id)
            if hand_id is None or table_id in self.runners:
                return
            hand, table = await self.storage.get_hand(hand_id), await self.storage.get_table(table_id)
            try:
                actions = [Action.from_dict(a.action) for a in await self.storage.hand_actions(hand_id)]
                game = restore_game(RuleSet.from_dict(hand.rules), hand, actions, None)
            except (GameError, ValueError, KeyError) as error:
                log.error("hand %s cannot be replayed (%s); voiding it", hand.id, error)
                await self.storage.void_hand(hand.id, f"could not be replayed: {error}")
                return
            runner = await self._runner(table, hand, game)
        await runner.start(resumed=True)

    async def save_snapshots(self) -> None:
        """A snapshot of every live hand, so the next start restores it instead of replaying it."""
        for runner in self.runners.values():
            if runner.game.over:
                continue
            async with runner.lock:
                seq, state = snapshot_of(runner.game)
            try:
                await self.storage.save_snapshot(runner.hand.id, seq, state)
            except HandClosed:  # several workers: another finished (or voided) the hand meanwhile
                continue
            except Exception:  # a snapshot only saves time: the log is the truth
                log.exception("table %s: could not save the snapshot of hand %s", runner.table_id, runner.hand.id)

    async def post_owed(self) -> None:
        """Settlement cards owed since before a restart: post them again from the hand's log.

        The outbox row was written with the hand's final action; it is marked sent once a
        Next hand / End press proves the card reached the group. A card owed by a table that
        has moved on (a newer hand, or the table closed) is no longer wanted.
        """
        for owed in await self.storage.owed_posts():
            kind, _, raw = owed.key.partition(":")
            if kind != "settlement" or not raw.isdigit():
                continue
            hand = await self.storage.get_hand(int(raw))
            table = await self.storage.get_table(hand.table_id)
            hands = await self.storage.table_hands(table.id)
            if table.status is not TableStatus.PLAYING or hands[-1].id != hand.id or table.id in self.runners:
                await self.storage.mark_posted(owed.key)
                continue
            logged = [Action.from_dict(a.action) for a in await self.storage.hand_actions(hand.id)]
            game = Game.replay(RuleSet.from_dict(hand.rules), hand.seed, hand.dealer, logged)
            runner = await self._runner(table, hand, game)
            await runner.start(resumed=True)  # the game is over: this shows the final table and DMs
            await self.presenter.changed(runner, ())

    async def retry_owed(self) -> None:
        """A live table's settlement card still owed (Telegram refused it past the client's own
        retries: a storm of 429s or 5xx) is posted again 20 s after the hand ended, then after
        40 s, 80 s... at most every 10 min, until a send succeeds or the table moves on."""
        now = datetime.now(UTC)
        if self.shared:
            await self._retry_owed_shared(now.timestamp())
            return
        live = {runner.hand.id: runner for runner in self.runners.values() if runner.game.over}
        for owed in await self.storage.owed_posts():
            kind, _, raw = owed.key.partition(":")
            runner = live.get(int(raw)) if kind == "settlement" and raw.isdigit() else None
            if runner is None:
                continue
            first = (0, owed.created_at.timestamp() + OWED_FIRST_RETRY_SECONDS)
            attempt, due = self._owed_attempts.get(owed.key, first)
            if now.timestamp() < due:
                continue
            wait = min(OWED_FIRST_RETRY_SECONDS * 2 ** (attempt + 1), OWED_MAX_RETRY_SECONDS)
            self._owed_attempts[owed.key] = (attempt + 1, now.timestamp() + wait)
            log.warning("table %s: the settlement card of hand %s is still owed; posting it again",
                        runner.table_id, runner.hand.id)
            await self.presenter.changed(runner, ())

    async def _retry_owed_shared(self, now: float) -> None:
        """Several workers: a card still owed after OWED_FIRST_RETRY_SECONDS (its worker may have
        died before posting it, or Telegram refused it) is posted by one worker, under the chat's
        lock, once it finds the card still owed; then after 40 s, 80 s... as with one process."""
        for owed in await self.storage.owed_posts():
            kind, _, raw = owed.key.partition(":")
            if kind != "settlement" or not raw.isdigit():
                continue
            first = (0, owed.created_at.timestamp() + OWED_FIRST_RETRY_SECONDS)
            attempt, due = self._owed_attempts.get(owed.key, first)
            if now < due:
                continue
            wait = min(OWED_FIRST_RETRY_SECONDS * 2 ** (attempt + 1), OWED_MAX_RETRY_SECONDS)
            self._owed_attempts[owed.key] = (attempt + 1, now + wait)
            async with self.chat_lock(owed.chat_id):
                if owed.key in {o.key for o in await self.storage.owed_posts()}:
                    await self.post_settlement_card(int(raw))

    async def post_settlement_card(self, hand_id: int) -> None:
        """Post a finished hand's settlement card (with Next hand / End) again, if its table still
        waits on it: owed after a refusal, or scrolled away and asked for (``/newgame``)."""
        key = settlement_key(hand_id)
        hand = await self.storage.get_hand(hand_id)
        table = await self.storage.get_table(hand.table_id)
        hands = await self.storage.table_hands(table.id)
        if table.status is not TableStatus.PLAYING or hands[-1].id != hand.id:
            await self.storage.mark_posted(key)  # the table moved on: the card is no longer wanted
            return
        runner = self.runners.get(table.id)
        if runner is None or runner.hand.id != hand.id or not runner.game.over:
            logged = [Action.from_dict(a.action) for a in await self.storage.hand_actions(hand.id)]
            game = Game.replay(RuleSet.from_dict(hand.rules), hand.seed, hand.dealer, logged)
            runner = await self._runner(table, hand, game)
        log.warning("table %s: the settlement card of hand %s is still owed; posting it again", table.id, hand.id)
        post = getattr(self.presenter, "post_settlement", None)
        if post is not None:
            await post(runner)

    async def storage_trouble(self, runner: TableRunner, slow: bool) -> None:
        """Tell the group once that moves wait for the database, and once that they go on."""
        texts = self._group_texts(runner)
        text = (texts.t("The bot cannot save moves right now; the table waits and goes on by itself.") if slow
                else texts.t("Saving works again; the table goes on."))
        with contextlib.suppress(TelegramError):
            await self.bot.send_message(runner.chat_id, text, message_thread_id=runner.topic_id)

    async def _runner(self, table: Table, hand: Hand, game: Game) -> TableRunner:
        old = self.runners.pop(table.id, None)
        if old is not None:
            await old.close()
        runner = TableRunner(
            table_id=table.id,
            chat_id=table.chat_id,
            topic_id=table.topic_id,
            hand=hand,
            game=game,
            seats=await self.seat_players(hand.seats),
            storage=self.storage,
            presenter=self.presenter,
            scheduler=self.scheduler,
            limits=self.limits,
            on_storage_trouble=self.storage_trouble,
        )
        self.runners[table.id] = runner
        return runner

    async def void(self, table_id: int, reason: str) -> None:
        """Abandon the table's playing hand: chips of the hand are restored."""
        runner = self.runners.pop(table_id, None)
        if runner is not None:
            await runner.close()
            await self.presenter.forget(table_id)
            if not runner.game.over:
                await self.storage.void_hand(runner.hand.id, reason)

    async def finished(self, table_id: int) -> None:
        runner = self.runners.pop(table_id, None)
        if runner is not None:
            await runner.close()
            await self.presenter.forget(table_id)

    async def chat_moved(self, old: int, new: int) -> None:
        """A group became a supergroup: live tables post to its new id from now on.

        The old group's messages cannot be pressed or edited any more, so a hand in progress
        posts its table picture again in the new group (and edits that one), and a settlement
        card waiting for Next hand / End is posted again there.
        """
        for runner in list(self.runners.values()):
            if runner.chat_id == old:
                runner.chat_id = new
                if runner.game.over:
                    await self.presenter.changed(runner, ())
                else:
                    self._repost_table(runner)
        if old in self._chat_locks:
            self._chat_locks.setdefault(new, self._chat_locks[old])

    def orphan(self, table_id: int, chat_id: int) -> None:
        """The bot left the table's group: the hand goes on in private messages, then the table closes.

        Removed, added back and removed again within one hand, the table is already closing: a
        second closing task would replace the first in ``_closing``, and the first, no longer
        cancelled at a stop, would run on into closed storage."""
        away = self.away.setdefault(chat_id, [])
        if table_id not in away:
            away.append(table_id)
        if table_id not in self._closing:
            self._closing[table_id] = asyncio.get_running_loop().create_task(self._close_when_over(table_id))

    async def _close_when_over(self, table_id: int) -> None:
        runner = self.runners.get(table_id)
        while runner is not None and not runner.closed and not runner.game.over:
            await asyncio.sleep(ORPHAN_POLL_SECONDS)
        if runner is not None and runner.game.over:
            await self.storage.mark_posted(settlement_key(runner.hand.id))  # no group to post it to
            await asyncio.sleep(ORPHAN_GRACE_SECONDS)  # the players' last DM updates go out first
        await self.finished(table_id)
        table = await self.storage.get_table(table_id)
        if table.status is TableStatus.PLAYING:
            await self.storage.set_table_status(table_id, TableStatus.FINISHED)
        self._closing.pop(table_id, None)

    def returned(self, chat_id: int) -> list[int]:
        """The tables that closed (or are closing) while the bot was away from ``chat_id``."""
        return self.away.pop(chat_id, [])

    async def vote(self, hand_id: int, verb: str, user_id: int) -> int:
        """Count a seated person's vote for Next hand / End under a hand; the number of votes so far.
        With several workers the votes are kept in the database (each may reach another worker)."""
        if self.shared:
            return await self.storage.add_vote(hand_id, verb, user_id)
        voters = self._votes.setdefault((hand_id, verb), set())
        voters.add(user_id)
        return len(voters)

    async def clear_buttons(self, table_id: int, caption: str | None) -> None:
        """A table that is over keeps no live buttons: its players' DMs and the group picture.

        ``caption`` replaces the group picture's caption (it may still describe a swap or a turn).
        """
        table = await self.storage.get_table(table_id)
        bot = self.bot
        for seat, message_id in enumerate(table.dm_message_ids):
            player_id = table.seats[seat]
            if message_id is None or player_id is None:
                continue
            player = await self.storage.get_player(player_id)
            if player.user_id is None or player.kind is PlayerKind.COMPUTER:
                continue
            with contextlib.suppress(TelegramError):
                await bot.edit_message_reply_markup(player.user_id, message_id, reply_markup=None)
        if table.message_id is not None and caption is not None:
            with contextlib.suppress(TelegramError):
                try:
                    await bot.edit_message_caption(table.chat_id, table.message_id, caption=caption, reply_markup=None)
                except BadRequest as error:
                    if not holds_no_picture(error):
                        raise
                    # a group that refuses pictures has its table message as text
                    await bot.edit_message_text(caption, table.chat_id, table.message_id, reply_markup=None)

    async def _hand_over_on_stop(self) -> None:
        """Several workers: the watches of the hands this worker was playing come due at once, so
        another worker takes them up now (a computer player's turn would otherwise wait for the
        watch). Best effort: without it the watches still come due by themselves."""
        playing = [t for t, runner in self.runners.items() if not runner.game.over and not runner.closed]
        if not playing:
            return
        try:
            if not await self.storage.join_workers():
                return  # the last worker: the next start resumes them (and says so)
            await self.storage.set_timers({wake_key(table_id): (0, {}) for table_id in playing})
        except Exception as error:
            log.warning("could not hand %d tables over to the other workers: %s", len(playing), error)

    async def close(self) -> None:
        close_timers = getattr(self.scheduler, "close", None)
        if close_timers is not None:
            await close_timers()  # first: this worker claims nothing more, the watches below included
        await settle(self._presses, SETTLE_SECONDS)  # presses already answered are made, not dropped
        if self.shared:
            await self._hand_over_on_stop()
        await settle(set(self._closing.values()), 0)
        for runner in list(self.runners.values()):
            await runner.close()
        await self.save_snapshots()
        await settle_background(SETTLE_SECONDS)
        self.runners.clear()
        await self.presenter.close()
