"""Rendering: tiles, hands, the table, cards and charts come out right-sized and never leak."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from engine.tiles import ALL_TILES, Meld, MeldKind, Suit, parse_tile, parse_tiles
from rendering import (
    MAX_SIDE,
    Payment,
    ResultCard,
    SeatView,
    TableLabels,
    TableView,
    TallyEntry,
    TileStyle,
    display_order,
    encode_jpeg,
    encode_png,
    render_hand,
    render_result_card,
    render_table,
    render_tally_chart,
    render_tile,
    render_tiles,
    samples,
)
from rendering.text import FONT_DIR, draw_text, faces, fit


def fits(img: Image.Image) -> bool:
    return max(img.size) <= MAX_SIDE


# --- tiles -----------------------------------------------------------------------------


def test_every_tile_and_the_face_down_tile_draw_at_the_asked_width() -> None:
    for tile in [*ALL_TILES, None]:
        sprite = render_tile(tile, 50)
        assert sprite.mode == "RGBA"
        assert sprite.width == 50
        assert sprite.height > sprite.width


def test_all_tile_faces_are_different() -> None:
    faces = {render_tile(t, 40).tobytes() for t in ALL_TILES}
    assert len(faces) == len(ALL_TILES)


def test_sprites_are_drawn_once_and_reused() -> None:
    assert render_tile(5, 64) is render_tile(5, 64)
    assert render_tile(5, 64, TileStyle.HIGHLIGHT) is not render_tile(5, 64)


@pytest.mark.parametrize(("tile", "width"), [(27, 64), (-1, 64), (3, 5), (3, 1000)])
def test_bad_tile_or_width_is_a_clear_error(tile: int, width: int) -> None:
    with pytest.raises(ValueError, match="tile"):
        render_tile(tile, width)


def test_a_row_of_tiles_highlights_by_position() -> None:
    plain = render_tiles([1, 2, 3])
    marked = render_tiles([1, 2, 3], highlight={1})
    assert plain.size == marked.size
    assert plain.tobytes() != marked.tobytes()
    with pytest.raises(ValueError):
        render_tiles([])


# --- hand ------------------------------------------------------------------------------


def test_display_order_sorts_by_suit_and_puts_the_void_suit_last() -> None:
    tiles = parse_tiles("9s1m5p1s")
    assert display_order(tiles) == parse_tiles("1m5p19s")
    assert display_order(tiles, Suit.CHARACTERS) == parse_tiles("5p19s1m")


def test_hand_with_everything_stays_within_telegram_limits() -> None:
    for hand in samples.hand_samples().values():
        img = render_hand(**hand.kwargs)
        assert fits(img)
        assert len(encode_png(img)) < 40_000


def test_hand_width_is_exact_when_asked() -> None:
    hand = samples.hand_samples()["deal"]
    assert render_hand(**hand.kwargs, width=640).width == 640


def test_the_drawn_tile_is_highlighted_unless_told_otherwise() -> None:
    hand = samples.hand_samples()["deal"]
    default = render_hand(**hand.kwargs)
    plain = render_hand(**hand.kwargs, highlight=set())
    assert default.tobytes() != plain.tobytes()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"concealed": parse_tiles("123m"), "labels": ["a"]}, "labels"),
        ({"concealed": [30]}, "not a tile"),
        ({"concealed": parse_tiles("11112222333344m"), "drawn": 5}, "at most 14"),
        ({"concealed": parse_tiles("123m"), "width": 5000}, "width"),
    ],
)
def test_bad_hand_input_is_a_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_hand(**kwargs)  # type: ignore[arg-type]


# --- table and privacy ------------------------------------------------------------------


def public_view(names: list[str], hands: list[list[int]], discards: list[list[int]], turn: int) -> TableView:
    """What the bot does: the table gets each hand's size, never its tiles."""
    seats = tuple(
        SeatView(name, len(hand), discards=tuple(d), is_dealer=i == 0, void_suit=Suit(i % 3))
        for i, (name, hand, d) in enumerate(zip(names, hands, discards, strict=True))
    )
    return TableView(seats, wall_remaining=40, turn=turn, last_discard_seat=turn)


@settings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_table_image_is_identical_whatever_the_hidden_hands_are(rng: random.Random) -> None:
    # Public tiles are only 1-4 of characters; hidden hands draw from the rest and differ.
    discards = [[0, 1], [2, 3], [0, 2], [1]]
    rest = [t for t in ALL_TILES if t > 3] * 4
    first, second = rest[:], rest[:]
    rng.shuffle(first)
    rng.shuffle(second)
    hands_a = [first[i * 13 : i * 13 + 13] for i in range(4)]
    hands_b = [second[i * 13 : i * 13 + 13] for i in range(4)]
    names = ["Ann", "Ben", "王小明", "Dee"]
    a = encode_png(render_table(public_view(names, hands_a, discards, 3)))
    b = encode_png(render_table(public_view(names, hands_b, discards, 3)))
    assert a == b


def test_a_seat_that_has_not_won_cannot_carry_its_hand() -> None:
    with pytest.raises(ValueError, match="only a player who has won"):
        SeatView("Ann", 13, revealed=tuple(parse_tiles("1112223334445m")))


def test_a_winner_may_show_its_hand() -> None:
    seat = SeatView("Ann", 0, wins=(parse_tile("5m"),), revealed=tuple(parse_tiles("111222333444m")))
    assert seat.revealed is not None


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: TableView((SeatView("a", 13),) * 3, 10), "4 seats"),
        (lambda: TableView((SeatView("a", 13),) * 4, -1), "negative"),
        (lambda: TableView((SeatView("a", 13),) * 4, 10, turn=4), "turn"),
        (lambda: TableView((SeatView("a", 13),) * 4, 10, last_discard_seat=0), "no discards"),
        (lambda: SeatView("a", 15), "concealed_count"),
        (lambda: SeatView("a", 3, discards=(99,)), "not a tile"),
    ],
)
def test_bad_table_input_is_a_clear_error(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_sample_tables_fit() -> None:
    for view in (samples.table_sample(), samples.table_start_sample()):
        assert fits(render_table(view))


def test_many_discards_wrap_and_still_fit() -> None:
    seat = SeatView("Ann", 1, melds=(Meld(MeldKind.KONG, 0),) * 4, discards=tuple(range(27)) * 2)
    assert fits(render_table(TableView((seat,) * 4, 0, last_discard_seat=0)))


# --- cards and charts -------------------------------------------------------------------


def test_a_long_result_card_is_drawn_at_a_size_that_fits(monkeypatch) -> None:
    """No picture-sized resize: the card is laid out smaller instead of shrunk after drawing."""
    card = samples.hand_end_sample()
    many = ResultCard(card.title, card.wins * 3, card.payments * 3, card.totals, hands=card.hands)
    resized: list[tuple[int, int]] = []
    real = Image.Image.resize

    def spy(self, size, *args, **kwargs):
        resized.append(tuple(size))
        return real(self, size, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "resize", spy)
    img = render_result_card(many)
    assert fits(img)
    # Scaled by twentieths (a few tile widths to draw): one step larger (+50 px wide) would not fit.
    assert img.width == 1000 or img.height * (img.width + 50) / img.width > MAX_SIDE
    assert all(w < 300 for w, _ in resized), resized  # tile and emoji sprites only


def test_negative_payment_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        Payment("a", "b", -1)


def test_tally_chart_handles_nobody_all_zero_and_too_many() -> None:
    assert fits(render_tally_chart([]))
    assert fits(render_tally_chart([TallyEntry("a", 0), TallyEntry("b", 0)]))
    with pytest.raises(ValueError, match="at most"):
        render_tally_chart([TallyEntry(str(i), i) for i in range(41)])


# --- text and fonts ---------------------------------------------------------------------


def test_names_outside_the_font_subset_are_drawn_without_error() -> None:
    img = Image.new("RGB", (400, 60))
    from PIL import ImageDraw

    draw = ImageDraw.Draw(img)
    for name in ["𠀀𪚥 rare", "emoji 🀄🎉", "tab\tnew\nline\x00", "ქართული", ""]:
        draw_text(draw, (10, 30), name, 24, (255, 255, 255), max_width=380)


def test_fit_shortens_with_an_ellipsis() -> None:
    assert fit("short", 20, 500) == "short"
    long = fit("a very long player name indeed", 20, 80)
    assert long.endswith("…")
    assert len(long) < 20


def test_the_bold_font_covers_the_game_vocabulary_and_the_fonts_ship_their_licence() -> None:
    cjk = next(f for f in faces() if ord("万") in f.coverage)
    assert cjk.bold_coverage is not None
    for word in [
        "一二三四五六七八九万筒条",
        "查花猪",
        "查大叫",
        "退税",
        "呼叫转移",
        "杠上花",
        "十八罗汉",
        "清龙七对",
    ]:
        assert all(ord(c) in cjk.bold_coverage and ord(c) in cjk.coverage for c in word), word
    assert "SIL OPEN FONT LICENSE" in (FONT_DIR / "OFL.txt").read_text(encoding="utf-8")


# --- encoders ---------------------------------------------------------------------------


def test_encoders_give_png_and_jpeg_bytes() -> None:
    img = render_tiles([1, 2, 3])
    assert encode_png(img).startswith(b"\x89PNG")
    assert encode_jpeg(img).startswith(b"\xff\xd8")
    with pytest.raises(ValueError, match="quality"):
        encode_jpeg(img, quality=0)


def test_a_label_template_with_unknown_fields_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="wall"):
        TableLabels(wall="{count} left")
    with pytest.raises(ValueError, match="void_label"):
        render_hand(parse_tiles("123m"), void_suit=Suit.DOTS, void_label="no {void}")


def test_characters_no_font_has_draw_as_placeholders_not_errors() -> None:
    img = render_table(TableView((SeatView("\U000f0001 🀄 ქართ", 13),) * 4, wall_remaining=10,
                                 labels=TableLabels(title="☃")))
    assert fits(img)


def test_an_empty_hand_with_only_melds_draws() -> None:
    img = render_hand([], melds=[Meld(MeldKind.PUNG, 1)] * 4)
    assert fits(img)
