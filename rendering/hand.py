"""A player's own hand, for their private chat: concealed tiles, the drawn tile, melds.

The tile order here is the order of the inline buttons under the picture, so the bot
builds its keyboard from ``display_order`` and passes the button captions as ``labels``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from PIL import Image, ImageDraw

from engine.tiles import Meld, Suit, Tile, suit_of
from rendering import theme
from rendering.limits import MAX_SIDE
from rendering.models import MAX_CONCEALED, check_template, validate_tiles
from rendering.rows import gap, group_gap, meld_slots, paste_groups, paste_row, row_width
from rendering.text import draw_text, text_width
from rendering.tiles import MAX_WIDTH, MIN_WIDTH, TileStyle, tile_height

DEFAULT_TILE_WIDTH = 72
MIN_IMAGE_WIDTH = 200


def display_order(concealed: Sequence[Tile], void_suit: Suit | None = None) -> list[Tile]:
    """Concealed tiles sorted by suit and rank, the void suit's tiles last (they go first).

    >>> from engine.tiles import parse_tiles, format_tiles
    >>> format_tiles(display_order(parse_tiles("3s1m2p1s"), Suit.CHARACTERS))
    '2p13s1m'
    """
    return sorted(concealed, key=lambda t: (suit_of(t) == void_suit, t))


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
    """Draw a hand, ``width`` px wide (default: natural size, at most 1280 px).

    Positions — for ``labels`` and ``highlight`` — count the concealed tiles in
    ``display_order``, then the drawn tile. The drawn tile stands apart and is highlighted
    unless ``highlight`` says otherwise; melds follow on the right in the order given.
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

    def content_width(tw: int) -> int:
        return (
            row_width(len(slots), tw)
            + (group_gap(tw) + tw if drawn_slots else 0)
            + sum(group_gap(tw) + row_width(len(g), tw) for g in meld_groups)
        )

    margin_share = 0.3
    target = min(width or MAX_SIDE, MAX_SIDE)
    tw = DEFAULT_TILE_WIDTH if width is None else MAX_WIDTH
    while tw > MIN_WIDTH and content_width(tw) + 2 * round(tw * margin_share) > target:
        tw -= 1
    margin = round(tw * margin_share)
    img_width = width or content_width(tw) + 2 * margin
    th = tile_height(tw)
    header = round(tw * 0.55) if void_suit is not None else 0
    label_band = round(tw * 0.5) if labels is not None else 0
    img = Image.new("RGB", (img_width, margin + header + th + label_band + margin), theme.FELT)
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

    x = margin
    end = paste_row(img, slots, x, top, tw)
    if drawn_slots:
        x = (end if slots else x - group_gap(tw)) + group_gap(tw)
        end = paste_row(img, drawn_slots, x, top, tw)
    if meld_groups:
        start = (end + group_gap(tw)) if (slots or drawn_slots) else margin
        paste_groups(img, meld_groups, start, top, tw)

    if labels is not None:
        size = round(tw * 0.3)
        y = top + th + label_band * 0.5
        for i, label in enumerate(labels):
            if i < len(order):
                cx = margin + i * (tw + gap(tw)) + tw / 2
            else:
                cx = margin + _drawn_offset(len(order), tw) + tw / 2
            draw_text(draw, (cx, y), label, size, theme.ON_FELT, align="center", max_width=tw + gap(tw))
    return img


def _drawn_offset(concealed_count: int, tile_width: int) -> int:
    """Where the drawn tile starts, measured from the first concealed tile."""
    if concealed_count == 0:
        return 0
    return row_width(concealed_count, tile_width) + group_gap(tile_width)
