"""The advice a person gets about a photo: when it shows no tiles, the hand it offers to type must
itself be a hand /score values, in both languages (a broken example would send them to a second
error); when its tiles are small and some are unsure, a closer photo is suggested."""

from __future__ import annotations

import re

from bot.i18n import LANGUAGES, translator
from bot.score.photo import VISION_ERRORS, fixing_from_photo
from engine.rules import RuleSet
from engine.scoring import score
from engine.tiles import parse_tiles, parse_typed_hand
from vision.pipeline import SMALL_TILE_LENGTH, Recognition, RecognizedTile


def test_the_typed_example_after_no_tiles_or_small_ones_is_a_winning_hand_in_every_language() -> None:
    for language in LANGUAGES:
        for code in ("no_tiles", "too_small"):
            text = translator(language).t(VISION_ERRORS[code], px=13)
            typed = re.search(r"/score (\S+)", text)
            assert typed is not None, (language, text)
            hand, _ = parse_typed_hand(typed[1])
            assert score(hand, RuleSet()).multiplier >= 1  # raises for a hand that does not win


def test_tiles_too_small_to_read_are_told_their_length_and_to_come_closer() -> None:
    assert translator("en").t(VISION_ERRORS["too_small"], px=13).startswith(
        "I could not read any tile in that photo: what look like tiles are only about 13 px long. "
        "Photograph the hand closer")
    chinese = translator("zh").t(VISION_ERRORS["too_small"], px=13)
    assert "13" in chinese and "Photograph" not in chinese


def photo_of(long_sides: list[float], confidences: list[float]) -> Recognition:
    """A reading of 1m 2m 3m... whose tiles' boxes are long_sides tall (and three quarters as wide)."""
    tiles = parse_tiles("123456789m12345p")[: len(long_sides)]
    boxes = [(100.0 * i, 0.0, 100.0 * i + 0.75 * side, side) for i, side in enumerate(long_sides)]
    return Recognition(tuple(RecognizedTile(t, c, b, 0) for t, c, b in zip(tiles, confidences, boxes, strict=True)),
                       ignored=0, width=2000, height=200)


def test_the_tile_length_is_the_median_long_side() -> None:
    assert photo_of([30, 40, 50], [0.99] * 3).tile_length == 40
    assert photo_of([30, 40, 50, 70], [0.99] * 4).tile_length == 45
    assert Recognition((), ignored=0, width=10, height=10).tile_length == 0
    assert SMALL_TILE_LENGTH == 50


def test_small_unsure_tiles_get_the_advice_to_come_closer() -> None:
    small = photo_of([34] * 14, [0.99] * 13 + [0.5])
    assert small.small_tiles
    english = fixing_from_photo(1, small, None, translator("en")).notice
    assert english is not None and "about 34 px" in english and "closer" in english
    chinese = fixing_from_photo(1, small, None, translator("zh")).notice
    assert chinese is not None and "34" in chinese and "closer" not in chinese


def test_no_advice_for_sure_tiles_or_big_ones() -> None:
    assert fixing_from_photo(1, photo_of([34] * 14, [0.99] * 14), None, translator("en")).notice is None
    big = photo_of([80] * 14, [0.99] * 13 + [0.5])
    assert not big.small_tiles
    assert fixing_from_photo(1, big, None, translator("en")).notice is None
