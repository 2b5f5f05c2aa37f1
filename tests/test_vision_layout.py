"""Reading order of tile boxes: rows at an angle, two rows, a column."""

from __future__ import annotations

import numpy as np

from vision.layout import hand_members, one_box_per_tile, reading_order, turn_boxes, upright_turns


def row_of_boxes(count: int, angle_degrees: float, origin=(100.0, 300.0), size=(30.0, 42.0)) -> np.ndarray:
    angle = np.radians(angle_degrees)
    step = np.array([np.cos(angle), np.sin(angle)]) * size[0] * 1.05
    centres = np.array(origin) + np.arange(count)[:, None] * step
    half = np.array(size) / 2
    return np.hstack([centres - half, centres + half])


def test_tilted_row_reads_from_its_left_end() -> None:
    for angle in (-30.0, -10.0, 0.0, 15.0, 35.0):
        boxes = row_of_boxes(14, angle)
        shuffled = np.random.default_rng(1).permutation(14)
        order = reading_order(boxes[shuffled])
        assert [int(shuffled[i]) for i, _ in order] == list(range(14))
        assert {row for _, row in order} == {0}


def test_two_rows_top_row_first() -> None:
    top = row_of_boxes(5, 0.0, origin=(100.0, 100.0))
    bottom = row_of_boxes(9, 0.0, origin=(100.0, 150.0))
    order = reading_order(np.vstack([bottom, top]))
    assert [i for i, _ in order] == [9, 10, 11, 12, 13, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert [row for _, row in order] == [0] * 5 + [1] * 9


def test_column_reads_top_to_bottom() -> None:
    boxes = row_of_boxes(6, 90.0, size=(42.0, 30.0))
    assert [i for i, _ in reading_order(boxes[::-1])] == [5, 4, 3, 2, 1, 0]


def test_empty() -> None:
    assert reading_order(np.zeros((0, 4))) == []


def test_loose_tiles_away_from_the_hand_are_left_out() -> None:
    hand = row_of_boxes(14, 12.0, origin=(80.0, 400.0))
    loose = np.array([[300.0, 40.0, 330.0, 82.0], [420.0, 90.0, 450.0, 132.0]])
    members = hand_members(np.vstack([hand, loose]))
    assert members.tolist() == [True] * 14 + [False, False]


def test_a_winning_tile_set_a_little_apart_stays_in_the_hand() -> None:
    hand = row_of_boxes(13, 0.0)
    apart = hand[-1:] + np.array([45.0, 0.0, 45.0, 0.0])
    assert hand_members(np.vstack([hand, apart])).all()


def test_melds_in_a_second_row_stay() -> None:
    boxes = np.vstack([row_of_boxes(11, 0.0, origin=(100.0, 300.0)), row_of_boxes(3, 0.0, origin=(100.0, 250.0))])
    assert hand_members(boxes).all()


def test_two_tiles_alone_are_kept() -> None:
    assert hand_members(row_of_boxes(2, 0.0) + np.array([0.0, 0.0, 0.0, 0.0])).all()


def test_a_row_upside_down_is_turned_to_read_as_its_player_sees_it() -> None:
    boxes = row_of_boxes(6, 0.0)
    tops_down = np.tile([0.0, 0.9], (6, 1))  # every tile's top points down the picture, surely
    turns = upright_turns(tops_down)
    assert turns == 2
    order = reading_order(turn_boxes(boxes, turns, 800.0, 600.0))
    assert [i for i, _ in order] == [5, 4, 3, 2, 1, 0]


def test_unsure_tiles_do_not_turn_the_picture() -> None:
    assert upright_turns(np.tile([0.0, 0.04], (14, 1))) == 0
    assert upright_turns(np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0]])) == 0


def heap_of_discards(origin: tuple[float, float]) -> np.ndarray:
    """Five tiles lying about, touching one another, at odd places (not a straight row)."""
    x, y = origin
    offsets = [(0.0, 0.0), (28.0, 12.0), (55.0, -8.0), (80.0, 15.0), (108.0, 2.0)]
    return np.array([[x + dx, y + dy, x + dx + 30.0, y + dy + 42.0] for dx, dy in offsets])


def test_a_heap_of_touching_discards_beside_a_hand_row_is_left_out() -> None:
    hand = row_of_boxes(14, 3.0, origin=(60.0, 400.0))
    heap = heap_of_discards((150.0, 220.0))
    members = hand_members(np.vstack([hand, heap]))
    assert members.tolist() == [True] * 14 + [False] * 5


def tilted_row_as_detected(count: int, angle_degrees: float, origin=(100.0, 500.0), size=(30.0, 42.0)) -> np.ndarray:
    """A row of touching tiles running at an angle, each boxed upright around the turned tile.

    A detector's boxes are upright, so a turned tile's box is wider than the tile: at 40 degrees
    these boxes are about 50 px wide while the tiles stand 31.5 px apart along the row.
    """
    angle = np.radians(angle_degrees)
    step = np.array([np.cos(angle), np.sin(angle)]) * size[0] * 1.05
    centres = np.array(origin) + np.arange(count)[:, None] * step
    cos, sin = abs(np.cos(angle)), abs(np.sin(angle))
    half = np.array([size[0] * cos + size[1] * sin, size[0] * sin + size[1] * cos]) / 2
    return np.hstack([centres - half, centres + half])


def test_discards_beyond_a_hand_row_at_an_angle_are_left_out() -> None:
    hand = tilted_row_as_detected(14, -40.0)
    heap = heap_of_discards((420.0, 380.0))  # some four tile heights off the row's line, by its right end
    members = hand_members(np.vstack([hand, heap]))
    assert members.tolist() == [True] * 14 + [False] * 5


def test_a_second_box_across_two_tiles_of_a_row_at_an_angle_is_dropped() -> None:
    hand = tilted_row_as_detected(13, 35.0)
    between = (hand[5] + hand[6]) / 2  # overlaps each neighbour by IoU 0.43: suppression (0.45) keeps it
    boxes = np.vstack([hand, between])
    assert one_box_per_tile(boxes, hand_members(boxes)).tolist() == [True] * 13 + [False]


def test_two_rows_one_above_the_other_keep_every_tile() -> None:
    rows = np.vstack([row_of_boxes(7, 0.0, origin=(100.0, 300.0)), row_of_boxes(7, 0.0, origin=(100.0, 345.0))])
    assert one_box_per_tile(rows, np.ones(14, dtype=bool)).all()


def test_the_heap_stays_when_there_is_no_clear_hand_row() -> None:
    short_row = row_of_boxes(8, 0.0, origin=(60.0, 400.0))
    assert hand_members(np.vstack([short_row, heap_of_discards((150.0, 220.0))])).all()


def test_a_grid_of_rows_is_all_kept() -> None:
    rows = [row_of_boxes(count, 0.0, origin=(60.0, 100.0 + 60.0 * r)) for r, count in enumerate((12, 12, 4))]
    assert hand_members(np.vstack(rows)).all()


def test_a_row_whose_tiles_lean_the_same_way_unsurely_is_still_turned() -> None:
    tops = np.tile([0.0, 0.45], (12, 1))  # each tile only somewhat sure its top points down
    tops[:2] = [0.0, -0.2]  # and a few think the other way
    assert upright_turns(tops) == 2


def test_a_minority_pointing_one_way_does_not_turn_the_picture() -> None:
    tops = np.vstack([np.tile([1.0, 0.0], (4, 1)), np.tile([0.0, 0.05], (4, 1)), np.tile([0.0, -0.05], (4, 1))])
    assert upright_turns(tops) == 0


def test_two_touching_rows_at_a_steep_angle_read_row_by_row() -> None:
    """Two rows seen from a low angle at 60 degrees: the camera squeezes the rows together, so
    every tile's nearest neighbour is beside it in the other row (28 px across against 31.5 px along). The
    rows still run the way the tiles lie as a whole."""
    angle = np.radians(60.0)
    across = np.array([-np.sin(angle), np.cos(angle)])  # from the first row towards the second
    first = tilted_row_as_detected(8, 60.0, origin=(200.0, 100.0), size=(30.0, 26.0))
    second = tilted_row_as_detected(7, 60.0, origin=tuple(np.array([200.0, 100.0]) + 28 * across),
                                    size=(30.0, 26.0))
    boxes = np.vstack([first, second])
    assert reading_order(boxes) == [(i, 0) for i in range(8)] + [(8 + i, 1) for i in range(7)]
    members = hand_members(boxes)
    assert members.all()
    assert one_box_per_tile(boxes, members).all()
