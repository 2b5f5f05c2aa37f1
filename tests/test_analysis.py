"""Hand analysis: RULES.md §4 wins, the rule book's worked hands, and agreement with an independent
brute-force enumerator (tests/brute_force.py) and with PyPI ``mahjong`` where the rules coincide."""

from __future__ import annotations

import itertools
import random

import brute_force as bf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mahjong.agari import Agari
from mahjong.shanten import Shanten

from engine.analysis import (
    Decomposition,
    TileSet,
    decompositions,
    effective_tiles,
    is_seven_pairs,
    is_win,
    shanten,
    waits,
)
from engine.tiles import Meld, MeldKind, counts_of, parse_hand, parse_tiles, tile_name


def counts(text: str) -> list[int]:
    return counts_of(parse_tiles(text))


def names(tiles: list[int]) -> list[str]:
    return [tile_name(t) for t in tiles]


# --- the rule book ---------------------------------------------------------------------------

RULEBOOK_WINS = [  # RULES.md §9, concealed tiles with melds
    "123m345m789m234p66p",
    "111m333m444m222p66p",
    "11224466m558899p",
    "11112244m558899p",
    "11224444557799m",
    "123m123m123m789m99m",
    "123333m45566799s",
    "66p [111m] [333m] [444m] [222p]",
    "123m456m789m77p (5555p)",
    "234m567m345p678p11p",
]


@pytest.mark.parametrize("text", RULEBOOK_WINS)
def test_every_worked_example_of_the_rule_book_is_a_win(text: str) -> None:
    hand = parse_hand(text)
    assert is_win(counts_of(hand.concealed), hand.melds)
    assert shanten(counts_of(hand.concealed), len(hand.melds)) == -1


@pytest.mark.parametrize(
    "text",
    [
        "123m456m789m12p55p",  # a run short
        "123m456m789m234p6p7p",  # no pair
        "123m456p789s111m22m",  # complete shape, three suits
        "11m22p33s44m55p66s77m",  # seven pairs in three suits
        "1122334455667m",  # thirteen tiles
        "123m456m789m234p66p6p",  # fifteen tiles
        "111m222m333m44468m",  # fourteen tiles, no reading
    ],
)
def test_known_non_wins(text: str) -> None:
    assert not is_win(counts(text))


def test_a_melded_hand_needs_fewer_concealed_tiles_and_no_seven_pairs() -> None:
    pung = (Meld(MeldKind.PUNG, 0),)
    assert is_win(counts("234m567m11p"), (*pung, Meld(MeldKind.KONG, 10)))
    assert not is_win(counts("234m567m11p"), pung)  # eleven concealed tiles are needed
    assert not is_win(counts("11224466m558p"), pung)
    assert not is_win(counts("234m567m11p"), (*pung, Meld(MeldKind.PUNG, 18)))  # third suit by meld


def test_seven_pairs_count_a_four_of_a_kind_as_two_pairs() -> None:
    assert is_seven_pairs(counts("11112244m558899p"))
    assert is_seven_pairs(counts("11224444557799m"))
    assert is_win(counts("11112222333344m"))
    assert not is_seven_pairs(counts("1112244m558899p"))
    assert not is_seven_pairs(counts("11224466m55889p"))
    assert shanten(counts("1111224m558899p")) == 0
    assert names(waits(counts("1111224m558899p"))) == ["4m"]


def test_decompositions_list_every_reading() -> None:
    assert decompositions(counts("111222333m99m")) == [
        Decomposition(8, (TileSet("pung", 0), TileSet("pung", 1), TileSet("pung", 2))),
        Decomposition(8, (TileSet("run", 0), TileSet("run", 0), TileSet("run", 0))),
    ]
    assert len(decompositions(counts("11122233344455m"))) > 2
    assert decompositions(counts("123m456m789m12p55p")) == []
    assert decompositions(counts("11224466m558899p")) == []  # seven pairs only: not standard
    assert TileSet("run", 3).tiles == (3, 4, 5)


def test_shanten_and_waits_of_known_hands() -> None:
    assert shanten(counts("1112345678999m")) == 0
    assert len(waits(counts("1112345678999m"))) == 9
    assert shanten(counts("1111m234p567p789p")) == 1  # the only wait would be a fifth 1m
    assert waits(counts("1111m234p567p789p")) == []
    assert names(waits(counts("123m456m789m55p12p"))) == ["3p"]
    # The only wait is 4p, and the pung holds the other three: no 4p can come.
    assert waits(counts("123m456m789m4p"), (Meld(MeldKind.PUNG, 12),)) == []
    assert names(waits(counts("123m456m789m4p"), (Meld(MeldKind.PUNG, 13),))) == ["4p"]
    assert names(effective_tiles(counts("123m456m789m1p4p55p"))) == ["1p", "2p", "3p", "4p", "5p", "6p"]
    assert shanten(counts("19m19p1s"), meld_count=2) >= 1  # short hands count missing tiles as dead


def test_a_wait_bringing_a_third_suit_is_no_wait() -> None:
    assert waits(counts("123m456m789p11p55s")) == []
    assert waits(counts("123m456m78m11p"), (Meld(MeldKind.PUNG, 18),)) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: is_win([0] * 26), "27 whole numbers"),
        (lambda: is_win([5] + [0] * 26), "27 whole numbers"),
        (lambda: shanten([-1] + [0] * 26), "27 whole numbers"),
        (lambda: shanten(counts("123456789m123456p")), "at most 14"),
        (lambda: shanten(counts("1m"), meld_count=5), "meld_count"),
        (lambda: waits(counts("123456789m11p")), "one tile short"),
        (lambda: effective_tiles(counts("123456789m11p555s")), "waiting to draw"),
    ],
)
def test_bad_input_gets_a_specific_error(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# --- against the brute-force enumerator ------------------------------------------------------


def random_hand(rng: random.Random, size: int, suits: int) -> list[int]:
    wall = [t for t in range(9 * suits) for _ in range(4)]
    return rng.sample(wall, size)


def winning_hand(rng: random.Random, sets: int) -> list[int]:
    """A random standard winning shape in at most two suits (four copies at most)."""
    suits = rng.sample(range(3), 2)
    while True:
        tiles: list[int] = []
        for _ in range(sets):
            s = rng.choice(suits) * 9
            if rng.random() < 0.4:
                tiles += [s + rng.randrange(9)] * 3
            else:
                r = s + rng.randrange(7)
                tiles += [r, r + 1, r + 2]
        p = rng.choice(suits) * 9 + rng.randrange(9)
        tiles += [p, p]
        if max(tiles.count(t) for t in tiles) <= 4:
            return tiles


def near_hand(rng: random.Random, sets: int, changes: int) -> list[int]:
    """A winning shape with a few tiles swapped for random ones: low shanten, many fours."""
    tiles = winning_hand(rng, sets)
    for _ in range(changes):
        tiles.remove(rng.choice(tiles))
        candidates = [t for t in range(27) if tiles.count(t) < 4 and t // 9 in {x // 9 for x in tiles}]
        tiles.append(rng.choice(candidates))
    return tiles


def test_win_and_decompositions_match_brute_force_on_many_hands() -> None:
    rng = random.Random(20260)
    wins = 0
    for i in range(20000):
        kind = i % 4
        if kind == 0:
            tiles = random_hand(rng, 14, 1 + i % 3)
        elif kind == 1:
            tiles = winning_hand(rng, 4)
        else:
            tiles = near_hand(rng, 4, kind - 1)
        c = counts_of(tiles)
        expected = bf.is_win(tiles)
        assert is_win(c) == expected, sorted(tiles)
        readings = {(d.pair, tuple((s.kind, s.first) for s in d.sets)) for d in decompositions(c)}
        assert readings == bf.all_groupings(sorted(tiles)), sorted(tiles)
        assert len(readings) == len(decompositions(c))
        assert is_seven_pairs(c) == bf.is_seven_pairs(tiles)
        wins += expected
    assert wins > 5000  # the generators really do produce wins


def test_waits_match_brute_force_on_many_hands() -> None:
    rng = random.Random(7)
    kongs = (Meld(MeldKind.CONCEALED_KONG, 4), Meld(MeldKind.PUNG, 13))
    for i in range(4000):
        k = i % 3
        tiles = near_hand(rng, 4 - k, i % 2) if i % 5 else random_hand(rng, 14 - 3 * k, 2)
        tiles.remove(rng.choice(tiles))
        melds = kongs[:k]
        if any(tiles.count(m.tile) + m.size > 4 for m in melds):
            continue
        got = waits(counts_of(tiles), melds)
        assert got == bf.waits(tiles, [m.tile for m in melds], [m.size for m in melds]), sorted(tiles)


@pytest.mark.parametrize(("melds", "hands"), [(0, 250), (1, 400), (2, 1200), (3, 3000)])
def test_shanten_matches_brute_force(melds: int, hands: int) -> None:
    rng = random.Random(melds)
    for i in range(hands):
        size = 13 - 3 * melds + i % 2
        if i % 3 == 0:
            tiles = random_hand(rng, size, 2 + (i % 2))
        else:
            tiles = near_hand(rng, 4 - melds, 1 + i % 3)
            if i % 2 == 0:
                tiles.remove(rng.choice(tiles))
        assert shanten(counts_of(tiles), melds) == bf.shanten(tiles, melds), sorted(tiles)


# --- against PyPI mahjong --------------------------------------------------------------------


def test_shanten_and_win_agree_with_pypi_mahjong_where_the_rules_coincide() -> None:
    """``mahjong`` does not count a four-of-a-kind as two pairs in 七对 and allows three suits."""
    rng = random.Random(34)
    compared = 0
    for i in range(15000):
        tiles = random_hand(rng, 13 + i % 2, 3) if i % 2 else near_hand(rng, 4, 1 + i % 3)[: 13 + i % 2]
        c = counts_of(tiles)
        c34 = [*c, 0, 0, 0, 0, 0, 0, 0]
        if max(c) >= 3:  # a four, now or after one draw, is two pairs for us and not for mahjong
            regular = Shanten.calculate_shanten_for_regular_hand(c34)
            assert shanten(c) == min(regular, 6 - sum(n // 2 for n in c)), sorted(tiles)
        else:
            assert shanten(c) == Shanten.calculate_shanten(c34, use_kokushi=False), sorted(tiles)
        if len(tiles) == 14 and 4 not in c and len({t // 9 for t in tiles}) <= 2:
            assert is_win(c) == Agari.is_agari(c34), sorted(tiles)
        compared += 1
    assert compared == 15000


# --- properties ------------------------------------------------------------------------------

two_suit_hands = (
    st.integers(0, 2)
    .flatmap(lambda void: st.lists(st.sampled_from([t for t in range(27) if t // 9 != void]), min_size=13, max_size=13))
    .filter(lambda tiles: all(tiles.count(t) <= 4 for t in tiles))
)


@settings(max_examples=300, deadline=None)
@given(two_suit_hands)
def test_waits_are_exactly_the_winning_draws_and_mean_ready(tiles: list[int]) -> None:
    c = counts_of(tiles)
    winning = [t for t in range(27) if c[t] < 4 and is_win(counts_of([*tiles, t]))]
    assert waits(c) == winning
    assert (shanten(c) == 0) == bool(winning)


@settings(max_examples=300, deadline=None)
@given(two_suit_hands, st.integers(0, 26))
def test_one_draw_moves_shanten_by_at_most_one(tiles: list[int], draw: int) -> None:
    c = counts_of(tiles)
    if c[draw] == 4:
        return
    before = shanten(c)
    after = shanten(counts_of([*tiles, draw]))
    assert after in (before, before - 1)
    assert (after < before) == (draw in effective_tiles(c))
    assert (after == -1) == is_win(counts_of([*tiles, draw]))
    for discard in set(tiles):
        rest = list(tiles)
        rest.remove(discard)
        assert shanten(counts_of(rest)) in (before, before + 1)


def test_the_fast_suit_table_never_needs_a_fifth_copy_where_it_is_used() -> None:
    """Shapes without a four skip the four-copy cap; compare them with the capped DP."""
    from engine.analysis import _kept_capped, _kept_uncapped

    rng = random.Random(11)
    small = [v for v in itertools.product(range(4), repeat=9) if 0 < sum(v) <= 5]
    dense = []
    while len(dense) < 400:
        v = [0] * 9
        for r in rng.sample([r for r in range(9) for _ in range(3)], rng.randrange(7, 15)):
            v[r] += 1
        dense.append(tuple(v))
    for v in small + dense:
        assert _kept_uncapped(v) == _kept_capped(v), v
