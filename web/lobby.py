"""What a page shows of a table that is not being played: who sits where and under which rules.

A person may open the table's link before its hand is dealt (the group's lobby carries it) or
between two hands; the page then shows this, refreshed by the hub, until the hand's frames
take over. Only what the group's lobby message shows: names, computers, the rules' preset.
"""

from __future__ import annotations

from typing import Any

from engine.rules import RuleSet
from storage import NotFound, Storage
from storage.models import PlayerKind


async def describe_table(storage: Storage, table_id: int) -> dict[str, Any] | None:
    """The table's lobby for a page, or None when there is no such table. ``user_ids`` is for
    the hub (which seat is the viewer's) and is not sent."""
    try:
        table = await storage.get_table(table_id)
    except NotFound:
        return None
    names: list[str | None] = []
    computer: list[bool] = []
    user_ids: list[int | None] = []
    for player_id in table.seats:
        player = await storage.get_player(player_id) if player_id is not None else None
        names.append(player.name if player else None)
        computer.append(player is not None and player.kind is PlayerKind.COMPUTER)
        user_ids.append(player.user_id if player is not None and player.kind is PlayerKind.USER else None)
    rules = table.rules if table.rules is not None else (await storage.get_chat(table.chat_id)).rules
    try:
        preset = RuleSet.from_dict(rules).preset_name()
    except (TypeError, ValueError):
        preset = None
    return {"status": table.status.value, "names": names, "computer": computer, "user_ids": user_ids,
            "rules": preset}
