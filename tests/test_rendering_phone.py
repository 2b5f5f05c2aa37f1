"""Pictures read on a phone: tile sizes measured in each picture scaled to 400 px wide.

Telegram shows a photo about 400 px wide. The targets: a player's own tiles at least 40 px
wide in their private picture, discards at least 20 px wide in the group's picture, and the
settlement card shows every hand face up. Each tile is found by its colour in the scaled
picture (a highlighted tile has a face colour nothing else uses), and its width measured.
"""

from __future__ import annotations

from PIL import Image

from cli.gallery import PHONE_WIDTH, phone_copy
from engine.tiles import Meld, MeldKind, Suit, parse_tile, parse_tiles
from rendering import SeatView, TableView, render_result_card, render_table, samples, theme
from rendering.screen import render_seat_screen

OWN_TILE_MIN = 40
DISCARD_MIN = 20


def _near(colour: tuple[int, int, int], target: tuple[int, int, int], tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(colour, target, strict=True))


def highlighted_width(img: Image.Image) -> int:
    """Width of the one highlighted tile: its pale face and the gold ring round it, in px.

    The ring lies just inside the tile's dark outline, so this is the tile's width less
    about one pixel: a measurement that errs on the small side. Rows with only a stray
    pixel or two of those colours (anti-aliased edges elsewhere) are not the tile.
    """
    rgb = img.convert("RGB")
    xs: list[int] = []
    for y in range(rgb.height):
        row = [
            x for x in range(rgb.width)
            if _near(rgb.getpixel((x, y)), theme.HIGHLIGHT_FACE) or _near(rgb.getpixel((x, y)), theme.GOLD, 40)  # type: ignore[arg-type]
        ]
        if len(row) >= 4:
            xs += row
    assert xs, "no highlighted tile found"
    return max(xs) - min(xs) + 1


def midgame_view(discards: int) -> TableView:
    """A table whose newest discard (seat 2's) is its only gold: no turn frame, no win yet."""
    river = tuple(parse_tiles("1p2p3p4p6p7p8p9p1s2s3s4s6s8s9s1m2m3m5m6m7m8m")[:discards])
    seats = (
        SeatView("Alice", 10, melds=(Meld(MeldKind.PUNG, parse_tile("5m")),), discards=river[:7], is_dealer=True,
                 void_suit=Suit.BAMBOO, chips=-3),
        SeatView("王小明", 13, discards=river[:6], void_suit=Suit.CHARACTERS),
        SeatView("Борис", 13, discards=river, void_suit=Suit.DOTS, status="托管"),
        SeatView("Dee", 10, melds=(Meld(MeldKind.CONCEALED_KONG, parse_tile("5s")),), discards=river[:3]),
    )
    return TableView(seats, wall_remaining=31, turn=None, last_discard_seat=2)


def test_group_discards_are_at_least_20_px_wide_at_400_px() -> None:
    for discards in (1, 16, 23):
        phone = phone_copy(render_table(midgame_view(discards)))
        assert phone.width == PHONE_WIDTH
        width = highlighted_width(phone)
        assert width >= DISCARD_MIN, (discards, width)


def test_own_tiles_in_the_private_picture_are_at_least_40_px_wide_at_400_px() -> None:
    hand = samples.hand_samples()["void_with_buttons"]  # 13 tiles and the drawn one, with buttons
    table = midgame_view(12)
    table = TableView(table.seats, table.wall_remaining, table.turn, None)  # no highlighted discard
    screen = render_seat_screen(table, hand.concealed, drawn=hand.drawn, void_suit=hand.void_suit,
                                labels=hand.labels)
    phone = phone_copy(screen)
    assert phone.width == PHONE_WIDTH
    width = highlighted_width(phone)  # the drawn tile: highlighted, the same size as the others
    assert width >= OWN_TILE_MIN, width


def test_a_full_hand_with_four_kongs_still_keeps_40_px_tiles() -> None:
    table = midgame_view(5)
    table = TableView(table.seats, table.wall_remaining, table.turn, None)
    melds = tuple(Meld(MeldKind.KONG, parse_tile(t)) for t in ("1m", "2p", "3p", "4p"))
    screen = render_seat_screen(table, parse_tiles("9p"), melds=melds, drawn=parse_tile("9p"))
    assert highlighted_width(phone_copy(screen)) >= OWN_TILE_MIN


def test_the_settlement_card_lays_every_hand_open() -> None:
    card = samples.hand_end_sample()
    assert len(card.hands) == 4
    assert all(h.concealed for h in card.hands)
    img = render_result_card(card)
    phone = phone_copy(img)
    # Face-up tiles: ivory faces in the hands section (the card's lower part), one row a seat.
    rgb = phone.convert("RGB")
    rows_with_faces = {
        y for y in range(rgb.height // 2, rgb.height) for x in range(0, rgb.width, 2)
        if _near(rgb.getpixel((x, y)), theme.IVORY, 6)  # type: ignore[arg-type]
    }
    assert len(rows_with_faces) > 4 * 10


def test_english_badges_sit_on_the_name_line_above_the_tiles() -> None:
    """"Dealer" and "void bamboo" are wider than 庄 and 缺条: they must still never cover a tile."""
    view = samples.table_start_sample()  # English labels; Ann deals
    seats = tuple(
        SeatView(s.name * 6, s.concealed_count, is_dealer=s.is_dealer, void_suit=Suit.BAMBOO) for s in view.seats
    )
    img = render_table(TableView(seats, view.wall_remaining, view.turn, labels=view.labels)).convert("RGB")
    first_panel = range(0, img.height // 4 + 40)

    def rows_of(colour: tuple[int, int, int]) -> list[int]:
        return [y for y in first_panel for x in range(0, img.width, 2)
                if _near(img.getpixel((x, y)), colour, 10)]  # type: ignore[arg-type]

    badge_rows, tile_rows = rows_of(theme.RED), rows_of(theme.JADE)
    assert badge_rows and tile_rows
    assert max(badge_rows) < min(tile_rows)
