"""Photographed hands: recognise the tiles, let the player correct them with taps, then score.

A photo with the caption ``/score`` in a group, a photo replying to the /score prompt, or any
photo in a private chat is downloaded into memory, recognised in a worker thread and dropped:
nothing of it is written anywhere. The answer is our own drawing of what was read (unsure tiles
highlighted and marked "?") with buttons to correct it (``bot.score.fixing``); Score then values
the hand exactly as a typed one and the same message becomes the score answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import BadRequest, TelegramError
from telegram.ext import CallbackQueryHandler, MessageHandler, filters

from bot.feature import AnyApplication, Context, Feature
from bot.i18n import N_, Translator
from bot.latest_edits import LatestEdits
from bot.messaging import is_not_modified
from bot.score.answer import Answer, answer_for_text
from bot.score.chat import (
    COMMAND,
    REPLIES_TO_PROMPT,
    chat_rules,
    message_lock,
    redrawn_messages,
    remember,
    show,
    situation_words,
)
from bot.score.fixing import MAX_TILES, Entry, Fixing, Step
from bot.score.memory import MessageKey, MessageMemory, memory
from bot.score.texts import error_text, tiles_text
from bot.services import texts_for
from bot.table.views import suit_label, tile_label
from engine.tiles import HandError, MeldKind, Situation, Suit, format_hand, format_tiles, make_tile
from vision.errors import MAX_BYTES, VisionError

if TYPE_CHECKING:
    from vision import Recognition
    from vision.win_reading import WinReading

log = logging.getLogger(__name__)

FIXES_KEY = "xuezhan.score.fixes"
CORRECTIONS_KEY = "xuezhan.score.corrections"
GATE_KEY = "xuezhan.score.photo_gate"
RECOGNITIONS_AT_ONCE = 2
WAITING_PER_USER = 2
PHOTOS_PER_MINUTE = 6
CAPTION_LIMIT = 1024
FIXES_LIMIT = 200
ROW = 7
FIX_PATTERN = re.compile(r"^ph:(\d{1,6}):([a-z])(\d{0,2})$")
VISION_ERRORS = {
    "not_an_image": N_("That file is not a picture I can open. Send a photo (JPEG or PNG) of the tiles."),
    "too_large": N_("That photo is too large for me. Send it as a normal (compressed) photo."),
    "too_many_pixels": N_("That picture has too many pixels for me. Send it as a normal (compressed) photo."),
    "no_tiles": N_("I could not find any 万, 筒 or 条 tiles in that photo. Lay the hand out in a row, "
                   "faces up, and photograph it from above, or type the hand instead: "
                   "/score 123m456m789m234p55p"),
    "too_small": N_("I could not read any tile in that photo: what look like tiles are only about {px} px "
                    "long. Photograph the hand closer, so that it fills the picture, or type it instead: "
                    "/score 123m456m789m234p55p"),
}
REFUSALS = {
    "stale": N_("That button is out of date."),
    "too_many_tiles": N_("A hand has at most 18 tiles."),
    "too_many_copies": N_("There are only four of each tile."),
    "too_many_melds": N_("A hand has at most four melds."),
    "not_enough_tiles": N_("Not enough of that tile in the hand for this meld."),
    "last_tile": N_("The hand must keep at least one tile in hand."),
}
MELD_KINDS = {"p": MeldKind.PUNG, "k": MeldKind.KONG, "c": MeldKind.CONCEALED_KONG}


def fixes(context: Context) -> MessageMemory[Fixing]:
    return memory(context.bot_data, FIXES_KEY, FIXES_LIMIT)


# --- receiving a photo -------------------------------------------------------------------------


class PhotoGate:
    """How many photos are read at once, and how fast one person may send them.

    Decoding and recognising a photo costs tens of megabytes and a core for a while, so the
    bot reads at most ``RECOGNITIONS_AT_ONCE`` photos at a time; one person's photos wait their
    turn one after another (at most ``WAITING_PER_USER`` of them), and more than
    ``PHOTOS_PER_MINUTE`` a minute are turned away with a sentence, not read.
    """

    def __init__(self) -> None:
        self.slots = asyncio.Semaphore(RECOGNITIONS_AT_ONCE)
        self.turns: dict[int, asyncio.Lock] = {}
        self.waiting: dict[int, int] = {}
        self.recent: dict[int, deque[float]] = {}

    def refusal(self, user_id: int) -> str | None:
        """Why this person's new photo is not read now (a message id), or None to read it."""
        now = time.monotonic()
        recent = self.recent.setdefault(user_id, deque())
        while recent and now - recent[0] >= 60:
            recent.popleft()
        if len(recent) >= PHOTOS_PER_MINUTE:
            return N_("That is a lot of photos in one minute; send the next one in a little while.")
        if self.waiting.get(user_id, 0) >= WAITING_PER_USER:
            return N_("I am still reading your earlier photos; send this one again when they are answered.")
        recent.append(now)
        return None

    @contextlib.asynccontextmanager
    async def turn(self, user_id: int) -> AsyncIterator[None]:
        self.waiting[user_id] = self.waiting.get(user_id, 0) + 1
        try:
            async with self.turns.setdefault(user_id, asyncio.Lock()), self.slots:
                yield
        finally:
            self.waiting[user_id] -= 1
            if not self.waiting[user_id]:
                del self.waiting[user_id]
                self.turns.pop(user_id, None)


def gate(context: Context) -> PhotoGate:
    return context.bot_data.setdefault(GATE_KEY, PhotoGate())


async def on_photo(update: Update, context: Context) -> None:
    """A photo, or an image sent as a file (a document), of a hand."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    texts = await texts_for(update, context)
    fixing = await read_photo(message, user.id, context, texts)
    if fixing is not None:
        # a caption's situation words (/score 自摸, or 自摸 alone in a private chat) go with the hand
        fixing.situations = situation_words(message.caption) or frozenset()
        await offer_fixing(message, fixing, context, texts)


async def score_photo(photo: Message, asker: int, situations: frozenset[Situation], context: Context,
                      texts: Translator) -> None:
    """``/score`` sent in reply to a photo someone posted: that photo is read, and the correction,
    answering the photo, is the asker's to make."""
    fixing = await read_photo(photo, asker, context, texts)
    if fixing is not None:
        fixing.situations = situations
        await offer_fixing(photo, fixing, context, texts)


async def read_photo(message: Message, user_id: int, context: Context, texts: Translator) -> Fixing | None:
    """The correction to start from for the photo (or image file) of ``message``; or None, once
    the person has been told why there is none (too large, too many photos, unreadable, no tiles)."""
    source = message.photo[-1] if message.photo else message.document
    if source is None:
        return None
    if source.file_size is not None and source.file_size > MAX_BYTES:
        await message.reply_text(texts.t(VISION_ERRORS["too_large"]))
        return None
    refused = gate(context).refusal(user_id)
    if refused is not None:
        await message.reply_text(texts.t(refused))
        return None
    try:
        async with gate(context).turn(user_id):
            result, found = await _recognise(context, source.file_id)
    except VisionError as error:
        await message.reply_text(texts.t(VISION_ERRORS.get(error.code, VISION_ERRORS["not_an_image"]), **error.params))
        return None
    except TelegramError as error:
        log.warning("could not download a photo: %s", error)
        await message.reply_text(texts.t("I could not download that photo from Telegram; please send it again."))
        return None
    if len(result.tiles) > MAX_TILES:
        await message.reply_text(texts.t("I found {n} tiles, but a hand has at most 18. Photograph only the "
                                         "hand's tiles.", n=len(result.tiles)))
        return None
    return fixing_from_photo(user_id, result, found, texts)


async def offer_fixing(message: Message, fixing: Fixing, context: Context, texts: Translator) -> None:
    """Answer ``message`` with the correction: our drawing of the hand and its buttons."""
    photo, caption, keyboard = await asyncio.to_thread(_fix_view, fixing, texts, None)
    sent = await message.reply_photo(photo, caption=caption[:CAPTION_LIMIT], reply_markup=keyboard)
    fixing.drawn = fixing.picture_key()
    fixes(context).put(_key(sent), fixing)


async def _recognise(context: Context, file_id: str) -> tuple[Recognition, WinReading | None]:
    """Download the photo into memory, recognise it in a worker thread, and find the reading that
    wins when the hand as read does not (``vision.win_reading``).

    The bytes live only in this call: nothing is written to disk or kept once it returns.
    """
    found = await context.bot.get_file(file_id)
    data = bytes(await found.download_as_bytearray())
    return await asyncio.to_thread(_read_hand, data)


def _read_hand(data: bytes) -> tuple[Recognition, WinReading | None]:
    # The recogniser (numpy, onnxruntime) is imported at the first photo.
    from vision import recognize
    from vision.win_reading import winning_reading

    result = recognize(data)
    return result, winning_reading(result.tiles)


def fixing_from_photo(owner: int, result: Recognition, found: WinReading | None, texts: Translator) -> Fixing:
    """The correction to start from. With a reading that wins, its changed tiles are marked
    unsure at their alternatives' probabilities, so they are among the first the player is asked
    to check, and a notice says what was changed."""
    entries = [Entry(t.tile, t.low_confidence, t.confidence) for t in result.tiles]
    changes = []
    if found is not None:
        for i in found.changed:
            tile = found.tiles[i]
            changes.append(f"{tile_label(entries[i].tile, texts)} → {tile_label(tile, texts)}")
            entries[i] = Entry(tile, True, dict(result.tiles[i].alternatives)[tile])
    fixing = Fixing(owner, entries)
    notices = []
    if changes:
        notices.append(texts.t("Read as it is, this hand does not win. The closest reading that wins changes "
                               "{changes}: check the tiles marked ?.", changes=", ".join(changes)))
    if result.small_tiles and any(entry.unsure for entry in entries):
        notices.append(texts.t("The tiles are small in this photo (about {px} px long), and small tiles are "
                               "often misread. Next time, photograph the hand closer, so that it fills the "
                               "picture.", px=round(result.tile_length)))
    fixing.notice = "\n".join(notices) or None
    return fixing


# --- the correction message --------------------------------------------------------------------


def _labels(fixing: Fixing, texts: Translator) -> list[str]:
    return [
        tile_label(e.tile, texts) + ("?" if e.unsure else "") + ("★" if i == fixing.win_index else "")
        for i, e in enumerate(fixing.entries)
    ]


def _picture(fixing: Fixing) -> bytes:
    """Our drawing of the hand: unsure and chosen tiles highlighted, numbered under each tile."""
    from rendering import encode_png, render_hand, render_tiles  # Pillow loads with the first picture

    marked = {i for i, e in enumerate(fixing.entries) if e.unsure}
    if fixing.selected is not None:
        marked.add(fixing.selected)
    tiles = [e.tile for e in fixing.entries]
    if len(tiles) > 14:  # more than a hand holds concealed: a plain row, melds not drawn
        return encode_png(render_tiles(tiles, highlight=marked))
    win = fixing.win_index
    concealed = tiles[:win] if win is not None else tiles
    drawn = tiles[win] if win is not None else None
    numbers = [f"{i + 1}{'?' if e.unsure else ''}" for i, e in enumerate(fixing.entries)]
    return encode_png(render_hand(concealed, fixing.melds, drawn=drawn, labels=numbers, highlight=marked))


def _caption(fixing: Fixing, texts: Translator) -> str:
    lines = []
    if fixing.notice:
        lines += [fixing.notice, ""]
    lines.append(texts.t("The hand: {tiles} (tiles: {n})", tiles=_written(fixing), n=fixing.tile_count))
    unsure = [fixing.entries[i].tile for i in fixing.unsure_first()]  # least confident first
    if unsure:
        lines.append(texts.t("Not sure about (marked ?): {tiles}", tiles=tiles_text(unsure, texts)))
    if fixing.winning and fixing.win is None:
        lines.append(texts.t("No winning tile marked: the last tile counts as the winning tile."))
    if fixing.step is Step.TILE and fixing.selected is not None:
        tile = tile_label(fixing.entries[fixing.selected].tile, texts)
        lines.append(texts.t("Tile {i} ({tile}): pick its right suit, or what to do with it.",
                             i=fixing.selected + 1, tile=tile))
    elif fixing.step is Step.ADD:
        lines.append(texts.t("Adding a tile: pick its suit."))
    elif fixing.step is Step.NUMBER and fixing.suit is not None:
        lines.append(texts.t("Pick the number of the {suit} tile.", suit=suit_label(fixing.suit, texts)))
    elif fixing.winning:
        lines.append(texts.t("Tap a tile to change it, remove it, mark it as the winning tile or make a meld "
                             "of it; tap a meld to undo it. Then press {button}.", button=_last_button(fixing, texts)))
    else:
        lines.append(texts.t("Tap a tile to change it, remove it or make a meld of it; tap a meld to undo it. "
                             "Then press {button}.", button=_last_button(fixing, texts)))
    return "\n".join(lines)


def _written(fixing: Fixing) -> str:
    """The hand's notation as the question asks for it: a win with its winning tile marked, or
    plain tiles and melds (a player's tiles at an empty wall)."""
    hand = fixing.hand()
    if fixing.winning:
        return format_hand(hand)
    return " ".join([format_tiles(hand.concealed), *(meld.notation() for meld in hand.melds)])


def _last_button(fixing: Fixing, texts: Translator) -> str:
    return texts.t(fixing.finish.label) if fixing.finish is not None else texts.t("Score")


def _keyboard(fixing: Fixing, texts: Translator) -> InlineKeyboardMarkup:
    def button(text: str, action: str) -> InlineKeyboardButton:
        return InlineKeyboardButton(text, callback_data=f"ph:{fixing.version}:{action}")

    back = button("↩ " + texts.t("Back"), "b")
    suits = [button(suit_label(s, texts), f"s{int(s)}") for s in Suit]
    if fixing.step is Step.TILE:
        return InlineKeyboardMarkup([
            suits,
            [button(texts.t("Remove"), "x"), *([button(texts.t("Winning tile"), "w")] if fixing.winning else [])],
            [button(texts.t("Pung"), "p"), button(texts.t("Kong"), "k"), button(texts.t("Concealed kong"), "c")],
            [back],
        ])
    if fixing.step is Step.ADD:
        return InlineKeyboardMarkup([suits, [back]])
    if fixing.step is Step.NUMBER and fixing.suit is not None:
        numbers = [button(tile_label(make_tile(r, fixing.suit), texts), f"n{r}") for r in range(1, 10)]
        return InlineKeyboardMarkup([numbers[:5], numbers[5:], [back]])
    tiles = [button(label, f"t{i}") for i, label in enumerate(_labels(fixing, texts))]
    rows = [tiles[i:i + ROW] for i in range(0, len(tiles), ROW)]
    if fixing.melds:
        rows.append([button(f"{m.notation()} ✕", f"m{j}") for j, m in enumerate(fixing.melds)])
    rows.append([button("➕ " + texts.t("Add a tile"), "a"), button("✅ " + _last_button(fixing, texts), "g")])
    return InlineKeyboardMarkup(rows)


def _fix_view(fixing: Fixing, texts: Translator,
              old_picture: tuple[object, ...] | None) -> tuple[bytes | None, str, InlineKeyboardMarkup]:
    """The picture (None when ``old_picture`` shows the same), caption and buttons."""
    photo = None if old_picture == fixing.picture_key() else _picture(fixing)
    return photo, _caption(fixing, texts), _keyboard(fixing, texts)


# --- presses -----------------------------------------------------------------------------------


async def on_fix_press(update: Update, context: Context) -> None:
    query, chat, user = update.callback_query, update.effective_chat, update.effective_user
    if query is None or query.data is None:
        return
    if chat is None or user is None or not isinstance(query.message, Message):  # too old to show
        await query.answer()
        return
    match = FIX_PATTERN.match(query.data)
    assert match is not None
    message = query.message
    texts = await texts_for(update, context)
    key = (chat.id, message.message_id)
    async with message_lock(context, *key):
        fixing = fixes(context).get(key)
        if fixing is None:
            await query.answer(texts.t("This correction has expired; send the photo again."))
            return
        if user.id != fixing.owner:
            await query.answer(texts.t("Only the person who asked for this reading can correct it."))
            return
        if int(match.group(1)) != fixing.version:
            await query.answer(texts.t(REFUSALS["stale"]))
            return
        action, number = match.group(2), int(match.group(3) or 0)
        if action != "g":
            refusal = _move(fixing, action, number)
            if refusal is not None:
                await query.answer(texts.t(REFUSALS[refusal]), show_alert=refusal != "stale")
                return
            await query.answer()
            corrections(context).show(key, chat.id, (message, texts))
            return
        await query.answer()
        final = await (_hand_over(context, message, fixing, user.id, texts) if fixing.finish is not None
                       else _score(context, message, fixing, texts))
    if final is not None:  # the message becomes the answer after the lock: a group's edit waits for its turn
        await final(message)


def _move(fixing: Fixing, action: str, number: int) -> str | None:
    if action == "t":
        return fixing.choose_tile(number)
    if action == "m":
        return fixing.unmark_meld(number)
    if action == "s":
        return fixing.choose_suit(Suit(number)) if number < len(Suit) else "stale"
    if action == "n":
        return fixing.choose_number(number)
    if action == "x":
        return fixing.remove()
    if action == "w":
        return fixing.mark_win()
    if action in MELD_KINDS:
        return fixing.mark_meld(MELD_KINDS[action])
    if action == "a":
        return fixing.start_adding()
    if action == "b":
        return fixing.back()
    return "stale"


def corrections(context: Context) -> LatestEdits:
    """The senders of the corrections' redraws (``bot.latest_edits``), made at start."""
    edits: LatestEdits = context.bot_data[CORRECTIONS_KEY]
    return edits


async def _redraw(app: AnyApplication, key: MessageKey, shown: tuple[Message, Translator]) -> None:
    """The correction as it is now, in the chat's turn (holding its message's lock). Scored or
    handed over meanwhile, it is not: the message shows the answer."""
    message, texts = shown
    fixing = fixes(app).get(key)
    if fixing is None:
        return
    photo, caption, keyboard = await asyncio.to_thread(_fix_view, fixing, texts, fixing.drawn)
    if photo is not None:
        await show(message, Answer(photo, caption, keyboard))
    else:
        try:
            await message.edit_caption(caption, reply_markup=keyboard)
        except BadRequest as error:
            if not is_not_modified(error):
                raise
    fixing.drawn = fixing.picture_key()


Final = Callable[[Message], Awaitable[object]]  # the last edit of a correction, made after its lock


async def _hand_over(context: Context, message: Message, fixing: Fixing, user_id: int,
                     texts: Translator) -> Final | None:
    """The corrected hand answers the question it was photographed for; refused, it stays open
    for fixing with the reason, as a Score that cannot be valued does."""
    finish = fixing.finish
    assert finish is not None
    hand = fixing.hand()
    refusal = await finish.take(context, hand, user_id)
    if refusal is not None:
        fixing.refuse_score(refusal)
        corrections(context).show(_key(message), message.chat_id, (message, texts))
        return None
    fixes(context).pop(_key(message))
    written = _written(fixing)
    return lambda shown: shown.edit_caption(texts.t(finish.done, hand=written), reply_markup=None)


async def _score(context: Context, message: Message, fixing: Fixing, texts: Translator) -> Final | None:
    """Value the corrected hand as if typed; a hand that cannot be valued stays open for fixing."""
    written = format_hand(fixing.hand())
    rules, base = await chat_rules(context, message.chat_id)
    try:
        answer = await asyncio.to_thread(answer_for_text, written, rules, base, texts)
    except HandError as error:
        fixing.refuse_score(error_text(error, written, texts))
        corrections(context).show(_key(message), message.chat_id, (message, texts))
        return None
    fixes(context).pop(_key(message))
    remember(context, message.chat_id, message.message_id, answer)
    return lambda shown: show(shown, answer)


def _key(message: Message) -> MessageKey:
    return message.chat_id, message.message_id


_IN_GROUPS = filters.ChatType.GROUPS & (filters.CaptionRegex(COMMAND) | REPLIES_TO_PROMPT)

_ON_START, _ON_STOP = redrawn_messages(CORRECTIONS_KEY, _redraw, "correction")


FEATURE = Feature(
    name="photo score",
    handlers=lambda: [
        MessageHandler((filters.PHOTO | filters.Document.IMAGE) & (filters.ChatType.PRIVATE | _IN_GROUPS), on_photo),
        CallbackQueryHandler(on_fix_press, pattern=FIX_PATTERN),
    ],
    on_start=_ON_START,
    on_stop=_ON_STOP,
)
