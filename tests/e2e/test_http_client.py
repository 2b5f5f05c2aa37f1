"""The bot's HTTP client (``bot.http.AiohttpRequest``) against the fake Bot API: uploads (multipart)
and other calls (JSON) arrive as sent, and the failures the rate limiter tells apart come out as PTB's errors (a
dropped connection is a ``NetworkError``, retried; a call that waits too long is ``TimedOut``,
never retried, since Telegram may have acted)."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web
from fake_telegram import FakeTelegram
from PIL import Image
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import NetworkError, TimedOut

from bot.http import AiohttpRequest


@pytest.fixture
async def slow_api() -> AsyncIterator[tuple[str, asyncio.Event]]:
    """A Bot API that answers every call after a second, and the event set when a call has
    arrived (so a test knows that call holds its connection)."""
    arrived = asyncio.Event()

    async def answer(request: web.Request) -> web.Response:
        arrived.set()
        await asyncio.sleep(1.0)
        return web.json_response({"ok": True, "result": True})

    async with local_api(answer) as base_url:
        yield base_url, arrived


@contextlib.asynccontextmanager
async def local_api(answer: Callable[[web.Request], Awaitable[web.Response]]) -> AsyncIterator[str]:
    """A Bot API on 127.0.0.1 that answers every method with ``answer``; yields its base URL."""
    app = web.Application()
    app.router.add_post("/bot{token}/{method}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/bot"
    finally:
        await runner.cleanup()


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (20, 120, 60)).save(out, "JPEG")
    return out.getvalue()


async def test_a_photo_with_caption_and_a_text_arrive_as_sent(telegram: FakeTelegram) -> None:
    alice = telegram.user("Alice", started=True)
    photo = _jpeg()
    async with Bot(telegram.token, base_url=telegram.base_url, request=AiohttpRequest(4),
                   get_updates_request=AiohttpRequest()) as bot:
        sent = await bot.send_photo(alice.id, photo, caption="第 1 局 · Alice")
        await bot.send_message(alice.id, "轮到你了 & more")
    shown = telegram.bot_messages(alice)
    assert [m.caption for m in shown] == ["第 1 局 · Alice", None]
    assert shown[0].photo == photo and sent.photo
    assert shown[1].text == "轮到你了 & more"


async def test_a_call_without_files_goes_as_json_with_its_objects_whole() -> None:
    """Telegram reads a JSON body's objects as objects: a keyboard is not a string of JSON."""
    seen: list[tuple[str, str, object]] = []

    async def answer(request: web.Request) -> web.Response:
        method = request.match_info["method"]
        seen.append((method, request.content_type, await request.json()))
        if method == "getMe":
            return web.json_response({"ok": True, "result": {"id": 1, "is_bot": True, "first_name": "X",
                                                             "username": "x_bot"}})
        return web.json_response({"ok": True, "result": True})

    markup = InlineKeyboardMarkup([[InlineKeyboardButton("5筒 & more", callback_data="gm:1:2:d5")]])
    async with local_api(answer) as base_url, Bot("1:TOKEN", base_url=base_url, request=AiohttpRequest(1),
                                                  get_updates_request=AiohttpRequest()) as bot:
        await bot.edit_message_reply_markup(chat_id=42, message_id=7, reply_markup=markup)
    assert seen[-1] == ("editMessageReplyMarkup", "application/json",
                        {"chat_id": 42, "message_id": 7, "reply_markup": markup.to_dict()})


async def test_a_dropped_connection_is_a_network_error(telegram: FakeTelegram) -> None:
    alice = telegram.user("Alice", started=True)
    telegram.lose_next_response("sendMessage", chat=alice)
    async with Bot(telegram.token, base_url=telegram.base_url, request=AiohttpRequest(4),
                   get_updates_request=AiohttpRequest()) as bot:
        with pytest.raises(NetworkError) as raised:
            await bot.send_message(alice.id, "hello")
    assert not isinstance(raised.value, TimedOut)


async def test_a_slow_answer_and_a_full_pool_are_timed_out(slow_api: tuple[str, asyncio.Event]) -> None:
    url, arrived = slow_api
    request = AiohttpRequest(1, read_timeout=0.2, pool_timeout=0.2)
    async with request:
        with pytest.raises(TimedOut):  # no answer within the read timeout
            await request.post(f"{url}TOKEN/sendMessage")
    request = AiohttpRequest(1, read_timeout=5.0, connect_timeout=0.1, pool_timeout=0.1)
    arrived.clear()  # set by the call above
    async with request:
        first = asyncio.create_task(request.post(f"{url}TOKEN/sendMessage"))
        await asyncio.wait_for(arrived.wait(), 30)  # the first call holds the one connection
        with pytest.raises(TimedOut):  # its one connection stays busy longer than pool + connect timeouts
            await request.post(f"{url}TOKEN/sendMessage")
        assert await first is True
