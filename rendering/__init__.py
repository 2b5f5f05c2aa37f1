"""Pictures for the chat, drawn with Pillow: tiles, a hand, the table, result cards, tallies.

Every function here is pure — descriptions in, a Pillow image out — and every word in
an image comes from the caller. ``encode_png`` / ``encode_jpeg`` turn an image into
upload bytes. The table image is built from ``TableView``, which can only hold public
facts, so a group picture cannot show a hidden hand.
"""

from rendering.cards import render_result_card, render_score_card
from rendering.chart import render_tally_chart
from rendering.encode import encode_jpeg, encode_photo, encode_png
from rendering.hand import display_order, render_hand
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
)
from rendering.rows import render_tiles
from rendering.table import render_table
from rendering.tiles import TileStyle, render_tile

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
