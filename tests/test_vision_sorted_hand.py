"""A hand that reads sorted downwards was read from the wrong side, when the tiles are unsure
which way up they stand: people sort the tiles they hold from 1 up to 9.

Boxes and readings worked out by hand: a level row of nine tiles, 20 px wide, in a 200 x 40
picture."""

from __future__ import annotations

import numpy as np

from vision.layout import steps_within_suits
from vision.pipeline import SORTED_STEPS, SURE_TURN, _turn_and_order

ROW = np.asarray([[10 + 20 * i, 5, 30 + 20 * i, 33] for i in range(9)], dtype=np.float32)
UNSURE = np.tile([0.0, -0.3], (9, 1))  # the tiles lean upright, but weakly (mean top 0.3 long)
SURE = np.tile([0.0, -0.9], (9, 1))


def read(classes: list[int], tops: np.ndarray) -> tuple[int, list[int]]:
    turns, order = _turn_and_order(tops, ROW, np.asarray(classes), 200, 40)
    return turns, [classes[i] for i, _ in order]


def test_steps_count_only_neighbours_of_one_suit() -> None:
    assert steps_within_suits([0, 1, 2, 9, 10, 18]) == 3  # 1m2m3m 1p2p 1s
    assert steps_within_suits([2, 1, 0, 10, 9]) == -3
    assert steps_within_suits([0, 9, 1, 10, 2]) == 0  # suits alternate: no step counts
    assert steps_within_suits([4, 4, 4]) == 0


def test_a_hand_sorted_downwards_with_an_unsure_vote_is_read_half_turned() -> None:
    hand = [8, 7, 6, 5, 3, 2, 1, 0, 0]  # 9m 8m 7m 6m 4m 3m 2m 1m 1m: falls 7 steps
    assert np.hypot(*UNSURE.mean(axis=0)) < SURE_TURN and steps_within_suits(hand) <= -SORTED_STEPS
    turns, reading = read(hand, UNSURE)
    assert turns == 2
    assert reading == hand[::-1]


def test_a_sure_vote_or_an_unsorted_hand_keeps_the_reading() -> None:
    falling = [8, 7, 6, 5, 3, 2, 1, 0, 0]
    assert read(falling, SURE) == (0, falling)
    shuffled = [3, 8, 0, 6, 1, 7, 2, 5, 0]  # rises 4 and falls 4
    assert read(shuffled, UNSURE) == (0, shuffled)
    rising = falling[::-1]
    assert read(rising, UNSURE) == (0, rising)


def test_a_short_fall_is_not_enough() -> None:
    hand = [0, 9, 18, 2, 1, 11, 10, 20, 19]  # three falls, each in another suit
    assert steps_within_suits(hand) == -3 > -SORTED_STEPS
    assert read(hand, UNSURE) == (0, hand)
