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
from rendering.limits import MAX_SIDE, shrink_to_limit
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
    top = trim_margin(top, top.height + bottom.height - MAX_SIDE)
    img = Image.new("RGB", (top.width, top.height + bottom.height), theme.FELT)
    img.paste(top, (0, 0))
    img.paste(bottom, (0, top.height))
    return shrink_to_limit(img)


def trim_margin(img: Image.Image, rows: int) -> Image.Image:
    """``img`` with up to ``rows`` rows of its plain top and bottom margin cut off.

    A screen a few dozen pixels over Telegram's 1280 px (the 800 px table and a hand of two
    rows) then fits as drawn: the LANCZOS shrink of the whole screen that ``shrink_to_limit``
    would do costs more than drawing it (a quarter to two fifths of the bot's CPU under load).
    Only rows of one colour go, so nothing drawn is lost; ``shrink_to_limit`` still takes care
    of whatever is left over."""
    if rows <= 0:
        return img

    def plain(y: int) -> bool:
        return all(low == high for low, high in img.crop((0, y, img.width, y + 1)).getextrema())

    cut_top = cut_bottom = 0
    while cut_top + cut_bottom < rows:
        if cut_top <= cut_bottom and plain(cut_top):
            cut_top += 1
        elif plain(img.height - 1 - cut_bottom):
            cut_bottom += 1
        elif plain(cut_top):
            cut_top += 1
        else:
            break
    if not cut_top and not cut_bottom:
        return img
    return img.crop((0, cut_top, img.width, img.height - cut_bottom))
