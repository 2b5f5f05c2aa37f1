"""Photos cost memory and CPU, so their number and size are bounded (issue 11 item 5, and item 12's
image sent as a file): a picture over 16 MP is refused before it is decoded, one person's burst
of photos is queued and rate-limited, every photo gets exactly one answer, and an image sent as
a document is read like a photo."""

from __future__ import annotations

import asyncio
import io

from fake_telegram import FakeTelegram
from harness import BotFactory
from PIL import Image

from bot.app import load_features

FEATURES = ("bot.handlers_basic", "bot.score.chat", "bot.score.photo")


def png(width: int, height: int, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height), "white" if mode == "RGB" else 1).save(out, "PNG")
    return out.getvalue()


async def test_a_picture_over_the_pixel_limit_is_refused_before_decoding(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice", started=True)
    bomb = png(5000, 4000, mode="1")  # 20 MP in a few kilobytes
    assert len(bomb) < 100_000
    sent = await alice.send_document(alice, bomb, "hand.png", "image/png")
    answer = await telegram.wait_for_bot_message(alice, lambda m: True, after=sent.message_id, timeout=20)
    assert "too many pixels" in answer.text


async def test_an_image_sent_as_a_file_is_read_like_a_photo(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice", started=True)
    sent = await alice.send_document(alice, png(320, 200), "hand.png", "image/png")
    answer = await telegram.wait_for_bot_message(alice, lambda m: True, after=sent.message_id, timeout=30)
    assert "could not find any" in (answer.text or "")  # a blank picture: read, and no tiles in it


async def test_a_burst_of_photos_is_queued_rate_limited_and_each_answered_once(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(features=load_features(FEATURES), XUEZHAN_LANG="en")
    alice = telegram.user("Alice", started=True)
    sent = [await alice.send_photo(alice, png(320, 200)) for _ in range(9)]
    first = sent[0].message_id

    def answers():
        return [m for m in telegram.bot_messages(alice) if m.message_id > first]

    await telegram.wait_for(lambda: len(answers()) >= len(sent), timeout=60, what="an answer to every photo")
    await asyncio.sleep(0.5)
    texts = [m.text or "" for m in answers()]
    assert len(texts) == len(sent)  # one answer each, none twice
    read = [t for t in texts if "could not find any" in t]
    turned_away = [t for t in texts if "still reading" in t or "a lot of photos" in t]
    assert len(read) + len(turned_away) == len(sent)
    assert 1 <= len(read) <= 6 and turned_away  # at most six a minute are read
