"""The integer suit-key path (``suit_keys``, ``is_win_keys``, ``shanten_keys``) gives exactly the
answers of the tuple path and of the brute-force enumerator, with and without melds, and keys
updated tile by tile equal keys built from scratch."""

from __future__ import annotations

import random

import brute_force as bf
import pytest
from test_analysis import near_hand, random_hand

from engine.analysis import KEY_STEP, is_win, is_win_keys, meld_signature, shanten, shanten_keys, suit_keys
from engine.tiles import Meld, MeldKind, counts_of, parse_hand

MELD_SETS = [
    (),
    (Meld(MeldKind.PUNG, 13),),
    (Meld(MeldKind.CONCEALED_KONG, 4), Meld(MeldKind.PUNG, 13)),
    (Meld(MeldKind.PUNG, 1), Meld(MeldKind.KONG, 2), Meld(MeldKind.PUNG, 3)),
]


@pytest.mark.parametrize("k", range(4))
def test_keys_agree_with_the_tuple_path_and_brute_force(k: int) -> None:
    rng = random.Random(100 + k)
    melds = MELD_SETS[k]
    sig = meld_signature(melds)
    checked = wins = 0
    for i in range(3000):
        tiles = near_hand(rng, 4 - k, i % 3) if i % 4 else random_hand(rng, 14 - 3 * k, 1 + i % 3)
        if any(tiles.count(m.tile) + m.size > 4 for m in melds):
            continue
        c = counts_of(tiles)
        keys = suit_keys(c)
        expected = is_win(c, melds)
        assert is_win_keys(*keys, sig) == expected, sorted(tiles)
        if k == 0:
            assert expected == bf.is_win(tiles), sorted(tiles)
        wins += expected
        assert shanten_keys(*keys, k) == shanten(c, k), sorted(tiles)
        if i % 10 == 0:
            assert shanten_keys(*keys, k) == bf.shanten(tiles, k), sorted(tiles)
        tiles.remove(rng.choice(tiles))
        assert shanten_keys(*suit_keys(counts_of(tiles)), k) == shanten(counts_of(tiles), k)
        checked += 1
    assert checked > 1000 and wins > 200  # the generators really produce melded wins too


def test_a_meld_of_a_third_suit_makes_a_two_suit_hand_no_win() -> None:
    hand = parse_hand("123m456m789p11p [222s]")
    keys = suit_keys(counts_of(hand.concealed))
    assert not is_win_keys(*keys, meld_signature(hand.melds))
    assert is_win_keys(*keys, meld_signature([Meld(MeldKind.PUNG, 9)]))


def test_keys_updated_by_steps_equal_keys_built_from_scratch() -> None:
    rng = random.Random(5)
    counts = [0] * 27
    keys = [0, 0, 0]
    for _ in range(2000):
        t = rng.randrange(27)
        if counts[t] < 4 and (sum(counts) < 14 or not counts[t]):
            counts[t] += 1
            keys[t // 9] += KEY_STEP[t]
        elif counts[t]:
            counts[t] -= 1
            keys[t // 9] -= KEY_STEP[t]
        assert tuple(keys) == suit_keys(counts)


def test_bad_counts_are_refused_when_keys_are_built() -> None:
    with pytest.raises(ValueError, match="27 whole numbers"):
        suit_keys([5] + [0] * 26)
    with pytest.raises(ValueError, match="27 whole numbers"):
        suit_keys([0] * 26)
