"""Fixtures for the web table: a local table (``web.local``) and headless Debian Chromium.

Browser tests skip, with the reason, when /usr/bin/chromium or Playwright is missing;
``.ci/run`` installs Chromium. Playwright drives the system browser (``executable_path``),
so ``playwright install`` is never needed.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.table.runner import Limits
from storage import open_storage
from web.local import LocalTables

sys.path.insert(0, str(Path(__file__).parent.parent / "e2e"))  # the fake Telegram, for the DM-and-web test

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture
async def local(tmp_path: Path) -> AsyncIterator[LocalTables]:
    """A started local web table server (no table yet): ``await local.open_table(people)``."""
    storage = await open_storage(tmp_path / "play.db", synchronous="NORMAL")
    tables = LocalTables(storage, Limits(discard_seconds=120, claim_seconds=120, computer_delay=0.0))
    await tables.server.start()
    try:
        yield tables
    finally:
        await tables.close()
        await storage.close()


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (.ci/run installs it)")
    playwright_api = pytest.importorskip("playwright.async_api", reason="Playwright for Python is not installed")
    async with playwright_api.async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()
