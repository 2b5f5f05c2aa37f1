"""``Fanout`` passes on the optional calls a runner or ``Tables`` makes when a presenter has them
(a hand taken up from another worker, moves caught up from the log, an owed settlement card):
with the web table on, the Telegram presenter must still hear them, and the pages follow."""

from __future__ import annotations

from typing import Any

from web.hub import Fanout, Viewer, WebHub


class Settlements:
    """A presenter that only posts owed settlement cards (as the Telegram presenter does)."""

    def __init__(self) -> None:
        self.posted: list[int] = []

    async def post_settlement(self, runner: Any) -> None:
        self.posted.append(runner.table_id)


class Page:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_str(self, data: str) -> None:
        self.sent.append(data)

    async def close(self) -> None:
        return None


async def test_optional_calls_reach_every_presenter_that_has_them(local) -> None:
    table, runner = await local.open_table(1)
    hub, cards = WebHub(), Settlements()
    fanout = Fanout(hub, cards)
    viewer = Viewer(table.id, runner.seats[0].user_id, Page())
    await fanout.attach(runner)  # taken up: the hub now serves this runner's pages
    assert hub.runners[table.id] is runner
    await hub.join(viewer)
    before = viewer.queue.qsize()
    await fanout.caught_up(runner)
    assert viewer.queue.qsize() == before + 1  # the page was sent where the table is now
    await fanout.post_settlement(runner)
    assert cards.posted == [table.id]
    await hub.close()
