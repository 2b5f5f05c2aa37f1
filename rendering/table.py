"""The group's picture of the table: four seats, what each has shown, whose turn it is.

Seats are stacked as full-width panels rather than arranged round a square: upright
text and long discard rows stay legible on a phone, where a real table's sideways
seats would not. Telegram shows a photo about 400 px wide, so the picture is 800 px wide
and a discard 46 px (23 px on the phone); a hidden hand is one face-down tile and its
count rather than a row of backs, which leaves the width to the tiles people read. Each
panel has a name line (name, badges, chips, status) above its tiles, so no label ever
covers a tile. The input is a ``TableView``, which holds only public facts.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from rendering import theme
from rendering.limits import shrink_to_limit
from rendering.models import SeatView, TableLabels, TableView
from rendering.rows import Slot, gap, group_gap, groups_width, meld_slots, paste_groups, paste_row
from rendering.text import draw_text, text_width
from rendering.tiles import MIN_WIDTH, TileStyle, tile_height

WIDTH = 800
MARGIN = 14
HEADER = 60
PAD = 12  # inside a panel
NAME_LINE = 44
MELD_TILE = 44
DISCARD_TILE = 46
PANEL_GAP = 8
ROWS_WIDTH = WIDTH - 2 * MARGIN - 2 * PAD


def render_table(view: TableView) -> Image.Image:
    """Draw the table; the same ``view`` always gives the same pixels."""
    heights = [_panel_height(seat) for seat in view.seats]
    height = MARGIN + HEADER + sum(heights) + PANEL_GAP * (len(heights) - 1) + MARGIN
    img = Image.new("RGB", (WIDTH, height), theme.FELT)
    draw = ImageDraw.Draw(img)
    _header(draw, view)
    y = MARGIN + HEADER
    for index, (seat, panel_height) in enumerate(zip(view.seats, heights, strict=True)):
        box = (MARGIN, y, WIDTH - MARGIN, y + panel_height)
        _panel(img, draw, seat, view.labels, box, is_turn=view.turn == index,
               last_discard=view.last_discard_seat == index)
        y += panel_height + PANEL_GAP
    return shrink_to_limit(img)


def _header(draw: ImageDraw.ImageDraw, view: TableView) -> None:
    labels = view.labels
    mid = MARGIN + HEADER / 2 - 6
    wall = labels.wall.format(n=view.wall_remaining)
    size = 24
    w = text_width(wall, size, bold=True)
    right = WIDTH - MARGIN
    draw.rounded_rectangle((right - w - 28, mid - 21, right, mid + 21), radius=21, fill=theme.FELT_LIGHT,
                           outline=theme.FELT_LINE, width=2)
    draw_text(draw, (right - 14, mid), wall, size, theme.ON_FELT, bold=True, align="right")
    left_room = WIDTH - 2 * MARGIN - w - 40
    if view.turn is not None:
        turn = labels.turn.format(name=view.seats[view.turn].name)
        title_w = draw_text(draw, (MARGIN + 4, mid), labels.title, 28, theme.ON_FELT, bold=True,
                            max_width=left_room * 0.42)
        draw_text(draw, (MARGIN + 4 + title_w + 24, mid), turn, 26, theme.GOLD, bold=True,
                  max_width=left_room - title_w - 28)
    else:
        draw_text(draw, (MARGIN + 4, mid), labels.title, 28, theme.ON_FELT, bold=True, max_width=left_room)


def _per_row() -> int:
    return max(1, (ROWS_WIDTH + gap(DISCARD_TILE)) // (DISCARD_TILE + gap(DISCARD_TILE)))


def _discard_rows(count: int) -> int:
    return max(1, -(-count // _per_row()))


def _panel_height(seat: SeatView) -> int:
    discards = _discard_rows(len(seat.discards)) * (tile_height(DISCARD_TILE) + gap(DISCARD_TILE))
    return PAD + NAME_LINE + tile_height(MELD_TILE) + 8 + discards - gap(DISCARD_TILE) + PAD


def _count_text(seat: SeatView) -> str:
    return f"×{seat.concealed_count}"


def _tile_groups(seat: SeatView) -> tuple[list[Slot], list[Slot], list[list[Slot]]]:
    """The hand (open once the seat has won, else one back for the count), the wins, the melds."""
    normal, high = TileStyle.NORMAL, TileStyle.HIGHLIGHT
    if seat.revealed is not None:
        hand: list[Slot] = [(t, normal) for t in sorted(seat.revealed)]
    else:
        hand = [(None, normal)] if seat.concealed_count else []
    return hand, [(t, high) for t in seat.wins], [meld_slots(m) for m in seat.melds]


def _tiles_width(seat: SeatView, labels: TableLabels, tw: int) -> float:
    hand, wins, melds = _tile_groups(seat)
    width = groups_width([hand, *melds], tw) + (group_gap(tw) if hand and melds else 0)
    if seat.revealed is None and hand:
        width += text_width(_count_text(seat), 24, bold=True) + 8 + group_gap(tw)
    if wins:
        width += text_width(labels.won, 22, bold=True) + 16 + 2 * gap(tw) + groups_width([wins], tw) + group_gap(tw)
    return width


def _panel(
    img: Image.Image,
    draw: ImageDraw.ImageDraw,
    seat: SeatView,
    labels: TableLabels,
    box: tuple[int, int, int, int],
    is_turn: bool,
    last_discard: bool,
) -> None:
    x0, y0, x1, _ = box
    draw.rounded_rectangle(box, radius=12, fill=theme.FELT_LIGHT, outline=theme.GOLD if is_turn else theme.FELT_LINE,
                           width=4 if is_turn else 2)
    _name_line(draw, seat, labels, (x0 + PAD, y0 + PAD, x1 - PAD, y0 + PAD + NAME_LINE), is_turn)

    # Melds and a winner's open hand shrink only if a seat shows more than a row can hold.
    tw = MELD_TILE
    while tw > MIN_WIDTH and _tiles_width(seat, labels, tw) > ROWS_WIDTH:
        tw -= 1
    x = x0 + PAD
    y = y0 + PAD + NAME_LINE
    row_h = tile_height(MELD_TILE)
    top = y + row_h - tile_height(tw)
    hand, wins, melds = _tile_groups(seat)
    if hand:
        x = paste_row(img, hand, x, top, tw)
        if seat.revealed is None:
            x += 6 + draw_text(draw, (x + 6, y + row_h / 2), _count_text(seat), 24, theme.ON_FELT_SOFT, bold=True)
        x += group_gap(tw)
    if wins:
        label_w = text_width(labels.won, 22, bold=True) + 16
        cy = y + row_h / 2
        draw.rounded_rectangle((x, cy - 17, x + label_w, cy + 17), radius=8, fill=theme.RED)
        draw_text(draw, (x + label_w / 2, cy), labels.won, 22, theme.ON_FELT, bold=True, align="center")
        x = paste_row(img, wins, x + label_w + gap(tw) * 2, top, tw) + group_gap(tw)
    paste_groups(img, melds, x, top, tw)

    y += row_h + 8
    start = x0 + PAD
    per_row = _per_row()
    for row_start in range(0, len(seat.discards), per_row):
        chunk = seat.discards[row_start : row_start + per_row]
        newest = len(seat.discards) - 1
        slots = [
            (t, TileStyle.HIGHLIGHT if last_discard and row_start + i == newest else TileStyle.NORMAL)
            for i, t in enumerate(chunk)
        ]
        paste_row(img, slots, start, y, DISCARD_TILE)
        y += tile_height(DISCARD_TILE) + gap(DISCARD_TILE)


def _name_line(
    draw: ImageDraw.ImageDraw,
    seat: SeatView,
    labels: TableLabels,
    box: tuple[int, int, int, int],
    is_turn: bool,
) -> None:
    """Name, then its badges right after it; chips at the right edge, the status before them."""
    x0, y0, x1, y1 = box
    mid = (y0 + y1) / 2 - 2
    chips = f"{seat.chips:+d}" if seat.chips else "0"
    colour = theme.GAIN_ON_FELT if seat.chips > 0 else theme.LOSS_ON_FELT if seat.chips < 0 else theme.ON_FELT_SOFT
    chips_w = draw_text(draw, (x1, mid), chips, 28, colour, bold=True, align="right")
    right = x1 - chips_w - 16
    if seat.status:
        right -= draw_text(draw, (right, mid), seat.status, 20, theme.ON_FELT_SOFT, align="right",
                           max_width=(x1 - x0) * 0.22) + 14
    badges: list[tuple[str, theme.Color]] = []
    if seat.is_dealer:
        badges.append((labels.dealer, theme.RED))
    if seat.void_suit is not None:
        badges.append((labels.void.format(suit=labels.suits[seat.void_suit]), theme.BLUE))
    badge_widths = [text_width(text, 20, bold=True) + 16 for text, _ in badges]
    name_room = right - x0 - sum(w + 8 for w in badge_widths) - 8
    x = x0 + draw_text(draw, (x0, mid), seat.name, 28, theme.GOLD if is_turn else theme.ON_FELT, bold=True,
                       max_width=max(name_room, 60)) + 12
    for (text, colour), w in zip(badges, badge_widths, strict=True):
        draw.rounded_rectangle((x, mid - 15, x + w, mid + 15), radius=7, fill=colour)
        draw_text(draw, (x + 8, mid), text, 20, theme.ON_FELT, bold=True)
        x += w + 8
