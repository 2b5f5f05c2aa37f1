"""Telegram's flood limits plus retries of transient server errors, for every API call the bot makes.

``AIORateLimiter`` keeps the bot under ~30 messages a second overall and ~20 a minute per group,
and waits out a 429's ``retry_after``. On top of that a 5xx answer or a dropped connection is
retried with a short back-off, so a passing Telegram hiccup loses nothing. Bad requests, 403s and
time-outs are not retried: the first are final, and after a time-out Telegram may have acted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from telegram.error import BadRequest, NetworkError, TimedOut
from telegram.ext import AIORateLimiter

log = logging.getLogger(__name__)

ApiResult = bool | dict[str, Any] | list[dict[str, Any]]


class TelegramRateLimiter(AIORateLimiter):
    """``AIORateLimiter`` that also retries 5xx answers and connection errors."""

    def __init__(self, *, retries: int = 3, server_error_retries: int = 3, backoff: float = 0.5,
                 **limits: Any) -> None:
        super().__init__(max_retries=retries, **limits)
        self._server_error_retries = server_error_retries
        self._backoff = backoff

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, ApiResult]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> ApiResult:
        attempt = 0
        while True:
            try:
                return await super().process_request(callback, args, kwargs, endpoint, data, rate_limit_args)
            except (BadRequest, TimedOut):
                raise
            except NetworkError as error:
                if attempt >= self._server_error_retries:
                    raise
                delay = self._backoff * 2**attempt
                log.warning("%s failed (%s); retrying in %.1fs", endpoint, error, delay)
                await asyncio.sleep(delay)
                attempt += 1
