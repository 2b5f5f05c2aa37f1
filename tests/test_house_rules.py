"""Every house rule of RULES.md §7 on an arranged wall, each value with its numbers worked out
from the book here (never copied from the engine), plus the §3 and §5 clarifications.

Seats not named hold ``DUMMY`` (see test_game_helpers): they never claim or win and void 万.
Values are in base stakes at base 1; "加底" means each payer of a self-draw pays one more.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_game_helpers import DUMMY, NO_SWAP, act, options, run_out, step, table, transfers

from engine.actions import Action
from engine.events import EventType
from engine.game import Game, Phase, arranged_wall
from engine.rules import (
    SETTING_VALUES,
    FlowerPigPenalty,
    GameMode,
    KongFlowerPayer,
    LastFour,
    NextDealer,
    PassWinScope,
    RuleSet,
    SelfDrawBonus,
    SwapDirection,
    parse_setting,
)
from engine.scoring import Bonus, Pattern, score
from engine.settlement import FinalHand, Transfer, wall_end
from engine.settlement import TransferReason as R
from engine.tiles import Meld, MeldKind, Situation, Suit, parse_hand, parse_tile, parse_tiles

UNCAPPED = NO_SWAP.with_changes(cap=None)
NO_P = "147m258m369m1245s"  # a dummy without 筒 (voids 筒)


def paid(events, reason=None):
    return [(t.payer, t.payee, t.amount) for t in transfers(events) if reason is None or t.reason is reason]


def won(events):
    return [e.win for e in events if e.type is EventType.WON]


def pass_all(g: Game) -> None:
    """Every seat offered a claim declines it."""
    while g.phase is Phase.CLAIM:
        act(g, g.pending_seats()[0], "pass")


# --- RuleSet: defaults, JSON, old saved tables ---------------------------------------------


def test_every_setting_defaults_to_the_book_and_the_presets_stay_three() -> None:
    defaults = RuleSet()
    assert {k: getattr(defaults, k) for k in SETTING_VALUES} == {k: v[0] for k, v in SETTING_VALUES.items()}
    assert defaults.pass_win_scope is PassWinScope.ANY and defaults.last_four is LastFour.DRAWS_AND_DISCARDS
    assert defaults.all_pungs_258 == 8 and defaults.flower_pig_penalty == 16
    assert defaults.next_dealer is NextDealer.FIRST_WINNER and defaults.swap_direction is None
    assert RuleSet.preset("chengdu") == defaults
    assert [RuleSet.preset(n).preset_name() for n in ("chengdu", "xueliu", "classic")] == [
        "chengdu", "xueliu", "classic"]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_rules_survive_the_json_round_trip(data: st.DataObject) -> None:
    drawn = {k: data.draw(st.sampled_from(v), label=k) for k, v in SETTING_VALUES.items()}
    rules = RuleSet(**drawn, base=data.draw(st.integers(1, 100)))
    assert RuleSet.from_dict(json.loads(json.dumps(rules.to_dict()))) == rules


def test_an_old_saved_table_reads_with_its_switches_and_defaults_for_the_rest() -> None:
    old = {"mode": "xuezhan", "swap_three": True, "pass_win_rule": False, "forced_last_four": False,
           "cap": 16, "flower_pig_pays_cap": True, "base": 2}
    rules = RuleSet.from_dict(old)
    assert rules.pass_win_scope is PassWinScope.OFF and rules.last_four is LastFour.OFF
    assert rules.flower_pig_pays is FlowerPigPenalty.CAP and rules.flower_pig_penalty == 16
    assert rules.declare_void and rules.kong_cannon_transfer and rules.all_pungs_258 == 8
    assert RuleSet.from_dict({"pass_win_rule": True}).pass_win_scope is PassWinScope.ANY
    assert RuleSet.from_dict({}) == RuleSet()


def test_settings_from_the_command_line() -> None:
    assert parse_setting("pass_win_scope", "same_tile") == ("pass_win_scope", PassWinScope.SAME_TILE)
    assert parse_setting("all_pungs_258", "none") == ("all_pungs_258", None)
    assert parse_setting("declare_void", "false") == ("declare_void", False)
    with pytest.raises(ValueError, match="one of 8, 16, none"):
        parse_setting("all_pungs_258", "32")
    with pytest.raises(ValueError, match="unknown setting"):
        parse_setting("jiangdui", "8")


# --- §5: 天胡/地胡 with 自摸加番 --------------------------------------------------------------


def test_the_book_example_an_earthly_win_with_self_draw_double_is_128_in_a_game() -> None:
    # Seat 1's first draw completes 1112233789999p +1p: 地胡, self-drawn. Cap none, 加番:
    # 清带幺 16 × 2² roots (1111p, 9999p) × 2 (加番) = 128 ≥ the floor of 32; each of three pays 128.
    rules = UNCAPPED.with_changes(self_draw=SelfDrawBonus.DOUBLE)
    g = table(["147m258m369m1245s7s", "1112233789999p", NO_P, NO_P], draws="1p", rules=rules, voids="pspp")
    act(g, 0, "discard", "7s")
    (win,) = won(events := act(g, 1, "win", "1p"))
    assert Situation.EARTHLY in win.hand.situations and win.score.multiplier == 128
    assert paid(events) == [(0, 1, 128), (2, 1, 128), (3, 1, 128)]


FLAGS = list(Situation)


@st.composite
def _winning_hands(draw: st.DrawFn) -> str:
    """Valid two-suit winning hands written in notation: four sets and a pair, marked win tile."""
    suits = draw(st.sampled_from(["mp", "ms", "ps"]))
    sets = draw(st.lists(st.tuples(st.integers(0, 1), st.booleans(), st.integers(1, 9)), min_size=4, max_size=4))
    pair_suit, pair_rank = draw(st.tuples(st.integers(0, 1), st.integers(1, 9)))
    tiles: list[str] = []
    for suit, run, rank in sets:
        start = min(rank, 7)
        ranks = [start, start + 1, start + 2] if run else [rank] * 3
        tiles += [f"{r}{suits[suit]}" for r in ranks]
    tiles += [f"{pair_rank}{suits[pair_suit]}"] * 2
    assume(all(tiles.count(t) <= 4 for t in tiles))
    win = draw(st.sampled_from(tiles))
    rest = list(tiles)
    rest.remove(win)
    return " ".join(rest) + " +" + win


@settings(max_examples=300, deadline=None)
@given(hand_text=_winning_hands(), data=st.data())
def test_marking_any_flag_on_a_valid_hand_never_lowers_its_value(hand_text: str, data: st.DataObject) -> None:
    rules = RuleSet(**{k: data.draw(st.sampled_from(v), label=k) for k, v in SETTING_VALUES.items()})
    flags = data.draw(st.sets(st.sampled_from(FLAGS)), label="flags")
    extra = data.draw(st.sampled_from(FLAGS), label="extra")
    words = " ".join(f.value for f in flags)
    before = score(parse_hand(f"{hand_text} {words}"), rules)
    after = score(parse_hand(f"{hand_text} {words} {extra.value}"), rules)
    assert after.uncapped_multiplier >= before.uncapped_multiplier
    assert after.multiplier >= before.multiplier
    assert after.payment_per_payer >= before.payment_per_payer


# --- §3: the last four tiles -------------------------------------------------------------------

# The dealer and LATE_OTHER are never ready; the waiter holds 123p456p789p123s5s and waits on 5s.
LATE_DEALER, LATE_OTHER, LATE_WAITER = "147m258m369m4679s3s", "147m258m369m3689s", "123p456p789p123s5s"


def _late(index: int, rules: RuleSet, hands: list[str] | None = None) -> Game:
    """Dealer 0; normal draw number ``index`` (0-based, seat 1 draws first) is the last 5s, its other
    copies drawn early (when passing is free). 55 tiles are left after the deal, so draw ``index``
    is made with 55 - index tiles left in the wall."""
    hands = hands or [LATE_DEALER, LATE_WAITER, LATE_OTHER, DUMMY]
    dealt = [parse_tiles(h) for h in hands]
    used = [t for h in dealt for t in h]
    wanted = parse_tile("5s")
    left = [t for t in range(27) for _ in range(4 - used.count(t)) if t != wanted]
    for _ in range(4 - used.count(wanted) - 1):
        left.insert(1, wanted)
    left.insert(index, wanted)
    g = Game(rules, 0, 0, wall=arranged_wall(0, dealt, left))
    for seat, suit in enumerate("pmpm"):
        g.apply(Action.void(seat, Suit.from_letter(suit)))
    return g


def _to_draw(g: Game, seat: int) -> None:
    while not (g.phase is Phase.PLAY and g.current == seat and g.drawn == parse_tile("5s") and g.wall_count < 5):
        step(g)


@pytest.mark.parametrize(
    ("setting", "forced"),
    [(LastFour.DRAWS_AND_DISCARDS, True), (LastFour.SELF_DRAWS, True), (LastFour.DISCARDS, False),
     (LastFour.OFF, False)],
)
def test_a_self_draw_on_the_fourth_last_tile_is_compulsory_by_the_setting(setting: LastFour, forced: bool) -> None:
    # Draw 52 is seat 1's (52 = 4 × 13: seat 1's 14th draw), made with 55 - 52 = 3 tiles left.
    g = _late(52, NO_SWAP.with_changes(last_four=setting))
    _to_draw(g, 1)
    assert g.wall_count == 2
    assert (options(g, 1) == {"win 5s"}) is forced and "win 5s" in options(g, 1)


def test_the_fifth_last_tile_is_not_one_of_the_last_four() -> None:
    # Draw 50 is seat 3's, made with 5 tiles left: seat 3 (DUMMY) throws the 5s to seat 1, who may pass.
    g = _late(50, NO_SWAP)
    _to_draw(g, 3)
    assert g.wall_count == 4
    step(g)
    assert g.phase is Phase.CLAIM and options(g, 1) == {"win 5s", "pass"}


def test_the_fourth_last_tile_discarded_must_be_won() -> None:
    # Draw 51 is the dealer's, made with exactly 4 tiles left: its 5s is one of the last four.
    g = _late(51, NO_SWAP)
    _to_draw(g, 0)
    assert g.wall_count == 3
    act(g, 0, "discard", "5s")
    assert options(g, 1) == {"win 5s"}


@pytest.mark.parametrize(
    ("setting", "forced"),
    [(LastFour.DRAWS_AND_DISCARDS, True), (LastFour.DISCARDS, True), (LastFour.SELF_DRAWS, False),
     (LastFour.OFF, False)],
)
def test_a_discard_of_a_last_four_tile_is_compulsory_by_the_setting(setting: LastFour, forced: bool) -> None:
    # Draw 53 is seat 2's, made with 2 tiles left; seat 2 throws the 5s straight back.
    g = _late(53, NO_SWAP.with_changes(last_four=setting))
    _to_draw(g, 2)
    step(g)
    assert g.pending_seats() == [1]
    assert options(g, 1) == ({"win 5s"} if forced else {"win 5s", "pass"})


# --- §3 and §7: 过水 ---------------------------------------------------------------------------

# Seat 1: 22m33m44m55m66m77m8m waits 2m or 5m (清一色, 4) and 8m (清七对, 8).
PASSER = [DUMMY + "9s", "22m33m44m55m66m77m8m", DUMMY, DUMMY]


def test_pass_only_the_same_tile_bars_that_tile_and_no_other() -> None:
    g = table(PASSER, draws="3s2m5m2m", voids="mpmm",
              rules=NO_SWAP.with_changes(pass_win_scope=PassWinScope.SAME_TILE))
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "2m")
    act(g, 1, "pass")
    act(g, 3, "discard", "5m")
    assert options(g, 1) == {"win 5m", "pung 5m", "pass"}  # a different tile, same value 4: allowed
    act(g, 1, "pass")
    act(g, 0, "discard", "2m")
    assert options(g, 1) == {"pung 2m", "pass"}  # the tile declined stays barred until seat 1 draws


# Seat 2 ends up on 123m456m789m45p99p, waiting on 3p (to rob seat 1's added kong) and 6p.
ROB_BAR = [DUMMY + "3p", "33p1234567m66p99p", "123m456m789m4p99p1s", DUMMY]


def _pass_6p_then_add_kong(rules: RuleSet) -> list:
    g = table(ROB_BAR, draws="5p8m6p3p", replacements="9s", voids="mssm", rules=rules)
    act(g, 0, "discard", "3p")
    act(g, 1, "pung", "3p")
    act(g, 1, "discard", "9p")
    act(g, 2, "pass")  # seat 2 could pung the 9p
    act(g, 2, "discard", "1s")
    step(g)  # seat 3 throws the 8m
    act(g, 0, "discard", "6p")
    act(g, 1, "pass")
    assert options(g, 2) == {"win 6p", "pass"}
    act(g, 2, "pass")
    return [g, act(g, 1, "kong", "3p")]


@pytest.mark.parametrize(
    ("scope", "may_rob"),
    [(PassWinScope.ANY, False), (PassWinScope.SAME_TILE, True), (PassWinScope.OFF, True)],
)
def test_a_seat_under_the_pass_bar_may_not_rob_a_kong(scope: PassWinScope, may_rob: bool) -> None:
    # 抢杠 would be worth 平胡 1 × 2 = 2, more than the 1 declined; under the bar it is still refused.
    g, events = _pass_6p_then_add_kong(NO_SWAP.with_changes(pass_win_scope=scope))
    if may_rob:
        assert g.phase is Phase.ROB and options(g, 2) == {"win 3p", "pass"}
    else:
        assert g.phase is Phase.PLAY and paid(events, R.KONG_ADDED) == [(0, 1, 1), (2, 1, 1), (3, 1, 1)]


# --- 点杠花 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payer", "self_draw", "expected"),
    [
        # 平胡 1 × 根 (333p+3p) × 杠上花 = 4; 加底: 5 from each of three.
        (KongFlowerPayer.EVERYONE, SelfDrawBonus.ADD_BASE, [(0, 1, 5, R.SELF_DRAW), (2, 1, 5, R.SELF_DRAW),
                                                            (3, 1, 5, R.SELF_DRAW)]),
        # 承包: the feeder pays all three shares, 3 × 5 = 15.
        (KongFlowerPayer.FEEDER, SelfDrawBonus.ADD_BASE, [(0, 1, 15, R.SELF_DRAW)]),
        # 算点炮: the feeder pays once, as a discard win: 4, no 加底.
        (KongFlowerPayer.FEEDER_ONCE, SelfDrawBonus.ADD_BASE, [(0, 1, 4, R.WIN_DISCARD)]),
        # With 加番 a self-draw would be 8 from each; 算点炮 still pays 4 once, no 加番.
        (KongFlowerPayer.EVERYONE, SelfDrawBonus.DOUBLE, [(0, 1, 8, R.SELF_DRAW), (2, 1, 8, R.SELF_DRAW),
                                                          (3, 1, 8, R.SELF_DRAW)]),
        (KongFlowerPayer.FEEDER_ONCE, SelfDrawBonus.DOUBLE, [(0, 1, 4, R.WIN_DISCARD)]),
    ],
)
def test_a_win_on_a_fed_kongs_replacement_by_the_setting(payer, self_draw, expected) -> None:
    rules = UNCAPPED.with_changes(kong_flower_payer=payer, self_draw=self_draw)
    g = table([DUMMY + "3p", "333p123m456m789m5m", DUMMY, DUMMY], replacements="5m", rules=rules)
    act(g, 0, "discard", "3p")
    act(g, 1, "kong", "3p")
    events = act(g, 1, "win", "5m")
    assert [(t.payer, t.payee, t.amount, t.reason) for t in transfers(events)] == expected
    restored = Game.from_json(g.to_json())
    assert restored.wins[0].score == g.wins[0].score


# --- 杠上炮 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("transfer", "chips"), [(True, [-1, 4, 4, -7]), (False, [-1, 1, 1, -1])])
def test_kong_cannon_hands_on_the_kong_money_only_by_the_setting(transfer: bool, chips: list) -> None:
    # Seat 3 adds a kong (1 from each of three: +3), then discards 5m into seats 1 and 2, each
    # 平胡 × 杠上炮 = 2. With 呼叫转移 it also hands each winner the 3: 3 - 2×2 - 2×3 = -7.
    # Without, it keeps the 3: 3 - 4 = -1, and the winners get 2 - 1 = 1 each.
    hands = [DUMMY + "6s", "123m46m789m666p99p", "55m789m123m333p99p", "66s111s444s789s6p9s"]
    rules = NO_SWAP.with_changes(kong_cannon_transfer=transfer)
    g = table(hands, draws="3s3s3s6s", replacements="5m", voids="mssm", rules=rules)
    act(g, 0, "discard", "6s")
    act(g, 3, "pung", "6s")
    act(g, 3, "discard", "9s")
    for _ in range(3):
        step(g)
    act(g, 3, "kong", "6s")
    act(g, 3, "discard", "5m")
    act(g, 1, "win", "5m")
    events = act(g, 2, "win", "5m")
    assert all(w.score.multiplier == 2 and Bonus.KONG_CANNON in w.score.bonuses for w in won(events))
    assert bool(paid(events, R.CALL_TRANSFER)) is transfer
    assert g.chips() == chips


# --- 花猪 -----------------------------------------------------------------------------------------


def _pig_table(rules: RuleSet) -> Game:
    # Seat 1 is a 花猪 (voids 万 but only ever draws 万); seats 0 and 2 wait; seat 3 is never ready.
    hands = ["123m456m789m11s23s9p", "1m124578p124578s", "456s789s666s99s55s", "3333p69p147m258m9m"]
    used = [t for h in hands for t in parse_tiles(h)]
    left = [t for t in range(27) for _ in range(4 - used.count(t))]
    manzu = [t for t in left if t < 9]
    other = [t for t in left if t >= 9]
    other.sort(key=lambda t: t not in parse_tiles("1s4s"))  # seat 0's waits come early
    draws = []
    for i in range(54):
        seat = (1 + i) % 4
        draws.append(manzu.pop() if seat == 1 or not other else other.pop(0))
    g = Game(rules, 0, 0, wall=arranged_wall(0, [parse_tiles(h) for h in hands], draws))
    for seat, suit in enumerate("pmms"):
        g.apply(Action.void(seat, Suit.from_letter(suit)))
    return g


@pytest.mark.parametrize(
    ("pays", "cap", "amount"),
    [(FlowerPigPenalty.SIXTEEN, 8, 16), (FlowerPigPenalty.CAP, 32, 32), (FlowerPigPenalty.CAP, None, 16),
     (FlowerPigPenalty.NINE, 8, 9)],
)
def test_a_flower_pig_pays_by_the_setting(pays: FlowerPigPenalty, cap: int | None, amount: int) -> None:
    # The cap with no cap is 16 (RULES.md §7 rulings).
    g = _pig_table(NO_SWAP.with_changes(flower_pig_pays=pays, cap=cap))
    events = run_out(g)
    assert paid(events, R.FLOWER_PIG) == [(1, 0, amount), (1, 2, amount), (1, 3, amount)]


# --- 定缺 / 不定张 ---------------------------------------------------------------------------------

# Seat 1 holds three suits: 123m456m789p333s5p would be complete with 5p, but not as a Sichuan win.
UNDECLARED = [DUMMY + "9s", "123m456m789p333s5p", "123m456m789m123p5p", DUMMY]


def _undeclared(**changes: object) -> Game:
    rules = NO_SWAP.with_changes(declare_void=False, **changes)
    g = Game(rules, 0, 0, wall=arranged_wall(0, [parse_tiles(h) for h in UNDECLARED], parse_tiles("3s")))
    assert g.phase is Phase.PLAY and g.current == 0 and g.voids == [None] * 4  # no 定缺 at all
    return g


def test_undeclared_voids_no_void_discipline_and_only_the_winning_hand_lacks_a_suit() -> None:
    g = _undeclared()
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")  # seat 1 drew the fourth 3s; any tile may go, no void suit first
    assert g.phase is Phase.PLAY and g.current == 2
    g = _undeclared()
    act(g, 0, "discard", "5p")  # the dealer's 5p completes both hands
    assert g.pending_seats() == [2]  # three suits (seat 1) cannot win; two suits (seat 2) can
    assert options(g, 2) == {"win 5p", "pass"}


def test_undeclared_voids_a_player_may_pung_any_suit_and_is_judged_a_pig_at_the_wall() -> None:
    g = _undeclared()
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "5p")  # seat 1 may not win on it (three suits) and is not asked
    assert g.phase is Phase.PLAY and g.current == 3
    events = run_out(g)
    # Seat 1 still holds three suits at the wall: 16 to each of the three others, none a pig.
    assert paid(events, R.FLOWER_PIG) == [(1, 0, 16), (1, 2, 16), (1, 3, 16)]


@pytest.mark.parametrize(("to_winners", "payees"), [(False, [0, 3]), (True, [0, 2, 3])])
def test_a_flower_pig_pays_players_who_already_won_only_by_the_setting(to_winners: bool, payees: list) -> None:
    # Voids undeclared, so seat 1 keeps its three suits to the end while seat 2 wins at once on
    # the dealer's 5p and leaves: the pig pays 16 to those still in, and to seat 2 by the setting.
    g = _undeclared(flower_pig_pays_winners=to_winners)
    act(g, 0, "discard", "5p")
    act(g, 2, "win", "5p")
    events = run_out(g)
    assert [w.seat for w in g.wins] == [2]
    assert paid(events, R.FLOWER_PIG) == [(1, p, 16) for p in payees]


# --- 将对, 金钩钓 and 清带幺 -------------------------------------------------------------------------

# Dummies without 2, 5 or 8 (they void 万 and throw their 9m first).
PLAIN_DUMMY = "134679p134679s9m"
JIANG = "222m555m8m222p555p"  # + 8m: 222m 555m 222p 555p 88m, all 2-5-8, all pungs


def _self_draw_eight_m(rules: RuleSet) -> list:
    g = table([PLAIN_DUMMY + "3m", JIANG, PLAIN_DUMMY, PLAIN_DUMMY], draws="3s1m1m1m8m", voids="msmm", rules=rules)
    act(g, 0, "discard", "9m")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "9m")
    act(g, 3, "discard", "9m")
    act(g, 0, "discard", "1m")
    return act(g, 1, "win", "8m")


@pytest.mark.parametrize(
    ("value", "pattern", "each"),
    [(8, Pattern.ALL_PUNGS_258, 8 + 1), (16, Pattern.ALL_PUNGS_258, 16 + 1), (None, Pattern.ALL_PUNGS, 2 + 1)],
)
def test_two_five_eight_all_pungs_by_the_setting(value: int | None, pattern: Pattern, each: int) -> None:
    # Self-drawn, no root, cap none, 加底: 将对 8 → 9 each; 16 → 17; not a pattern → 对对胡 2 → 3.
    events = _self_draw_eight_m(UNCAPPED.with_changes(all_pungs_258=value))
    (win,) = won(events)
    assert win.score.pattern is pattern and Situation.EARTHLY not in win.hand.situations
    assert paid(events) == [(0, 1, each), (2, 1, each), (3, 1, each)]


@pytest.mark.parametrize(
    ("on", "pattern", "amount"), [(True, Pattern.FLUSH_TERMINALS, 16), (False, Pattern.TERMINALS, 4)]
)
def test_flush_terminals_by_the_setting(on: bool, pattern: Pattern, amount: int) -> None:
    # 123m123m123m789m9m + 9m on seat 2's discard: 清带幺 16. Without it the best reading is 4:
    # 清一色 and 带幺九 tie at 4 and the one listed later (带幺九) is named.
    rules = UNCAPPED.with_changes(golden_and_flush_terminals=on)
    g = table([DUMMY + "9s", "123m123m123m789m9m", DUMMY, DUMMY], draws="3s9m", rules=rules, voids="mpmm")
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "9m")
    (win,) = won(events := act(g, 1, "win", "9m"))
    assert win.score.pattern is pattern and paid(events) == [(2, 1, amount)]


def test_golden_single_wait_by_the_setting_in_a_typed_hand() -> None:
    # 金钩钓: four pungs declared, won on the pair: 4. Off: the same hand is 对对胡 2.
    text = "6p [111m] [333m] [444m] [222p] +6p"
    assert score(parse_hand(text), UNCAPPED).pattern is Pattern.GOLDEN_SINGLE_WAIT
    off = score(parse_hand(text), UNCAPPED.with_changes(golden_and_flush_terminals=False))
    assert off.pattern is Pattern.ALL_PUNGS and off.multiplier == 2


# --- 绝张 --------------------------------------------------------------------------------------

# Seat 1 waits on 3p or 6p (45p); dummies hold no 6p, so three 6p can reach the rivers first.
LONELY = [DUMMY + "6p", "123m456m789m45p99p", DUMMY, DUMMY]


@pytest.mark.parametrize(("on", "each"), [(False, 1 + 1), (True, 2 + 1)])
def test_a_self_draw_of_the_last_unseen_copy_doubles_by_the_setting(on: bool, each: int) -> None:
    # Three 6p lie in rivers when seat 1 draws the fourth: 平胡 1 (× 2 for 绝张 when on), 加底 + 1.
    g = table(LONELY, draws="3s6p6p3s6p", voids="msmm", rules=NO_SWAP.with_changes(last_copy_bonus=on))
    act(g, 0, "discard", "6p")
    pass_all(g)
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "6p")
    pass_all(g)
    act(g, 3, "discard", "6p")
    pass_all(g)
    act(g, 0, "discard", "3s")
    (win,) = won(events := act(g, 1, "win", "6p"))
    assert (Situation.LAST_COPY in win.hand.situations) is on
    assert paid(events) == [(0, 1, each), (2, 1, each), (3, 1, each)]


def test_a_discard_of_the_last_unseen_copy_doubles_when_on() -> None:
    # Seat 3 punged the dealer's 6p, so three 6p show in its meld: the fourth, discarded, is 绝张.
    # 平胡 1 × 2, paid by the discarder.
    hands = [DUMMY + "6p", "123m456m789m45p99p", DUMMY, "66p147m258m369m3s9s"]
    g = table(hands, draws="3s3s6p", voids="msms", rules=NO_SWAP.with_changes(last_copy_bonus=True))
    act(g, 0, "discard", "6p")
    act(g, 1, "pass")
    act(g, 3, "pung", "6p")
    act(g, 3, "discard", "9s")
    act(g, 0, "discard", "3s")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "6p")
    (win,) = won(events := act(g, 1, "win", "6p"))
    assert Bonus.LAST_COPY in win.score.bonuses and paid(events) == [(2, 1, 2)]


# --- next dealer -------------------------------------------------------------------------------

# Seat 2 waits on 6p and wins on seat 3's discard; the hand ends at the first win (普通).
NEXT = [DUMMY + "9s", DUMMY, "123m456m789m123p6p", DUMMY]


@pytest.mark.parametrize(
    ("setting", "after_win", "after_draw"),
    [(NextDealer.FIRST_WINNER, 2, 0), (NextDealer.ROTATE, 1, 1), (NextDealer.DISCARDER, 3, 0)],
)
def test_next_dealer_by_the_setting(setting: NextDealer, after_win: int, after_draw: int) -> None:
    rules = NO_SWAP.with_changes(mode=GameMode.FIRST_WIN, next_dealer=setting)
    g = table(NEXT, draws="3s3s6p", rules=rules, voids="mmsm")
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "3s")
    act(g, 3, "discard", "6p")
    act(g, 2, "win", "6p")
    assert g.over and g.next_dealer() == after_win
    nobody = table([DUMMY + "3s", DUMMY, DUMMY, DUMMY], rules=rules)
    run_out(nobody)
    assert not nobody.wins and nobody.next_dealer() == after_draw


def test_the_discarder_setting_after_a_self_draw_gives_the_deal_to_the_winner() -> None:
    rules = NO_SWAP.with_changes(mode=GameMode.FIRST_WIN, next_dealer=NextDealer.DISCARDER)
    g = table(NEXT, draws="3s6p", rules=rules, voids="mmsm")
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")
    act(g, 2, "win", "6p")
    assert g.next_dealer() == 2


# --- 换三张 direction ----------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "offset"), [(SwapDirection.CLOCKWISE, 1), (SwapDirection.ACROSS, 2)])
def test_a_fixed_swap_direction_moves_every_seats_three_tiles_there(setting: SwapDirection, offset: int) -> None:
    hands = ["111m222m333m444m55m", "111p222p333p444p5p", "666m777m888m999m5m", "666p777p888p999p5p"]
    for seed in range(6):
        rules = RuleSet(swap_direction=setting)
        g = Game(rules, seed, 0, wall=arranged_wall(0, [parse_tiles(h) for h in hands]))
        gave = {0: "111m", 1: "111p", 2: "666m", 3: "666p"}
        for seat, tiles in gave.items():
            g.apply(Action.swap(seat, parse_tiles(tiles)))
        assert g.direction is setting
        for giver, tiles in gave.items():
            receiver = (giver + offset) % 4
            assert g.view(receiver).swap_received == tuple(parse_tiles(tiles))


def test_a_random_swap_direction_takes_all_three_and_a_fixed_one_keeps_the_wall() -> None:
    seen = {Game(RuleSet(), seed, 0).direction for seed in range(40)}
    assert seen == set(SwapDirection)
    for seed in range(5):
        assert Game(RuleSet(swap_direction=SwapDirection.ACROSS), seed, 0).wall == Game(RuleSet(), seed, 0).wall



# --- RULES.md §7 rulings (where the documents leave room) ----------------------------------------


def test_call_transfer_hands_on_only_the_kong_made_just_before_the_discard() -> None:
    # Seat 3 draws the fourth 6s, declares 暗杠 3333s (2 from each of three), then 补杠 6s (1 from
    # each), and its second replacement 5m feeds seats 1 and 2 (平胡 × 杠上炮 = 2 each). Only the
    # 补杠's 3 is handed on to each winner, not the 暗杠's 6.
    hands = [DUMMY + "6s", "123m46m789m666p99p", "55m789m123m333p99p", "66s3333s44s789s6p9s"]
    g = table(hands, draws="2s2s2s6s", replacements="7p5m", voids="mssm")
    act(g, 0, "discard", "6s")
    act(g, 3, "pung", "6s")
    act(g, 3, "discard", "9s")
    for _ in range(3):
        step(g)
    act(g, 3, "kong", "3s")
    act(g, 3, "kong", "6s")
    act(g, 3, "discard", "5m")
    act(g, 1, "win", "5m")
    events = act(g, 2, "win", "5m")
    assert paid(events, R.WIN_DISCARD) == [(3, 1, 2), (3, 2, 2)]
    assert paid(events, R.CALL_TRANSFER) == [(3, 1, 3), (3, 2, 3)]
    assert g.chips() == [-3, 2, 2, -1]  # seat 3: +6 +3 - 2×2 - 2×3


def test_tax_refund_also_returns_kong_money_paid_by_players_who_already_won() -> None:
    # Seat 2 konged (2 from each of 0, 1, 3); seat 0 then won and left. At the wall seat 2 is not
    # ready, so it refunds all three payments, seat 0's included; 查大叫 pays seat 3 (ready).
    hands = [
        FinalHand(0, (), (), None, False),
        FinalHand(1, tuple(parse_tiles("123m456m789m11p23p")), (), Suit.BAMBOO, True),
        FinalHand(2, tuple(parse_tiles("1347m258m147p")), (Meld(MeldKind.CONCEALED_KONG, parse_tile("9p")),),
                  Suit.BAMBOO, True),
        FinalHand(3, tuple(parse_tiles("11s22s33s44s55s66s7s")), (), Suit.CHARACTERS, True),
    ]
    income = [Transfer(p, 2, 2, R.KONG_CONCEALED) for p in (0, 1, 3)]
    refunds = [(t.payer, t.payee, t.amount) for t in wall_end(hands, income, RuleSet()).transfers
               if t.reason is R.TAX_REFUND]
    assert refunds == [(2, 0, 2), (2, 1, 2), (2, 3, 2)]


def test_nobody_may_pung_the_last_tile() -> None:
    # Seat 1 holds 55s; the last wall tile is the fourth 5s, drawn and thrown by seat 3: no claim,
    # the wall is empty, the hand ends.
    g = _late(54, NO_SWAP, hands=[LATE_DEALER, "147m258m369m3559s", LATE_OTHER, DUMMY])
    _to_draw(g, 3)
    assert g.wall_count == 0
    step(g)
    assert g.over and g.phase is Phase.OVER
