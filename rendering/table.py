"""The group's picture of the table: four seats, what each has shown, whose turn it is.

Seats are stacked as full-width panels rather than arranged round a square: upright
text and long discard rows stay legible on a phone, where a real table's sideways
seats would not. The input is a ``TableView``, which holds only public facts.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from rendering import theme
from rendering.limits import shrink_to_limit
from rendering.models import SeatView, TableLabels, TableView
from rendering.rows import Slot, gap, group_gap, meld_slots, paste_groups, paste_row
from rendering.text import draw_text, text_width
from rendering.tiles import TileStyle, tile_height

WIDTH = 1200
MARGIN = 16
HEADER = 68
INFO_WIDTH = 250  # the name column of each panel
PAD = 14  # inside a panel
MELD_TILE = 48
HIDDEN_TILE = 34
DISCARD_TILE = 46
PANEL_GAP = 10


def render_table(view: TableView) -> Image.Image:
    """Draw the table; the same ``view`` always gives the same pixels."""
    rows_width = WIDTH - 2 * MARGIN - INFO_WIDTH - 2 * PAD
    heights = [_panel_height(seat, rows_width) for seat in view.seats]
    height = MARGIN + HEADER + sum(heights) + PANEL_GAP * (len(heights) - 1) + MARGIN
    img = Image.new("RGB", (WIDTH, height), theme.FELT)
    draw = ImageDraw.Draw(img)
    _header(draw, view)
    y = MARGIN + HEADER
    for index, (seat, panel_height) in enumerate(zip(view.seats, heights, strict=True)):
        last = view.last_discard_seat == index
        box = (MARGIN, y, WIDTH - MARGIN, y + panel_height)
        _panel(
            img,
            draw,
            seat,
            view.labels,
            box,
            is_turn=view.turn == index,
            last_discard=last,
            rows_width=rows_width,
        )
        y += panel_height + PANEL_GAP
    return shrink_to_limit(img)


def _header(draw: ImageDraw.ImageDraw, view: TableView) -> None:
    labels = view.labels
    mid = MARGIN + HEADER / 2 - 4
    draw_text(draw, (MARGIN + 4, mid), labels.title, 34, theme.ON_FELT, bold=True, max_width=360)
    wall = labels.wall.format(n=view.wall_remaining)
    size = 28
    w = text_width(wall, size, bold=True)
    right = WIDTH - MARGIN
    draw.rounded_rectangle(
        (right - w - 32, mid - 24, right, mid + 24),
        radius=24,
        fill=theme.FELT_LIGHT,
        outline=theme.FELT_LINE,
        width=2,
    )
    draw_text(draw, (right - 16, mid), wall, size, theme.ON_FELT, bold=True, align="right")
    if view.turn is not None:
        turn = labels.turn.format(name=view.seats[view.turn].name)
        draw_text(draw, (WIDTH / 2, mid), turn, 28, theme.GOLD, bold=True, align="center", max_width=420)


def _discard_rows(count: int, rows_width: int) -> int:
    per_row = max(1, (rows_width + gap(DISCARD_TILE)) // (DISCARD_TILE + gap(DISCARD_TILE)))
    return max(1, -(-count // per_row))


def _panel_height(seat: SeatView, rows_width: int) -> int:
    top_row = tile_height(MELD_TILE)
    discards = _discard_rows(len(seat.discards), rows_width) * (tile_height(DISCARD_TILE) + gap(DISCARD_TILE))
    return max(PAD + top_row + 10 + discards + PAD - gap(DISCARD_TILE), 150)


def _shown_hand(seat: SeatView) -> list[list[Slot]]:
    """The first row of a seat: its concealed tiles (face down, or open once it has won), melds."""
    normal, high = TileStyle.NORMAL, TileStyle.HIGHLIGHT
    if seat.revealed is not None:
        hand: list[Slot] = [(t, normal) for t in sorted(seat.revealed)]
    else:
        hand = [(None, normal)] * seat.concealed_count
    return [hand, [(t, high) for t in seat.wins]]


def _panel(
    img: Image.Image,
    draw: ImageDraw.ImageDraw,
    seat: SeatView,
    labels: TableLabels,
    box: tuple[int, int, int, int],
    is_turn: bool,
    last_discard: bool,
    rows_width: int,
) -> None:
    x0, y0, _, y1 = box
    draw.rounded_rectangle(
        box,
        radius=14,
        fill=theme.FELT_LIGHT,
        outline=theme.GOLD if is_turn else theme.FELT_LINE,
        width=4 if is_turn else 2,
    )
    _seat_info(draw, seat, labels, (x0 + PAD, y0 + PAD, x0 + INFO_WIDTH, y1 - PAD), is_turn)

    x = x0 + INFO_WIDTH + PAD
    y = y0 + PAD
    hand, wins = _shown_hand(seat)
    hand_tile = MELD_TILE if seat.revealed is not None else HIDDEN_TILE
    # Face-down tiles are smaller, so they sit on the melds' baseline.
    end = paste_row(img, hand, x, y + tile_height(MELD_TILE) - tile_height(hand_tile), hand_tile)
    if hand:
        x = end + group_gap(MELD_TILE)
    if wins:
        label_w = text_width(labels.won, 26, bold=True) + 20
        cy = y + tile_height(MELD_TILE) / 2
        draw.rounded_rectangle((x, cy - 20, x + label_w, cy + 20), radius=10, fill=theme.RED)
        draw_text(draw, (x + label_w / 2, cy), labels.won, 26, theme.ON_FELT, bold=True, align="center")
        x = paste_row(img, wins, x + label_w + gap(MELD_TILE) * 2, y, MELD_TILE) + group_gap(MELD_TILE)
    paste_groups(img, [meld_slots(m) for m in seat.melds], x, y, MELD_TILE)

    y += tile_height(MELD_TILE) + 10
    start = x0 + INFO_WIDTH + PAD
    per_row = max(1, (rows_width + gap(DISCARD_TILE)) // (DISCARD_TILE + gap(DISCARD_TILE)))
    for row_start in range(0, len(seat.discards), per_row):
        chunk = seat.discards[row_start : row_start + per_row]
        slots = [
            (
                t,
                TileStyle.HIGHLIGHT if last_discard and row_start + i == len(seat.discards) - 1 else TileStyle.NORMAL,
            )
            for i, t in enumerate(chunk)
        ]
        paste_row(img, slots, start, y, DISCARD_TILE)
        y += tile_height(DISCARD_TILE) + gap(DISCARD_TILE)


def _seat_info(
    draw: ImageDraw.ImageDraw,
    seat: SeatView,
    labels: TableLabels,
    box: tuple[int, int, int, int],
    is_turn: bool,
) -> None:
    x0, y0, x1, y1 = box
    name_size = 30
    draw_text(
        draw,
        (x0, y0 + 18),
        seat.name,
        name_size,
        theme.GOLD if is_turn else theme.ON_FELT,
        bold=True,
        max_width=x1 - x0 - 12,
    )
    x = x0
    badge_y = y0 + 60
    badges: list[tuple[str, theme.Color]] = []
    if seat.is_dealer:
        badges.append((labels.dealer, theme.RED))
    if seat.void_suit is not None:
        badges.append((labels.void.format(suit=labels.suits[seat.void_suit]), theme.BLUE))
    for text, colour in badges:
        w = text_width(text, 22, bold=True)
        draw.rounded_rectangle((x, badge_y - 16, x + w + 18, badge_y + 16), radius=8, fill=colour)
        draw_text(draw, (x + 9, badge_y), text, 22, theme.ON_FELT, bold=True)
        x += w + 26
    chips = f"{seat.chips:+d}" if seat.chips else "0"
    colour = theme.GAIN_ON_FELT if seat.chips > 0 else theme.LOSS_ON_FELT if seat.chips < 0 else theme.ON_FELT_SOFT
    draw_text(draw, (x0, y1 - 20), chips, 32, colour, bold=True)
    if seat.status:
        draw_text(
            draw,
            (x1 - 12, y1 - 20),
            seat.status,
            22,
            theme.ON_FELT_SOFT,
            align="right",
            max_width=x1 - x0 - 100,
        )
