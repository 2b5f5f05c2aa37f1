"""Pictures for the chat, drawn with Pillow: tiles, a hand, the table, result cards, tallies.

Every function here is pure — descriptions in, a Pillow image out — and every word in
an image comes from the caller. ``encode_png`` / ``encode_jpeg`` turn an image into
upload bytes. The table image is built from ``TableView``, which can only hold public
facts, so a group picture cannot show a hidden hand.

The names below are imported from their modules on first use (PEP 562): the bot builds its
views from ``rendering.models`` at start-up, and Pillow and the drawing code load with the first
picture instead of before the bot polls.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> the module that defines it
_HOMES: dict[str, str] = {
    "render_result_card": "rendering.cards",
    "render_score_card": "rendering.cards",
    "render_tally_chart": "rendering.chart",
    "encode_jpeg": "rendering.encode",
    "encode_photo": "rendering.encode",
    "encode_png": "rendering.encode",
    "render_hand": "rendering.hand",
    "MAX_SIDE": "rendering.limits",
    "display_order": "rendering.models",
    "Payment": "rendering.models",
    "ResultCard": "rendering.models",
    "ScoredHand": "rendering.models",
    "ScoreLine": "rendering.models",
    "SeatHand": "rendering.models",
    "SeatView": "rendering.models",
    "TableLabels": "rendering.models",
    "TableView": "rendering.models",
    "TallyEntry": "rendering.models",
    "render_tiles": "rendering.rows",
    "render_table": "rendering.table",
    "TileStyle": "rendering.tiles",
    "render_tile": "rendering.tiles",
}

__all__ = [
    "MAX_SIDE",
    "Payment",
    "ResultCard",
    "ScoreLine",
    "ScoredHand",
    "SeatHand",
    "SeatView",
    "TableLabels",
    "TableView",
    "TallyEntry",
    "TileStyle",
    "display_order",
    "encode_jpeg",
    "encode_photo",
    "encode_png",
    "render_hand",
    "render_result_card",
    "render_score_card",
    "render_table",
    "render_tally_chart",
    "render_tile",
    "render_tiles",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'rendering' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


if TYPE_CHECKING:
    from rendering.cards import render_result_card, render_score_card
    from rendering.chart import render_tally_chart
    from rendering.encode import encode_jpeg, encode_photo, encode_png
    from rendering.hand import render_hand
    from rendering.limits import MAX_SIDE
    from rendering.models import (
        Payment,
        ResultCard,
        ScoredHand,
        ScoreLine,
        SeatHand,
        SeatView,
        TableLabels,
        TableView,
        TallyEntry,
        display_order,
    )
    from rendering.rows import render_tiles
    from rendering.table import render_table
    from rendering.tiles import TileStyle, render_tile
