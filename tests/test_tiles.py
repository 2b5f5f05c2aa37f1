"""The notation: every spelling RULES.md and issue 2 allow, exact round trips, specific errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.tiles import (
    ALL_TILES,
    DescribedHand,
    HandError,
    Meld,
    MeldKind,
    Situation,
    check_tiles,
    format_hand,
    format_tiles,
    parse_hand,
    parse_tile,
    parse_tiles,
    starts_like_tiles,
    tile_name,
    tile_zh,
)

tiles_strategy = st.lists(st.sampled_from(ALL_TILES), max_size=20)
melds_strategy = st.lists(
    st.builds(Meld, st.sampled_from(list(MeldKind)), st.sampled_from(ALL_TILES)), max_size=4
)


@st.composite
def described_hands(draw: st.DrawFn) -> DescribedHand:
    concealed = sorted(draw(st.lists(st.sampled_from(ALL_TILES), min_size=1, max_size=14)))
    win = draw(st.sampled_from(concealed))
    situations = frozenset(draw(st.sets(st.sampled_from(list(Situation)))))
    if Situation.KONG_REPLACEMENT in situations or Situation.HEAVENLY in situations:
        situations |= {Situation.SELF_DRAW}
    return DescribedHand(tuple(concealed), tuple(draw(melds_strategy)), win, situations)


@given(tiles_strategy)
def test_format_tiles_is_the_inverse_of_parse_tiles(tiles: list[int]) -> None:
    assert parse_tiles(format_tiles(tiles)) == tiles


@given(described_hands())
def test_format_hand_is_the_inverse_of_parse_hand(hand: DescribedHand) -> None:
    assert parse_hand(format_hand(hand)) == hand


def test_suit_spellings_are_equivalent() -> None:
    assert parse_tiles("123m456p55p") == parse_tiles("123万456筒55筒") == parse_tiles("123w 456t 55t")
    assert parse_tiles("1s9b") == parse_tiles("1条9索")
    assert parse_tiles("5饼") == parse_tiles("5p")


def test_a_hand_typed_as_people_type_it_in_a_chat() -> None:
    """Chinese numerals (the tiles' names), a Chinese input method's full-width forms and
    Unicode's tile characters all spell the same hand as the ASCII notation."""
    ascii_hand = parse_hand("123m 456m 789m 11p [222p] +1p 自摸")
    assert parse_hand("一二三万 四五六万 七八九万 一一筒 [二二二筒] +一筒 自摸") == ascii_hand
    assert parse_hand("自摸 一二三万 四五六万 七八九万 一一筒 [二二二筒] 胡一筒") == ascii_hand
    assert parse_hand("一万二万三万四万五万六万七万八万九万一筒一筒【二筒二筒二筒】＋一筒 自摸") == ascii_hand
    assert parse_hand("１２３ｍ　４５６ｍ　７８９Ｍ　１１ｐ　［２２２ｐ］　＋１ｐ　ＺＩＭＯ") == ascii_hand
    assert parse_hand("🀇🀈🀉🀊🀋🀌🀍🀎🀏🀙🀙 [🀚🀚🀚] +🀙 zimo") == ascii_hand
    assert parse_tiles("🀐🀘🀙🀡🀇🀏") == parse_tiles("19s19p19m")
    assert parse_tiles("幺条") == parse_tiles("1s")
    # a phone's emoji keyboard sends a style selector after each tile character
    assert parse_tiles("🀙\ufe0f🀚\ufe0f") == parse_tiles("12p")
    assert parse_hand("（５５５５ｐ）").melds == (Meld(MeldKind.CONCEALED_KONG, parse_tile("5p")),)


@pytest.mark.parametrize(
    ("text", "fragment", "position"),
    [
        ("123m🀄", "not a tile of Sichuan mahjong", 5),
        ("🀀🀁🀂", "not a tile of Sichuan mahjong", 1),
        ("一二三", "have no suit", 1),
        ("１２３ｍ　０ｐ", "'0' is not a tile number", 6),
        ("幺鸡", "'鸡' is not a suit", 2),
        ("123m 胡", "+ must be followed by one tile", 6),
    ],
)
def test_what_a_chat_types_wrongly_gets_a_specific_message(text: str, fragment: str, position: int) -> None:
    with pytest.raises(HandError) as info:
        parse_hand(text)
    assert fragment in info.value.message
    assert info.value.params["position"] == position


@pytest.mark.parametrize(
    ("text", "starts"),
    [("123m", True), ("  一万", True), ("一二三万 四五六筒", True), ("１２ｍ", True), ("🀙", True), ("🀄", True),
     ("[555p]", True), ("（5555p）", True), ("hello", False), ("自摸", False), ("", False), ("   ", False),
     ("三缺一", False), ("一起打麻将吗", False), ("二", False)],
)
def test_what_starts_like_a_hand(text: str, starts: bool) -> None:
    assert starts_like_tiles(text) is starts


def test_tile_names() -> None:
    assert [tile_name(t) for t in parse_tiles("19m5p9s")] == ["1m", "9m", "5p", "9s"]
    assert tile_zh(parse_tile("5p")) == "五筒"
    assert tile_zh(parse_tile("1m")) == "一万"


def test_hand_with_melds_win_tile_and_words() -> None:
    hand = parse_hand("[555p] (7777s) [1111m] 99m 2m +2m 杠上花")
    assert [m.kind for m in hand.melds] == [MeldKind.PUNG, MeldKind.CONCEALED_KONG, MeldKind.KONG]
    assert hand.win_tile == parse_tile("2m")
    assert parse_tiles("2m2m9m9m") == list(hand.concealed)
    assert hand.situations == {Situation.KONG_REPLACEMENT, Situation.SELF_DRAW}
    assert hand.tile_count == 13


def test_without_plus_the_last_tile_written_is_the_winning_tile() -> None:
    assert parse_hand("123m345m789m234p66p").win_tile == parse_tile("6p")
    assert parse_hand("66p 123m").win_tile == parse_tile("3m")


@pytest.mark.parametrize("word", ["ZiMo", "自摸", "tsumo"])
def test_situation_words_any_case_or_language(word: str) -> None:
    assert parse_hand(f"123m {word}").self_drawn


@pytest.mark.parametrize(
    ("text", "fragment", "position"),
    [
        ("123x", "'x' is not a suit", 4),
        ("123m 4?5p", "'?' is not a suit", 7),
        ("123m 45", "have no suit", 6),
        ("[556p]", "not a pung or kong", 1),
        ("(555p)", "needs four tiles", 1),
        ("[555p", "never closed", 1),
        ("+12m", "exactly one tile", 1),
        ("0m", "not a tile number", 1),
        ("123m hello", "unknown word 'hello'", 6),
        ("   ", "empty", 1),
    ],
)
def test_bad_notation_gets_a_specific_message(text: str, fragment: str, position: int) -> None:
    with pytest.raises(HandError) as info:
        parse_hand(text)
    assert info.value.code == "parse"
    assert fragment in info.value.message
    assert info.value.params["position"] == position


def test_counting_checks_run_in_rule_book_order() -> None:
    with pytest.raises(HandError, match="has 13") as info:
        check_tiles(parse_hand("123m456m789m123p5p"))
    assert info.value.params == {"expected": 14, "found": 13}
    with pytest.raises(HandError) as info:
        check_tiles(parse_hand("11111m2m456m789m55m"))
    assert info.value.code == "too_many_copies"
    with pytest.raises(HandError) as info:
        check_tiles(parse_hand("123m456p789s123m55m"))
    assert info.value.code == "three_suits"
    check_tiles(parse_hand("[5555p] 123m456m789m9m +9m"))
