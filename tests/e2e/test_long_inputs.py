"""Every typed hand gets an answer Telegram accepts (issue 11 item 12): a correction that quotes a
very long input is cut to Telegram's 4096 characters, and a hand typed with ideographic spaces
or full-width characters (as Chinese keyboards type them) is read as written."""

from __future__ import annotations

import io

import pytest
from fake_telegram import FakeTelegram
from harness import BotFactory
from PIL import Image

from bot.app import load_features
from bot.messaging import fit, fit_caption

FEATURES = ("bot.handlers_basic", "bot.score.chat")


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize("written", ["x" * 4000, "😀" * 2040, "1" * 3000 + "q" * 1000])
async def test_a_correction_for_a_long_input_still_arrives(telegram: FakeTelegram, start_bot: BotFactory,
                                                          written: str) -> None:
    await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice", started=True)
    sent = await alice.send(alice, f"/score {written}")
    answer = await telegram.wait_for_bot_message(alice, lambda m: True, after=sent.message_id, timeout=20)
    assert answer.text and len(answer.text.encode("utf-16-le")) // 2 <= 4096
    assert not [c for c in telegram.calls if c.status != 200]  # nothing was refused on the way


@pytest.mark.parametrize("written", ["123m\u3000456m\u3000789m\u3000234p\u300055p",
                                     "１２３ｍ４５６ｍ７８９ｍ２３４ｐ５５ｐ"])
async def test_a_hand_typed_with_chinese_spacing_is_scored(telegram: FakeTelegram, start_bot: BotFactory,
                                                          written: str) -> None:
    await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice", started=True)
    sent = await alice.send(alice, f"/score {written}")
    answer = await telegram.wait_for_bot_message(alice, lambda m: True, after=sent.message_id, timeout=20)
    assert answer.photo is not None, answer.text  # the scored hand, not a correction


def test_fit_counts_what_telegram_counts() -> None:
    assert fit("abc", 3) == "abc"
    assert fit("abcd", 3) == "ab…"
    emoji = fit("😀" * 10, 5)  # two UTF-16 units each
    assert emoji == "😀😀…" and len(emoji.encode("utf-16-le")) // 2 <= 5
    assert len(fit_caption("字" * 2000)) == 1024


async def test_any_text_or_caption_over_telegrams_limits_is_cut_on_its_way_out(
        telegram: FakeTelegram, start_bot: BotFactory) -> None:
    """A feature that forgets to fit what it sends still gets its message through (cut)."""
    app = await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice", started=True)
    text = await app.bot.send_message(alice.id, "字" * 5000)
    caption = await app.bot.send_photo(alice.id, png(), caption="x" * 2000)
    assert len(text.text) == 4096 and text.text.endswith("…")
    assert len(caption.caption) == 1024 and caption.caption.endswith("…")
    assert not [c for c in telegram.calls if c.status != 200]
