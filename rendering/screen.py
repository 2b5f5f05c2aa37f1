"""A player's private picture: the public table above, their own hand below.

On a phone the player cannot look at the group and the DM at once, so the DM carries the
whole table; the hand strip is drawn at the table's width so the two read as one screen.

The screen is drawn at its final size: the hand keeps its phone-sized tiles, and the table
above it takes the largest of the compact private layouts (``rendering.table.DM_LAYOUTS``)
that leaves the whole within Telegram's 1280 px. Shrinking a taller picture afterwards, or
cutting rows out of it, cost more CPU than drawing it (a quarter to two fifths of a busy bot's).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache

from PIL import Image

from engine.tiles import NUM_KINDS, Meld, Suit, Tile
from rendering import theme
from rendering.cards import HAND_TILE, SEAT_TILE
from rendering.hand import OWN_TILE_SHARE, render_hand
from rendering.limits import MAX_SIDE, shrink_to_limit
from rendering.models import TableView
from rendering.table import DM_LAYOUTS, GROUP, WIDTH, Layout, dm_layout, draw_table, render_table, table_height
from rendering.tiles import TileStyle, render_tile


@lru_cache(maxsize=16)  # ~2-3 MB a picture: enough for the states being shown right now
def shared_table(view: TableView, layout: Layout = GROUP) -> Image.Image:
    """The table picture, drawn once per state and layout however many players show it.

    The same image object is returned to every caller: read it, never draw on it.
    """
    return render_table(view, layout)


def render_seat_screen(
    table: TableView,
    concealed: Sequence[Tile],
    melds: Sequence[Meld] = (),
    drawn: Tile | None = None,
    void_suit: Suit | None = None,
    labels: Sequence[str] | None = None,
    void_label: str = "缺{suit}",
) -> Image.Image:
    """The table, then the hand (with ``labels`` under tiles matching the buttons), at most 1280 px tall."""
    bottom = _hand_strip(tuple(concealed), tuple(melds), drawn, void_suit,
                         None if labels is None else tuple(labels), void_label, table.labels.suits)
    layout = dm_layout(table, MAX_SIDE - bottom.height)
    height = table_height(table, layout)
    if height > MAX_SIDE:  # a table too tall for any layout: shrunk on its own first, as the group's is
        top = shared_table(table, layout)
        img = Image.new("RGB", (WIDTH, top.height + bottom.height), theme.FELT)
        img.paste(top, (0, 0))
    else:
        img = Image.new("RGB", (WIDTH, height + bottom.height), theme.FELT)
        with _screens_lock:
            shown = _screens_shown.get((table, layout))
        if shown is None:
            draw_table(img, table, layout)  # in place: most tables have one person, and no other screen
        else:
            img.paste(shown.crop((0, 0, WIDTH, height)), (0, 0))  # another person's screen of this state
        _remember_screen((table, layout), img)
    img.paste(bottom, (0, img.height - bottom.height))
    return shrink_to_limit(img)  # only a hand taller than any layout leaves room for


# The latest screens drawn (~4 MB each), by the table (state and layout) at their top: the other
# people at a table take the table part from the first one's screen instead of drawing it again.
# Screens are drawn in several threads at once; a screen is read, never drawn on, once returned.
_SCREENS_KEPT = 8
_screens_shown: OrderedDict[tuple[TableView, Layout], Image.Image] = OrderedDict()
_screens_lock = threading.Lock()


def _remember_screen(key: tuple[TableView, Layout], img: Image.Image) -> None:
    with _screens_lock:
        _screens_shown.pop(key, None)
        _screens_shown[key] = img
        while len(_screens_shown) > _SCREENS_KEPT:
            _screens_shown.popitem(last=False)


def prepare_live_sprites() -> int:
    """Draw, ahead of need, the tile sprites a live table's pictures use: every tile in every
    style at the hand's width and at the group's and the private layouts' meld and discard widths,
    and at a result card's widths when it fits unscaled.

    A one-off per process (~700 sprites, a few tenths of a second of CPU), meant for a worker
    thread when the first hand starts, so that players' first pictures are only pastes. Returns
    how many sprites it asked for."""
    hand = math.ceil(WIDTH * OWN_TILE_SHARE)
    table = sorted({w for lay in (GROUP, *DM_LAYOUTS) for w in (lay.meld_tile, lay.discard_tile)}
                   | {HAND_TILE, SEAT_TILE}, reverse=True)
    wanted = [(hand, style) for style in TileStyle] + [(w, s) for w in table for s in (TileStyle.NORMAL,
                                                                                      TileStyle.HIGHLIGHT)]
    for width, style in wanted:
        for tile in (None, *range(NUM_KINDS)):
            render_tile(tile, width, style)
    return len(wanted) * (NUM_KINDS + 1)


@lru_cache(maxsize=64)  # the same hand is shown again while the others move (claims, catch-ups)
def _hand_strip(concealed: tuple[Tile, ...], melds: tuple[Meld, ...], drawn: Tile | None, void_suit: Suit | None,
                labels: tuple[str, ...] | None, void_label: str, suit_names: tuple[str, str, str]) -> Image.Image:
    return render_hand(concealed, melds, drawn=drawn, void_suit=void_suit, labels=labels, width=WIDTH,
                       void_label=void_label, suit_names=suit_names)
