"""The web table's HTTP side: the page, its static files, the tile pictures and one socket per seat.

Routes: ``/`` the page; ``/static/...`` its ES modules and CSS (shipped in the package, no build
step); ``/tiles/<name>.png`` the project's own tile art (``rendering.tiles``), drawn once and
cached; ``/ws`` the socket. A socket's first message says who it is (``hello``): Telegram's
``initData`` when a bot token is configured, or a seat link's token signed by this server.
Someone who is not seated at the table asked for watches it (the open table only), if
``may_watch`` lets them: in Telegram that is a member of the table's group, since the open table
is what the group sees and table ids are sequential. Without a bot token (``xuezhan play``) a
page with no seat link watches too: ``?table=N``, or the newest table. Anything else is refused
with a reason and the socket is closed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from engine.tiles import NUM_KINDS, tile_name
from web.auth import DEFAULT_MAX_AGE, AuthError, WebUser, check_init_data, check_seat_token
from web.hub import Viewer, WebHub

log = logging.getLogger(__name__)

STATIC = Path(str(resources.files("web") / "static"))
TILE_WIDTH = 96  # px of a sprite; the page shows them at about 40 px, so they stay sharp on a phone
HELLO_SECONDS = 10
MAX_MESSAGE_BYTES = 64 * 1024
CLOSE_REFUSED = 4001
WATCHER = 0  # the user id of a page without a seat link on a local server: seated nowhere
_TILES = {tile_name(t): t for t in range(NUM_KINDS)}


@lru_cache(maxsize=64)
def tile_png(name: str) -> bytes:
    """One tile sprite as PNG (``back`` is a face-down tile), drawn by the project's renderer."""
    from rendering.encode import encode_png
    from rendering.tiles import TileStyle, render_tile

    face, _, style = name.partition("-")
    tile = None if face == "back" else _TILES[face]
    chosen = TileStyle(style) if style else TileStyle.NORMAL
    return encode_png(render_tile(tile, TILE_WIDTH, chosen), palette=False)


class WebServer:
    """Serves ``hub``'s tables. ``bot_token`` enables Telegram logins, ``seat_secret`` seat links."""

    def __init__(self, hub: WebHub, *, bot_token: str | None = None, seat_secret: bytes | None = None,
                 max_age: float = DEFAULT_MAX_AGE,
                 may_watch: Callable[[int, int], Awaitable[bool]] | None = None) -> None:
        self.hub = hub
        self.may_watch = may_watch  # (user id, table id) -> may this Telegram login see a table it does not sit at
        self.bot_token = bot_token
        self.seat_secret = seat_secret
        self.max_age = max_age
        self._runner: web.AppRunner | None = None
        self.url = ""

    def application(self) -> web.Application:
        app = web.Application(client_max_size=MAX_MESSAGE_BYTES)
        app.router.add_get("/", self._page)
        app.router.add_get("/ws", self._socket)
        app.router.add_get(r"/tiles/{name:[a-z0-9-]+}.png", self._tile)
        app.router.add_static("/static/", STATIC, append_version=False)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen (port 0 picks a free one); returns the base URL."""
        self._runner = web.AppRunner(self.application(), access_log=None, shutdown_timeout=1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        bound = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.url = f"http://{_url_host(host)}:{bound}/"
        return self.url

    async def stop(self) -> None:
        await self.hub.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- routes ---------------------------------------------------------------------------

    async def _page(self, request: web.Request) -> web.StreamResponse:
        response = web.FileResponse(STATIC / "index.html")
        response.headers["Cache-Control"] = "no-cache"
        return response

    async def _tile(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        face, _, style = name.partition("-")
        if (face != "back" and face not in _TILES) or style not in ("", "highlight", "void"):
            raise web.HTTPNotFound()
        body = await asyncio.to_thread(tile_png, name)
        return web.Response(body=body, content_type="image/png", headers={"Cache-Control": "max-age=86400"})

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=30, max_msg_size=MAX_MESSAGE_BYTES)
        await ws.prepare(request)
        try:
            first = await ws.receive(timeout=HELLO_SECONDS)
        except TimeoutError:
            await ws.close(code=CLOSE_REFUSED, message=b"no hello")
            return ws
        hello = _json(first.data).get("hello") if first.type is WSMsgType.TEXT else None
        try:
            user, table_id = self.identify(hello)
            await self._admit(user, table_id, hello)
        except AuthError as error:
            await ws.send_str(json.dumps({"type": "error", "key": error.key}))
            await ws.close(code=CLOSE_REFUSED, message=error.key.encode())
            return ws
        await ws.send_str(json.dumps({"type": "welcome", "user": user.user_id, "name": user.name,
                                      "language": user.language, "table": table_id}))
        viewer = Viewer(table_id, user.user_id, ws)
        since = hello.get("since") if isinstance(hello, dict) else None
        same_hand = isinstance(hello, dict) and hello.get("hand_id") == self._hand_id(table_id)
        await self.hub.join(viewer, since if same_hand and isinstance(since, int) else None)
        try:
            async for message in ws:
                if message.type is not WSMsgType.TEXT:
                    continue
                act = _json(message.data).get("act")
                if isinstance(act, dict):
                    await self.hub.act(viewer, act)
        finally:
            await self.hub.leave(viewer)
        return ws

    def _watched(self, wanted: Any) -> int:
        if wanted is None:
            if not self.hub.runners:
                raise AuthError("no_table")
            return max(self.hub.runners)
        return _table_id(wanted)

    async def _admit(self, user: WebUser, table_id: int, hello: dict[str, Any]) -> None:
        """A Telegram login not seated at the hand in play watches only if ``may_watch`` agrees."""
        if self.may_watch is None or not hello.get("initData") or hello.get("token"):
            return
        runner = self.hub.runners.get(table_id)
        if runner is not None and runner.seat_of(user.user_id) is not None:
            return
        if not await self.may_watch(user.user_id, table_id):
            raise AuthError("not_member")

    def _hand_id(self, table_id: int) -> int | None:
        runner = self.hub.runners.get(table_id)
        return runner.hand.id if runner is not None else None

    def identify(self, hello: Any) -> tuple[WebUser, int]:
        """Who a ``hello`` proves to be, and which table they ask for (``AuthError`` otherwise)."""
        if not isinstance(hello, dict):
            raise AuthError("malformed")
        token, init_data = hello.get("token"), hello.get("initData")
        if isinstance(token, str) and self.seat_secret is not None:
            table_id, user_id = check_seat_token(self.seat_secret, token)
            return WebUser(user_id, str(user_id)), table_id
        if "watch" in hello and self.seat_secret is not None and not token:
            return WebUser(WATCHER, ""), self._watched(hello["watch"])
        if isinstance(init_data, str) and init_data and self.bot_token is not None:
            user = check_init_data(init_data, self.bot_token, max_age=self.max_age)
            return user, _table_id(user.start_param or hello.get("table"))
        raise AuthError("forged" if token or init_data else "malformed")


def new_seat_secret() -> bytes:
    return secrets.token_bytes(32)


def _table_id(wanted: Any) -> int:
    """The table a page asks for, as a number a table id can be (a row id: 1 to 2**63 - 1)."""
    try:
        table_id = int(str(wanted))
    except ValueError:
        raise AuthError("no_table") from None
    if not 1 <= table_id < 2**63:
        raise AuthError("no_table")
    return table_id


def _json(data: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(data)
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _url_host(host: str) -> str:
    """The host part of this machine's URL when listening on ``host``: an any-address is reached
    on loopback, and an IPv6 address is written in brackets."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host
