"""One hand in, one answer out: the picture, the caption and the situation buttons.

Typed hands and corrected photos both end here, so they are valued the same way. Building an
answer draws a picture (tens of milliseconds), so handlers call ``answer_for`` in a worker
thread. A hand that cannot be valued raises ``HandError``; ``texts.error_text`` words it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.i18n import Translator
from bot.score.texts import payment_line, rules_line, score_caption, situation_label, waits_caption
from bot.table.views import score_lines, tile_label
from engine import analysis
from engine.rules import RuleSet
from engine.scoring import score, wait_scores
from engine.tiles import (
    DescribedHand,
    HandError,
    Situation,
    check_tiles,
    counts_of,
    format_hand,
    parse_hand,
    parse_typed_hand,
)
from rendering.models import ScoredHand

TOGGLES: tuple[Situation, ...] = (
    Situation.SELF_DRAW,
    Situation.KONG_REPLACEMENT,
    Situation.AFTER_KONG_DISCARD,
    Situation.ROBBING_KONG,
    Situation.LAST_TILE,
    Situation.LAST_COPY,  # shown only where 绝张 doubles (a house rule)
)
TOGGLE_PATTERN = re.compile(r"^sc:(" + "|".join(s.value for s in TOGGLES) + r")$")
_SELF_DRAWN = {Situation.SELF_DRAW, Situation.KONG_REPLACEMENT, Situation.HEAVENLY}
_ON_A_DISCARD = {Situation.AFTER_KONG_DISCARD, Situation.ROBBING_KONG}


@dataclass(frozen=True)
class Answer:
    """What to show: a PNG, its caption, and (for a valued win) the situation buttons.

    ``hand`` is the valued hand when there is one, so that the buttons can re-value it.
    """

    photo: bytes
    caption: str
    keyboard: InlineKeyboardMarkup | None = None
    hand: DescribedHand | None = None


def toggled(situations: frozenset[Situation], situation: Situation) -> frozenset[Situation]:
    """The situations after one press, kept consistent: a kong flower is a self-draw, and a
    self-draw excludes a win on a discard (杠上炮) or on a robbed kong (抢杠)."""
    on = set(situations)
    if situation in on:
        on.discard(situation)
        if situation is Situation.SELF_DRAW:
            on -= _SELF_DRAWN
        return frozenset(on)
    on.add(situation)
    if situation is Situation.KONG_REPLACEMENT:
        on.add(Situation.SELF_DRAW)
    if situation in _SELF_DRAWN:
        on -= _ON_A_DISCARD
    if situation in _ON_A_DISCARD:
        on -= _SELF_DRAWN | (_ON_A_DISCARD - {situation})
    return frozenset(on)


def toggle_keyboard(situations: frozenset[Situation], rules: RuleSet, texts: Translator) -> InlineKeyboardMarkup:
    shown = [s for s in TOGGLES if s is not Situation.LAST_COPY or rules.last_copy_bonus]
    buttons = [
        InlineKeyboardButton(("✓ " if s in situations else "") + situation_label(s, texts),
                             callback_data=f"sc:{s.value}")
        for s in shown
    ]
    return InlineKeyboardMarkup([buttons[:3], buttons[3:]])


def answer_for_text(written: str, rules: RuleSet, base: int, texts: Translator) -> Answer:
    """The answer for a typed hand; a ``+tile`` also written among 14 tiles is read as the mark,
    and the caption says so (players often write all 14 and then mark the winning one)."""
    hand, marked = parse_typed_hand(written)
    answer = answer_for(hand, rules, base, texts)
    if not marked or hand.win_tile is None:
        return answer
    note = texts.t("{tile} was written among the 14 tiles and marked with +: counted once, as the winning tile.",
                   tile=tile_label(hand.win_tile, texts))
    return replace(answer, caption=f"{answer.caption}\n{note}")


def answer_for(hand: DescribedHand, rules: RuleSet, base: int, texts: Translator) -> Answer:
    """The answer for a complete hand (valued) or a hand one tile short (its waits)."""
    from rendering import encode_png, render_score_card  # Pillow loads with the first picture

    if hand.tile_count == 13:
        return _waits_answer(hand, rules, base, texts)
    result = score(hand, rules)
    notation = format_hand(hand)
    scored = ScoredHand(
        hand,
        title=_win_title(hand, texts),
        lines=score_lines(result, texts),
        total=texts.t("{m}× base", m=result.multiplier) + " · " + payment_line(result, base, texts),
    )
    card = render_score_card(scored, heading=texts.t("Hand value"), footer=rules_line(rules, base, texts))
    return Answer(
        photo=encode_png(card),
        caption=score_caption(notation, result, rules, base, texts),
        keyboard=toggle_keyboard(hand.situations, rules, texts),
        hand=hand,
    )


def _win_title(hand: DescribedHand, texts: Translator) -> str:
    if hand.self_drawn:
        return texts.t("Self-drawn win")
    if Situation.ROBBING_KONG in hand.situations:
        return texts.t("Win by robbing a kong")
    return texts.t("Win on a discard")


def _waits_answer(hand: DescribedHand, rules: RuleSet, base: int, texts: Translator) -> Answer:
    from rendering import encode_png, render_hand

    check_tiles(hand, 13)
    hand = replace(hand, win_tile=None, situations=frozenset())  # one short: nothing has won yet
    counts = counts_of(hand.concealed)
    shanten = analysis.shanten(counts, len(hand.melds))
    values = wait_scores(hand.concealed, hand.melds, rules)
    helpful = [] if values or shanten == 0 else analysis.effective_tiles(counts, len(hand.melds))
    picture = render_hand(hand.concealed, hand.melds)
    caption = waits_caption(format_hand(hand), values, shanten, helpful, rules, base, texts)
    return Answer(photo=encode_png(picture), caption=caption)


def recover(caption: str | None) -> DescribedHand | None:
    """The hand a score message shows, read back from its caption's first line (after a restart)."""
    if not caption:
        return None
    try:
        hand = parse_hand(caption.split("\n", 1)[0])
    except HandError:
        return None
    return hand if hand.tile_count == 14 else None

