"""A player's own hand, for their private chat: concealed tiles, the drawn tile, melds.

The tile order here is the order of the inline buttons under the picture, so the bot
builds its keyboard from ``display_order`` and passes the button captions as ``labels``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from PIL import Image, ImageDraw

from engine.tiles import Meld, Suit, Tile, suit_of
from rendering import theme
from rendering.limits import MAX_SIDE
from rendering.models import MAX_CONCEALED, check_template, display_order, validate_tiles
from rendering.rows import gap, group_gap, meld_slots, paste_row, row_width
from rendering.text import draw_text, text_width
from rendering.tiles import MAX_WIDTH, MIN_WIDTH, TileStyle, tile_height

DEFAULT_TILE_WIDTH = 72
# With a screen width given, a tile is this share of it: 44 px when Telegram shows it 400 px wide.
OWN_TILE_SHARE = 0.11
MIN_IMAGE_WIDTH = 200


def render_hand(
    concealed: Sequence[Tile],
    melds: Sequence[Meld] = (),
    drawn: Tile | None = None,
    void_suit: Suit | None = None,
    labels: Sequence[str] | None = None,
    highlight: Collection[int] | None = None,
    width: int | None = None,
    void_label: str = "缺{suit}",
    suit_names: tuple[str, str, str] = ("万", "筒", "条"),
) -> Image.Image:
    """Draw a hand: one row at its natural size (at most 1280 px), or ``width`` px wide.

    With ``width`` (a player's screen) each tile is ``OWN_TILE_SHARE`` of it, so the hand
    stays readable on a phone, and the tiles wrap onto as many rows as they need.

    Positions — for ``labels`` and ``highlight`` — count the concealed tiles in
    ``display_order``, then the drawn tile. The drawn tile stands apart and is highlighted
    unless ``highlight`` says otherwise; melds follow in the order given.
    Tiles of the void suit get a rose face, and ``void_label`` names the void suit above.
    """
    if width is not None and not MIN_IMAGE_WIDTH <= width <= MAX_SIDE:
        raise ValueError(f"width must be {MIN_IMAGE_WIDTH}..{MAX_SIDE} px, got {width}")
    check_template("void_label", void_label, suit="")
    concealed = tuple(concealed)
    validate_tiles("concealed", concealed)
    if drawn is not None:
        validate_tiles("drawn", (drawn,))
    if len(concealed) + (drawn is not None) > MAX_CONCEALED:
        raise ValueError(f"a hand holds at most {MAX_CONCEALED} concealed tiles, got {len(concealed)}")
    order = display_order(concealed, void_suit)
    positions = len(order) + (drawn is not None)
    if labels is not None and len(labels) != positions:
        raise ValueError(f"got {len(labels)} labels for {positions} tiles")
    if highlight is None:
        highlight = {len(order)} if drawn is not None else set()

    def style(position: int, tile: Tile) -> TileStyle:
        if position in highlight:
            return TileStyle.HIGHLIGHT
        return TileStyle.VOID if suit_of(tile) == void_suit else TileStyle.NORMAL

    slots = [(t, style(i, t)) for i, t in enumerate(order)]
    drawn_slots = [] if drawn is None else [(drawn, style(len(order), drawn))]
    meld_groups = [meld_slots(m) for m in melds]

    margin_share = 0.3
    if width is None:  # one row at its natural size, shrunk only to stay under the limit
        tw = DEFAULT_TILE_WIDTH
        while tw > MIN_WIDTH and _one_row_width(len(slots), bool(drawn_slots), meld_groups, tw) + 2 * round(
            tw * margin_share
        ) > MAX_SIDE:
            tw -= 1
        margin = round(tw * margin_share)
        img_width = _one_row_width(len(slots), bool(drawn_slots), meld_groups, tw) + 2 * margin
    else:  # a phone-sized screen: tiles stay big and the hand wraps onto more rows
        tw = min(MAX_WIDTH, max(MIN_WIDTH, math.ceil(width * OWN_TILE_SHARE)))
        margin = round(tw * margin_share)
        img_width = width
    placed = _flow(len(slots), len(drawn_slots), [len(g) for g in meld_groups], tw, img_width - 2 * margin)
    th = tile_height(tw)
    header = round(tw * 0.55) if void_suit is not None else 0
    label_band = round(tw * 0.5) if labels is not None else 0
    row_h = th + label_band + round(tw * 0.12)
    rows = 1 + max((row for row, _ in placed.values()), default=0)
    img = Image.new("RGB", (img_width, margin + header + rows * row_h - round(tw * 0.12) + margin), theme.FELT)
    draw = ImageDraw.Draw(img)
    top = margin + header

    if void_suit is not None:
        text = void_label.format(suit=suit_names[void_suit])
        size = round(tw * 0.32)
        mid = margin + header * 0.4
        w = text_width(text, size, bold=True)
        draw.rounded_rectangle(
            (margin, mid - size * 0.75, margin + w + size * 0.8, mid + size * 0.75),
            radius=size * 0.4,
            fill=theme.RED,
        )
        draw_text(draw, (margin + size * 0.4, mid), text, size, theme.ON_FELT, bold=True)

    every = [*slots, *drawn_slots]
    for i, slot in enumerate(every):
        row, x = placed[("tile", i)]
        paste_row(img, [slot], margin + x, top + row * row_h, tw, theme.FELT)
    for m, group in enumerate(meld_groups):
        row, x = placed[("meld", m)]
        paste_row(img, group, margin + x, top + row * row_h, tw, theme.FELT)

    if labels is not None:
        size = round(tw * 0.3)
        for i, label in enumerate(labels):
            row, x = placed[("tile", i)]
            cx = margin + x + tw / 2
            y = top + row * row_h + th + label_band * 0.5
            draw_text(draw, (cx, y), label, size, theme.ON_FELT, align="center", max_width=tw + gap(tw))
    return img


def _one_row_width(concealed: int, has_drawn: bool, melds: list[list], tw: int) -> int:
    return (
        row_width(concealed, tw)
        + (group_gap(tw) + tw if has_drawn else 0)
        - (group_gap(tw) if has_drawn and not concealed else 0)
        + sum(group_gap(tw) + row_width(len(g), tw) for g in melds)
        - (group_gap(tw) if melds and not concealed and not has_drawn else 0)
    )


def _flow(
    concealed: int, drawn: int, melds: Sequence[int], tw: int, room: int
) -> dict[tuple[str, int], tuple[int, int]]:
    """Where each tile and meld goes: ``(row, x)`` keyed by ``("tile", position)`` / ``("meld", i)``.

    The concealed tiles are spread evenly over as few rows as hold them; the drawn tile stands
    apart after them and each meld after that, starting a new row when it does not fit.
    """
    step = tw + gap(tw)
    per_row = max(1, (room + gap(tw)) // step)
    if _one_row_width(concealed, bool(drawn), [[0] * n for n in melds], tw) <= room:
        rows_needed = 1
    else:
        rows_needed = max(1, -(-concealed // per_row))
    chunk = max(1, -(-concealed // rows_needed))
    placed: dict[tuple[str, int], tuple[int, int]] = {}
    row, x = 0, 0
    for i in range(concealed):
        row, column = divmod(i, chunk)
        placed[("tile", i)] = (row, column * step)
        x = column * step + tw
    items = [("tile", concealed, 1)] if drawn else []
    items += [("meld", m, n) for m, n in enumerate(melds)]
    for kind, key, count in items:
        width = row_width(count, tw)
        start = x + group_gap(tw) if x else 0
        if start + width > room and x:
            row, start = row + 1, 0
        placed[(kind, key)] = (row, start)
        x = start + width
    return placed
