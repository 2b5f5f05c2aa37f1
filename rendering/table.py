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

from dataclasses import dataclass

from PIL import Image, ImageDraw

from rendering import theme
from rendering.limits import shrink_to_limit
from rendering.models import SeatView, TableLabels, TableView
from rendering.rows import Slot, gap, group_gap, groups_width, meld_slots, paste_groups, paste_row
from rendering.text import draw_text, text_width
from rendering.tiles import MIN_WIDTH, TileStyle, tile_height

WIDTH = 800


@dataclass(frozen=True)
class Layout:
    """The table's measures: the group's picture uses ``GROUP``; a player's private screen, which
    has their hand below the table, a compact one (``DM_LAYOUTS``) that leaves the hand its room."""

    margin: int = 14
    header: int = 60
    pad: int = 12  # inside a panel
    name_line: int = 44
    meld_tile: int = 44
    discard_tile: int = 46
    panel_gap: int = 8
    text: float = 1.0  # font sizes, as a share of the group's

    @property
    def rows_width(self) -> int:
        return WIDTH - 2 * self.margin - 2 * self.pad

    def size(self, points: int) -> int:
        return max(10, round(points * self.text))


GROUP = Layout()
# Largest first: a private screen takes the first whose table fits above the hand in 1280 px.
DM_LAYOUTS = (
    Layout(margin=8, header=46, pad=8, name_line=36, meld_tile=36, discard_tile=42, panel_gap=6, text=0.86),
    Layout(margin=8, header=42, pad=7, name_line=34, meld_tile=32, discard_tile=38, panel_gap=5, text=0.8),
    Layout(margin=6, header=38, pad=6, name_line=30, meld_tile=28, discard_tile=34, panel_gap=4, text=0.74),
    Layout(margin=6, header=34, pad=5, name_line=28, meld_tile=24, discard_tile=28, panel_gap=4, text=0.68),
)


def render_table(view: TableView, layout: Layout = GROUP) -> Image.Image:
    """Draw the table; the same ``view`` and ``layout`` always give the same pixels."""
    img = Image.new("RGB", (WIDTH, table_height(view, layout)), theme.FELT)
    draw_table(img, view, layout)
    return shrink_to_limit(img)


def draw_table(img: Image.Image, view: TableView, layout: Layout = GROUP) -> None:
    """Draw the table into the top ``table_height(view, layout)`` px of ``img`` (``WIDTH`` wide,
    felt-coloured there): a private screen draws it in place, above the hand, with no canvas of
    its own to fill and copy (a third of the screen's drawing time in a busy bot)."""
    lay = layout
    heights = [_panel_height(seat, lay) for seat in view.seats]
    draw = ImageDraw.Draw(img)
    _header(draw, view, lay)
    y = lay.margin + lay.header
    for index, (seat, panel_height) in enumerate(zip(view.seats, heights, strict=True)):
        box = (lay.margin, y, WIDTH - lay.margin, y + panel_height)
        _panel(img, draw, seat, view.labels, box, lay, is_turn=view.turn == index,
               last_discard=view.last_discard_seat == index)
        y += panel_height + lay.panel_gap


def table_height(view: TableView, layout: Layout = GROUP) -> int:
    """The height ``render_table(view, layout)`` draws, known without drawing it."""
    heights = [_panel_height(seat, layout) for seat in view.seats]
    return 2 * layout.margin + layout.header + sum(heights) + layout.panel_gap * (len(heights) - 1)


def dm_layout(view: TableView, room: int) -> Layout:
    """The largest private-screen layout whose table is at most ``room`` px tall (else the smallest)."""
    for layout in DM_LAYOUTS:
        if table_height(view, layout) <= room:
            return layout
    return DM_LAYOUTS[-1]


def _header(draw: ImageDraw.ImageDraw, view: TableView, lay: Layout) -> None:
    labels = view.labels
    mid = lay.margin + lay.header / 2 - 6 * lay.text
    wall = labels.wall.format(n=view.wall_remaining)
    size = lay.size(24)
    w = text_width(wall, size, bold=True)
    right = WIDTH - lay.margin
    half = round(21 * lay.text)
    draw.rounded_rectangle((right - w - 28 * lay.text, mid - half, right, mid + half), radius=half,
                           fill=theme.FELT_LIGHT, outline=theme.FELT_LINE, width=2)
    draw_text(draw, (right - 14 * lay.text, mid), wall, size, theme.ON_FELT, bold=True, align="right")
    left_room = WIDTH - 2 * lay.margin - w - 40 * lay.text
    title_size = lay.size(28)
    if view.turn is not None:
        turn = labels.turn.format(name=view.seats[view.turn].name)
        title_w = draw_text(draw, (lay.margin + 4, mid), labels.title, title_size, theme.ON_FELT, bold=True,
                            max_width=left_room * 0.42)
        gap_w = 24 * lay.text
        draw_text(draw, (lay.margin + 4 + title_w + gap_w, mid), turn, lay.size(26), theme.GOLD, bold=True,
                  max_width=left_room - title_w - gap_w - 4)
    else:
        draw_text(draw, (lay.margin + 4, mid), labels.title, title_size, theme.ON_FELT, bold=True,
                  max_width=left_room)


def _per_row(lay: Layout) -> int:
    tw = lay.discard_tile
    return max(1, (lay.rows_width + gap(tw)) // (tw + gap(tw)))


def _discard_rows(count: int, lay: Layout) -> int:
    return max(1, -(-count // _per_row(lay)))


def _tiles_gap(lay: Layout) -> int:
    """Between the hand-and-melds row and the discards."""
    return round(8 * lay.text)


def _panel_height(seat: SeatView, lay: Layout) -> int:
    tw = lay.discard_tile
    discards = _discard_rows(len(seat.discards), lay) * (tile_height(tw) + gap(tw))
    return lay.pad + lay.name_line + tile_height(lay.meld_tile) + _tiles_gap(lay) + discards - gap(tw) + lay.pad


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


def _tiles_width(seat: SeatView, labels: TableLabels, tw: int, lay: Layout) -> float:
    hand, wins, melds = _tile_groups(seat)
    width = groups_width([hand, *melds], tw) + (group_gap(tw) if hand and melds else 0)
    if seat.revealed is None and hand:
        width += text_width(_count_text(seat), lay.size(24), bold=True) + 8 + group_gap(tw)
    if wins:
        width += (text_width(labels.won, lay.size(22), bold=True) + 16 * lay.text + 2 * gap(tw)
                  + groups_width([wins], tw) + group_gap(tw))
    return width


def _panel(
    img: Image.Image,
    draw: ImageDraw.ImageDraw,
    seat: SeatView,
    labels: TableLabels,
    box: tuple[int, int, int, int],
    lay: Layout,
    is_turn: bool,
    last_discard: bool,
) -> None:
    x0, y0, x1, _ = box
    draw.rounded_rectangle(box, radius=round(12 * lay.text), fill=theme.FELT_LIGHT,
                           outline=theme.GOLD if is_turn else theme.FELT_LINE, width=4 if is_turn else 2)
    _name_line(draw, seat, labels, (x0 + lay.pad, y0 + lay.pad, x1 - lay.pad, y0 + lay.pad + lay.name_line), lay,
               is_turn)

    # Melds and a winner's open hand shrink only if a seat shows more than a row can hold, two
    # pixels a step: each width is a set of sprites to draw once, and a pixel less is not seen.
    tw = lay.meld_tile
    while tw > MIN_WIDTH and _tiles_width(seat, labels, tw, lay) > lay.rows_width:
        tw = max(MIN_WIDTH, tw - 2)
    x = x0 + lay.pad
    y = y0 + lay.pad + lay.name_line
    row_h = tile_height(lay.meld_tile)
    top = y + row_h - tile_height(tw)
    hand, wins, melds = _tile_groups(seat)
    if hand:
        x = paste_row(img, hand, x, top, tw, theme.FELT_LIGHT)
        if seat.revealed is None:
            x += 6 + draw_text(draw, (x + 6, y + row_h / 2), _count_text(seat), lay.size(24), theme.ON_FELT_SOFT,
                               bold=True)
        x += group_gap(tw)
    if wins:
        won_size = lay.size(22)
        label_w = text_width(labels.won, won_size, bold=True) + 16 * lay.text
        cy = y + row_h / 2
        half = 17 * lay.text
        draw.rounded_rectangle((x, cy - half, x + label_w, cy + half), radius=8 * lay.text, fill=theme.RED)
        draw_text(draw, (x + label_w / 2, cy), labels.won, won_size, theme.ON_FELT, bold=True, align="center")
        x = paste_row(img, wins, x + label_w + gap(tw) * 2, top, tw, theme.FELT_LIGHT) + group_gap(tw)
    paste_groups(img, melds, x, top, tw, theme.FELT_LIGHT)

    y += row_h + _tiles_gap(lay)
    start = x0 + lay.pad
    per_row = _per_row(lay)
    dw = lay.discard_tile
    for row_start in range(0, len(seat.discards), per_row):
        chunk = seat.discards[row_start : row_start + per_row]
        newest = len(seat.discards) - 1
        slots = [
            (t, TileStyle.HIGHLIGHT if last_discard and row_start + i == newest else TileStyle.NORMAL)
            for i, t in enumerate(chunk)
        ]
        paste_row(img, slots, start, y, dw, theme.FELT_LIGHT)
        y += tile_height(dw) + gap(dw)


def _name_line(
    draw: ImageDraw.ImageDraw,
    seat: SeatView,
    labels: TableLabels,
    box: tuple[int, int, int, int],
    lay: Layout,
    is_turn: bool,
) -> None:
    """Name, then its badges right after it; chips at the right edge, the status before them."""
    x0, y0, x1, y1 = box
    mid = (y0 + y1) / 2 - 2
    big, small = lay.size(28), lay.size(20)
    chips = f"{seat.chips:+d}" if seat.chips else "0"
    colour = theme.GAIN_ON_FELT if seat.chips > 0 else theme.LOSS_ON_FELT if seat.chips < 0 else theme.ON_FELT_SOFT
    chips_w = draw_text(draw, (x1, mid), chips, big, colour, bold=True, align="right")
    right = x1 - chips_w - 16 * lay.text
    if seat.status:
        right -= draw_text(draw, (right, mid), seat.status, small, theme.ON_FELT_SOFT, align="right",
                           max_width=(x1 - x0) * 0.22) + 14 * lay.text
    badges: list[tuple[str, theme.Color]] = []
    if seat.is_dealer:
        badges.append((labels.dealer, theme.RED))
    if seat.void_suit is not None:
        badges.append((labels.void.format(suit=labels.suits[seat.void_suit]), theme.BLUE))
    inset = 8 * lay.text
    badge_widths = [text_width(text, small, bold=True) + 2 * inset for text, _ in badges]
    name_room = right - x0 - sum(w + 8 for w in badge_widths) - 8
    x = x0 + draw_text(draw, (x0, mid), seat.name, big, theme.GOLD if is_turn else theme.ON_FELT, bold=True,
                       max_width=max(name_room, 60)) + 12 * lay.text
    half = 15 * lay.text
    for (text, colour), w in zip(badges, badge_widths, strict=True):
        draw.rounded_rectangle((x, mid - half, x + w, mid + half), radius=7 * lay.text, fill=colour)
        draw_text(draw, (x + inset, mid), text, small, theme.ON_FELT, bold=True)
        x += w + 8
