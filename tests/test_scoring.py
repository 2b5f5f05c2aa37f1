"""Scoring, read as the rule book reads: one worked hand per line, with its pattern and 倍."""

from __future__ import annotations

import pytest

from engine.rules import RuleSet, SelfDrawBonus
from engine.scoring import Bonus, Pattern, best_wait_value, score, wait_scores
from engine.tiles import HandError, parse_hand, parse_tiles

UNCAPPED = RuleSet(cap=None)
PLAIN_HAND = "123m345m789m34p66p +2p"


def value(text: str, rules: RuleSet = UNCAPPED):
    return score(parse_hand(text), rules)


# RULES.md §9, chengdu preset, cap off.
WORKED_EXAMPLES = [
    ("123m345m789m34p66p +2p", "平胡", 0, 1),
    ("111m333m444m222p6p +6p", "对对胡", 0, 2),
    ("11224466m55889p +9p", "七对", 0, 4),
    ("11112244m55889p +9p", "龙七对", 0, 8),
    ("1122444455779m +9m", "清龙七对", 0, 32),
    ("123m123m123m789m9m +9m", "清带幺", 0, 16),
    ("123333m4556679s +9s", "平胡", 1, 2),
    ("[111m] [333m] [444m] [222p] 6p +6p", "金钩钓", 0, 4),
    ("123m456m78m77p (5555p) +9m gangshanghua", "平胡", 1, 4),
    ("234m567m345p678p1p +1p gangshangpao", "平胡", 0, 2),
]


@pytest.mark.parametrize(("text", "pattern", "roots", "multiplier"), WORKED_EXAMPLES)
def test_worked_examples_of_the_rule_book(text: str, pattern: str, roots: int, multiplier: int) -> None:
    s = value(text)
    assert (s.pattern.zh, s.roots, s.multiplier) == (pattern, roots, multiplier)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [("123m345m789m234p66p", "平胡"), ("11224444557799m", "清龙七对"), ("123m123m123m789m99m", "清带幺")],
)
def test_rule_book_hands_written_whole_take_the_last_tile_as_the_win(text: str, pattern: str) -> None:
    s = value(text)
    assert s.pattern.zh == pattern
    assert s.hand.win_tile == parse_tiles(text)[-1]


EVERY_PATTERN = [
    ("123m456m789m123p55p", Pattern.PLAIN, 1),
    ("111m222m333p444p55p", Pattern.ALL_PUNGS, 2),
    ("123m456m789m123m55m", Pattern.FULL_FLUSH, 4),
    ("11m33m55m77m22p44p66p", Pattern.SEVEN_PAIRS, 4),
    ("123m789m111p999p11m", Pattern.TERMINALS, 4),
    ("[111m] [333m] [555p] [777p] 99p", Pattern.GOLDEN_SINGLE_WAIT, 4),
    ("111m333m555m777m99m", Pattern.FLUSH_ALL_PUNGS, 8),
    ("222m555m888m222p55p", Pattern.ALL_PUNGS_258, 8),
    ("1111m33m22p44p66p88p", Pattern.DRAGON_SEVEN_PAIRS, 8),
    ("11335577m224466m", Pattern.FLUSH_SEVEN_PAIRS, 16),
    ("123m789m789m789m11m", Pattern.FLUSH_TERMINALS, 16),
    ("[111m] [333m] [555m] [777m] 99m", Pattern.FLUSH_GOLDEN_SINGLE_WAIT, 16),
    ("[222m] [555m] [888p] [222p] 55p", Pattern.GOLDEN_SINGLE_WAIT_258, 16),
    ("1111m3355m2266m99m", Pattern.FLUSH_DRAGON_SEVEN_PAIRS, 32),
    ("[1111m] [3333m] (5555p) [7777p] 99p", Pattern.EIGHTEEN_ARHATS, 64),
]


@pytest.mark.parametrize(("text", "pattern", "multiplier"), EVERY_PATTERN)
def test_every_pattern_of_the_table(text: str, pattern: Pattern, multiplier: int) -> None:
    s = value(text)
    assert s.pattern is pattern
    assert s.multiplier == multiplier


def test_the_most_valuable_reading_is_taken() -> None:
    # 111222333m can be three pungs or three runs: as pungs it is 清对 (8), as runs 清一色 (4).
    s = value("111222333m77m99m +9m")
    assert s.pattern is Pattern.FLUSH_ALL_PUNGS


def test_dragon_seven_pairs_includes_one_root_and_further_roots_double() -> None:
    s = value("1111m3333m22p44p5p +5p")
    assert s.pattern is Pattern.DRAGON_SEVEN_PAIRS
    assert s.roots == 1
    assert s.multiplier == 16


def test_roots_from_pung_plus_fourth_tile_and_from_kongs() -> None:
    s = value("[555p] 5p 6p 7p 123m 456m 9m +9m")  # pung of 5p with the fourth in hand
    assert s.pattern is Pattern.PLAIN and s.roots == 1
    s = value("[5555p] 123m 456m 789m 9m +9m")
    assert s.roots == 1 and s.multiplier == 2


def test_eighteen_arhats_flush_reads_as_flush_golden_wait_with_four_roots() -> None:
    # Most valuable reading: 清金钩钓 16 × 2⁴ = 256 beats 十八罗汉 64 (roots included).
    s = value("[1111m] [3333m] (5555m) [7777m] 99m")
    assert s.pattern is Pattern.FLUSH_GOLDEN_SINGLE_WAIT
    assert s.multiplier == 256


def test_cap_applies_and_self_draw_adds_a_base_after_it() -> None:
    s = value("12345678m99m [555m] +9m zimo", RuleSet(cap=8))
    assert s.pattern is Pattern.FULL_FLUSH and s.roots == 1
    assert (s.uncapped_multiplier, s.multiplier, s.payment_per_payer) == (8, 8, 9)
    s = value("12345678m99m [555m] +9m zimo haidi", RuleSet(cap=8))
    assert (s.uncapped_multiplier, s.multiplier, s.payment_per_payer) == (16, 8, 9)


def test_issue_json_example_flush_with_root_on_kong_replacement() -> None:
    s = value("234m567m888m5m (1111m) +5m gangshanghua", RuleSet())
    assert s.pattern is Pattern.FULL_FLUSH and s.roots == 1
    assert s.bonuses == (Bonus.KONG_FLOWER,)
    assert (s.uncapped_multiplier, s.multiplier, s.payment_per_payer) == (16, 8, 9)


def test_self_draw_settings() -> None:
    hand = PLAIN_HAND + " zimo"
    assert value(hand, RuleSet()).payment_per_payer == 2
    doubled = value(hand, RuleSet(self_draw=SelfDrawBonus.DOUBLE))
    assert doubled.multiplier == 2 and doubled.payment_per_payer == 2
    assert Bonus.SELF_DRAW_DOUBLE in doubled.bonuses
    assert value(hand, RuleSet(self_draw=SelfDrawBonus.NONE)).payment_per_payer == 1


def test_worked_settlement_self_draw_four_times_with_add_base_at_base_five() -> None:
    s = value("11224466m55889p +9p zimo", RuleSet(base=5))
    assert s.multiplier == 4
    assert s.payment_per_payer * 5 == 25


def test_heavenly_win_is_worth_the_cap_or_more() -> None:
    capped = value(PLAIN_HAND + " tianhu", RuleSet())
    assert capped.multiplier == 8 and capped.payment_per_payer == 9
    assert capped.pattern is Pattern.PLAIN and Bonus.HEAVENLY in capped.bonuses
    assert value(PLAIN_HAND + " tianhu").multiplier == 32
    own = value("1122444455779m +9m tianhu")  # 清龙七对 32 → its own value, 32
    assert own.multiplier == 32
    bigger = value("11114444227799m tianhu")
    assert bigger.multiplier == 64  # 清龙七对 with a second root


def test_heavenly_floor_is_not_doubled_by_self_draw_double() -> None:
    # 平胡 1 × 2 (加番) = 2 is below the floor; the floor (32 uncapped) is not doubled.
    s = value(PLAIN_HAND + " tianhu", RuleSet(self_draw=SelfDrawBonus.DOUBLE, cap=None))
    assert s.multiplier == 32


def test_the_book_example_earthly_win_counts_self_draw_double_in_its_own_value() -> None:
    # RULES.md §5: 1112233789999p +1p self-drawn as 地胡, cap none, 加番:
    # 清带幺 16 × 2² (1111p and 9999p are roots) × 2 (加番) = 128, above the floor of 32.
    rules = RuleSet(self_draw=SelfDrawBonus.DOUBLE, cap=None)
    earthly = value("1112233789999p +1p dihu zimo", rules)
    assert earthly.pattern is Pattern.FLUSH_TERMINALS and earthly.roots == 2
    assert earthly.multiplier == 16 * 2**2 * 2 == 128
    assert Bonus.SELF_DRAW_DOUBLE in earthly.bonuses and Bonus.EARTHLY in earthly.bonuses
    assert value("1112233789999p +1p zimo", rules).multiplier == 128


def test_earthly_win_on_a_discard() -> None:
    s = value(PLAIN_HAND + " dihu", RuleSet())
    assert s.multiplier == 8 and not s.self_draw and s.payment_per_payer == 8


def test_optional_bonuses_concealed_hand_and_no_terminals() -> None:
    rules = RuleSet(cap=None, concealed_hand_bonus=True, no_terminals_bonus=True)
    s = value("234m345m567m234p6p +6p", rules)
    assert set(s.bonuses) == {Bonus.CONCEALED_HAND, Bonus.NO_TERMINALS}
    assert s.multiplier == 4
    assert Bonus.CONCEALED_HAND not in value("[222m] 345m567m234p6p +6p", rules).bonuses


def test_last_tile_bonus_is_a_setting() -> None:
    assert value(PLAIN_HAND + " haidi").multiplier == 2
    assert value(PLAIN_HAND + " haidi", RuleSet(cap=None, last_tile_bonus=False)).multiplier == 1


def test_robbing_a_kong_doubles() -> None:
    s = value(PLAIN_HAND + " qianggang")
    assert s.bonuses == (Bonus.ROBBING_KONG,) and s.multiplier == 2


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("123m 45x", "parse"),
        ("123m456m", "tile_count"),
        ("11111m456m789m2p44p", "too_many_copies"),
        ("123m456m789p123s55s", "three_suits"),
        ("123m456m789m124p55p", "not_a_win"),
    ],
)
def test_invalid_hands_name_the_first_failing_check(text: str, code: str) -> None:
    with pytest.raises(HandError) as info:
        value(text)
    assert info.value.code == code


def test_not_a_win_reports_shanten() -> None:
    with pytest.raises(HandError) as info:
        value("123m456m789m124p55p")
    assert info.value.params["shanten"] == 0


def test_wait_values_and_best_wait_for_the_ready_check() -> None:
    concealed = parse_tiles("123m456m789m23p55p")
    waits = wait_scores(concealed, (), UNCAPPED)
    assert sorted(waits) == parse_tiles("1p4p")
    assert best_wait_value(concealed, (), UNCAPPED) == 1
    flushable = parse_tiles("1112345678999m")  # nine gates: every character tile wins
    values = wait_scores(flushable, (), UNCAPPED)
    assert len(values) == 9
    assert best_wait_value(flushable, (), RuleSet()) == 8
    assert best_wait_value(flushable, (), UNCAPPED, lowest=True) == 4
    assert best_wait_value(parse_tiles("123m456m789m24p58p"), (), UNCAPPED) == 0
