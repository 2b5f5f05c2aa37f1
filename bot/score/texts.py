"""The words of a /score answer: corrections for bad input, a score explained, a hand's waits.

Pure functions from engine values to translated strings. A correction is built from
``HandError.code`` and ``.params`` (never from the English message), so it reads naturally in
every language and says exactly what to change: which character, how many tiles, which tile
appears too often, and for a hand that is not a win, which discards bring it closest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.i18n import N_, Translator
from bot.rules_menu import preset_words
from bot.table.views import score_lines, tile_label
from engine import analysis
from engine.rules import RuleSet
from engine.scoring import Score
from engine.tiles import HandError, Situation, Tile, counts_of, is_rank, parse_hand, parse_tile

EXAMPLE = "123m 456m 789m 234p 5p +5p"
WORDS = "自摸 zimo, 杠上花 gangshanghua, 杠上炮 gangshangpao, 抢杠 qianggang, 海底 haidi, 绝张 juezhang"
SITUATION_WORDS: Mapping[Situation, str] = {
    Situation.SELF_DRAW: N_("Self-draw"),
    Situation.KONG_REPLACEMENT: N_("Kong flower"),
    Situation.AFTER_KONG_DISCARD: N_("Kong cannon"),
    Situation.ROBBING_KONG: N_("Robbing a kong"),
    Situation.LAST_TILE: N_("Last tile"),
    Situation.LAST_COPY: N_("Last copy"),
}
_OPENERS = "[【(（"


def tiles_text(tiles: Iterable[Tile], texts: Translator) -> str:
    return " ".join(tile_label(t, texts) for t in tiles)


def situation_label(situation: Situation, texts: Translator) -> str:
    return situation.zh if texts.language == "zh" else texts.t(SITUATION_WORDS[situation])


# --- corrections ------------------------------------------------------------------------------


def error_text(error: HandError, written: str, texts: Translator) -> str:
    """A friendly, specific correction for ``written`` (the hand as the player typed it)."""
    params = error.params
    if error.code == "tile_count":
        found = params["found"]
        assert isinstance(found, int)
        return texts.t("Tiles in this hand: {n}. A win is valued from 14 tiles (a kong counts as three); "
                       "13 tiles show what the hand waits on.", n=found)
    if error.code == "too_many_copies":
        tile = tile_label(parse_tile(str(params["tile"])), texts)
        return texts.t("{tile} is written {count} times, but there are only four of each tile.",
                       tile=tile, count=params["count"])
    if error.code == "three_suits":
        return texts.t("The hand holds all three suits; in Sichuan mahjong a hand keeps at most two "
                       "and gives one up (缺一门).")
    if error.code == "not_a_win":
        return _not_a_win_text(written, texts)
    return _parse_error_text(error, written, texts)


def _parse_error_text(error: HandError, written: str, texts: Translator) -> str:
    params = error.params
    position = params.get("position")
    example = texts.t("For example: {example}", example=EXAMPLE)
    if not written.strip():
        return texts.t("The hand is empty.") + "\n" + example
    if "meld" in params:
        found = texts.t("{meld} (position {position}) is not a pung or a kong: write three or four "
                        "identical tiles, like [555p], or (5555p) for a concealed kong.",
                        meld=params["meld"], position=position)
    elif "word" in params:
        found = texts.t("I don't know the word “{word}” (position {position}). The words I know: {words}.",
                        word=params["word"], position=position, words=WORDS)
    elif params.get("not_sichuan"):
        found = texts.t("“{char}” (position {position}) is not in a Sichuan set, which has only 万, 筒 and 条: "
                        "no winds, dragons or flowers.", char=params["char"], position=position)
    elif "char" in params and not str(params["char"]).strip():
        found = texts.t("The numbers just before position {position} have no suit: add m (万), p (筒) or s (条).",
                        position=position)
    elif "char" in params and str(params["char"]).isdigit():
        found = texts.t("“{char}” (position {position}) is not a tile number: tile numbers go from 1 to 9.",
                        char=params["char"], position=position)
    elif "char" in params:
        found = texts.t("I can't read “{char}” (position {position}). Write tiles as numbers followed "
                        "by their suit: m for 万, p for 筒, s for 条; or as they are named: {named}.",
                        char=params["char"], position=position, named="一二三万 五筒")
    elif isinstance(position, int) and 0 < position <= len(written):
        found = _at_position_text(written[position - 1], position, texts)
    else:
        found = texts.t("I could not read that hand.")
    return found + "\n" + example


def _at_position_text(char: str, position: int, texts: Translator) -> str:
    """The parse errors that carry only a position: what stands there tells which one it was."""
    if char in "+＋胡":
        return texts.t("Mark the winning tile with one + followed by exactly one tile, like +5p "
                       "(position {position}).", position=position)
    if char in _OPENERS:
        return texts.t("The bracket at position {position} is never closed.", position=position)
    if is_rank(char):
        return texts.t("The numbers at position {position} have no suit: add m (万), p (筒) or s (条).",
                       position=position)
    return texts.t("I could not read the hand at position {position}.", position=position)


def _not_a_win_text(written: str, texts: Translator) -> str:
    hand = parse_hand(written)
    left, discards = analysis.best_discards(counts_of(hand.concealed), len(hand.melds))
    lines = [texts.t("These 14 tiles are not a win: they make neither four sets and a pair nor seven pairs.")]
    if left == 0:
        lines.append(texts.t("Discard {tiles} and the hand is ready (听牌).", tiles=tiles_text(discards, texts)))
    else:
        lines.append(texts.t("Best discards: {tiles}. After one of them the hand is at shanten {n} "
                             "(useful draws still needed to be ready).", n=left, tiles=tiles_text(discards, texts)))
    return "\n".join(lines)


# --- answers -----------------------------------------------------------------------------------


def rules_line(rules: RuleSet, base: int, texts: Translator) -> str:
    """Which rules gave this value; the caption adds where to read them in full."""
    return texts.t("Rules: {preset}, base stake {base}",
                   preset=preset_words(rules.preset_name(), texts), base=base)


def payment_line(result: Score, base: int, texts: Translator) -> str:
    chips = result.payment_per_payer * base
    situations = result.hand.situations
    if result.self_draw:
        return texts.t("Self-draw. Chips from each player still in the hand: {n}", n=chips)
    if Situation.ROBBING_KONG in situations:
        return texts.t("Robbing a kong. Chips from the player whose kong was robbed: {n}", n=chips)
    return texts.t("Win on a discard. Chips from the discarder: {n}", n=chips)


def score_caption(notation: str, result: Score, rules: RuleSet, base: int, texts: Translator) -> str:
    """The caption under a score card; its first line is the hand's notation (see ``chat``)."""
    lines = [notation]
    lines += [f"{line.label} {line.value}" for line in score_lines(result, texts)]
    lines.append(texts.t("Multiplier: {m}× base", m=result.multiplier))
    lines.append(payment_line(result, base, texts))
    lines.append(rules_line(rules, base, texts) + " (/rules)")
    return "\n".join(lines)


def waits_caption(notation: str, values: Mapping[Tile, Score], shanten: int, helpful: Iterable[Tile],
                  rules: RuleSet, base: int, texts: Translator) -> str:
    """The answer for a hand one tile short: each winning tile and its value, or how far it is."""
    lines = [notation]
    if values:
        lines.append(texts.t("Ready (听牌). It wins on:"))
        for tile, result in sorted(values.items()):
            what = result.pattern.name_in(texts.language)
            if result.roots:  # the roots are what doubles a pattern's value: say so beside it
                what += " + " + texts.tn("{n} root", "{n} roots", result.roots)
            lines.append(texts.t("{tile}: {pattern} ×{m}; chips from the discarder: {n}",
                                 tile=tile_label(tile, texts), pattern=what,
                                 m=result.multiplier, n=result.payment_per_payer * base))
    elif shanten == 0:
        lines.append(texts.t("The shape is ready, but every tile it waits on is already in the hand."))
    else:
        lines.append(texts.t("Not ready yet: shanten {n} (useful draws still needed to be ready).", n=shanten))
        lines.append(texts.t("Tiles that help: {tiles}", tiles=tiles_text(helpful, texts)))
    lines.append(rules_line(rules, base, texts) + " (/rules)")
    return "\n".join(lines)
