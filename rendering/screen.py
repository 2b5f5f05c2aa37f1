"""A player's private picture: the public table above, their own hand below.

On a phone the player cannot look at the group and the DM at once, so the DM carries the
whole table; the hand strip is drawn at the table's width so the two read as one screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from PIL import Image, ImageChops

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
    img = Image.new("RGB", (top.width, top.height + bottom.height), theme.FELT)
    img.paste(top, (0, 0))
    img.paste(bottom, (0, top.height))
    overflow = img.height - MAX_SIDE
    if overflow > 0:  # the table's blank rows are found once per state, like its picture
        img = drop_blank_rows(img, overflow, blank=shared_blank_rows(table) + _blank_rows(bottom))
    return shrink_to_limit(img)


@lru_cache(maxsize=16)
def shared_blank_rows(view: TableView) -> list[bool]:
    """``_blank_rows`` of the shared table picture: every seat's screen of one state reuses it."""
    return _blank_rows(shared_table(view))


def drop_blank_rows(img: Image.Image, rows: int, keep: int = 2, blank: list[bool] | None = None) -> Image.Image:
    """``img`` with up to ``rows`` rows of one colour taken out of its blank bands.

    A screen a few dozen pixels over Telegram's 1280 px (the table and a hand of two rows) then
    fits as drawn: the LANCZOS shrink of the whole screen that ``shrink_to_limit`` would do costs
    far more than drawing it (a quarter to two fifths of the bot's CPU under load). Only rows of
    one colour inside bands of at least ``keep + 1`` such rows go (each band keeps ``keep``), so
    nothing drawn is lost or resized; ``shrink_to_limit`` takes care of whatever is left over.
    ``blank`` is ``_blank_rows(img)`` when the caller already knows it."""
    if rows <= 0:
        return img
    blank = _blank_rows(img) if blank is None else blank
    bands: list[tuple[int, int]] = []  # (first row, length) of each run of blank rows
    y = 0
    while y < img.height:
        if blank[y]:
            start = y
            while y < img.height and blank[y]:
                y += 1
            if y - start > keep:
                bands.append((start, y - start))
        else:
            y += 1
    spare = sum(length - keep for _, length in bands)
    if not spare:
        return img
    take = min(rows, spare)
    dropped: list[tuple[int, int]] = []  # (first row, count) cut from each band, spread evenly
    left = take
    for i, (start, length) in enumerate(bands):
        share = min(length - keep, -(-take * (length - keep) // spare), left)
        if i == len(bands) - 1:
            share = min(length - keep, left)
        if share > 0:
            dropped.append((start + keep // 2, share))
            left -= share
    out = Image.new(img.mode, (img.width, img.height - (take - left)))
    source = target = 0
    for start, count in dropped:
        out.paste(img.crop((0, source, img.width, start)), (0, target))
        target += start - source
        source = start + count
    out.paste(img.crop((0, source, img.width, img.height)), (0, target))
    return out


def _blank_rows(img: Image.Image) -> list[bool]:
    """For each row, whether all its pixels are one colour (each row against its first pixel)."""
    w, h = img.size
    rgb = img if img.mode == "RGB" else img.convert("RGB")
    diff = ImageChops.difference(rgb, rgb.crop((0, 0, 1, h)).resize((w, h), Image.Resampling.NEAREST))
    data = diff.point(lambda v: 255 if v else 0).convert("L").tobytes()  # any band differing: > 0
    zero = bytes(w)
    return [data[y * w:(y + 1) * w] == zero for y in range(h)]
