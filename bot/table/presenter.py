"""Puts a live hand on Telegram: one edited table picture in the group, one edited DM per player.

The group gets few messages by design: the table message is edited, and edits are coalesced
so that at most one goes out per ``group_interval`` seconds however fast the hand moves; only
wins and the end of the hand are new messages (result cards). Each player's DM is one photo
message, edited as the game moves, carrying their decision's buttons. Rendering runs in a
worker thread so a busy table never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from PIL import Image
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputMediaPhoto, Message
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.i18n import Translator, translator
from bot.messaging import is_not_modified
from bot.table import callbacks, views
from bot.table.runner import TableRunner
from engine.events import Event, EventType
from rendering import ResultCard, TableView, encode_png, render_result_card
from rendering.screen import render_seat_screen, shared_table
from storage import Storage

log = logging.getLogger(__name__)

# Telegram allows about 20 messages a minute into a group; edits of the table picture give way
# so that cards and announcements (which must go out) keep the group under it.
GROUP_POSTS_PER_MINUTE = 18

Languages = Callable[[TableRunner], Awaitable[tuple[str, list[str]]]]


class TelegramPresenter:
    """Output of every live table of one Application."""

    def __init__(self, bot: Bot, storage: Storage, languages: Languages, group_interval: float = 4.0,
                 dm_interval: float = 0.5) -> None:
        self.bot = bot
        self.storage = storage
        self.languages = languages
        self.group_interval = group_interval
        self.dm_interval = dm_interval
        self._group_due: dict[int, asyncio.Task[None]] = {}
        self._group_sent: dict[int, float] = {}
        self._seat_due: dict[tuple[int, int], asyncio.Task[None]] = {}
        self._table_message: dict[int, int] = {}
        self._seat_message: dict[tuple[int, int], int] = {}
        self._texts: dict[int, tuple[Translator, list[Translator]]] = {}
        self._outbox: dict[int, asyncio.Task[None]] = {}
        self._group_dirty: set[int] = set()
        self._uploads = UploadCache()
        self._group_posts: dict[int, deque[float]] = {}
        self._seat_shown: dict[tuple[int, int], tuple[bytes, str, object]] = {}
        self._seat_dirty: set[tuple[int, int]] = set()
        self._seat_waiting: set[tuple[int, int]] = set()

    # --- the Presenter protocol ------------------------------------------------------------

    async def hand_started(self, runner: TableRunner, resumed: bool) -> None:
        group_lang, seat_langs = await self.languages(runner)
        self._texts[runner.table_id] = (translator(group_lang), [translator(x) for x in seat_langs])
        table = await self.storage.get_table(runner.table_id)
        texts = self.group_texts(runner)
        if resumed:
            await self._send_group_text(runner, texts.t("The bot is back: hand {n} continues.",
                                                        n=runner.hand.number))
        message = await self._send_table(runner)
        if message is not None:
            self._table_message[runner.table_id] = message.message_id
            await self.storage.set_table_message(runner.table_id, message.message_id)
        for seat in range(len(runner.seats)):
            if runner.human(seat):
                old = table.dm_message_ids[seat] if resumed else None
                if old is not None:
                    self._seat_message[(runner.table_id, seat)] = old
                await self._update_seat(runner, seat, fresh=old is None)

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None:
        """Called under the table's lock: capture what to show now, send it in the background."""
        texts = self.group_texts(runner)
        wins = [e.win for e in events if e.type is EventType.WON and e.win is not None]
        if wins:
            transfers = [e.transfer for e in events if e.transfer is not None]
            card = views.win_card(runner, wins, transfers, texts)
            self._enqueue(runner, lambda: self._send_card(runner, card))
        if runner.game.over:
            final = views.final_card(runner, texts)
            table = views.public_table(runner, texts)
            caption = views.group_caption(runner, texts)
            self._enqueue(runner, lambda: self._finish(runner, table, caption, final))
        else:
            self._schedule_group(runner)
        for seat in range(len(runner.seats)):
            if runner.human(seat):
                acted = any(e.seat == seat for e in events)  # a player sees their own move at once
                self._schedule_seat(runner, seat, immediate=runner.waiting_on(seat) or acted or runner.game.over,
                                    supersede=acted)

    async def prompt(self, runner: TableRunner, seat: int) -> None:
        self._schedule_seat(runner, seat, immediate=True, supersede=True)

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
        self._schedule_seat(runner, seat, immediate=True)

    def _enqueue(self, runner: TableRunner, send: Callable[[], Awaitable[Any]]) -> None:
        """Group posts of one table go out in order, without holding up the table's lock."""
        previous = self._outbox.get(runner.table_id)

        async def after_previous() -> None:
            if previous is not None:
                with contextlib.suppress(Exception):
                    await previous
            await send()

        self._outbox[runner.table_id] = asyncio.get_running_loop().create_task(after_previous())

    # --- languages ---------------------------------------------------------------------------

    def group_texts(self, runner: TableRunner) -> Translator:
        return self._texts.get(runner.table_id, (translator("zh"), []))[0]

    def seat_texts(self, runner: TableRunner, seat: int) -> Translator:
        found = self._texts.get(runner.table_id)
        return found[1][seat] if found else translator("zh")

    # --- the group -------------------------------------------------------------------------

    async def _send_table(self, runner: TableRunner) -> Message | None:
        texts = self.group_texts(runner)
        image = await _png(shared_table, views.public_table(runner, texts))
        self._group_sent[runner.table_id] = time.monotonic()
        return await self._send_group_photo(runner, image, views.group_caption(runner, texts))

    def _schedule_group(self, runner: TableRunner) -> None:
        self._group_dirty.add(runner.table_id)
        task = self._group_due.get(runner.table_id)
        if task is not None and not task.done():
            return  # the running edit loop picks the change up
        wait = self.group_interval - (time.monotonic() - self._group_sent.get(runner.table_id, 0.0))
        self._group_due[runner.table_id] = asyncio.get_running_loop().create_task(
            self._group_loop(runner, max(0.0, wait))
        )

    async def _group_loop(self, runner: TableRunner, wait: float) -> None:
        """Edit the table message until it shows the latest state, one edit per interval."""
        await asyncio.sleep(wait)
        while runner.table_id in self._group_dirty:
            self._group_dirty.discard(runner.table_id)
            await self._edit_table(runner)
            if runner.table_id in self._group_dirty:
                await asyncio.sleep(self.group_interval)

    async def _edit_table(self, runner: TableRunner) -> None:
        texts = self.group_texts(runner)
        await self._edit_table_message(runner, views.public_table(runner, texts), views.group_caption(runner, texts))

    async def _edit_table_message(self, runner: TableRunner, table: TableView, caption: str) -> None:
        message_id = self._table_message.get(runner.table_id)
        await self._group_budget(runner.table_id)
        image = await _png(shared_table, table)
        self._group_sent[runner.table_id] = time.monotonic()
        if message_id is None:
            return
        try:
            await self.bot.edit_message_media(
                InputMediaPhoto(image, caption=caption), chat_id=runner.chat_id, message_id=message_id
            )
        except BadRequest as error:
            if not is_not_modified(error):
                log.warning("table %s: could not edit the table message: %s", runner.table_id, error)
        except TelegramError as error:
            log.warning("table %s: could not edit the table message: %s", runner.table_id, error)

    async def _send_card(self, runner: TableRunner, card: ResultCard) -> None:
        await self._send_group_photo(runner, await _png(render_result_card, card), None)

    async def _finish(self, runner: TableRunner, table: TableView, caption: str, final: ResultCard) -> None:
        """The hand is over: the settlement card with Next hand / End, then the final table."""
        task = self._group_due.pop(runner.table_id, None)
        if task is not None:
            task.cancel()
        self._group_dirty.discard(runner.table_id)
        texts = self.group_texts(runner)
        markup = InlineKeyboardMarkup([[
            InlineKeyboardButton(texts.t("Next hand"),
                                 callback_data=callbacks.after_hand_data(runner.table_id, runner.hand.id, "next")),
            InlineKeyboardButton(texts.t("End"),
                                 callback_data=callbacks.after_hand_data(runner.table_id, runner.hand.id, "end")),
        ]])
        image = await _png(render_result_card, final)
        await self._send_group_photo(runner, image, views.end_line(runner.game.end, texts), markup)
        await self._edit_table_message(runner, table, caption)

    async def _group_budget(self, table_id: int) -> None:
        """Keep a group under GROUP_POSTS_PER_MINUTE posts and edits: table edits wait their turn."""
        posts = self._group_posts.setdefault(table_id, deque())
        while posts and time.monotonic() - posts[0] >= 60:
            posts.popleft()
        if len(posts) >= GROUP_POSTS_PER_MINUTE:
            await asyncio.sleep(60 - (time.monotonic() - posts[0]))
        posts.append(time.monotonic())

    def _count_group_post(self, table_id: int) -> None:
        self._group_posts.setdefault(table_id, deque()).append(time.monotonic())

    async def _send_group_photo(self, runner: TableRunner, image: bytes, caption: str | None,
                                markup: InlineKeyboardMarkup | None = None) -> Message | None:
        self._count_group_post(runner.table_id)
        try:
            return await self.bot.send_photo(runner.chat_id, image, caption=caption, reply_markup=markup)
        except TelegramError as error:
            log.warning("table %s: could not post to the group: %s", runner.table_id, error)
            return None

    async def _send_group_text(self, runner: TableRunner, text: str) -> None:
        self._count_group_post(runner.table_id)
        try:
            await self.bot.send_message(runner.chat_id, text)
        except TelegramError as error:
            log.warning("table %s: could not post to the group: %s", runner.table_id, error)

    # --- each player's DM --------------------------------------------------------------------

    def _schedule_seat(self, runner: TableRunner, seat: int, immediate: bool, supersede: bool = False) -> None:
        """Update a seat's DM soon (or now). ``supersede``: the player just acted, so an update
        drawn before that (perhaps still queued behind Telegram's limits, with the buttons they
        just used) is dropped rather than shown after their move."""
        key = (runner.table_id, seat)
        self._seat_dirty.add(key)
        task = self._seat_due.get(key)
        if task is not None and not task.done():
            if not (supersede or (immediate and key in self._seat_waiting)):
                return  # the running update loop picks the change up
            task.cancel()
        delay = 0.0 if immediate else self.dm_interval
        self._seat_due[key] = asyncio.get_running_loop().create_task(self._seat_loop(runner, seat, delay))

    async def _seat_loop(self, runner: TableRunner, seat: int, delay: float) -> None:
        """Update a player's DM until it shows the latest state (changes coalesce meanwhile)."""
        key = (runner.table_id, seat)
        if delay:
            self._seat_waiting.add(key)
            try:
                await asyncio.sleep(delay)
            finally:
                self._seat_waiting.discard(key)
        while key in self._seat_dirty:
            self._seat_dirty.discard(key)
            await self._update_seat(runner, seat)

    async def _seat_picture(self, runner: TableRunner, seat: int) -> tuple[bytes, str, InlineKeyboardMarkup | None]:
        texts = self.seat_texts(runner, seat)
        hand, drawn, void = views.private_hand(runner, seat)
        table = views.public_table(runner, texts)
        labels = views.hand_labels(runner, seat, texts)
        caption = views.seat_caption(runner, seat, texts)
        markup = views.seat_keyboard(runner, seat, texts)
        melds = tuple(runner.game.melds[seat])
        image = await _png(
            render_seat_screen, table, hand, melds, drawn, void, labels, texts.t("Void {suit}", suit="{suit}")
        )
        return image, caption, markup

    async def _update_seat(self, runner: TableRunner, seat: int, fresh: bool = False) -> None:
        user_id = runner.seats[seat].user_id
        if user_id is None:
            return
        key = (runner.table_id, seat)
        image, caption, markup = await self._seat_picture(runner, seat)
        message_id = None if fresh else self._seat_message.get(key)
        try:
            if message_id is not None:
                try:
                    await self._edit_seat_message(key, user_id, message_id, image, caption, markup)
                    return
                except BadRequest as error:
                    if is_not_modified(error):
                        return
                    log.info("table %s seat %s: sending a new DM (%s)", runner.table_id, seat, error)
            sent = await self.bot.send_photo(user_id, self._uploads.media(image), caption=caption,
                                             reply_markup=markup)
            self._uploads.remember(image, sent)
            self._seat_shown[key] = (self._uploads.digest(image), caption, markup.to_dict() if markup else None)
            self._seat_message[key] = sent.message_id
            await self.storage.set_table_message(runner.table_id, sent.message_id, seat=seat)
        except Forbidden:
            await self.storage.save_user(user_id, started_dm=False)
            asyncio.get_running_loop().create_task(runner.take_over(seat, "blocked"))
        except TelegramError as error:
            log.warning("table %s seat %s: could not update the DM: %s", runner.table_id, seat, error)

    async def _edit_seat_message(self, key: tuple[int, int], user_id: int, message_id: int, image: bytes,
                                 caption: str, markup: InlineKeyboardMarkup | None) -> None:
        """Change only what changed: swap toggles, for one, re-send no picture."""
        digest = self._uploads.digest(image)
        buttons = markup.to_dict() if markup is not None else None
        shown = self._seat_shown.get(key)
        if shown == (digest, caption, buttons):
            return
        if shown is not None and shown[0] == digest:
            if shown[1] == caption:
                await self.bot.edit_message_reply_markup(chat_id=user_id, message_id=message_id, reply_markup=markup)
            else:
                await self.bot.edit_message_caption(chat_id=user_id, message_id=message_id, caption=caption,
                                                    reply_markup=markup)
        else:
            edited = await self.bot.edit_message_media(
                InputMediaPhoto(self._uploads.media(image), caption=caption), chat_id=user_id,
                message_id=message_id, reply_markup=markup,
            )
            if isinstance(edited, Message):
                self._uploads.remember(image, edited)
        self._seat_shown[key] = (digest, caption, buttons)

    async def forget(self, table_id: int) -> None:
        """Drop a finished table's pending updates."""
        for key in [k for k in self._seat_due if k[0] == table_id]:
            task = self._seat_due.pop(key)
            task.cancel()
        task = self._group_due.pop(table_id, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        outbox = self._outbox.pop(table_id, None)
        if outbox is not None:  # only the final table edit can still be waiting: a new hand replaces it
            outbox.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await outbox

    async def close(self) -> None:
        tasks = [*self._group_due.values(), *self._seat_due.values(), *self._outbox.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._group_due.clear()
        self._seat_due.clear()
        self._outbox.clear()


class UploadCache:
    """Telegram's file ids of pictures already uploaded, so the same picture is never sent twice."""

    def __init__(self, size: int = 512) -> None:
        self._ids: OrderedDict[bytes, str] = OrderedDict()
        self._size = size

    @staticmethod
    def digest(image: bytes) -> bytes:
        return hashlib.blake2b(image, digest_size=16).digest()

    def media(self, image: bytes) -> bytes | str:
        """The file id if this picture was uploaded before, else the bytes to upload."""
        found = self._ids.get(self.digest(image))
        if found is None:
            return image
        self._ids.move_to_end(self.digest(image))
        return found

    def remember(self, image: bytes, message: Message) -> None:
        if message.photo:
            self._ids[self.digest(image)] = message.photo[-1].file_id
            while len(self._ids) > self._size:
                self._ids.popitem(last=False)


async def _png(render: Callable[..., Image.Image], *args: Any) -> bytes:
    """Render and encode off the event loop."""
    return await asyncio.to_thread(lambda: encode_png(render(*args)))
