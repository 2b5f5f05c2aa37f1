"""Edits of a changing message (``bot.latest_edits``): never awaited by a press, coalesced, the latest shown."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from bot.latest_edits import LatestEdits


@contextlib.asynccontextmanager
async def no_lock(key: object, chat_id: int) -> AsyncIterator[None]:
    yield


async def test_changes_made_while_an_edit_is_on_its_way_are_shown_together_and_last() -> None:
    shown: list[tuple[int, str | None]] = []
    release = asyncio.Event()

    async def edit(table_id: int, asking: str | None) -> None:
        await release.wait()  # the first edit waits (for the group's turn, say)
        shown.append((table_id, asking))

    edits = LatestEdits(object(), edit, no_lock, "lobby of table")
    edits.show(7, -100)
    await asyncio.sleep(0)
    for asking in ("start", None, "cancel"):  # three changes while the first edit waits
        edits.show(7, -100, asking)
    release.set()
    await edits.close(5)
    assert shown == [(7, None), (7, "cancel")]  # the first, then the latest once

    edits.show(7, -100, "start")  # the sender has ended: a new one takes it
    await edits.close(5)
    assert shown[-1] == (7, "start")


async def test_a_show_after_the_sender_ended_starts_another() -> None:
    shown: list[str | None] = []

    async def edit(table_id: int, asking: str | None) -> None:
        shown.append(asking)

    edits = LatestEdits(object(), edit, no_lock, "lobby of table")
    edits.show(1, -100, "a")
    sender = next(iter(edits._senders.values()))
    await asyncio.wait([sender])
    edits.show(1, -100, "b")
    await edits.close(5)
    assert shown == ["a", "b"]


async def test_an_edit_that_fails_unexpectedly_is_logged_and_the_next_show_goes_on(caplog) -> None:
    shown: list[str | None] = []

    async def edit(table_id: int, asking: str | None) -> None:
        if asking == "broken":
            raise RuntimeError("a defect")
        shown.append(asking)

    edits = LatestEdits(object(), edit, no_lock, "lobby of table")
    edits.show(1, -100, "broken")
    await edits.close(5)
    assert "could not be shown" in caplog.text and "a defect" in caplog.text
    edits.show(1, -100, "fine")
    await edits.close(5)
    assert shown == ["fine"]
