"""Whatever is typed after /score, the answer is a valued hand or a correction — never an exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.i18n import LANGUAGES, translator
from bot.score.answer import answer_for_text
from bot.score.texts import error_text
from engine.rules import RuleSet
from engine.tiles import HandError, format_tiles

NOTATION = "123456789mps[]()+ 万筒条zimo自摸杠上花海底0x,一九幺１ｍ（＋🀙🀄\ufe0f"
typed = st.text(alphabet=NOTATION, max_size=30)
two_suit_hands = st.lists(st.integers(0, 17), min_size=12, max_size=15).map(sorted).map(format_tiles)


def outcome(written: str, language: str) -> str:
    texts = translator(language)
    try:
        return answer_for_text(written, RuleSet(), 2, texts).caption
    except HandError as error:
        return error_text(error, written, texts)


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=150, deadline=None)
@given(written=typed)
def test_any_text_gets_an_answer_or_a_correction(language: str, written: str) -> None:
    assert outcome(written, language).strip()


@settings(max_examples=40, deadline=None)
@given(written=two_suit_hands)
def test_any_count_of_two_suit_tiles_gets_an_answer_or_a_correction(written: str) -> None:
    assert outcome(written, "en").strip()



def test_a_correction_never_shows_the_english_message_in_chinese() -> None:
    for written in ("123x", "🀄", "一二三", "1234m", "11111m234p567p789p", "123m456p789s11m234m",
                    "123m456m789m19p555p"):
        text = outcome(written, "zh")
        assert text and "position" not in text and "tiles" not in text
