"""Tile sprites, drawn by our own code and cached: every picture is pasted from these.

A sprite is drawn four times too large and scaled down, which gives smooth edges without
an anti-aliasing library. Drawing and shrinking cost a few milliseconds, and a live table asks
for many widths (the player's hand, four compact layouts, card scales, rows that shrink), so
each (tile, style) is drawn once as a master at four times ``MASTER_WIDTH`` and every width
from ``DERIVED_MIN`` up to it is that master scaled down: a fraction of a millisecond a width.
Narrower sprites are drawn on their own, which keeps their outline a whole pixel wide.
After that, composing a hand is only pastes. The look is the classic one: an ivory face
on a jade-green back, dots as coloured rings, bamboo as jointed sticks, characters as the
Chinese numeral over a red 万 — and the rank in the top-left corner of every suit, so
nobody has to count nine dots on a phone.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from functools import lru_cache

from PIL import Image, ImageDraw

from engine.tiles import NUM_KINDS, Suit, Tile, rank_of, suit_of
from rendering import theme
from rendering.text import font
from rendering.theme import Color

SUPERSAMPLE = 4
ASPECT = 1.42  # sprite height / width, the back's visible thickness included
MIN_WIDTH = 12
MAX_WIDTH = 240
MASTER_WIDTH = 88  # the player's own tiles on their screen: the largest width a live table draws
DERIVED_MIN = 36  # from here up, a master's outline (2.5 % of the width) is still about a pixel
_NUMERALS = "一二三四五六七八九"


class TileStyle(Enum):
    NORMAL = "normal"
    HIGHLIGHT = "highlight"  # just drawn, selected, the last discard, a winning tile
    VOID = "void"  # a tile of the player's void suit (定缺), to be discarded first


def tile_height(width: int) -> int:
    return round(width * ASPECT)


def render_tile(tile: Tile | None, width: int = 64, style: TileStyle = TileStyle.NORMAL) -> Image.Image:
    """One tile as an RGBA sprite ``width`` px wide; ``None`` draws a face-down tile.

    The returned image is shared by the cache: paste it, don't draw on it.
    """
    if tile is not None and not 0 <= tile < NUM_KINDS:
        raise ValueError(f"not a tile: {tile!r} (tiles are 0..{NUM_KINDS - 1})")
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        raise ValueError(f"tile width must be {MIN_WIDTH}..{MAX_WIDTH} px, got {width}")
    return _sprite(tile, width, style)


@lru_cache(maxsize=2048)
def tile_on(tile: Tile | None, width: int, style: TileStyle, background: Color) -> Image.Image:
    """``render_tile`` already laid on a plain ``background``: an opaque RGB image.

    Pasting it is a plain copy, several times cheaper than blending the sprite's alpha on every
    picture; the pixels are the same wherever the tile sits on that colour.
    """
    sprite = render_tile(tile, width, style)
    out = Image.new("RGB", sprite.size, background)
    out.paste(sprite, (0, 0), sprite)
    return out


@lru_cache(maxsize=2048)
def _sprite(tile: Tile | None, width: int, style: TileStyle) -> Image.Image:
    if not DERIVED_MIN <= width <= MASTER_WIDTH:
        return _drawn(tile, width, style)
    # reducing_gap: a box reduction to about twice the size first, then LANCZOS for the rest;
    # several times cheaper than LANCZOS over the whole master, and alike to the eye.
    size = (width, tile_height(width))
    return _master(tile, style).resize(size, Image.Resampling.LANCZOS, reducing_gap=2.0).convert("RGBA")


@lru_cache(maxsize=128)
def _master(tile: Tile | None, style: TileStyle) -> Image.Image:
    """The sprite at four times ``MASTER_WIDTH``, not yet scaled down; premultiplied ("RGBa"), the
    form Pillow resamples in, so each width converts only its own small result back."""
    return _canvas(tile, MASTER_WIDTH * SUPERSAMPLE, tile_height(MASTER_WIDTH) * SUPERSAMPLE, style).convert("RGBa")


def _drawn(tile: Tile | None, width: int, style: TileStyle) -> Image.Image:
    """The sprite drawn at four times ``width`` and scaled down on its own."""
    img = _canvas(tile, width * SUPERSAMPLE, tile_height(width) * SUPERSAMPLE, style)
    return img.resize((width, tile_height(width)), Image.Resampling.LANCZOS)


def _canvas(tile: Tile | None, w: int, h: int, style: TileStyle) -> Image.Image:
    """The tile drawn ``w`` x ``h`` px (``SUPERSAMPLE`` times the sprite's size)."""
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    radius = w * 0.12
    edge = max(SUPERSAMPLE, round(w * 0.025))
    thickness = round(h * 0.07)
    face_box = (0, 0, w - 1, h - 1 - thickness)
    if tile is None:
        draw.rounded_rectangle((0, 0, w - 1, h - 1), radius, fill=theme.IVORY, outline=theme.OUTLINE, width=edge)
        draw.rounded_rectangle(face_box, radius, fill=theme.JADE, outline=theme.OUTLINE, width=edge)
        inset = w * 0.14
        draw.rounded_rectangle(
            (inset, inset, w - 1 - inset, face_box[3] - inset),
            radius * 0.6,
            outline=theme.JADE_DARK,
            width=edge,
        )
    else:
        face = {
            TileStyle.NORMAL: theme.IVORY,
            TileStyle.HIGHLIGHT: theme.HIGHLIGHT_FACE,
            TileStyle.VOID: theme.VOID_FACE,
        }[style]
        draw.rounded_rectangle((0, 0, w - 1, h - 1), radius, fill=theme.JADE, outline=theme.OUTLINE, width=edge)
        draw.rounded_rectangle(face_box, radius, fill=face, outline=theme.OUTLINE, width=edge)
        if style is TileStyle.HIGHLIGHT:
            ring = edge * 3
            draw.rounded_rectangle(
                (edge, edge, w - 1 - edge, face_box[3] - edge), radius, outline=theme.GOLD, width=ring
            )
        _draw_face(draw, tile, (0, 0, w, face_box[3]))
    return img


def _draw_face(draw: ImageDraw.ImageDraw, tile: Tile, box: tuple[float, float, float, float]) -> None:
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    suit, rank = suit_of(tile), rank_of(tile)
    colour = {Suit.CHARACTERS: theme.RED, Suit.DOTS: theme.BLUE, Suit.BAMBOO: theme.GREEN}[suit]
    index_size = round(w * 0.36)
    draw.text((x0 + w * 0.08, y0 + h * 0.025), str(rank), font=font(index_size, bold=True), fill=colour, anchor="lt")
    # The picture sits below the corner index, centred on what is left of the face.
    area = (x0 + w * 0.1, y0 + h * 0.25, x1 - w * 0.1, y1 - h * 0.05)
    if suit is Suit.CHARACTERS:
        _draw_characters(draw, rank, (x0 + w * 0.08, y0 + h * 0.19, x1 - w * 0.08, y1 - h * 0.04))
    elif suit is Suit.DOTS:
        _draw_dots(draw, rank, area)
    else:
        _draw_bamboo(draw, rank, area)


def _draw_characters(draw: ImageDraw.ImageDraw, rank: int, area: tuple[float, float, float, float]) -> None:
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    numeral_size = round(min(w * 0.92, h * 0.5))
    draw.text(
        (cx, y0 + h * 0.27),
        _NUMERALS[rank - 1],
        font=font(numeral_size, bold=True),
        fill=theme.BLACK,
        anchor="mm",
    )
    draw.text((cx, y0 + h * 0.73), "万", font=font(numeral_size, bold=True), fill=theme.RED, anchor="mm")


# Dot positions in the picture area (0..1 each way), the colour of each and the radius
# as a share of the area's width: the traditional arrangements.
_B, _R, _G = theme.BLUE, theme.RED, theme.GREEN
_DOTS: dict[int, tuple[float, Sequence[tuple[float, float, Color]]]] = {
    2: (0.23, [(0.5, 0.2, _G), (0.5, 0.8, _B)]),
    3: (0.19, [(0.22, 0.16, _B), (0.5, 0.5, _R), (0.78, 0.84, _G)]),
    4: (0.2, [(0.27, 0.24, _B), (0.73, 0.24, _G), (0.27, 0.76, _G), (0.73, 0.76, _B)]),
    5: (0.17, [(0.23, 0.18, _B), (0.77, 0.18, _G), (0.5, 0.5, _R), (0.23, 0.82, _G), (0.77, 0.82, _B)]),
    6: (
        0.155,
        [
            (0.29, 0.14, _G),
            (0.71, 0.14, _G),
            (0.29, 0.56, _R),
            (0.71, 0.56, _R),
            (0.29, 0.86, _R),
            (0.71, 0.86, _R),
        ],
    ),
    7: (
        0.135,
        [
            (0.2, 0.1, _G),
            (0.5, 0.22, _G),
            (0.8, 0.34, _G),
            (0.29, 0.64, _R),
            (0.71, 0.64, _R),
            (0.29, 0.9, _R),
            (0.71, 0.9, _R),
        ],
    ),
    8: (0.13, [(x, y, _B) for y in (0.11, 0.37, 0.63, 0.89) for x in (0.29, 0.71)]),
    9: (0.14, [(x, y, c) for y, c in ((0.12, _B), (0.5, _R), (0.88, _G)) for x in (0.18, 0.5, 0.82)]),
}


def _ring(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float, colour: Color) -> None:
    """A coin: a coloured disc, an ivory ring and a coloured centre."""
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colour)
    draw.ellipse((cx - r * 0.62, cy - r * 0.62, cx + r * 0.62, cy + r * 0.62), fill=theme.IVORY)
    draw.ellipse((cx - r * 0.4, cy - r * 0.4, cx + r * 0.4, cy + r * 0.4), fill=colour)


def _draw_dots(draw: ImageDraw.ImageDraw, rank: int, area: tuple[float, float, float, float]) -> None:
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    if rank == 1:
        cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, min(w, h) * 0.5
        for share, colour in (
            (1.0, _G),
            (0.82, theme.IVORY),
            (0.7, _R),
            (0.5, theme.IVORY),
            (0.36, _B),
            (0.14, theme.IVORY),
        ):
            draw.ellipse((cx - r * share, cy - r * share, cx + r * share, cy + r * share), fill=colour)
        return
    radius, dots = _DOTS[rank]
    r = radius * w
    # Keep the outermost dots inside the area: positions are for their centres.
    for px, py, colour in dots:
        cx = x0 + r + (w - 2 * r) * px
        cy = y0 + r + (h - 2 * r) * py
        _ring(draw, cx, cy, r, colour)


# Bamboo sticks: (x, y) of the two ends in the area (0..1), colour; stick width as a share.
_Stick = tuple[float, float, float, float, Color]


def _column(x: float, y0: float, y1: float, colour: Color = _G) -> _Stick:
    return (x, y0, x, y1, colour)


_BAMBOO: dict[int, tuple[float, Sequence[_Stick]]] = {
    1: (0.32, [_column(0.5, 0.0, 1.0, _G)]),
    2: (0.22, [_column(0.5, 0.0, 0.42), _column(0.5, 0.58, 1.0, _B)]),
    3: (0.2, [_column(0.5, 0.0, 0.42), _column(0.27, 0.58, 1.0, _B), _column(0.73, 0.58, 1.0, _B)]),
    4: (
        0.2,
        [
            _column(0.27, 0.0, 0.42),
            _column(0.73, 0.0, 0.42, _B),
            _column(0.27, 0.58, 1.0, _B),
            _column(0.73, 0.58, 1.0),
        ],
    ),
    5: (
        0.18,
        [
            _column(0.2, 0.0, 0.42),
            _column(0.8, 0.0, 0.42, _B),
            _column(0.5, 0.27, 0.73, _R),
            _column(0.2, 0.58, 1.0, _B),
            _column(0.8, 0.58, 1.0),
        ],
    ),
    6: (
        0.19,
        [_column(x, y0, y1, c) for y0, y1, c in ((0.0, 0.42, _G), (0.58, 1.0, _B)) for x in (0.18, 0.5, 0.82)],
    ),
    7: (
        0.18,
        [_column(0.5, 0.0, 0.3, _R)]
        + [_column(x, y0, y1, c) for y0, y1, c in ((0.36, 0.65, _G), (0.71, 1.0, _B)) for x in (0.18, 0.5, 0.82)],
    ),
    8: (
        0.16,
        [_column(x, y0, y1, c) for y0, y1, c in ((0.0, 0.42, _G), (0.58, 1.0, _B)) for x in (0.1, 0.37, 0.63, 0.9)],
    ),
    9: (
        0.18,
        [
            _column(x, y0, y1, _R if x == 0.5 else c)
            for y0, y1, c in ((0.0, 0.3, _G), (0.35, 0.65, _B), (0.7, 1.0, _G))
            for x in (0.18, 0.5, 0.82)
        ],
    ),
}


def _draw_bamboo(draw: ImageDraw.ImageDraw, rank: int, area: tuple[float, float, float, float]) -> None:
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    share, sticks = _BAMBOO[rank]
    sw = share * w
    half = sw / 2
    for ax, ay, bx, by, colour in sticks:
        # Ends are pulled in by half a stick so the rounded caps stay inside the area.
        p = (x0 + half + (w - sw) * ax, y0 + half + (h - sw) * ay)
        q = (x0 + half + (w - sw) * bx, y0 + half + (h - sw) * by)
        _stick(draw, p, q, sw, colour)


def _stick(
    draw: ImageDraw.ImageDraw, p: tuple[float, float], q: tuple[float, float], width: float, colour: Color
) -> None:
    """A bamboo stalk from ``p`` to ``q``: rounded ends, a pale joint across the middle."""
    r = width / 2
    draw.line((p, q), fill=colour, width=round(width))
    for cx, cy in (p, q):
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colour)
    mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
    dx, dy = q[0] - p[0], q[1] - p[1]
    length = max((dx * dx + dy * dy) ** 0.5, 1.0)
    nx, ny = -dy / length * r * 0.75, dx / length * r * 0.75
    draw.line(((mx - nx, my - ny), (mx + nx, my + ny)), fill=theme.IVORY, width=max(1, round(width * 0.22)))
    # A thin dark spine makes each stick read as a stalk rather than a bar at small sizes.
    draw.line(
        (p, q),
        fill=theme.JADE_DARK if colour is not _R else theme.RED_DARK,
        width=max(1, round(width * 0.12)),
    )
