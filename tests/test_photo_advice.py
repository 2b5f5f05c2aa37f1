"""The advice a person gets when a photo shows no tiles: the hand it offers to type must itself
be a hand /score values, in both languages (a broken example would send them to a second error)."""

from __future__ import annotations

import re

from bot.i18n import LANGUAGES, translator
from bot.score.photo import VISION_ERRORS
from engine.rules import RuleSet
from engine.scoring import score
from engine.tiles import parse_typed_hand


def test_the_typed_example_after_no_tiles_is_a_winning_hand_in_every_language() -> None:
    for language in LANGUAGES:
        text = translator(language).t(VISION_ERRORS["no_tiles"])
        typed = re.search(r"/score (\S+)", text)
        assert typed is not None, (language, text)
        hand, _ = parse_typed_hand(typed[1])
        assert score(hand, RuleSet()).multiplier >= 1  # raises for a hand that does not win
