"""Start and stop the real bot against the fake Bot API, in the order ``run_polling`` uses.

``Application.run_polling`` owns its event loop, so tests drive the same steps by hand:
initialize, post_init, start polling, start; and on the way down updater.stop, stop, post_stop,
shutdown, post_shutdown. ``BotFactory`` (the ``start_bot`` fixture) remembers what it started and
stops it at teardown; a test may stop a bot earlier (a restart) with ``start_bot.stop(app)``.
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

from fake_telegram import FakeTelegram
from telegram.ext import BaseRateLimiter

from bot.app import build_application
from bot.feature import AnyApplication, Feature
from bot.settings import Settings, load_settings


async def start_application(app: AnyApplication) -> AnyApplication:
    await app.initialize()
    if app.post_init is not None:
        await app.post_init(app)
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0.0, timeout=5)
    await app.start()
    return app


STOP_STEP_SECONDS = 30


async def _step(what: str, awaitable: Awaitable[Any]) -> None:
    """One shutdown step; a step that hangs fails the test with every task's stack, not CI's clock."""
    try:
        await asyncio.wait_for(awaitable, STOP_STEP_SECONDS)
    except TimeoutError:
        stacks = io.StringIO()
        for task in asyncio.all_tasks():
            task.print_stack(file=stacks)
        raise AssertionError(f"stopping the bot hung in {what}; tasks:\n{stacks.getvalue()}") from None


async def stop_application(app: AnyApplication) -> None:
    """Stop a started Application the way ``run_polling`` does on SIGTERM."""
    if app.updater is not None and app.updater.running:
        await _step("updater.stop", app.updater.stop())
    if app.running:
        await _step("stop", app.stop())
        if app.post_stop is not None:
            await _step("post_stop", app.post_stop(app))
    await _step("shutdown", app.shutdown())
    if app.post_shutdown is not None:
        await _step("post_shutdown", app.post_shutdown(app))


class BotFactory:
    """Builds and starts bots against one fake server; every bot shares ``db`` unless told."""

    def __init__(self, telegram: FakeTelegram, db: str | Path) -> None:
        self.telegram = telegram
        self.db = db
        self.started: list[AnyApplication] = []

    def settings(self, **overrides: Any) -> Settings:
        """Settings for a bot on the fake server; ``overrides`` use the environment names."""
        values: dict[str, Any] = {
            "TELEGRAM_BOT_TOKEN": self.telegram.token,
            "XUEZHAN_API_URL": self.telegram.base_url,
            "XUEZHAN_DB": str(self.db),
        }
        values.update(overrides)
        return load_settings(None, **values)

    async def __call__(self, *, features: Sequence[Feature] | None = None,
                       rate_limiter: BaseRateLimiter[Any] | None = None, **overrides: Any) -> AnyApplication:
        app = build_application(self.settings(**overrides), features=features, rate_limiter=rate_limiter)
        self.started.append(app)
        return await start_application(app)

    async def stop(self, app: AnyApplication) -> None:
        """Stop one bot now (a restart test starts another on the same database after it)."""
        self.started.remove(app)
        await stop_application(app)

    async def close(self) -> None:
        while self.started:
            await self.stop(self.started[-1])


def clean_environment() -> dict[str, str]:
    """The variables of the bot's settings that the test process must not inherit."""
    return {name: value for name, value in os.environ.items()
            if name.startswith("XUEZHAN_") or name == "TELEGRAM_BOT_TOKEN"}
