"""The front of ``xuezhan run --workers N`` in one process, with two stand-in workers that record
what they are given (the real workers are tested in tests/e2e/test_run_workers.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from bot.front import SECRET_HEADER, Front, chat_of

SECRET = "s3cret"


class StandIn:
    """A webhook worker that takes every update with the right secret and records its chat."""

    def __init__(self) -> None:
        self.chats: list[int | None] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def start(self, port: int = 0) -> None:
        app = web.Application()
        app.router.add_post("/hook", self.take)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", port, reuse_address=True).start()
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        assert self.runner is not None
        await self.runner.cleanup()

    async def take(self, request: web.Request) -> web.Response:
        if request.headers.get(SECRET_HEADER) != SECRET:
            return web.Response(status=403)
        self.chats.append(chat_of(await request.read()))
        return web.Response(status=200)


@pytest.fixture
async def setup() -> AsyncIterator[tuple[Front, list[StandIn], aiohttp.ClientSession]]:
    workers = [StandIn(), StandIn()]
    for worker in workers:
        await worker.start()
    front = Front("hook", SECRET, [w.port for w in workers], rest=0.5)
    await front.start("127.0.0.1", 0)
    async with aiohttp.ClientSession() as session:
        yield front, workers, session
    await front.stop()
    for worker in workers:
        if worker.runner is not None:
            await worker.stop()


def press(update_id: int, chat: int) -> dict[str, object]:
    return {"update_id": update_id, "callback_query": {
        "id": str(update_id), "from": {"id": chat, "is_bot": False, "first_name": "P"}, "chat_instance": "x",
        "data": "gm:1:0:d1", "message": {"message_id": 3, "date": 0, "chat": {"id": chat, "type": "private"}}}}


def message(update_id: int, chat: int) -> dict[str, object]:
    return {"update_id": update_id, "message": {"message_id": update_id, "date": 0, "text": "/newgame",
                                                "chat": {"id": chat, "type": "supergroup"},
                                                "from": {"id": 7, "is_bot": False, "first_name": "P"}}}


async def post(session: aiohttp.ClientSession, front: Front, update: object, secret: str | None = SECRET) -> int:
    headers = {SECRET_HEADER: secret} if secret is not None else {}
    async with session.post(f"http://127.0.0.1:{front.port}/hook", json=update, headers=headers) as answer:
        return answer.status


def test_the_chat_of_an_update() -> None:
    assert chat_of(json.dumps(press(1, 10001)).encode()) == 10001
    assert chat_of(json.dumps(message(2, -100123)).encode()) == -100123
    member = {"update_id": 3, "my_chat_member": {"chat": {"id": -5, "type": "group"}, "from": {"id": 9}}}
    assert chat_of(json.dumps(member).encode()) == -5
    inline = {"update_id": 4, "inline_query": {"id": "q", "from": {"id": 42}, "query": ""}}
    assert chat_of(json.dumps(inline).encode()) == 42
    assert chat_of(b"not json") is None and chat_of(b"[1, 2]") is None and chat_of(b'{"update_id": 5}') is None


async def test_a_chat_stays_with_one_worker_and_chats_spread(setup) -> None:
    front, workers, session = setup
    for n, chat in enumerate([10001, 10002, 10001, 10002, 10001, -100123, -100124] * 2):
        assert await post(session, front, message(n, chat) if chat < 0 else press(n, chat)) == 200
    assert all(w.chats for w in workers)  # both took some
    for chat in (10001, 10002, -100123, -100124):
        assert sum(chat in w.chats for w in workers) == 1  # each chat went to one worker only


async def test_without_the_secret_nothing_reaches_a_worker(setup) -> None:
    front, workers, session = setup
    assert await post(session, front, press(1, 10001), secret=None) == 403
    assert await post(session, front, press(1, 10001), secret="guess") == 403
    async with session.post(f"http://127.0.0.1:{front.port}/hook", data=b"x", headers={SECRET_HEADER: SECRET}) as r:
        assert r.status == 415
    assert all(w.chats == [] for w in workers)


async def test_a_worker_down_is_passed_over_and_none_up_is_a_503_telegram_retries(setup) -> None:
    front, workers, session = setup
    home = next(w for w in workers if w.port == front.backends[10001 % 2].port)
    other = next(w for w in workers if w is not home)
    await home.stop()
    home.runner = None
    assert await post(session, front, press(1, 10001)) == 200
    assert other.chats == [10001]  # the chat's own worker was down: the other took it
    await other.stop()
    other.runner = None
    assert await post(session, front, press(2, 10001)) == 503  # nobody took it: Telegram delivers it again
    await home.start(home.port)  # back on its port
    assert await post(session, front, press(3, 10001)) == 200  # tried again though resting: nobody else is up
    assert home.chats == [10001]
