"""Rows of tiles — concealed tiles, melds, discards — shared by the hand, table and cards.

Each image decides where a row goes; this module only knows how wide a row is and how
to paste it, so that a pung looks the same in a player's hand, on the table and on a
result card.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from PIL import Image

from engine.tiles import Meld, MeldKind, Tile
from rendering import theme
from rendering.limits import shrink_to_limit
from rendering.theme import Color
from rendering.tiles import TileStyle, render_tile, tile_height, tile_on

# Spacing as shares of the tile width, so that every size looks alike.
TILE_GAP = 0.04
GROUP_GAP = 0.32

Slot = tuple[Tile | None, TileStyle]


def meld_slots(meld: Meld) -> list[Slot]:
    """A concealed kong shows its two outer tiles face down, as at a real table."""
    n = TileStyle.NORMAL
    if meld.kind is MeldKind.CONCEALED_KONG:
        return [(None, n), (meld.tile, n), (meld.tile, n), (None, n)]
    return [(meld.tile, n)] * meld.size


def gap(tile_width: int) -> int:
    return max(1, round(tile_width * TILE_GAP))


def group_gap(tile_width: int) -> int:
    return max(4, round(tile_width * GROUP_GAP))


def row_width(count: int, tile_width: int) -> int:
    return 0 if count == 0 else count * tile_width + (count - 1) * gap(tile_width)


def groups_width(groups: Sequence[Sequence[Slot]], tile_width: int) -> int:
    present = [g for g in groups if g]
    if not present:
        return 0
    return sum(row_width(len(g), tile_width) for g in present) + (len(present) - 1) * group_gap(tile_width)


def paste_row(canvas: Image.Image, slots: Iterable[Slot], x: float, y: float, tile_width: int,
              on: Color | None = None) -> int:
    """Paste tiles left to right from (x, y); returns the x just past the last tile.

    ``on``: the plain colour under the whole row, so opaque tiles can be copied (``tile_on``)."""
    x, y = round(x), round(y)
    step = tile_width + gap(tile_width)
    end = x
    for tile, style in slots:
        if on is None:
            sprite = render_tile(tile, tile_width, style)
            canvas.paste(sprite, (x, y), sprite)
        else:
            canvas.paste(tile_on(tile, tile_width, style, on), (x, y))
        end = x + tile_width
        x += step
    return end


def paste_groups(canvas: Image.Image, groups: Sequence[Sequence[Slot]], x: float, y: float, tile_width: int,
                 on: Color | None = None) -> float:
    """Paste several rows separated by a group gap (melds); returns the x past the last one."""
    end = x
    for group in groups:
        if not group:
            continue
        end = paste_row(canvas, group, x, y, tile_width, on)
        x = end + group_gap(tile_width)
    return end


def render_tiles(tiles: Sequence[Tile | None], tile_width: int = 64, highlight: Collection[int] = ()) -> Image.Image:
    """A plain row of tiles on the felt — waits, the three tiles to swap, a claimed discard.

    ``None`` is a face-down tile; ``highlight`` holds positions in ``tiles``.
    """
    if not tiles:
        raise ValueError("render_tiles needs at least one tile")
    margin = round(tile_width * 0.2)
    slots = [(t, TileStyle.HIGHLIGHT if i in highlight else TileStyle.NORMAL) for i, t in enumerate(tiles)]
    size = (row_width(len(slots), tile_width) + 2 * margin, tile_height(tile_width) + 2 * margin)
    img = Image.new("RGB", size, theme.FELT)
    paste_row(img, slots, margin, margin, tile_width)
    return shrink_to_limit(img)
