"""Puts a live hand on Telegram: one edited table picture in the group, one edited DM per player.

Telegram's limits and the CPU are what a busy bot runs out of, so everything here is drawn and
sent as late and as seldom as the players allow:

- **Draw when sending.** Every send or edit first takes its turn from the rate limiter
  (``TelegramRateLimiter.slot``) and only then builds its picture, from the table's state at that
  moment: a state superseded while the send waited is never drawn. Each table keeps its latest
  drawn pictures (``TableShow``), and a picture whose inputs did not change is not drawn again.
- **The group** gets its table message edited at most once per ``group_interval`` and at most
  ``GROUP_POSTS_PER_MINUTE`` posts and edits a minute; wins and the end of the hand are new
  messages (result cards).
- **Each person's DM** is one photo message. Its picture is brought up to date when a decision
  opens for them (with the decision's buttons) and at the end of the hand; their own move changes
  only its caption and buttons at once; the others' moves are shown at most every
  ``dm_interval`` seconds meanwhile (usually the next decision comes first and shows them).
- **Turn pings.** Edits do not notify, so a decision still open ``PING_GRACE`` seconds after the
  DM showed it sends a short new message that does (deleted once the decision is made, so the DM
  stays one screen); someone at the screen who decides at once gets no ping at all. Once,
  ``REMINDER_LEAD`` seconds before the timer runs out, a reminder replaces it, and the group
  mentions the person. When the timer ran out and the computer played for someone, their DM says
  what it did.

**Several workers** (``runner.shared``): what each DM shows is the database's, not a worker's
memory. The hand's messages per seat (``storage.seat_messages``: the DM picture with digests of its
picture, caption and buttons and the decision it shows; the ping or reminder and the decision it is
for; the latest notice; the group's mention) are read with each step's catch-up and written while
the writer holds the table (``runner.current()``), so whichever worker serves a table next edits the
DM message the hand has (never an earlier hand's), skips a redraw of what it already shows, and
deletes a ping another worker sent. A decision's ping and reminder are a database timer
(``runner.ping_key``) set when the DM first shows it: any worker fires it, even after the worker
that set it died, and sends it only if the decision is still open and not pinged yet. Stale pings
and mentions are deleted by the worker that finds them stale, and only by the one whose
conditional delete of the row succeeds.

Rendering runs in a worker thread so a busy table never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import html
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputMediaPhoto, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.i18n import Translator, translator
from bot.messaging import call_unparsed, holds_no_picture, is_not_modified, message_gone, picture_or_text
from bot.ratelimit import chat_turn
from bot.table import callbacks, views
from bot.table.runner import TableRunner, ping_key, settlement_key
from bot.tasks import settle
from bot.topics import topic_gone
from engine.events import Event, EventType
from engine.game import Phase
from rendering.models import ResultCard, TableView
from storage import Storage, StorageError
from storage.models import JSON, SeatMessage

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

# Telegram allows about 20 messages a minute into a group; edits of the table picture give way
# so that cards and announcements (which must go out) keep the group under it.
GROUP_POSTS_PER_MINUTE = 18
DM_RETRY_SECONDS = 1.0  # several workers: a DM update that could not reach the table tries again
# The reminder comes this many seconds before a decision's timer runs out (half the time at most).
REMINDER_LEAD = 10.0
# A decision pings only if it is still open this long after the DM showed it (at most half the
# time before the reminder): the person is not looking at the screen, or would have pressed by now.
PING_GRACE = 4.0
CLOSE_SECONDS = 5.0  # shut-down: how long a ping or notice on its way may take to be sent (or deleted)

Languages = Callable[[TableRunner], Awaitable[tuple[str, list[str]]]]
Markup = InlineKeyboardMarkup | None


@dataclass
class SeatShow:
    """What one person's DM shows of a table, and what it still has to show."""

    message_id: int | None = None
    picture: object = None  # the inputs of the picture on screen (redrawn only when they change)
    caption: str | None = None
    buttons: object = None
    due: float = math.inf  # when the picture must next be brought up to date
    text_now: bool = False  # caption and buttons must change at once (the person just acted)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    decision: int | None = None  # the prompt number of the open decision, as last seen
    opened: float = 0.0  # when it opened
    armed: int | None = None  # the decision whose ping waits its grace (from when its buttons were shown)
    reminder: asyncio.Task[None] | None = None  # the open decision's ping, then its reminder
    ping: int | None = None  # the notifying message of the open decision (or its reminder)
    ping_for: int | None = None
    notice: int | None = None  # "the computer played for you"
    mention: int | None = None  # the group message that mentions this person
    expiries: int = 0  # the runner's count of run-out timers, as last seen
    rearm: bool = False  # several workers: the person picked, so the unsent ping waits its grace again


@dataclass
class TableShow:
    """What the group and the DMs of one table show, with the table's latest drawn pictures."""

    group_texts: Translator
    seat_texts: list[Translator]
    message_id: int | None = None
    group_dirty: bool = False
    group_task: asyncio.Task[None] | None = None
    group_sent: float = 0.0
    group_posts: deque[float] = field(default_factory=deque)
    outbox: asyncio.Task[None] | None = None
    group_picture: tuple[TableView, bytes] | None = None  # the latest table picture drawn, and its PNG
    group_shown: tuple[TableView, str] | None = None  # what the table message shows
    seats: dict[int, SeatShow] = field(default_factory=dict)
    group_gone: bool = False  # the group refused a post (the bot was removed): the hand goes on by DM
    # The group may not get photos (its members may not send any, and the bot is no admin): this
    # hand's table message, win and settlement cards go there as their text, with their buttons.
    photos_refused: bool = False


class TelegramPresenter:
    """Output of every live table of one Application."""

    def __init__(self, bot: Bot, storage: Storage, languages: Languages, group_interval: float = 4.0,
                 dm_interval: float | None = None) -> None:
        self.bot = bot
        self.storage = storage
        self.languages = languages
        self.group_interval = group_interval
        self.dm_interval = group_interval if dm_interval is None else dm_interval
        self._shows: dict[int, TableShow] = {}
        self._uploads = UploadCache()
        self._sprites: asyncio.Future[int] | None = None
        self._background: set[asyncio.Task[Any]] = set()  # notices, hand-overs: ended by ``close``
        self._told_no_photos: set[int] = set()  # groups told that their tables go on in text

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Future[Any]:
        """Run ``work`` in the background, ended with the presenter (none left pending at shut-down)."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def _prepare_sprites(self) -> None:
        """The first hand of the process draws the tile sprites its pictures will use in a worker
        thread (a one-off, ~0.6 s of CPU), so that players' first pictures are only pastes."""
        if self._sprites is None:
            from rendering.screen import prepare_live_sprites

            self._sprites = asyncio.get_running_loop().run_in_executor(None, prepare_live_sprites)

    # --- the Presenter protocol ------------------------------------------------------------

    async def hand_started(self, runner: TableRunner, resumed: bool) -> None:
        self._prepare_sprites()
        group_lang, seat_langs = await self.languages(runner)
        old = self._shows.get(runner.table_id)
        if old is not None:
            await self._drop(runner.table_id)
        show = self._shows[runner.table_id] = TableShow(translator(group_lang), [translator(x) for x in seat_langs])
        table = await self.storage.get_table(runner.table_id)
        texts = show.group_texts
        if resumed:
            line = texts.t("The bot is back: hand {n} continues.", n=runner.hand.number)
            self._enqueue(runner, lambda: self._send_group_text(runner, line))
        self._enqueue(runner, lambda: self._post_table(runner, again=resumed))
        for seat in range(len(runner.seats)):
            if runner.human(seat):
                seat_show = show.seats[seat] = SeatShow()
                if resumed and table.dm_message_ids[seat] is not None:
                    seat_show.message_id = table.dm_message_ids[seat]
                self._note_decision(runner, seat)
                self._want_seat(runner, seat, picture=True)

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None:
        """Called under the table's lock: note what to show, send it in the background."""
        show = self._shows.get(runner.table_id)
        if show is None:
            return
        texts = show.group_texts
        wins = [e.win for e in events if e.type is EventType.WON and e.win is not None]
        if wins:
            transfers = [e.transfer for e in events if e.transfer is not None]
            card = views.win_card(runner, wins, transfers, texts)
            self._enqueue(runner, lambda: self._send_card(runner, card))
        if runner.game.over:
            final = views.final_card(runner, texts)
            self._enqueue(runner, lambda: self._finish(runner, final))
        else:
            self._schedule_group(runner)
        for seat, seat_show in show.seats.items():
            acted = any(e.seat == seat for e in events)
            expiries = runner.state[seat].expiries  # counts the timer's run-outs since the last press
            if acted and expiries > seat_show.expiries and runner.game.actions:
                self._enqueue_seat_notice(runner, seat, runner.game.actions[-1])
            seat_show.expiries = expiries
            opened = self._note_decision(runner, seat)
            self._want_seat(runner, seat, picture=opened or runner.game.over, text=acted)

    async def prompt(self, runner: TableRunner, seat: int) -> None:
        """The seat's buttons changed without a move (a swap pick, "I'm back"). A pick shows the
        person is at the screen: the decision's ping, if not sent yet, waits its grace again."""
        if runner.table_id in self._shows and seat in self._shows[runner.table_id].seats:
            opened = self._note_decision(runner, seat)
            seat_show = self._shows[runner.table_id].seats[seat]
            if runner.shared:
                seat_show.rearm = not opened  # the DM update that shows the pick sets the ping again
            elif (not opened and seat_show.decision is not None and seat_show.armed == seat_show.decision
                    and seat_show.ping_for != seat_show.decision):
                self._arm_pings(runner, seat, seat_show)
            self._want_seat(runner, seat, picture=opened, text=True)

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None:
        texts = self.group_texts(runner)
        name = runner.seats[seat].name
        if reason == "blocked":
            line = texts.t("{name} cannot be reached by private message; the computer plays for them.",
                           name=name)
        else:
            line = texts.t("{name} ran out of time twice; the computer plays for them until they are back.",
                           name=name)
        self._enqueue(runner, lambda: self._send_group_text(runner, line))
        if runner.table_id in self._shows and seat in self._shows[runner.table_id].seats:
            self._note_decision(runner, seat)
            self._want_seat(runner, seat, picture=False, text=True)

    def _enqueue(self, runner: TableRunner, send: Callable[[], Awaitable[Any]]) -> None:
        """Group posts of one table go out in order, without holding up the table's lock."""
        show = self._shows.get(runner.table_id)
        if show is None:
            return
        previous = show.outbox

        async def after_previous() -> None:
            if previous is not None:
                with contextlib.suppress(Exception):
                    await previous
            await send()

        show.outbox = asyncio.get_running_loop().create_task(after_previous())

    def repost_table(self, runner: TableRunner) -> None:
        """The group became a supergroup (``runner.chat_id`` is the new id): the live hand's table
        message is posted there again, and edited there from then on."""
        show = self._shows.get(runner.table_id)
        if show is not None and not runner.game.over:
            show.message_id, show.group_shown = None, None
            self._enqueue(runner, lambda: self._post_table(runner, again=True))

    # --- several workers ---------------------------------------------------------------------

    async def attach(self, runner: TableRunner) -> None:
        """Take up the messages of a hand another worker dealt and shows (ids from storage), posting
        nothing: this worker edits them from its next change on."""
        if runner.table_id not in self._shows:
            group_lang, seat_langs = await self.languages(runner)
            show = self._shows[runner.table_id] = TableShow(translator(group_lang),
                                                            [translator(x) for x in seat_langs])
            for seat in range(len(runner.seats)):
                if runner.human(seat):
                    show.seats[seat] = SeatShow()
        await self.caught_up(runner)
        if runner.table_message is None and runner.table_message_known:
            # The hand's table picture was never posted (its worker died first): post it (holding the
            # table, only if the dealer has not meanwhile).
            self._enqueue(runner, lambda: self._post_table(runner))

    async def post_settlement(self, runner: TableRunner) -> None:
        """Post a finished hand's settlement card that is still owed, and wait until it is out
        (several workers: the caller holds the chat's lock, so one worker posts it)."""
        await self.attach(runner)
        await self._finish(runner, views.final_card(runner, self._shows[runner.table_id].group_texts))

    async def caught_up(self, runner: TableRunner) -> None:
        """Another worker moved the table on and showed it: what this worker remembers of the
        messages is stale, so its next update checks them against the database (``_adopt_dm``:
        the hand's own DM message and what it shows; its pings are the database's too)."""
        show = self._shows.get(runner.table_id)
        if show is None:
            return
        if runner.table_message is not None:
            show.message_id = runner.table_message
        elif not runner.table_message_known:  # seat states from before the hand's picture was kept
            show.message_id = (await self.storage.get_table(runner.table_id)).message_id or show.message_id
        show.group_shown = None
        for seat, seat_show in show.seats.items():
            seat_show.picture = seat_show.caption = seat_show.buttons = None
            seat_show.expiries = runner.state[seat].expiries
            state = runner.state[seat]
            seat_show.decision = None if (state.auto or runner.game.over) else state.prompt_seq

    def _adopt_dm(self, runner: TableRunner, seat: int, seat_show: SeatShow) -> None:
        """Several workers, holding the table: take the hand's DM message for the seat and what it
        shows from the database (another worker may have sent or edited it since this one did). With
        none stored, the hand has no DM yet, unless this worker remembers one it could not store
        (or the hand was dealt before DMs were stored: the resumed ids)."""
        stored = runner.messages.get((seat, "dm"))
        if stored is None:
            return
        seat_show.message_id = stored.message_id
        picture = stored.shows.get("picture")
        seat_show.picture = tuple(picture) if picture is not None else None
        seat_show.caption, seat_show.buttons = stored.shows.get("caption"), stored.shows.get("buttons")

    def _open_decision(self, runner: TableRunner, seat: int) -> int | None:
        state = runner.state[seat]
        return None if (state.auto or runner.game.over or runner.closed) else state.prompt_seq

    async def _keep(self, runner: TableRunner, seat: int, kind: str, message_id: int, shows: JSON) -> bool:
        """Store the seat's message of ``kind`` in place of the one the table's copy has (holding the
        table, so no other worker writes it meanwhile); False (and logged) if another one was there,
        or the database could not take it."""
        old = runner.messages.get((seat, kind))
        if old is not None and old.message_id == message_id and old.shows == shows:
            return True
        try:
            written = await self.storage.put_seat_message(runner.hand.id, seat, kind, message_id, shows,
                                                          replacing=None if old is None else old.message_id)
        except StorageError as error:
            log.warning("table %s seat %s: could not keep the %s message: %s", runner.table_id, seat, kind, error)
            return False
        if written:
            runner.messages[(seat, kind)] = SeatMessage(seat, kind, message_id, shows)
        else:
            log.warning("table %s seat %s: the %s message was replaced meanwhile", runner.table_id, seat, kind)
        return written

    async def _store_dm(self, runner: TableRunner, seat: int, seat_show: SeatShow) -> None:
        """Several workers, holding the table: the DM as shown now, and the open decision it shows.
        A decision the DM shows for the first time (or again after a pick) gets its turn ping,
        unless one was sent for it already."""
        if seat_show.message_id is None:
            return
        decision = self._open_decision(runner, seat)
        old = runner.messages.get((seat, "dm"))
        picture = list(seat_show.picture) if isinstance(seat_show.picture, tuple) else None
        shows = {"picture": picture, "caption": seat_show.caption, "buttons": seat_show.buttons, "decision": decision}
        if not (old is not None and old.message_id == seat_show.message_id and old.shows == shows):
            # with the step's timers (the ping below), in one transaction before the table is let go
            runner.write_with_step(self._keep(runner, seat, "dm", seat_show.message_id, shows))
        rearm, seat_show.rearm = seat_show.rearm, False
        if decision is None or not (rearm or old is None or old.shows.get("decision") != decision):
            return
        ping = runner.messages.get((seat, "ping"))
        if ping is not None and ping.shows.get("decision") == decision:
            return  # pinged already: the reminder stays as set
        left, lead = self._time_left(runner, seat)
        until_reminder = left - lead
        if until_reminder > 0:
            runner.scheduler.start(ping_key(runner.table_id, seat), min(PING_GRACE, until_reminder / 2), _fired,
                                   data={"seq": decision, "stage": "ping"})  # type: ignore[call-arg]
        else:  # the DM shows the decision only at the reminder's time: the reminder pings
            runner.scheduler.start(ping_key(runner.table_id, seat), 0, _fired,
                                   data={"seq": decision, "stage": "reminder"})  # type: ignore[call-arg]

    @staticmethod
    def _time_left(runner: TableRunner, seat: int) -> tuple[float, float]:
        """Seconds until the seat's decision times out, and how long before that the reminder comes."""
        seconds = runner.decision_seconds(seat)
        deadline = runner.state[seat].deadline
        return (seconds if deadline is None else deadline - time.time()), min(REMINDER_LEAD, seconds / 2)

    async def _stale_messages(self, runner: TableRunner, seat: int) -> list[tuple[int, int]]:
        """Several workers, holding the table: the pings and mentions of decisions no longer open are
        forgotten; the (chat, message) pairs this worker must delete, those whose rows it removed."""
        decision = self._open_decision(runner, seat)
        stale: list[tuple[int, int]] = []
        for kind, chat_id in (("ping", runner.seats[seat].user_id), ("mention", runner.chat_id)):
            kept = runner.messages.get((seat, kind))
            if kept is None or chat_id is None or kept.shows.get("decision") == decision:
                continue
            if await self.storage.drop_seat_message(runner.hand.id, seat, kind, kept.message_id):
                stale.append((chat_id, kept.message_id))
            runner.messages.pop((seat, kind), None)
        return stale

    async def ping_due(self, runner: TableRunner, seat: int, decision: int, stage: str) -> None:
        """Several workers: a decision's ping (or its reminder) came due, on whichever worker claimed
        it. Sent holding the table, only while the decision is open and not pinged (or reminded)
        yet, and stored at once: a worker that closes the decision later finds it and deletes it."""
        user_id = runner.seats[seat].user_id
        show = self._shows.get(runner.table_id)
        if user_id is None or show is None or seat not in show.seats:
            return
        texts = self.seat_texts(runner, seat)
        replaced: list[tuple[int, int]] = []
        async with self._turn(user_id), runner.current():
            if self._open_decision(runner, seat) != decision:
                return  # made meanwhile
            ping = runner.messages.get((seat, "ping"))
            if ping is not None and ping.shows.get("decision") == decision and (
                    stage == "ping" or ping.shows.get("stage") == "reminder"):
                return  # sent already, by this worker or another
            left, lead = self._time_left(runner, seat)
            if stage == "ping":
                text = views.prompt_line(runner, seat, texts) + "\n" + texts.t(
                    "{n} seconds to decide.", n=max(int(left), 1))
            else:
                text = texts.t("{n} seconds left.", n=max(round(left), 1))
            try:
                sent = await self.bot.send_message(user_id, text)
            except TelegramError as error:
                log.info("could not ping %s: %s", user_id, error)
                return
            if not await self._keep(runner, seat, "ping", sent.message_id, {"decision": decision, "stage": stage}):
                replaced.append((user_id, sent.message_id))
            elif ping is not None:
                replaced.append((user_id, ping.message_id))
            notice = runner.messages.get((seat, "notice"))
            if notice is not None and await self.storage.drop_seat_message(runner.hand.id, seat, "notice",
                                                                           notice.message_id):
                runner.messages.pop((seat, "notice"), None)
                replaced.append((user_id, notice.message_id))
            if stage == "ping" and left - lead > 0:
                runner.scheduler.start(ping_key(runner.table_id, seat), left - lead, _fired,
                                       data={"seq": decision, "stage": "reminder"})  # type: ignore[call-arg]
        for chat_id, message_id in replaced:
            await self._delete(chat_id, message_id)
        if stage == "reminder":
            await self._mention(runner, seat, decision, left)

    async def _mention(self, runner: TableRunner, seat: int, decision: int, left: float) -> None:
        """Several workers: the group mentions the person whose decision waits (once per decision)."""
        show = self._shows.get(runner.table_id)
        user_id = runner.seats[seat].user_id
        if show is None or user_id is None:
            return
        who = f'<a href="tg://user?id={user_id}">{html.escape(runner.seats[seat].name)}</a>'
        line = show.group_texts.t("{name}, it is your turn: {n} seconds left.", name=who, n=max(round(left), 1))
        await self._group_budget(show)
        replaced: list[int] = []
        async with self._turn(runner.chat_id), runner.current():
            if self._open_decision(runner, seat) != decision:
                return
            mention = runner.messages.get((seat, "mention"))
            if mention is not None and mention.shows.get("decision") == decision:
                return
            sent = await self._send_group_text(runner, line, html_text=True)
            if sent is None:
                return
            if not await self._keep(runner, seat, "mention", sent.message_id, {"decision": decision}):
                replaced.append(sent.message_id)
            elif mention is not None:
                replaced.append(mention.message_id)
        for message_id in replaced:
            await self._delete(runner.chat_id, message_id)

    async def _shared_notice(self, runner: TableRunner, seat: int, user_id: int, text: str) -> None:
        """Several workers: "the computer played for you", in place of the hand's earlier notice."""
        replaced: list[int] = []
        try:
            async with self._turn(user_id), runner.current():
                sent = await self.bot.send_message(user_id, text)
                old = runner.messages.get((seat, "notice"))
                if not await self._keep(runner, seat, "notice", sent.message_id, {"seq": runner.logged}):
                    replaced.append(sent.message_id)
                elif old is not None:
                    replaced.append(old.message_id)
        except (TelegramError, StorageError) as error:
            log.info("could not tell %s what the computer did: %s", user_id, error)
        for message_id in replaced:
            await self._delete(user_id, message_id)

    # --- languages ---------------------------------------------------------------------------

    def group_texts(self, runner: TableRunner) -> Translator:
        show = self._shows.get(runner.table_id)
        return show.group_texts if show else translator("zh")

    def seat_texts(self, runner: TableRunner, seat: int) -> Translator:
        show = self._shows.get(runner.table_id)
        return show.seat_texts[seat] if show else translator("zh")

    # --- sending in turn -------------------------------------------------------------------

    def _turn(self, chat_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        """Wait for the chat's turn under Telegram's limits; the first call inside uses it."""
        return chat_turn(self.bot, chat_id)

    # --- the group -------------------------------------------------------------------------

    def _group_wanted(self, runner: TableRunner, show: TableShow) -> tuple[TableView, str]:
        texts = show.group_texts
        return views.public_table(runner, texts), views.group_caption(runner, texts)

    async def _group_png(self, show: TableShow, view: TableView) -> bytes:
        """The table picture of ``view``, drawn once per state."""
        if show.group_picture is None or show.group_picture[0] != view:
            from rendering.screen import shared_table  # the drawing code loads with the first picture

            show.group_picture = (view, await _photo(shared_table, view))
        return show.group_picture[1]

    async def _post_table(self, runner: TableRunner, again: bool = False) -> None:
        """The hand's table message: posted once, then edited by the group loop. With several
        workers it is posted holding the table, and only if no worker posted the hand's yet (or
        ``again``: a resumed hand, a group that moved): the first one's is taken up instead."""
        show = self._shows.get(runner.table_id)
        if show is None:
            return
        show.group_dirty = False
        message = None
        async with self._turn(runner.chat_id), runner.current():
            if runner.shared and runner.table_message is not None and not again:
                show.message_id, show.group_shown = runner.table_message, None
                show.group_dirty = True  # edited to the state now by the group loop
            else:
                view, caption = self._group_wanted(runner, show)
                show.group_sent = time.monotonic()
                message = await self._send_group_photo(runner, lambda: self._group_png(show, view), caption)
                if message is not None:
                    runner.table_message, runner.table_message_known = message.message_id, True
        if message is not None:
            show.message_id = message.message_id
            show.group_shown = (view, caption)
            await self.storage.set_table_message(runner.table_id, message.message_id)
        if show.group_dirty:
            self._schedule_group(runner)

    def _schedule_group(self, runner: TableRunner) -> None:
        show = self._shows.get(runner.table_id)
        if show is None:
            return
        show.group_dirty = True
        if show.message_id is None or (show.group_task is not None and not show.group_task.done()):
            return  # the first post, or the running edit loop, picks the change up
        wait = self.group_interval - (time.monotonic() - show.group_sent)
        show.group_task = asyncio.get_running_loop().create_task(self._group_loop(runner, show, max(0.0, wait)))

    async def _group_loop(self, runner: TableRunner, show: TableShow, wait: float) -> None:
        """Edit the table message until it shows the latest state, one edit per interval."""
        await asyncio.sleep(wait)
        while show.group_dirty:
            show.group_dirty = False
            await self._edit_table(runner, show)
            if show.group_dirty:
                await asyncio.sleep(self.group_interval)

    async def _edit_table(self, runner: TableRunner, show: TableShow) -> None:
        if show.group_gone or show.message_id is None or self._group_wanted(runner, show) == show.group_shown:
            return  # no group, or nothing the group can see changed
        if show.photos_refused and show.group_shown is not None and (
                self._group_wanted(runner, show)[1] == show.group_shown[1]):
            return  # the group sees the table as text: only the picture changed
        await self._group_budget(show)
        async with self._turn(runner.chat_id):
            if await runner.behind():
                return  # another worker moved the table on meanwhile, and shows it
            view, caption = self._group_wanted(runner, show)  # the latest, after the wait
            show.group_sent = time.monotonic()
            try:
                if show.photos_refused:
                    await call_unparsed(self.bot, "editMessageText", chat_id=runner.chat_id,
                                        message_id=show.message_id, text=caption)
                elif show.group_shown is not None and show.group_shown[0] == view:
                    await call_unparsed(self.bot, "editMessageCaption", chat_id=runner.chat_id,
                                        message_id=show.message_id, caption=caption)
                else:
                    image = await self._group_png(show, view)
                    await call_unparsed(self.bot, "editMessageMedia", media=InputMediaPhoto(image, caption=caption),
                                        chat_id=runner.chat_id, message_id=show.message_id)
                show.group_shown = (view, caption)
            except BadRequest as error:
                if message_gone(error):
                    # Someone deleted it (an admin tidying the chat): the hand goes on without it,
                    # with its cards, rather than failing an edit every few seconds.
                    log.info("table %s: the table message was deleted; not edited any more", runner.table_id)
                    show.message_id = None
                elif holds_no_picture(error) and not show.photos_refused:
                    # Several workers: the one that posted it found the group refuses pictures.
                    show.photos_refused, show.group_shown = True, None
                    self._schedule_group(runner)
                elif is_not_modified(error):
                    show.group_shown = (view, caption)  # it shows this already
                else:
                    log.warning("table %s: could not edit the table message: %s", runner.table_id, error)
            except Forbidden as error:
                self._group_lost(runner, show, error)
            except TelegramError as error:
                log.warning("table %s: could not edit the table message: %s", runner.table_id, error)

    async def _send_card(self, runner: TableRunner, card: ResultCard) -> None:
        async with self._turn(runner.chat_id):
            from rendering import render_result_card

            await self._send_group_photo(runner, lambda: _photo(render_result_card, card), card.caption or None)

    async def _finish(self, runner: TableRunner, final: ResultCard) -> None:
        """The hand is over: the settlement card with Next hand / End, then the final table."""
        show = self._shows.get(runner.table_id)
        if show is None:
            return
        if show.group_task is not None:
            show.group_task.cancel()
        show.group_dirty = False
        texts = show.group_texts
        markup = InlineKeyboardMarkup([[
            InlineKeyboardButton(texts.t("Next hand"),
                                 callback_data=callbacks.after_hand_data(runner.table_id, runner.hand.id, "next")),
            InlineKeyboardButton(texts.t("End"),
                                 callback_data=callbacks.after_hand_data(runner.table_id, runner.hand.id, "end")),
        ]])
        async with self._turn(runner.chat_id):
            from rendering import render_result_card

            caption = final.caption or views.end_line(runner.game.end, texts)
            posted = await self._send_group_photo(runner, lambda: _photo(render_result_card, final), caption, markup)
        if posted is not None:  # the runner logged the hand's end with this post owed (storage's outbox)
            try:
                await self.storage.mark_posted(settlement_key(runner.hand.id))
            except Exception:
                log.exception("table %s: could not mark the settlement of hand %s posted",
                              runner.table_id, runner.hand.id)
        for seat_show in show.seats.values():
            if seat_show.mention is not None:
                await self._delete(runner.chat_id, seat_show.mention)
                seat_show.mention = None
        await self._edit_table(runner, show)

    async def _group_budget(self, show: TableShow) -> None:
        """Keep a group under GROUP_POSTS_PER_MINUTE posts and edits: table edits wait their turn."""
        posts = show.group_posts
        while posts and time.monotonic() - posts[0] >= 60:
            posts.popleft()
        if len(posts) >= GROUP_POSTS_PER_MINUTE:
            await asyncio.sleep(60 - (time.monotonic() - posts[0]))
        posts.append(time.monotonic())

    @staticmethod
    def _count_group_post(show: TableShow) -> None:
        show.group_posts.append(time.monotonic())

    async def _send_group_photo(self, runner: TableRunner, draw: Callable[[], Awaitable[bytes]], caption: str | None,
                                markup: InlineKeyboardMarkup | None = None) -> Message | None:
        """A picture for the group (drawn only if it may get pictures), or its caption as text.

        A group whose members may not send photos refuses the bot's too, unless it is an admin.
        Without this the table was silent there: no table, no results, and no Next hand / End
        buttons, so it stalled after its first hand. The first refusal of a hand turns it to
        text; the next hand tries a picture again, in case an admin has allowed them."""
        show = self._shows.get(runner.table_id)

        async def photo() -> Message:
            return await self.bot.send_photo(runner.chat_id, await draw(), caption=caption, reply_markup=markup,
                                             message_thread_id=runner.topic_id)

        async def text() -> Message:
            if show is not None and not show.photos_refused:
                self._photos_refused(runner, show)
            return await self.bot.send_message(runner.chat_id, caption or "…", reply_markup=markup,
                                               message_thread_id=runner.topic_id)

        if show is not None and show.photos_refused:
            return await self._post_to_group(runner, text)
        return await self._post_to_group(runner, lambda: picture_or_text(photo, text))

    def _photos_refused(self, runner: TableRunner, show: TableShow) -> None:
        """The hand goes on in text; the group is told why once per chat (until a restart)."""
        show.photos_refused = True
        log.info("table %s: the group refuses pictures; its table goes on in text", runner.table_id)
        if runner.chat_id not in self._told_no_photos:
            self._told_no_photos.add(runner.chat_id)
            line = show.group_texts.t("This group does not let me send pictures, so its table goes on in text here "
                                      "(your tiles stay in your private chat). An admin can allow members to send "
                                      "photos, or make me an admin.")
            self._enqueue(runner, lambda: self._send_group_text(runner, line))

    async def _send_group_text(self, runner: TableRunner, text: str, html_text: bool = False) -> Message | None:
        return await self._post_to_group(runner, lambda: self.bot.send_message(
            runner.chat_id, text, parse_mode=ParseMode.HTML if html_text else None, message_thread_id=runner.topic_id))

    async def _post_to_group(self, runner: TableRunner, post: Callable[[], Awaitable[Message]]) -> Message | None:
        """The post, or None when the group refused it; once it refused for good (the bot was
        removed), the table stops calling it: the hand goes on by private message. A table whose
        forum topic was deleted or closed posts in the group's main chat from then on: its
        settlement card, with Next hand / End, must reach the group somewhere."""
        show = self._shows.get(runner.table_id)
        if show is not None:
            if show.group_gone:
                return None
            self._count_group_post(show)
        try:
            try:
                return await post()
            except BadRequest as error:
                if runner.topic_id is None or not topic_gone(error):
                    raise
                log.info("table %s: its topic is gone (%s); it posts in the main chat", runner.table_id, error)
                runner.topic_id = None
                return await post()
        except Forbidden as error:
            if show is not None:
                self._group_lost(runner, show, error)
        except TelegramError as error:
            log.warning("table %s: could not post to the group: %s", runner.table_id, error)
        return None

    @staticmethod
    def _group_lost(runner: TableRunner, show: TableShow, error: Forbidden) -> None:
        if not show.group_gone:
            show.group_gone = True
            log.warning("table %s: the group refuses the bot's posts (%s); the hand goes on by private message",
                        runner.table_id, error)

    async def _delete(self, chat_id: int, message_id: int) -> None:
        try:
            await self.bot.delete_message(chat_id, message_id)
        except TelegramError as error:  # already gone, or too old: nothing to keep tidy
            log.info("could not delete message %s in %s: %s", message_id, chat_id, error)

    # --- each player's DM --------------------------------------------------------------------

    def _note_decision(self, runner: TableRunner, seat: int) -> bool:
        """Track the seat's open decision; True when a new one opened for the person."""
        seat_show = self._shows[runner.table_id].seats[seat]
        state = runner.state[seat]
        open_now = None if (state.auto or runner.game.over) else state.prompt_seq
        if open_now == seat_show.decision:
            return False
        seat_show.decision = open_now
        if seat_show.reminder is not None:
            seat_show.reminder.cancel()
            seat_show.reminder = None
        if open_now is None:
            return False
        seat_show.opened = time.monotonic()
        return True  # its ping is armed once the DM shows its buttons (the seat's loop)

    def _arm_pings(self, runner: TableRunner, seat: int, seat_show: SeatShow) -> None:
        """(Re)start the open decision's ping after its grace from now; the reminder stays
        ``REMINDER_LEAD`` seconds before the timer runs out."""
        if seat_show.reminder is not None:
            seat_show.reminder.cancel()
        seconds = runner.decision_seconds(seat)
        lead = min(REMINDER_LEAD, seconds / 2)
        until_reminder = seat_show.opened + seconds - lead - time.monotonic()
        seat_show.reminder = asyncio.get_running_loop().create_task(
            self._remind(runner, seat, seat_show.decision, until_reminder, lead))

    def _want_seat(self, runner: TableRunner, seat: int, *, picture: bool, text: bool = False) -> None:
        """Ask the seat's sender for an update: its picture now (``picture``), its caption and
        buttons now (``text``), else its picture within ``dm_interval``."""
        seat_show = self._shows[runner.table_id].seats[seat]
        now = time.monotonic()
        seat_show.due = min(seat_show.due, now if picture else now + self.dm_interval)
        seat_show.text_now = seat_show.text_now or text
        seat_show.wake.set()
        if seat_show.task is None or seat_show.task.done():
            seat_show.task = asyncio.get_running_loop().create_task(self._seat_loop(runner, seat, seat_show))

    async def _seat_loop(self, runner: TableRunner, seat: int, seat_show: SeatShow) -> None:
        """Bring one DM up to date whenever asked, coalescing what arrives meanwhile."""
        while True:
            now = time.monotonic()
            if seat_show.text_now or seat_show.due <= now:
                picture = seat_show.due <= now
                seat_show.text_now = False
                if picture:
                    seat_show.due = math.inf
                shown = seat_show.decision
                await self._update_seat(runner, seat, seat_show, picture)
                if runner.shared:
                    continue  # its pings are the database's (set and dropped within the update)
                await self._drop_stale_ping(runner, seat, seat_show)
                if shown is not None and seat_show.decision == shown and seat_show.armed != shown:
                    # The grace runs from when the person could see the decision, not from when
                    # it opened: under load the DM may take a while to show it. (One that opened
                    # during this update is shown, and armed, by the next turn of the loop.)
                    seat_show.armed = shown
                    self._arm_pings(runner, seat, seat_show)
                continue
            if seat_show.due == math.inf:
                return
            seat_show.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(seat_show.wake.wait(), seat_show.due - now)

    def _seat_wanted(self, runner: TableRunner, seat: int) -> tuple[tuple[Any, ...], str, Markup]:
        """The DM's picture inputs, caption and buttons for the state now (cheap: nothing drawn)."""
        texts = self.seat_texts(runner, seat)
        hand, drawn, void = views.private_hand(runner, seat)
        labels = views.hand_labels(runner, seat, texts)
        inputs = (  # hashable: the key of the picture's upload (UploadCache)
            views.public_table(runner, texts), tuple(hand), tuple(runner.game.melds[seat]), drawn, void,
            None if labels is None else tuple(labels), texts.t("Void {suit}", suit="{suit}"),
        )
        return inputs, views.seat_caption(runner, seat, texts), views.seat_keyboard(runner, seat, texts)

    def _redraw(self, runner: TableRunner, seat: int, seat_show: SeatShow, picture: bool,
                keys: tuple[Any, Any, Any]) -> tuple[bool, bool]:
        """Whether the DM needs a new picture, and whether it needs any call at all, comparing the
        ``_keys`` of what it should show with those of what it shows."""
        redraw = seat_show.message_id is None or (picture and keys[0] != seat_show.picture)
        if redraw and seat_show.message_id is not None and _only_the_table_moved(runner, keys[0], seat_show.picture):
            # A claim on another's discard: the caption and buttons name the tile, the person's own
            # tiles did not change; the table part of the picture catches up a little later.
            redraw = False
            self._want_seat(runner, seat, picture=False)
        return redraw, redraw or keys[1:] != (seat_show.caption, seat_show.buttons)

    async def _update_seat(self, runner: TableRunner, seat: int, seat_show: SeatShow, picture: bool) -> None:
        user_id = runner.seats[seat].user_id
        if user_id is None:
            return
        redraw, changed = self._redraw(runner, seat, seat_show, picture,
                                       _keys(runner, *self._seat_wanted(runner, seat)))
        if not changed:
            return  # nothing to change: no turn taken
        stale: list[tuple[int, int]] = []
        try:
            async with self._turn(user_id), runner.current():  # several workers: the table's state now
                wanted = self._seat_wanted(runner, seat)  # the latest, after the wait
                keys = _keys(runner, *wanted)
                if runner.shared:  # what the DM shows is the database's: another worker may have drawn it
                    stale = await self._stale_messages(runner, seat)  # gone even if the edit fails
                    self._adopt_dm(runner, seat, seat_show)
                    redraw, changed = self._redraw(runner, seat, seat_show, picture, keys)
                if changed:
                    await self._show_seat(runner, seat, seat_show, user_id, *wanted, redraw, keys)
                    seat_show.caption, seat_show.buttons = keys[1:]
                if runner.shared:
                    await self._store_dm(runner, seat, seat_show)
        except Forbidden:
            await self.storage.save_user(user_id, started_dm=False)
            self._spawn(runner.take_over(seat, "blocked"))
        except TelegramError as error:
            log.warning("table %s seat %s: could not update the DM: %s", runner.table_id, seat, error)
        except StorageError as error:  # several workers: the table out of reach (database restarting)
            log.warning("table %s seat %s: the DM waits for the database: %s", runner.table_id, seat, error)
            seat_show.due = min(seat_show.due, time.monotonic() + DM_RETRY_SECONDS)
        finally:
            for chat_id, message_id in stale:
                await self._delete(chat_id, message_id)

    async def _show_seat(self, runner: TableRunner, seat: int, seat_show: SeatShow, user_id: int,
                         inputs: tuple[Any, ...], caption: str, markup: Markup, redraw: bool,
                         keys: tuple[Any, Any, Any]) -> None:
        """One call: a new photo, a new picture, or only the caption and buttons (``keys``: what
        they are compared by, ``_keys``)."""
        picture_key, caption_key, _ = keys
        if redraw and picture_key == seat_show.picture and seat_show.message_id is not None:
            redraw = False
        if not redraw:
            assert seat_show.message_id is not None
            try:
                if caption_key == seat_show.caption:
                    await call_unparsed(self.bot, "editMessageReplyMarkup", chat_id=user_id,
                                        message_id=seat_show.message_id, reply_markup=markup)
                else:
                    await call_unparsed(self.bot, "editMessageCaption", chat_id=user_id,
                                        message_id=seat_show.message_id, caption=caption, reply_markup=markup)
            except BadRequest as error:
                if is_not_modified(error):
                    return
                if not message_gone(error):
                    raise
                seat_show.message_id = None  # the person deleted it: a new one, below, with the buttons
            else:
                return
        from rendering.screen import render_seat_screen

        uploaded = self._uploads.get(picture_key)  # this very picture was sent before: its file id
        media = uploaded if uploaded is not None else await _photo(render_seat_screen, *inputs)
        if seat_show.message_id is not None:
            try:
                edited = await call_unparsed(self.bot, "editMessageMedia",
                                             media=InputMediaPhoto(media, caption=caption), chat_id=user_id,
                                             message_id=seat_show.message_id, reply_markup=markup)
                self._uploads.remember(picture_key, _photo_id(edited))
                seat_show.picture = picture_key
                return
            except BadRequest as error:
                if is_not_modified(error):
                    seat_show.picture = picture_key
                    return
                log.info("table %s seat %s: sending a new DM (%s)", runner.table_id, seat, error)
        sent = await self.bot.send_photo(user_id, media, caption=caption, reply_markup=markup)
        self._uploads.remember(picture_key, sent.photo[-1].file_id if sent.photo else None)
        seat_show.picture = picture_key
        seat_show.message_id = sent.message_id
        await self.storage.set_table_message(runner.table_id, sent.message_id, seat=seat)

    # --- turn pings --------------------------------------------------------------------------

    async def _drop_stale_ping(self, runner: TableRunner, seat: int, seat_show: SeatShow) -> None:
        """The person made the decision a ping was for: the ping (and the group mention) go."""
        user_id = runner.seats[seat].user_id
        if user_id is not None and seat_show.ping is not None and seat_show.ping_for != seat_show.decision:
            await self._clear_ping(runner, user_id, seat_show)

    async def _ping(self, runner: TableRunner, seat: int, decision: int) -> None:
        """A notifying message for a decision still open: what to decide and the seconds left.
        Shielded by its caller, so a ping sent is always either the open decision's or deleted."""
        show = self._shows.get(runner.table_id)
        seat_show = show.seats.get(seat) if show else None
        user_id = runner.seats[seat].user_id
        if seat_show is None or seat_show.decision != decision or seat_show.ping_for == decision or user_id is None:
            return  # made meanwhile, or already pinged
        texts = self.seat_texts(runner, seat)
        seconds = int(runner.decision_seconds(seat) - (time.monotonic() - seat_show.opened))
        text = views.prompt_line(runner, seat, texts) + "\n" + texts.t("{n} seconds to decide.", n=max(seconds, 1))
        seat_show.ping_for = decision
        await self._replace_ping(user_id, seat_show, text)
        if seat_show.decision != decision:  # decided while the ping was on its way
            await self._clear_ping(runner, user_id, seat_show)
            return
        if seat_show.notice is not None:
            notice, seat_show.notice = seat_show.notice, None
            await self._delete(user_id, notice)

    async def _replace_ping(self, user_id: int, seat_show: SeatShow, text: str) -> None:
        old, seat_show.ping = seat_show.ping, None
        try:
            async with self._turn(user_id):
                seat_show.ping = (await self.bot.send_message(user_id, text)).message_id
        except TelegramError as error:
            log.info("could not ping %s: %s", user_id, error)
        if old is not None:
            await self._delete(user_id, old)

    async def _clear_ping(self, runner: TableRunner, user_id: int, seat_show: SeatShow) -> None:
        ping, seat_show.ping, seat_show.ping_for = seat_show.ping, None, None
        if ping is not None:
            await self._delete(user_id, ping)
        mention, seat_show.mention = seat_show.mention, None
        if mention is not None:
            self._enqueue(runner, lambda: self._delete(runner.chat_id, mention))

    async def _remind(self, runner: TableRunner, seat: int, decision: int, after: float, left: float) -> None:
        """The open decision's ping once ``PING_GRACE`` has passed; then once, ``left`` seconds
        before the timer runs out, a reminder by DM and a mention in the group. Cancelled (while it
        waits) when the decision is made."""
        began = time.monotonic()
        if after > 0:  # else the DM showed the decision only at the reminder's time: the reminder pings
            await asyncio.sleep(min(PING_GRACE, after / 2))
            await asyncio.shield(self._spawn(self._ping(runner, seat, decision)))
            await asyncio.sleep(max(0.0, began + after - time.monotonic()))
        await asyncio.shield(self._spawn(self._reminder(runner, seat, decision, left)))

    async def _reminder(self, runner: TableRunner, seat: int, decision: int, left: float) -> None:
        show = self._shows.get(runner.table_id)
        seat_show = show.seats.get(seat) if show else None
        user_id = runner.seats[seat].user_id
        if show is None or seat_show is None or seat_show.decision != decision or user_id is None:
            return
        texts = self.seat_texts(runner, seat)
        seat_show.ping_for = decision
        await self._replace_ping(user_id, seat_show, texts.t("{n} seconds left.", n=round(left)))
        if seat_show.decision != decision:  # decided meanwhile
            await self._clear_ping(runner, user_id, seat_show)
            return
        group = show.group_texts
        who = f'<a href="tg://user?id={user_id}">{html.escape(runner.seats[seat].name)}</a>'
        line = group.t("{name}, it is your turn: {n} seconds left.", name=who, n=round(left))

        async def mention() -> None:
            if seat_show.decision != decision:
                return
            await self._group_budget(show)
            async with self._turn(runner.chat_id):
                sent = await self._send_group_text(runner, line, html_text=True)
            if sent is not None:
                if seat_show.decision == decision and seat_show.mention is None:
                    seat_show.mention = sent.message_id
                else:
                    await self._delete(runner.chat_id, sent.message_id)

        self._enqueue(runner, mention)

    def _enqueue_seat_notice(self, runner: TableRunner, seat: int, action: Any) -> None:
        """The timer ran out and the computer decided for the person: say so, and what it did."""
        user_id = runner.seats[seat].user_id
        show = self._shows.get(runner.table_id)
        if user_id is None or show is None or seat not in show.seats:
            return
        seat_show = show.seats[seat]
        texts = self.seat_texts(runner, seat)
        text = texts.t("Time ran out; the computer played for you: {action}.",
                       action=views.played_label(action, texts))

        if runner.shared:
            self._spawn(self._shared_notice(runner, seat, user_id, text))
            return

        async def notice() -> None:
            old, seat_show.notice = seat_show.notice, None
            try:
                async with self._turn(user_id):
                    seat_show.notice = (await self.bot.send_message(user_id, text)).message_id
            except TelegramError as error:
                log.info("could not tell %s what the computer did: %s", user_id, error)
            if old is not None:
                await self._delete(user_id, old)

        self._spawn(notice())

    # --- ending ------------------------------------------------------------------------------

    async def _drop(self, table_id: int) -> None:
        show = self._shows.pop(table_id, None)
        if show is None:
            return
        tasks = [t for t in (show.group_task, show.outbox) if t is not None]
        for seat_show in show.seats.values():
            tasks += [t for t in (seat_show.task, seat_show.reminder) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def forget(self, table_id: int) -> None:
        """Drop a finished table's pending updates."""
        await self._drop(table_id)

    async def close(self) -> None:
        for table_id in list(self._shows):
            await self._drop(table_id)
        await settle(self._background, CLOSE_SECONDS)


async def _fired() -> None:
    """A database timer's callback on the worker that set it: unused, ``Tables.fire`` fires it."""


def _digest(value: object) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=8).hexdigest()


def _keys(runner: TableRunner, inputs: tuple[Any, ...], caption: str, markup: Markup) -> tuple[Any, Any, Any]:
    """What a DM's picture, caption and buttons are compared by: the values themselves, or with
    several workers short digests of them, which the database keeps for every worker
    (``repr`` of plain data, the same in every process). One process compares the buttons as PTB
    objects (equal when every button is): building their dict cost 0.17 ms, three times an update."""
    if not runner.shared:
        return inputs, caption, markup
    buttons = markup.to_dict() if markup is not None else None
    return tuple(_digest(part) for part in inputs), _digest(caption), _digest(buttons)


def _only_the_table_moved(runner: TableRunner, inputs: tuple[Any, ...], shown: object) -> bool:
    """True while a claim window is open and the DM picture differs from ``inputs`` only in its
    table part (inputs[0]): the person's own tiles, melds and labels are as shown."""
    return (runner.game.phase in (Phase.CLAIM, Phase.ROB) and isinstance(shown, tuple)
            and shown[1:] == inputs[1:])


class UploadCache:
    """Telegram's file ids of the DM pictures already uploaded, by what each was drawn from (the
    picture's ``_keys``: the same inputs always draw the same pixels). A picture shown again (a
    swap pick taken back) is neither drawn, nor encoded, nor uploaded again; looking one up costs
    a hash of its inputs, where a digest of the JPEG cost ~0.2 ms twice per picture."""

    def __init__(self, size: int = 512) -> None:
        self._ids: OrderedDict[Hashable, str] = OrderedDict()
        self._size = size

    def get(self, key: Hashable) -> str | None:
        """The file id if the picture drawn from ``key`` was uploaded before."""
        found = self._ids.get(key)
        if found is not None:
            self._ids.move_to_end(key)
        return found

    def remember(self, key: Hashable, file_id: str | None) -> None:
        """Keep the file id of the picture drawn from ``key`` (None: the answer had no photo)."""
        if file_id is not None:
            self._ids[key] = file_id
            self._ids.move_to_end(key)
            while len(self._ids) > self._size:
                self._ids.popitem(last=False)


def _photo_id(answer: Any) -> str | None:
    """The file id of the largest size of the photo in Telegram's JSON answer to an edit, if any."""
    photo = answer.get("photo") if isinstance(answer, dict) else None
    return photo[-1].get("file_id") if photo else None


async def _photo(render: Callable[..., Image.Image], *args: Any) -> bytes:
    """Render and encode (``encode_photo``: JPEG, as Telegram keeps photos) off the event loop.
    Pillow and the drawing code are imported with the first picture, not before the bot polls."""
    from rendering import encode_photo

    return await asyncio.to_thread(lambda: encode_photo(render(*args)))
