"""Cards that explain chips: a scored hand (/score) and the result of a win or a hand.

Each card is paper-coloured with a felt header, like a score sheet lying on the table.
Every word on it comes from the caller; the card only arranges the words, the tiles
and the numbers, so the same card works in any language.
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from engine.tiles import DescribedHand
from rendering import theme
from rendering.limits import shrink_to_limit
from rendering.models import Payment, ResultCard, ScoredHand
from rendering.rows import Slot, groups_width, meld_slots, paste_groups
from rendering.text import draw_text, text_width
from rendering.tiles import MIN_WIDTH, TileStyle, tile_height

WIDTH = 1000
PAD = 36
HEADER = 84
HAND_TILE = 60
LINE = 46  # height of one explanation or payment row


def render_score_card(scored: ScoredHand, heading: str = "算番", footer: str = "") -> Image.Image:
    """The /score answer: the hand drawn, each step of its value, the total."""
    img, draw = _canvas(_hand_block_height(scored) + 3 * PAD + HEADER + (LINE if footer else 0))
    _header(draw, heading)
    y = _hand_block(img, draw, scored, HEADER + PAD)
    if footer:
        draw_text(draw, (PAD, y + LINE / 2), footer, 22, theme.INK_SOFT, max_width=WIDTH - 2 * PAD)
        y += LINE
    return shrink_to_limit(img.crop((0, 0, WIDTH, y + PAD)))


def render_result_card(card: ResultCard) -> Image.Image:
    """A win or a whole hand settled: each win explained, every payment, each player's net."""
    estimate = (
        HEADER
        + sum(_hand_block_height(w) + PAD for w in card.wins)
        + (len(card.payments) + len(card.totals) + 4) * LINE
        + 3 * PAD
    )
    img, draw = _canvas(estimate)
    _header(draw, card.title)
    y = HEADER + PAD
    for i, win in enumerate(card.wins):
        if i:
            draw.line((PAD, y - PAD / 2, WIDTH - PAD, y - PAD / 2), fill=theme.PAPER_LINE, width=2)
        y = _hand_block(img, draw, win, y) + PAD
    if card.payments:
        y = _heading(draw, card.payments_heading, y)
        y = _payments(draw, card.payments, y)
    if card.totals:
        y = _heading(draw, card.totals_heading, y)
        y = _totals(draw, card.totals, y)
    if card.footer:
        draw_text(draw, (PAD, y + LINE / 2), card.footer, 22, theme.INK_SOFT, max_width=WIDTH - 2 * PAD)
        y += LINE
    return shrink_to_limit(img.crop((0, 0, WIDTH, y + PAD)))


def _canvas(height: int) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGB", (WIDTH, max(height, HEADER + 2 * PAD)), theme.PAPER)
    return img, ImageDraw.Draw(img)


def _header(draw: ImageDraw.ImageDraw, title: str) -> None:
    draw.rectangle((0, 0, WIDTH, HEADER), fill=theme.FELT)
    draw_text(draw, (PAD, HEADER / 2), title, 38, theme.ON_FELT, bold=True, max_width=WIDTH - 2 * PAD)


def _heading(draw: ImageDraw.ImageDraw, text: str, y: float) -> float:
    draw_text(draw, (PAD, y + 22), text, 28, theme.FELT, bold=True, max_width=WIDTH - 2 * PAD)
    draw.line((PAD, y + 44, WIDTH - PAD, y + 44), fill=theme.PAPER_LINE, width=2)
    return y + 54


def _hand_groups(hand: DescribedHand) -> list[list[Slot]]:
    """Concealed tiles, then the winning tile apart and highlighted, then the melds."""
    rest = list(hand.concealed)
    win: list[Slot] = []
    if hand.win_tile is not None and hand.win_tile in rest:
        rest.remove(hand.win_tile)
        win = [(hand.win_tile, TileStyle.HIGHLIGHT)]
    return [[(t, TileStyle.NORMAL) for t in rest], win, *(meld_slots(m) for m in hand.melds)]


def _hand_tile_width(hand: DescribedHand) -> int:
    groups = _hand_groups(hand)
    tw = HAND_TILE
    while tw > MIN_WIDTH and groups_width(groups, tw) > WIDTH - 2 * PAD:
        tw -= 1
    return tw


def _hand_block_height(scored: ScoredHand) -> int:
    return 56 + tile_height(_hand_tile_width(scored.hand)) + 20 + LINE * len(scored.lines) + 70


def _hand_block(img: Image.Image, draw: ImageDraw.ImageDraw, scored: ScoredHand, y: float) -> float:
    draw_text(draw, (PAD, y + 22), scored.title, 32, theme.INK, bold=True, max_width=WIDTH - 2 * PAD)
    y += 56
    tw = _hand_tile_width(scored.hand)
    paste_groups(img, _hand_groups(scored.hand), PAD, y, tw)
    y += tile_height(tw) + 20
    for i, line in enumerate(scored.lines):
        if i % 2 == 0:
            draw.rectangle((PAD, y, WIDTH - PAD, y + LINE), fill=theme.PAPER_STRIPE)
        draw_text(draw, (PAD + 16, y + LINE / 2), line.label, 26, theme.INK, max_width=WIDTH * 0.6)
        draw_text(draw, (WIDTH - PAD - 16, y + LINE / 2), line.value, 26, theme.INK, bold=True, align="right")
        y += LINE
    if scored.total:
        draw_text(
            draw,
            (WIDTH - PAD - 16, y + 36),
            scored.total,
            36,
            theme.RED,
            bold=True,
            align="right",
            max_width=WIDTH - 2 * PAD,
        )
        y += 70
    return y


def _payments(draw: ImageDraw.ImageDraw, payments: Sequence[Payment], y: float) -> float:
    name_w = 250
    for p in payments:
        mid = y + LINE / 2
        x = PAD + 8
        draw_text(draw, (x + name_w, mid), p.payer, 26, theme.INK, align="right", max_width=name_w)
        draw_text(draw, (x + name_w + 14, mid), "→", 26, theme.INK_SOFT)
        draw_text(draw, (x + name_w + 52, mid), p.payee, 26, theme.INK, max_width=name_w)
        reason_x = x + 2 * name_w + 80
        amount = str(p.amount)
        amount_w = text_width(amount, 28, bold=True)
        draw_text(
            draw,
            (reason_x, mid),
            p.reason,
            24,
            theme.INK_SOFT,
            max_width=WIDTH - PAD - 24 - amount_w - reason_x,
        )
        draw_text(draw, (WIDTH - PAD - 8, mid), amount, 28, theme.INK, bold=True, align="right")
        y += LINE
    return y + 10


def _totals(draw: ImageDraw.ImageDraw, totals: Sequence[tuple[str, int]], y: float) -> float:
    for name, chips in totals:
        mid = y + LINE / 2
        draw_text(draw, (PAD + 8, mid), name, 28, theme.INK, bold=True, max_width=WIDTH * 0.6)
        colour = theme.GAIN if chips > 0 else theme.LOSS if chips < 0 else theme.INK_SOFT
        draw_text(
            draw,
            (WIDTH - PAD - 8, mid),
            f"{chips:+d}" if chips else "0",
            30,
            colour,
            bold=True,
            align="right",
        )
        y += LINE
    return y + 10
