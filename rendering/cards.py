"""Cards that explain chips: a scored hand (/score) and the result of a win or a hand.

Each card is paper-coloured with a felt header, like a score sheet lying on the table.
Every word on it comes from the caller; the card only arranges the words, the tiles
and the numbers, so the same card works in any language.

A card is measured first and then drawn once at its final size: when its content would
be taller than Telegram's 1280 px, every length is scaled down before drawing, instead of
drawing large and shrinking the picture afterwards (which cost more than the drawing).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw

from engine.tiles import DescribedHand
from rendering import theme
from rendering.limits import MAX_SIDE
from rendering.models import Payment, ResultCard, ScoredHand, SeatHand
from rendering.rows import Slot, groups_width, meld_slots, paste_groups
from rendering.text import draw_text, text_width
from rendering.tiles import MIN_WIDTH, TileStyle, tile_height

WIDTH = 1000
PAD = 36
HEADER = 84
HAND_TILE = 60
SEAT_TILE = 56  # the hands laid open on a settlement card
LINE = 46  # height of one explanation or payment row


@dataclass
class _Card:
    """A canvas with a scale: every length in this module is given at scale 1 and passes ``px``."""

    scale: float
    img: Image.Image | None = None
    draw: ImageDraw.ImageDraw | None = None

    def px(self, value: float) -> int:
        return round(value * self.scale)

    @property
    def width(self) -> int:
        return self.px(WIDTH)

    def start(self, height: float) -> None:
        self.img = Image.new("RGB", (self.width, max(1, self.px(height))), theme.PAPER)
        self.draw = ImageDraw.Draw(self.img)

    def text(self, xy: tuple[float, float], text: str, size: float, fill: theme.Color, *, bold: bool = False,
             align: str = "left", max_width: float | None = None) -> float:
        """Draw at scale-1 coordinates; returns the width in scale-1 px."""
        assert self.draw is not None
        drawn = draw_text(self.draw, (xy[0] * self.scale, xy[1] * self.scale), text, max(8, self.px(size)), fill,
                          bold=bold, align=align, max_width=None if max_width is None else max_width * self.scale)
        return drawn / self.scale

    def text_width(self, text: str, size: float, bold: bool = False) -> float:
        return text_width(text, max(8, self.px(size)), bold) / self.scale

    def rect(self, box: tuple[float, float, float, float], fill: theme.Color) -> None:
        assert self.draw is not None
        self.draw.rectangle(tuple(v * self.scale for v in box), fill=fill)

    def line(self, box: tuple[float, float, float, float], fill: theme.Color, width: float) -> None:
        assert self.draw is not None
        self.draw.line(tuple(v * self.scale for v in box), fill=fill, width=max(1, self.px(width)))

    def tiles(self, groups: Sequence[Sequence[Slot]], x: float, y: float, tile_width: int) -> None:
        """``tile_width`` is at scale 1; the sprite is drawn at the scaled width."""
        assert self.img is not None
        paste_groups(self.img, groups, x * self.scale, y * self.scale, max(MIN_WIDTH, self.px(tile_width)))


SCALE_STEPS = 20  # a card too tall is scaled down by twentieths: a few tile widths, not one per card


def _finish(height: float, draw_at: Callable[[_Card], None]) -> Image.Image:
    """Draw once at the scale that keeps the card within MAX_SIDE."""
    scale = min(1.0, math.floor(SCALE_STEPS * MAX_SIDE / max(height, 1)) / SCALE_STEPS)
    card = _Card(scale)
    card.start(height)
    draw_at(card)
    assert card.img is not None
    return card.img


def render_score_card(scored: ScoredHand, heading: str = "算番", footer: str = "") -> Image.Image:
    """The /score answer: the hand drawn, each step of its value, the total."""
    height = HEADER + PAD + _hand_block_height(scored) + (LINE if footer else 0) + PAD

    def draw(card: _Card) -> None:
        _header(card, heading)
        y = _hand_block(card, scored, HEADER + PAD)
        if footer:
            card.text((PAD, y + LINE / 2), footer, 22, theme.INK_SOFT, max_width=WIDTH - 2 * PAD)

    return _finish(height, draw)


def render_result_card(card: ResultCard) -> Image.Image:
    """A win or a whole hand settled: each win explained, every payment, each player's net.

    With ``hands`` (the end of a hand) every seat's tiles are laid open with its net, so every
    查叫 can be checked; the wins above (each already had its own card) shrink to a summary
    of two or three lines each, which keeps the card large enough to read on a phone.
    """
    settlement = bool(card.hands)
    win_heights = [_compact_win_height(w) if settlement else _hand_block_height(w) + PAD for w in card.wins]
    height = (
        HEADER
        + PAD
        + sum(win_heights)
        + (_HEADING + len(card.payments) * LINE + 10 if card.payments else 0)
        + (_HEADING + len(card.totals) * LINE + 10 if card.totals and not card.hands else 0)
        + (_HEADING + sum(_seat_hand_height(h) for h in card.hands) + 10 if card.hands else 0)
        + (LINE if card.footer else 0)
        + PAD
    )

    def draw(c: _Card) -> None:
        _header(c, card.title)
        y: float = HEADER + PAD
        for i, win in enumerate(card.wins):
            if settlement:
                y = _compact_win(c, win, y, stripe=i % 2 == 0)
                continue
            if i:
                c.line((PAD, y - PAD / 2, WIDTH - PAD, y - PAD / 2), theme.PAPER_LINE, 2)
            y = _hand_block(c, win, y) + PAD
        if card.payments:
            y = _heading(c, card.payments_heading, y)
            y = _payments(c, card.payments, y)
        if card.hands:
            y = _heading(c, card.hands_heading, y)
            y = _seat_hands(c, card.hands, y)
        elif card.totals:
            y = _heading(c, card.totals_heading, y)
            y = _totals(c, card.totals, y)
        if card.footer:
            c.text((PAD, y + LINE / 2), card.footer, 22, theme.INK_SOFT, max_width=WIDTH - 2 * PAD)

    return _finish(height, draw)


def _header(card: _Card, title: str) -> None:
    card.rect((0, 0, WIDTH, HEADER), theme.FELT)
    card.text((PAD, HEADER / 2), title, 38, theme.ON_FELT, bold=True, max_width=WIDTH - 2 * PAD)


_HEADING = 54


def _heading(card: _Card, text: str, y: float) -> float:
    card.text((PAD, y + 22), text, 28, theme.FELT, bold=True, max_width=WIDTH - 2 * PAD)
    card.line((PAD, y + 44, WIDTH - PAD, y + 44), theme.PAPER_LINE, 2)
    return y + _HEADING


def _hand_groups(hand: DescribedHand) -> list[list[Slot]]:
    """Concealed tiles, then the winning tile apart and highlighted, then the melds."""
    rest = list(hand.concealed)
    win: list[Slot] = []
    if hand.win_tile is not None and hand.win_tile in rest:
        rest.remove(hand.win_tile)
        win = [(hand.win_tile, TileStyle.HIGHLIGHT)]
    return [[(t, TileStyle.NORMAL) for t in rest], win, *(meld_slots(m) for m in hand.melds)]


def _fitting_width(groups: Sequence[Sequence[Slot]], widest: int, room: float) -> int:
    """The widest tile (two pixels a step: each width is a set of sprites) that fits ``room``."""
    tw = widest
    while tw > MIN_WIDTH and groups_width(groups, tw) > room:
        tw = max(MIN_WIDTH, tw - 2)
    return tw


def _hand_block_height(scored: ScoredHand) -> int:
    tiles = tile_height(_fitting_width(_hand_groups(scored.hand), HAND_TILE, WIDTH - 2 * PAD)) + 20
    return 56 + tiles + LINE * len(scored.lines) + (70 if scored.total else 0)


_COMPACT_LINE = 40


def _total_beside_title(scored: ScoredHand) -> bool:
    room = WIDTH - 2 * PAD - 32
    return text_width(scored.title, 28, bold=True) + text_width(scored.total, 26, bold=True) + 30 <= room


def _compact_win_height(scored: ScoredHand) -> int:
    rows = 1 + (1 if scored.lines else 0) + (0 if not scored.total or _total_beside_title(scored) else 1)
    return rows * _COMPACT_LINE + 16


def _compact_win(card: _Card, scored: ScoredHand, y: float, stripe: bool) -> float:
    """A win in a few lines: who and how (title), the steps of its value inline, who pays."""
    height = _compact_win_height(scored)
    if stripe:
        card.rect((PAD, y, WIDTH - PAD, y + height - 6), theme.PAPER_STRIPE)
    mid = y + _COMPACT_LINE / 2 + 2
    card.text((PAD + 16, mid), scored.title, 28, theme.INK, bold=True, max_width=WIDTH - 2 * PAD - 32)
    total_row = scored.total and not _total_beside_title(scored)
    if scored.total and not total_row:
        card.text((WIDTH - PAD - 16, mid), scored.total, 26, theme.RED, bold=True, align="right")
    if scored.lines:
        mid += _COMPACT_LINE
        steps = " · ".join(f"{line.label} {line.value}" for line in scored.lines)
        card.text((PAD + 16, mid), steps, 24, theme.INK_SOFT, max_width=WIDTH - 2 * PAD - 32)
    if total_row:
        mid += _COMPACT_LINE
        card.text((WIDTH - PAD - 16, mid), scored.total, 26, theme.RED, bold=True, align="right",
                  max_width=WIDTH - 2 * PAD - 32)
    return y + height


def _hand_block(card: _Card, scored: ScoredHand, y: float) -> float:
    card.text((PAD, y + 22), scored.title, 32, theme.INK, bold=True, max_width=WIDTH - 2 * PAD)
    y += 56
    groups = _hand_groups(scored.hand)
    tw = _fitting_width(groups, HAND_TILE, WIDTH - 2 * PAD)
    card.tiles(groups, PAD, y, tw)
    y += tile_height(tw) + 20
    for i, line in enumerate(scored.lines):
        if i % 2 == 0:
            card.rect((PAD, y, WIDTH - PAD, y + LINE), theme.PAPER_STRIPE)
        card.text((PAD + 16, y + LINE / 2), line.label, 26, theme.INK, max_width=WIDTH * 0.6)
        card.text((WIDTH - PAD - 16, y + LINE / 2), line.value, 26, theme.INK, bold=True, align="right",
                  max_width=WIDTH * 0.3)
        y += LINE
    if scored.total:
        card.text((WIDTH - PAD - 16, y + 36), scored.total, 32, theme.RED, bold=True, align="right",
                  max_width=WIDTH - 2 * PAD)
        y += 70
    return y


def _payments(card: _Card, payments: Sequence[Payment], y: float) -> float:
    name_w = 250
    for p in payments:
        mid = y + LINE / 2
        x = PAD + 8
        card.text((x + name_w, mid), p.payer, 26, theme.INK, align="right", max_width=name_w)
        card.text((x + name_w + 14, mid), "→", 26, theme.INK_SOFT)
        card.text((x + name_w + 52, mid), p.payee, 26, theme.INK, max_width=name_w)
        reason_x = x + 2 * name_w + 80
        amount = str(p.amount)
        amount_w = card.text_width(amount, 28, bold=True)
        card.text((reason_x, mid), p.reason, 24, theme.INK_SOFT, max_width=WIDTH - PAD - 24 - amount_w - reason_x)
        card.text((WIDTH - PAD - 8, mid), amount, 28, theme.INK, bold=True, align="right")
        y += LINE
    return y + 10


def _net(chips: int) -> tuple[str, theme.Color]:
    colour = theme.GAIN if chips > 0 else theme.LOSS if chips < 0 else theme.INK_SOFT
    return (f"{chips:+d}" if chips else "0"), colour


def _totals(card: _Card, totals: Sequence[tuple[str, int]], y: float) -> float:
    for name, chips in totals:
        mid = y + LINE / 2
        card.text((PAD + 8, mid), name, 28, theme.INK, bold=True, max_width=WIDTH * 0.6)
        text, colour = _net(chips)
        card.text((WIDTH - PAD - 8, mid), text, 30, colour, bold=True, align="right")
        y += LINE
    return y + 10


_SEAT_ROOM = WIDTH - 2 * PAD - 24


def _seat_groups(hand: SeatHand) -> list[list[Slot]]:
    open_tiles: list[Slot] = [(t, TileStyle.NORMAL) for t in sorted(hand.concealed)]
    wins: list[Slot] = [(t, TileStyle.HIGHLIGHT) for t in hand.wins]
    return [open_tiles, wins, *(meld_slots(m) for m in hand.melds)]


def _seat_hand_height(hand: SeatHand) -> int:
    return LINE + tile_height(_fitting_width(_seat_groups(hand), SEAT_TILE, _SEAT_ROOM)) + 16


def _seat_hands(card: _Card, hands: Sequence[SeatHand], y: float) -> float:
    """Each seat: its name and net on one line, its whole hand face up under it."""
    for i, hand in enumerate(hands):
        top = y
        height = _seat_hand_height(hand)
        if i % 2 == 0:
            card.rect((PAD, top, WIDTH - PAD, top + height), theme.PAPER_STRIPE)
        mid = y + LINE / 2
        text, colour = _net(hand.net)
        net_w = card.text((WIDTH - PAD - 12, mid), text, 30, colour, bold=True, align="right")
        card.text((PAD + 12, mid), hand.name, 28, theme.INK, bold=True, max_width=WIDTH - 2 * PAD - net_w - 40)
        groups = _seat_groups(hand)
        tw = _fitting_width(groups, SEAT_TILE, _SEAT_ROOM)
        card.tiles(groups, PAD + 12, y + LINE, tw)
        y = top + height
    return y + 10
