"""Who may open a seat's socket: Telegram's initData (HMAC-SHA256 with the bot token, limited age)
and ``xuezhan play``'s signed seat links. Forged, expired and other people's credentials are refused."""

from __future__ import annotations

import json
import logging
import time

import aiohttp
import pytest

from web.auth import AuthError, check_init_data, check_seat_token, seat_token, sign_init_data
from web.server import WebServer

TOKEN = "123456789:" + "A1b2C3d4E5" * 4
OTHER_TOKEN = "987654321:" + "Z9y8X7w6V5" * 4


def init_data(user_id: int, *, token: str = TOKEN, age: float = 0, **extra: str) -> str:
    user = json.dumps({"id": user_id, "first_name": "Ann", "language_code": "en"})
    return sign_init_data({"auth_date": str(int(time.time() - age)), "user": user, **extra}, token)


def test_telegram_signed_init_data_names_the_user() -> None:
    user = check_init_data(init_data(42, start_param="7"), TOKEN)
    assert (user.user_id, user.name, user.language, user.start_param) == (42, "Ann", "en", "7")


def test_init_data_with_a_changed_field_is_forged() -> None:
    signed = init_data(42)
    tampered = signed.replace("%22id%22%3A+42", "%22id%22%3A+43")
    assert tampered != signed
    with pytest.raises(AuthError) as refused:
        check_init_data(tampered, TOKEN)
    assert refused.value.key == "forged"


def test_init_data_signed_with_another_bots_token_is_forged() -> None:
    with pytest.raises(AuthError) as refused:
        check_init_data(init_data(42, token=OTHER_TOKEN), TOKEN)
    assert refused.value.key == "forged"


def test_init_data_older_than_the_limit_has_expired() -> None:
    check_init_data(init_data(42, age=50), TOKEN, max_age=60)
    with pytest.raises(AuthError) as refused:
        check_init_data(init_data(42, age=120), TOKEN, max_age=60)
    assert refused.value.key == "expired"


@pytest.mark.parametrize("junk", ["", "hash=", "user=%7B&auth_date=1&hash=00", "a=1&a=2&hash=1", "%%%",
                                  "user=1&hash=%C3%A9"])
def test_unreadable_init_data_is_refused(junk: str) -> None:
    with pytest.raises(AuthError):
        check_init_data(junk, TOKEN)


def test_a_seat_token_is_checked_against_the_servers_secret() -> None:
    token = seat_token(b"secret", 3, 1)
    assert check_seat_token(b"secret", token) == (3, 1)
    for bad in (seat_token(b"other", 3, 1), token.replace("3.1.", "3.2."), "3.1", "x.y.z", "².1.00", "3.1.é"):
        with pytest.raises(AuthError):
            check_seat_token(b"secret", bad)


async def hello(url: str, body: object) -> list[dict]:
    """Open a socket, say hello, and read until the server closes it or sends a frame."""
    received = []
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "ws") as ws:
        await ws.send_json({"hello": body})
        async for message in ws:
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            received.append(json.loads(message.data))
            if received[-1]["type"] in ("state", "error", "lobby"):
                break
    return received


async def test_sockets_refuse_forged_and_expired_logins_and_let_a_stranger_only_watch(local) -> None:
    table, runner = await local.open_table(1)
    server = WebServer(local.hub, bot_token=TOKEN, max_age=3600)
    url = await server.start()
    try:
        seated = runner.seats[0].user_id
        assert seated is not None
        ok = await hello(url, {"initData": init_data(seated), "table": table.id})
        assert ok[-1]["type"] == "state" and ok[-1]["seat"] == 0

        forged = await hello(url, {"initData": init_data(seated, token=OTHER_TOKEN), "table": table.id})
        expired = await hello(url, {"initData": init_data(seated, age=7200), "table": table.id})
        stranger = await hello(url, {"initData": init_data(seated + 100), "table": table.id})
        nothing = await hello(url, {"token": "1.1.0000"})
        assert [forged[-1], expired[-1]] == [{"type": "error", "key": "forged"}, {"type": "error", "key": "expired"}]
        assert nothing[-1]["type"] == "error"
        assert all(m["type"] != "state" for m in forged + expired + nothing)
        # A real login of someone not seated watches: no seat, no tiles of anyone's hand, no decision.
        watched = stranger[-1]
        assert watched["type"] == "state" and watched["seat"] is None
        assert watched["view"]["hand"] == [] and watched["actions"] == [] and watched["seq"] is None
    finally:
        await server.stop()


@pytest.mark.parametrize("asked", ["abc", 0, -1, 10**20, "9" * 5000, 1.5])
async def test_a_table_that_cannot_exist_is_no_table_for_a_watcher_and_a_login(
    local, caplog: pytest.LogCaptureFixture, asked: object
) -> None:
    """Found by a driver of junk socket messages: a watcher asking for table 10**20 reached the
    database with a number SQLite cannot hold, and the failure was logged as an error."""
    _, runner = await local.open_table(1)
    url = local.server.url
    server = WebServer(local.hub, bot_token=TOKEN, max_age=3600)
    login_url = await server.start()
    try:
        watched = await hello(url, {"watch": asked})
        seated = runner.seats[0].user_id
        assert seated is not None
        logged_in = await hello(login_url, {"initData": init_data(seated), "table": asked})
    finally:
        await server.stop()
    assert watched[-1] == logged_in[-1] == {"type": "error", "key": "no_table"}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
