"""The front of ``xuezhan run --workers N``: one webhook address, updates spread over N workers.

Telegram posts every update to one URL. The front listens there (``XUEZHAN_WEBHOOK_LISTEN``,
``XUEZHAN_WEBHOOK_PORT``, the URL's path), refuses a request without the webhook's secret token
(403: it did not come from Telegram), and hands the update to a worker: each worker is an ordinary
webhook-mode bot on a loopback port. Any worker may take any update (the tables serialise across
processes in the database), but the updates of one chat go to the same worker while it is up:
what that worker read of the chat's table is still current when the next press comes, and a
person's quick presses (three tiles to swap) meet no other worker's copy of the table. A worker
that does not answer is skipped, and the next one in the ring takes the update.

Telegram is answered as soon as a worker has *queued* the update (a worker answers before it
handles the update), so Telegram's next delivery never waits for a handler. When no worker takes
the update the front answers 503 and Telegram delivers it again later: an update is never
dropped by the front. A worker that failed is passed over for ``rest`` seconds, then tried again.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import aiohttp
from aiohttp import web

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_UPDATE_BYTES = 1 << 20  # updates are small JSON documents; files come by file_id, not inline


@dataclass
class Backend:
    """One worker as the front sees it: where it listens, and until when it is passed over."""

    port: int
    resting_until: float = 0.0
    taken: int = 0  # updates it accepted (for the log and the tests)

    def resting(self, now: float) -> bool:
        return now < self.resting_until


class Front:
    """The aiohttp server that receives Telegram's webhook and forwards each update to a worker."""

    def __init__(self, path: str, secret: str, ports: Sequence[int], *, timeout: float = 5.0,
                 rest: float = 1.0) -> None:
        self.path = "/" + path.lstrip("/")
        self.secret = secret
        self.backends = [Backend(port) for port in ports]
        self._turns = itertools.cycle(range(len(self.backends)))
        self._timeout = timeout
        self._rest = rest
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port: int | None = None

    async def start(self, listen: str, port: int) -> None:
        """Listen on ``listen:port`` (port 0: any free port, then ``self.port`` says which)."""
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._timeout),
            connector=aiohttp.TCPConnector(limit=0, force_close=False),
        )
        app = web.Application(client_max_size=MAX_UPDATE_BYTES)
        app.router.add_post(self.path, self._receive)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, listen, port, reuse_address=True)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Stop listening (Telegram keeps what it could not deliver and retries), then close."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _order(self, chat: int | None) -> list[Backend]:
        """Every worker once, starting with the chat's (or the next in turn); resting ones last."""
        first = chat % len(self.backends) if chat is not None else next(self._turns)
        ring = self.backends[first:] + self.backends[:first]
        now = time.monotonic()
        return [b for b in ring if not b.resting(now)] + [b for b in ring if b.resting(now)]

    async def _receive(self, request: web.Request) -> web.Response:
        if request.headers.get(SECRET_HEADER) != self.secret:
            return web.Response(status=403, text="wrong or missing secret token")
        if request.content_type != "application/json":
            return web.Response(status=415, text="an update is a JSON document")
        body = await request.read()
        for backend in self._order(chat_of(body)):
            if await self._forward(backend, body):
                backend.taken += 1
                return web.Response(status=200)
        log.warning("no worker took an update; Telegram will deliver it again")
        return web.Response(status=503, text="no worker is available; deliver again later")

    async def _forward(self, backend: Backend, body: bytes) -> bool:
        """True once ``backend`` has queued the update; otherwise it rests and False."""
        assert self._session is not None
        url = f"http://127.0.0.1:{backend.port}{self.path}"
        headers = {SECRET_HEADER: self.secret, "Content-Type": "application/json"}
        try:
            async with self._session.post(url, data=body, headers=headers) as answer:
                if answer.status == 200:
                    return True
                reason = f"answered {answer.status}"
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            reason = type(error).__name__
        if not backend.resting(time.monotonic()):
            log.warning("worker on port %d did not take an update (%s); trying another", backend.port, reason)
        backend.resting_until = time.monotonic() + self._rest
        return False



def chat_of(body: bytes) -> int | None:
    """The chat an update belongs to (a message's or a pressed button's message's), if any."""
    try:
        update = json.loads(body)
    except ValueError:
        return None
    if not isinstance(update, dict):
        return None
    for value in update.values():
        if isinstance(value, dict):
            message = value.get("message") if "data" in value or "chat_instance" in value else value
            chat = message.get("chat") if isinstance(message, dict) else None
            if isinstance(chat, dict) and isinstance(chat.get("id"), int):
                return chat["id"]
            user = value.get("from")
            if isinstance(user, dict) and isinstance(user.get("id"), int):
                return user["id"]
    return None
