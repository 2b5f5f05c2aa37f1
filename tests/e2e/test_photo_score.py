"""Photographed hands end to end: recognise, correct with taps, score as a typed hand would be.

The photo is a real one from ``../shared/vision/cmd/valid`` (CC BY 4.0, see its README). What the
recogniser reads is not fixed here: the test reads the bot's own buttons and taps its way to one
known winning hand, so it checks the correction flow whatever the model gets right.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from drawn_photos import far_away_hand
from fake_messages import ChatMessage
from fake_telegram import FakeChat, FakeTelegram, FakeUser
from harness import BotFactory
from PIL import Image

from bot.app import load_features
from bot.ratelimit import TelegramRateLimiter
from bot.services import services
from engine.tiles import parse_tile, parse_tiles, tile_name
from vision import recognize

FEATURES = ("bot.handlers_basic", "bot.score.chat", "bot.score.photo")
PHOTOS = Path(__file__).resolve().parents[3] / "shared" / "vision" / "cmd" / "valid" / "images"
PHOTO = PHOTOS / "368055741_156164707576861_5919394934258216681_n_jpg.rf.71f05812a39e8da795c1260c050950b9.jpg"
TARGET = Counter(parse_tiles("222555888p11444s"))  # [222p] 555p 888p 444s +1s: all pungs, ×2
NOT_A_WIN = Counter(parse_tiles("222555888p11449s"))
SUITS = {"m": "characters", "p": "dots", "s": "bamboo"}

pytestmark = pytest.mark.skipif(not PHOTO.is_file(), reason="the shared vision photos are not here")


async def english_group(app, telegram: FakeTelegram, *members: FakeUser) -> FakeChat:
    group = telegram.group("Friends", members=members, admins=members[:1])
    await services(app).storage.update_chat(group.id, language="en")
    return group


def tile_buttons(message: ChatMessage) -> list[tuple[str, int]]:
    """The hand's tile buttons as (callback text, tile), in picture order."""
    return [
        (b.text, parse_tile(b.text.rstrip("?★")))
        for b in message.buttons
        if b.callback_data and b.callback_data.split(":")[2].startswith("t")
    ]


async def tap(telegram: FakeTelegram, user: FakeUser, message: ChatMessage, text: str) -> str | None:
    """Press a button and wait until the message shows the result; the press's answer text."""
    edits = message.edit_count
    press = await user.press(message, text)
    answer = await press.answer()
    await telegram.wait_for(lambda: message.edit_count > edits, what=f"the edit after {text!r}")
    return answer


async def set_tile(telegram: FakeTelegram, user: FakeUser, message: ChatMessage, tile: int) -> None:
    await tap(telegram, user, message, SUITS[tile_name(tile)[1]])
    await tap(telegram, user, message, tile_name(tile))


async def correct_to(telegram: FakeTelegram, user: FakeUser, message: ChatMessage, target: Counter[int]) -> None:
    """Replace, remove and add tiles until the hand holds exactly ``target``."""
    while True:
        shown = tile_buttons(message)
        held = Counter(tile for _, tile in shown)
        extra, missing = held - target, target - held
        if not extra and not missing:
            return
        if extra:
            label = next(text for text, tile in shown if extra[tile])
            await tap(telegram, user, message, label)
            if missing:
                await set_tile(telegram, user, message, next(iter(missing.elements())))
            else:
                await tap(telegram, user, message, "Remove")
        else:
            await tap(telegram, user, message, "Add a tile")
            await set_tile(telegram, user, message, next(iter(missing.elements())))


async def test_a_photo_is_read_corrected_with_taps_and_scored(
    telegram: FakeTelegram, start_bot: BotFactory, tmp_path: Path
) -> None:
    # Dozens of taps edit one group message; Telegram's 20-a-minute group limit is not under test here.
    limiter = TelegramRateLimiter(backoff=0.01, group_max_rate=1000)
    app = await start_bot(features=load_features(FEATURES), rate_limiter=limiter, XUEZHAN_LANG="en")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = await english_group(app, telegram, alice, bob)
    data = PHOTO.read_bytes()
    expected = recognize(data)
    sent = await alice.send_photo(group, data, caption="/score")
    fix = await telegram.wait_for_bot_message(group, after=sent.message_id, timeout=20)

    # Our own drawing of what was read, every tile a button, the unsure ones marked "?".
    assert fix.photo is not None and fix.photo != data
    shown = tile_buttons(fix)
    assert sorted(tile for _, tile in shown) == sorted(expected.tile_list)
    assert sum(text.endswith("?") for text, _ in shown) == sum(t.low_confidence for t in expected.tiles)
    assert fix.caption.startswith("The hand: ") and f"(tiles: {len(expected.tiles)})" in fix.caption
    # The caption asks about the unsure tiles least confident first (the recogniser's confidence reaches it).
    unsure = sorted((t for t in expected.tiles if t.low_confidence), key=lambda t: t.confidence)
    asked = [line for line in fix.caption.split("\n") if line.startswith("Not sure about")]
    assert asked == ([f"Not sure about (marked ?): {' '.join(t.name for t in unsure)}"] if unsure else [])

    # Only the sender corrects; an old keyboard is refused.
    first = shown[0][0]
    assert await (await bob.press(fix, first)).answer() == "Only the person who asked for this reading can correct it."
    old = fix.button(first).callback_data
    await tap(telegram, alice, fix, first)
    stale = await alice.press(fix, data=old, check=False)
    assert await stale.answer() == "That button is out of date."
    await tap(telegram, alice, fix, "Back")

    # A hand that is no win is refused with a specific correction, and stays open for fixing.
    await correct_to(telegram, alice, fix, NOT_A_WIN)
    await tap(telegram, alice, fix, "Score")
    assert fix.caption.startswith("These 14 tiles are not a win")
    assert "Discard 9s and the hand is ready (听牌)." in fix.caption
    await correct_to(telegram, alice, fix, TARGET)
    assert not fix.caption.startswith("These 14 tiles")
    two_p = next(text for text, tile in tile_buttons(fix) if tile == parse_tile("2p"))
    await tap(telegram, alice, fix, two_p)
    await tap(telegram, alice, fix, "Pung")
    assert fix.button("[222p]")
    one_s = next(text for text, tile in tile_buttons(fix) if tile == parse_tile("1s"))
    await tap(telegram, alice, fix, one_s)
    await tap(telegram, alice, fix, "Winning tile")
    assert tile_buttons(fix)[-1][0] == "1s★"

    await tap(telegram, alice, fix, "Score")
    lines = fix.caption.split("\n")
    assert lines[0] == "555888p1444s [222p] +1s"
    assert "all pungs ×2" in lines and "Multiplier: 2× base" in lines
    # From here on it is a typed hand's answer: the situation buttons re-score it.
    await tap(telegram, bob, fix, "Self-draw")
    assert "Self-draw. Chips from each player still in the hand: 3" in fix.caption
    assert telegram.unanswered_presses() == []
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("xuezhan.db")) == []


async def test_photos_in_a_dm_and_replies_to_the_prompt_are_read_and_others_ignored(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    data = PHOTO.read_bytes()

    in_dm = await alice.send_photo(alice.dm, data)
    assert "The hand: " in (await telegram.wait_for_bot_message(alice.dm, after=in_dm.message_id, timeout=20)).caption

    telegram.privacy_mode = False  # the bot sees every group message, and must still leave this one
    plain = await alice.send_photo(group, data)  # no /score: not for the bot
    await telegram.settle()
    assert not [m for m in telegram.bot_messages(group) if m.message_id > plain.message_id]

    prompt_to = await alice.send(group, "/score")
    prompt = await telegram.wait_for_bot_message(group, after=prompt_to.message_id)
    reply = telegram.user_message(alice, group, photo=data, reply_to=prompt)
    answer = await telegram.wait_for_bot_message(group, after=reply.message_id, timeout=20)
    assert answer.photo is not None and "The hand: " in answer.caption


async def test_photos_that_cannot_be_read_get_a_clear_answer(
    telegram: FakeTelegram, start_bot: BotFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice")

    async def answer_to(data: bytes) -> str:
        sent = await alice.send_photo(alice.dm, data)
        return (await telegram.wait_for_bot_message(alice.dm, after=sent.message_id)).text

    assert await answer_to(b"these bytes are not a picture") == (
        "That file is not a picture I can open. Send a photo (JPEG or PNG) of the tiles.")
    felt = io.BytesIO()
    Image.new("RGB", (640, 480), (40, 90, 60)).save(felt, "PNG")
    assert (await answer_to(felt.getvalue())).startswith("I could not find any 万, 筒 or 条 tiles in that photo.")
    assert (await answer_to(far_away_hand())).startswith(
        "I could not read any tile in that photo: what look like tiles are only about 13 px long. "
        "Photograph the hand closer")
    monkeypatch.setattr("bot.score.photo.MAX_BYTES", 1000)  # Telegram tells the size before the download
    assert (await answer_to(felt.getvalue())).startswith("That photo is too large for me.")


async def test_a_press_on_a_forgotten_correction_is_answered(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    sent = await alice.send_photo(alice.dm, PHOTO.read_bytes())
    fix = await telegram.wait_for_bot_message(alice.dm, after=sent.message_id, timeout=20)
    await start_bot.stop(app)
    await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    press = await alice.press(fix, "Score")
    assert await press.answer() == "This correction has expired; send the photo again."
    assert telegram.unanswered_presses() == []
