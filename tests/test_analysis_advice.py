"""best_discards: the advice given for a 14-tile hand that is not a win yet."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis import best_discards, shanten
from engine.tiles import counts_of, parse_tiles, tile_name


def names(tiles: list[int]) -> list[str]:
    return [tile_name(t) for t in tiles]


def test_a_hand_one_discard_from_ready_names_that_discard() -> None:
    assert best_discards(counts_of(parse_tiles("123m456m789m24p55p9p"))) == (0, parse_tiles("9p"))


def test_ties_list_every_tile_in_tile_order() -> None:
    left, tiles = best_discards(counts_of(parse_tiles("123m456m789m19p555p")))
    assert left == 0
    assert names(tiles) == ["1p", "9p"]


def test_melds_shrink_the_hand() -> None:
    assert best_discards(counts_of(parse_tiles("1122m5p")), meld_count=3) == (0, parse_tiles("5p"))


def test_a_hand_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="14 concealed tiles"):
        best_discards(counts_of(parse_tiles("123m")))


hands = st.lists(st.integers(0, 26), min_size=14, max_size=14).filter(
    lambda tiles: max(counts_of(tiles)) <= 4
)


@settings(max_examples=60, deadline=None)
@given(hands)
def test_the_best_discard_is_never_beaten_and_every_listed_tile_reaches_it(tiles: list[int]) -> None:
    counts = counts_of(tiles)
    left, best = best_discards(counts)
    for tile in set(tiles):
        rest = list(counts)
        rest[tile] -= 1
        assert shanten(rest) >= left
        assert (shanten(rest) == left) == (tile in best)
