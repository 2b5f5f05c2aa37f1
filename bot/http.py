"""The bot's HTTP client for the Bot API: python-telegram-bot's request interface over aiohttp.

PTB makes its calls through a ``BaseRequest``; its own is httpx (with httpcore, anyio and h11
under it). Measured against the fake Bot API on this machine, a call cost the bot 1.0-1.2 ms of
CPU through httpx and 0.3-0.6 ms through aiohttp, a photo upload 1.7-2.2 ms against 0.8-1.0 ms;
with four tables played side by side, the bot's CPU per logged action was 16-19 % lower on
aiohttp. A hosted table makes several calls per decision (the press's answer, the DM's edits, the
group's picture), so the client is a large part of what a table costs.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData


class AiohttpRequest(BaseRequest):
    """``BaseRequest`` over one ``aiohttp.ClientSession``, with PTB's timeouts and errors: a
    time-out (waiting for a free connection included) is ``TimedOut``; any other call that gets
    no answer (a refused or dropped connection) is ``NetworkError``, which the rate limiter retries."""

    def __init__(self, connection_pool_size: int = 1, *, read_timeout: float | None = 5.0,
                 write_timeout: float | None = 5.0, connect_timeout: float | None = 5.0,
                 pool_timeout: float | None = 1.0, media_write_timeout: float | None = 20.0) -> None:
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self._pool_size),
                                                  cookie_jar=aiohttp.DummyCookieJar())

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    def _timeout(self, uploads: bool, read: Any, write: Any, connect: Any, pool: Any) -> aiohttp.ClientTimeout:
        """PTB's four timeouts (its defaults where a call gives none) as aiohttp's: the wait for a
        free connection and the connecting together, each read, and all four as the whole call's
        bound (aiohttp has no timeout for the upload alone)."""
        default = BaseRequest.DEFAULT_NONE
        read = self._read_timeout if read is default else read
        write = (self._media_write_timeout if uploads else self._write_timeout) if write is default else write
        connect = self._connect_timeout if connect is default else connect
        pool = self._pool_timeout if pool is default else pool
        parts = (read, write, connect, pool)
        return aiohttp.ClientTimeout(
            total=None if None in parts else sum(parts),
            connect=None if pool is None or connect is None else pool + connect,
            sock_connect=connect,
            sock_read=read,
        )

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         read_timeout: Any = BaseRequest.DEFAULT_NONE,
                         write_timeout: Any = BaseRequest.DEFAULT_NONE,
                         connect_timeout: Any = BaseRequest.DEFAULT_NONE,
                         pool_timeout: Any = BaseRequest.DEFAULT_NONE) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        files = request_data.multipart_data if request_data else None
        body: bytes | None = None  # a file's GET: none
        headers = {"User-Agent": self.USER_AGENT}
        if files:
            assert request_data is not None
            form = aiohttp.FormData()
            for name, value in request_data.json_parameters.items():
                form.add_field(name, value)
            for name, (filename, content, mimetype) in files.items():
                form.add_field(name, content, filename=filename, content_type=mimetype)
            # The whole body at once: aiohttp writes a multipart body part by part, ~15 writes to
            # the socket for a photo (each a system call, and a wake-up of the server's side).
            multipart = form()
            body = await multipart.as_bytes()
            headers["Content-Type"] = multipart.content_type
        elif request_data is not None:
            # A call without files goes as JSON, as the Bot API takes it: one C-accelerated dump.
            # As a form, every value is JSON first and then percent-quoted byte by byte
            # (urllib's quote, in Python): 0.3-0.7 ms a call with a keyboard, against 0.06 ms.
            body = json.dumps(request_data.parameters).encode()
            headers["Content-Type"] = "application/json"
        timeout = self._timeout(bool(files), read_timeout, write_timeout, connect_timeout, pool_timeout)
        try:
            async with self._session.request(method, url, data=body, timeout=timeout, allow_redirects=False,
                                             headers=headers) as response:
                return response.status, await response.read()
        except TimeoutError as error:
            raise TimedOut from error
        except aiohttp.ClientError as error:
            raise NetworkError(f"aiohttp.{error.__class__.__name__}: {error}") from error
