"""The reading of a photographed hand that wins, on readings arranged by hand.

Each hand below was checked against RULES.md §4 by hand: four sets and a pair (a kong is a set)
or seven pairs, in at most two suits.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from engine.tiles import parse_tile, parse_tiles
from vision.win_reading import MIN_ALTERNATIVE, winning_reading, wins


@dataclass(frozen=True)
class Read:
    tile: int
    confidence: float
    alternatives: tuple[tuple[int, float], ...] = ()


def read(notation: str, **unsure: tuple[float, list[tuple[str, float]]]) -> list[Read]:
    """Tiles read surely, except those named ``t<index>`` with (confidence, alternatives)."""
    tiles = []
    for i, tile in enumerate(parse_tiles(notation)):
        confidence, alternatives = unsure.get(f"t{i}", (0.99, []))
        tiles.append(Read(tile, confidence, tuple((parse_tile(a), p) for a, p in alternatives)))
    return tiles


def test_what_wins() -> None:
    assert wins(parse_tiles("123456789m12355p"))  # 123m 456m 789m 123p 55p
    assert wins(parse_tiles("11112233445566m"))  # seven pairs, 1m four times as two pairs
    assert wins(parse_tiles("1111234567m78999p"))  # kong 1111m, 234m 567m 789p 99p: 15 tiles
    assert not wins(parse_tiles("123456789m1235p5s"))  # three suits
    assert not wins(parse_tiles("123456789m1235p"))  # 13 tiles
    assert not wins(parse_tiles("1111234567m78999p5p"))  # 16 tiles need two kongs


def test_a_hand_that_wins_as_read_is_left_alone() -> None:
    assert winning_reading(read("123456789m12355p", t12=(0.6, [("3p", 0.3)]))) is None


def test_one_misread_tile_is_put_right_by_its_second_choice() -> None:
    # 5p read as 3p: 123m 456m 789m 123p 3p5p is no win; 5p makes the pair 55p.
    found = winning_reading(read("123456789m12335p", t12=(0.6, [("6p", 0.05), ("5p", 0.3)])))
    assert found is not None
    assert found.tiles == tuple(parse_tiles("123456789m12355p"))
    assert found.changed == (12,)
    assert abs(found.odds - 0.3 / 0.6) < 1e-9


def test_the_more_probable_of_two_winning_readings_is_chosen() -> None:
    # 234m 567m 111p 55p 78p waits on 6p or 9p; the last tile was read as 4p.
    either = "234567m11155784p"
    found = winning_reading(read(either, t13=(0.5, [("6p", 0.3), ("9p", 0.1)])))
    assert found is not None and found.tiles[13] == parse_tile("6p")
    found = winning_reading(read(either, t13=(0.5, [("9p", 0.3), ("6p", 0.1)])))
    assert found is not None and found.tiles[13] == parse_tile("9p")


def test_two_misread_tiles_need_two_changes() -> None:
    # 123456789m 123p 55p with 1m read as 9p (index 13) and one 5p as 3p (index 11):
    # 23456789m 1233p 5p 9p, and neither change alone wins.
    tiles = read("23456789m123359p", t11=(0.6, [("5p", 0.3)]), t13=(0.7, [("1m", 0.2)]))
    found = winning_reading(tiles)
    assert found is not None and found.changed == (11, 13)
    assert sorted(found.tiles) == parse_tiles("123456789m12355p")
    assert winning_reading(tiles, max_changes=1) is None


def test_a_kong_in_the_row_is_read_as_a_kong() -> None:
    # 1111m 234m 567m 789p 99p, one 9p read as 4p: 1111234567m 4789p 9p.
    found = winning_reading(read("1111234567m47899p", t10=(0.55, [("9p", 0.25)])))
    assert found is not None and found.changed == (10,) and found.tiles[10] == parse_tile("9p")


def test_no_reading_is_offered_from_noise_or_out_of_reach() -> None:
    # The only winning alternative is below what counts as a reading.
    assert winning_reading(read("123456789m12335p", t12=(0.9, [("5p", MIN_ALTERNATIVE / 2)]))) is None
    # No alternative of any tile makes a win (every tile read surely, no alternatives).
    assert winning_reading(read("123456789m12335p")) is None
    # 13 tiles: a tile the detector missed cannot be found by renaming the others.
    assert winning_reading(read("123456789m1235p", t12=(0.5, [("5p", 0.4)]))) is None


@given(st.lists(st.integers(0, 26), min_size=14, max_size=14), st.integers(0, 13), st.integers(0, 26))
def test_a_reading_offered_always_wins_and_changes_only_unsure_tiles(tiles: list[int], at: int, alt: int) -> None:
    reading = [Read(t, 0.95) for t in tiles]
    reading[at] = Read(tiles[at], 0.5, ((alt, 0.4),))
    found = winning_reading(reading)
    if found is not None:
        assert wins(found.tiles)
        assert found.changed == (at,) and found.tiles[at] == alt


def test_the_photo_correction_starts_from_the_reading_that_wins() -> None:
    from bot.i18n import translator
    from bot.score.photo import _caption, fixing_from_photo
    from vision.pipeline import Recognition, RecognizedTile

    tiles = parse_tiles("123456789m12335p")
    unsure = {12: (0.6, ((parse_tile("5p"), 0.3),))}  # the second 3p is a 5p: 123m 456m 789m 123p 55p
    result = Recognition(tuple(
        RecognizedTile(t, unsure.get(i, (0.99,))[0], (60.0 * i, 0.0, 60.0 * i + 60, 80.0), 0, unsure.get(i, (0, ()))[1])
        for i, t in enumerate(tiles)
    ), ignored=0, width=1000, height=100)
    fixing = fixing_from_photo(7, result, winning_reading(result.tiles), translator("en"))
    assert sorted(e.tile for e in fixing.entries) == parse_tiles("123456789m12355p")
    first = fixing.entries[fixing.unsure_first()[0]]
    assert first.tile == parse_tile("5p") and first.unsure and first.confidence == 0.3
    assert _caption(fixing, translator("en")).startswith(
        "Read as it is, this hand does not win. The closest reading that wins changes 3p → 5p: check the "
        "tiles marked ?.")
    assert "不成胡" in _caption(fixing_from_photo(7, result, winning_reading(result.tiles), translator("zh")),
                                translator("zh"))
    as_read = fixing_from_photo(7, result, None, translator("en"))
    assert as_read.notice is None and sorted(e.tile for e in as_read.entries) == tiles
