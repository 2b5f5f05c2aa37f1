"""复盘 after a hosted hand: a button in each person's DM, and the review it sends back.

When a hand ends, every seat played by a person gets a short DM with a 复盘 button. Pressing it
replays that hand from storage and asks ``engine.review`` for up to five moments where the
person's discard or claim differed most from the hard computer player's, judged only on what
their seat could see. Each moment comes back as a small picture with a few plain sentences.

The review is worked out off the event loop (a worker thread, one review at a time), after the
press has been answered, so it never holds up a table. Only the person who sat in the hand can
review it: the press is checked against the hand's seats in storage. What is being worked out
belongs to the bot that started it (``Reviews``) and stops with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Coroutine, Sequence
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import Forbidden, TelegramError
from telegram.ext import CallbackQueryHandler

from bot.feature import AnyApplication, Context, Feature
from bot.i18n import Translator, translator
from bot.services import services, user_language
from bot.table.feature import TABLES_KEY
from bot.table.runner import TableRunner
from bot.table.tables import SeatTexts
from bot.tasks import settle
from engine.events import Event
from engine.rules import RuleSet
from storage import NotFound, Storage
from storage.models import Hand, HandStatus

log = logging.getLogger(__name__)

PREFIX = "rv"
PATTERN = re.compile(rf"^{PREFIX}:(\d{{1,18}})$")  # a row id: SQLite holds up to 19 digits
REVIEWS_KEY = "xuezhan.reviews"
OFFERS_REMEMBERED = 10_000


class Reviews:
    """One bot's reviews and offers in the background: a review is CPU work, so never two at once
    beside the tables, and never the same person's same hand twice at a time. They are the bot's,
    not the module's: the bot's stop cancels them (a review cut off leaves nothing half done), and
    a bot started after it in the same process (tests, ``xuezhan play``) starts with a free turn."""

    def __init__(self) -> None:
        self.turn = asyncio.Semaphore(1)
        self.busy: set[tuple[int, int]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def stop(self) -> None:
        await settle(self._tasks, 0)


def review_data(hand_id: int) -> str:
    return f"{PREFIX}:{hand_id}"


class ReviewOffers:
    """Wraps the tables' presenter: passes every call on, and when a hand ends offers 复盘 to
    each person who sat in it (in the background, so the table is not kept waiting)."""

    def __init__(self, inner: Any, bot: Any, reviews: Reviews,
                 seat_texts: SeatTexts) -> None:
        self.inner = inner
        self.bot = bot
        self.reviews = reviews
        self.seat_texts = seat_texts  # not the inner presenter's: with the web table on, that is a Fanout
        self._offered: set[int] = set()

    def __getattr__(self, name: str) -> Any:  # attach, caught_up, post_settlement, forget, close, ...
        return getattr(self.inner, name)

    async def hand_started(self, runner: TableRunner, resumed: bool) -> None:
        await self.inner.hand_started(runner, resumed)

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None:
        await self.inner.changed(runner, events)
        if runner.game.over and runner.hand.id not in self._offered:
            if len(self._offered) > OFFERS_REMEMBERED:
                self._offered.clear()  # old hands are long settled; a repeat offer is harmless
            self._offered.add(runner.hand.id)
            self.reviews.spawn(self._offer(runner))

    async def prompt(self, runner: TableRunner, seat: int) -> None:
        await self.inner.prompt(runner, seat)

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None:
        await self.inner.seat_controlled(runner, seat, reason)

    async def _offer(self, runner: TableRunner) -> None:
        for seat, sitter in enumerate(runner.seats):
            if sitter.user_id is None:
                continue
            tr = self.seat_texts(runner, seat)
            button = InlineKeyboardButton(tr.t("Review this hand"), callback_data=review_data(runner.hand.id))
            try:
                await self.bot.send_message(
                    sitter.user_id,
                    tr.t("Hand over. See where your play differed most from the hard computer player:"),
                    reply_markup=InlineKeyboardMarkup([[button]]),
                )
            except TelegramError as error:
                log.info("hand %s: no 复盘 offer for seat %s: %s", runner.hand.id, seat, error)


async def on_start(app: AnyApplication) -> None:
    """Wrap the live tables' presenter (after the web feature, so both views keep working)."""
    reviews = app.bot_data[REVIEWS_KEY] = Reviews()
    live = app.bot_data.get(TABLES_KEY)
    if live is None:
        return
    offers = ReviewOffers(live.presenter, app.bot, reviews, live.seat_texts)
    live.presenter = offers
    for runner in live.runners.values():
        runner.presenter = offers


async def on_stop(app: AnyApplication) -> None:
    reviews: Reviews | None = app.bot_data.pop(REVIEWS_KEY, None)
    if reviews is not None:
        await reviews.stop()


async def on_press(update: Update, context: Context) -> None:
    query = update.callback_query
    if query is None or query.data is None or query.from_user is None:
        return
    user_id = query.from_user.id
    tr = translator(await user_language(context, user_id))
    match = PATTERN.match(query.data)
    storage = services(context).storage
    hand = await _hand(storage, int(match.group(1))) if match else None
    if hand is None or hand.status is not HandStatus.FINISHED:
        await query.answer(tr.t("That hand cannot be reviewed."))
        return
    seat = await _seat_of(storage, hand, user_id)
    if seat is None:
        await query.answer(tr.t("Only a player of that hand can review it."))
        return
    reviews: Reviews = context.bot_data[REVIEWS_KEY]
    if (hand.id, user_id) in reviews.busy:
        await query.answer(tr.t("Already working on it."))
        return
    await query.answer(tr.t("Reviewing your hand; the moments follow shortly."))
    reviews.busy.add((hand.id, user_id))
    task = reviews.spawn(_send_review(context.bot, storage, hand, seat, user_id, tr, reviews.turn))
    task.add_done_callback(lambda _: reviews.busy.discard((hand.id, user_id)))


async def _hand(storage: Storage, hand_id: int) -> Hand | None:
    try:
        return await storage.get_hand(hand_id)
    except NotFound:
        return None


async def _seat_of(storage: Storage, hand: Hand, user_id: int) -> int | None:
    for seat, player_id in enumerate(hand.seats):
        with contextlib.suppress(NotFound):
            if (await storage.get_player(player_id)).user_id == user_id:
                return seat
    return None


async def _send_review(bot: Any, storage: Storage, hand: Hand, seat: int, user_id: int, tr: Translator,
                       turn: asyncio.Semaphore) -> None:
    # The review's search and pictures load with the first review, not before the bot polls.
    from bot.review_text import moment_picture, moment_text, nothing_to_add
    from engine.review import review_hand
    from rendering import encode_png

    try:
        actions = [logged.action for logged in await storage.hand_actions(hand.id)]
        rules = RuleSet.from_dict(hand.rules)
        async with turn:
            moments = await asyncio.to_thread(review_hand, rules, hand.seed, hand.dealer, actions, seat)
            pictures = [await asyncio.to_thread(lambda m=m: encode_png(moment_picture(tr, m))) for m in moments]
        if not moments:
            await bot.send_message(user_id, nothing_to_add(tr))
        for i, (moment, picture) in enumerate(zip(moments, pictures, strict=True), 1):
            await bot.send_photo(user_id, picture, caption=moment_text(tr, i, moment))
    except Forbidden as error:  # blocked the bot after pressing: nobody to tell, nothing to fix
        log.warning("hand %s: 复盘 for seat %s not sent: %s", hand.id, seat, error)
    except Exception:  # a failed review must never reach the tables
        log.exception("hand %s: 复盘 for seat %s failed", hand.id, seat)


FEATURE = Feature(
    name="review",
    handlers=lambda: [CallbackQueryHandler(on_press, pattern=PATTERN)],
    on_start=on_start,
    on_stop=on_stop,
)
