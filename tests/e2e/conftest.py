"""Fixtures for end-to-end tests: a fake Telegram and the real bot started against it.

- ``telegram``: a running ``FakeTelegram`` (loopback, ephemeral port), stopped after the test.
- ``start_bot``: ``await start_bot(features=..., rate_limiter=..., XUEZHAN_LANG="en", ...)``
  builds the real Application (``bot.app.build_application``) pointed at ``telegram`` with the
  test's ``db_url`` (a SQLite file in ``tmp_path``; in a test or module marked
  ``@pytest.mark.both_backends`` also a PostgreSQL database, see tests/conftest.py), starts it,
  and stops every bot it started at teardown. ``start_bot.db`` is that database;
  ``start_bot.settings(...)`` the settings it would use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from fake_telegram import FakeTelegram
from harness import BotFactory, clean_environment


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def start_bot(telegram: FakeTelegram, db_url: str, monkeypatch) -> AsyncIterator[BotFactory]:
    for name in clean_environment():
        monkeypatch.delenv(name)
    factory = BotFactory(telegram, db_url)
    try:
        yield factory
    finally:
        await factory.close()
