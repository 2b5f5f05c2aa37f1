"""A player's private picture: the public table above, their own hand below.

On a phone the player cannot look at the group and the DM at once, so the DM carries the
whole table; the hand strip is drawn at the table's width so the two read as one screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from PIL import Image

from engine.tiles import Meld, Suit, Tile
from rendering import theme
from rendering.hand import render_hand
from rendering.limits import shrink_to_limit
from rendering.models import TableView
from rendering.table import WIDTH, render_table


@lru_cache(maxsize=16)  # ~3 MB a picture: enough for the states being shown right now
def shared_table(view: TableView) -> Image.Image:
    """The table picture, drawn once per state however many players (and the group) show it.

    The same image object is returned to every caller: read it, never draw on it.
    """
    return render_table(view)


def render_seat_screen(
    table: TableView,
    concealed: Sequence[Tile],
    melds: Sequence[Meld] = (),
    drawn: Tile | None = None,
    void_suit: Suit | None = None,
    labels: Sequence[str] | None = None,
    void_label: str = "缺{suit}",
) -> Image.Image:
    """The table, then the hand (with ``labels`` under tiles matching the buttons)."""
    top = shared_table(table)
    bottom = render_hand(
        concealed,
        melds,
        drawn=drawn,
        void_suit=void_suit,
        labels=labels,
        width=top.width if top.width <= WIDTH else WIDTH,
        void_label=void_label,
        suit_names=table.labels.suits,
    )
    img = Image.new("RGB", (top.width, top.height + bottom.height), theme.FELT)
    img.paste(top, (0, 0))
    img.paste(bottom, (0, top.height))
    return shrink_to_limit(img)
