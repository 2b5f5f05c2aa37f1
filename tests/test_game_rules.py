"""One scripted hand per rule of RULES.md §1-§7, on arranged walls (see test_game_helpers).

Seats not named in a test hold ``DUMMY`` (they can never claim or win) and void 万.
Unless a test says otherwise the rules are chengdu without the swap (``NO_SWAP``).
"""

from __future__ import annotations

import random

import pytest
from test_game_helpers import DUMMY, NO_SWAP, act, greedy_action, options, run_out, step, table, transfers

from engine.actions import Action, ActionType, GameError
from engine.events import EndReason, EventType
from engine.game import Game, Phase, arranged_wall
from engine.rules import (
    DirectKongPayment,
    FlowerPigPenalty,
    GameMode,
    KongFlowerPayer,
    LastFour,
    PassWinScope,
    RuleSet,
)
from engine.scoring import Bonus
from engine.settlement import KongKind, Transfer, TransferReason
from engine.tiles import MeldKind, Situation, Suit, parse_tile, parse_tiles

R = TransferReason


def paid(events, reason=None):
    return [(t.payer, t.payee, t.amount) for t in transfers(events) if reason is None or t.reason is reason]


def won(events):
    return [e.win for e in events if e.type is EventType.WON]


# --- deal, swap, void ---------------------------------------------------------------------


def test_the_deal_gives_the_dealer_fourteen_and_leaves_fifty_five_in_the_wall() -> None:
    g = Game(RuleSet(), seed=3, dealer=2)
    assert [len(g.hand(s)) for s in range(4)] == [13, 13, 14, 13]
    assert g.wall_count == 55
    assert g.tile_census() == [4] * 27
    assert Game(RuleSet(), 3, 2).to_json() == g.to_json()
    assert Game(RuleSet(), 4, 2).wall != g.wall


def test_swap_three_moves_three_tiles_of_one_suit_in_the_seeded_direction() -> None:
    g = Game(RuleSet(), seed=11, dealer=0)
    assert g.phase is Phase.SWAP and g.pending_seats() == [0, 1, 2, 3]
    before = [g.hand(s) for s in range(4)]
    chosen = []
    for seat in range(4):
        legal = g.legal_actions(seat)
        assert legal and all(len({t // 9 for t in a.tiles}) == 1 and len(a.tiles) == 3 for a in legal)
        chosen.append(legal[0].tiles)
        events = g.apply(legal[0])
        assert g.phase is Phase.VOID or g.legal_actions(seat) == []
    assert g.phase is Phase.VOID
    swapped = [e for e in events if e.type is EventType.SWAPPED]
    assert len(swapped) == 4 and all(e.direction is g.direction for e in swapped)
    assert swapped[0].visible_to(swapped[0].from_seat).tiles == ()  # the giver does not see it again
    offset = g.direction.offset
    for seat in range(4):
        giver = (seat - offset) % 4
        expected = list(before[seat])
        for t in chosen[seat]:
            expected.remove(t)
        assert g.hand(seat) == sorted(expected + list(chosen[giver]))
        assert g.view(seat).swap_received == chosen[giver]


def test_swap_direction_is_hidden_until_everyone_has_chosen() -> None:
    g = Game(RuleSet(), seed=5, dealer=1)
    g.apply(g.legal_actions(0)[0])
    assert g.view(0).swap_direction is None
    with pytest.raises(GameError) as err:
        g.apply(Action.swap(0, g.legal_actions(1)[0].tiles))  # seat 0 has already chosen
    assert err.value.code == "not_your_turn"


def test_the_classic_preset_skips_the_swap() -> None:
    assert Game(RuleSet.preset("classic"), seed=1, dealer=0).phase is Phase.VOID


def test_voids_are_chosen_secretly_and_revealed_together() -> None:
    g = Game(NO_SWAP, seed=2, dealer=0)
    events = g.apply(Action.void(2, Suit.DOTS))
    assert events[0].visible_to(1).suit is None and events[0].visible_to(2).suit is Suit.DOTS
    assert g.view(1).voids == (None, None, None, None)
    assert g.view(2).voids[2] is Suit.DOTS
    for seat in (0, 1, 3):
        events = g.apply(Action.void(seat, Suit.CHARACTERS))
    revealed = [e for e in events if e.type is EventType.VOID_REVEALED]
    assert [e.suit for e in revealed] == [Suit.CHARACTERS, Suit.CHARACTERS, Suit.DOTS, Suit.CHARACTERS]
    assert g.phase is Phase.PLAY and g.pending_seats() == [0]


# --- void discipline -----------------------------------------------------------------------


def test_void_tiles_must_go_first_and_cannot_be_punged() -> None:
    # Seat 1 voids 条 yet holds 33s and 5s: it may not pung the dealer's 3s and must discard 条.
    g = table([DUMMY + "3s", "123m456m789m33s5s9p", DUMMY, DUMMY], draws="1m", voids="mssm")
    act(g, 0, "discard", "3s")
    assert g.phase is Phase.PLAY and g.current == 1  # no claim window: the pung is not allowed
    assert options(g, 1) == {"discard 3s", "discard 5s"}
    with pytest.raises(GameError) as err:
        act(g, 1, "discard", "1m")
    assert err.value.code == "illegal_action"


def test_a_hand_holding_a_void_tile_cannot_win() -> None:
    # 123m456m789m333s + 6s6s is a two-suit win, but 条 is seat 1's void.
    g = table([DUMMY + "3p", "123m456m789m333s6s", DUMMY, DUMMY], draws="6s", voids="mssm")
    act(g, 0, "discard", "3p")
    assert "win 6s" not in options(g, 1)
    assert all(a.type is ActionType.DISCARD and a.tile // 9 == Suit.BAMBOO for a in g.legal_actions(1))


# --- kongs ---------------------------------------------------------------------------------


def test_concealed_kong_collects_two_from_each_and_draws_from_the_back() -> None:
    g = table(["1111m234m567m33p69p", DUMMY, DUMMY, DUMMY], replacements="9p")
    events = act(g, 0, "kong", "1m")
    kong = next(e for e in events if e.type is EventType.KONG)
    assert kong.kong is KongKind.CONCEALED and kong.paid
    assert paid(events, R.KONG_CONCEALED) == [(1, 0, 2), (2, 0, 2), (3, 0, 2)]
    drew = next(e for e in events if e.type is EventType.DREW)
    assert drew.replacement and drew.tile == parse_tile("9p") and g.wall_count == 54
    assert g.melds[0][0].kind is MeldKind.CONCEALED_KONG
    assert g.chips() == [6, -2, -2, -2]


ADDED_KONG_HANDS = [DUMMY + "3p", "33p1234567m66p99p", DUMMY, DUMMY]


def _pung_3p_then_rounds(g: Game) -> None:
    act(g, 0, "discard", "3p")
    assert options(g, 1) == {"pung 3p", "pass"}
    act(g, 1, "pung", "3p")
    assert g.phase is Phase.PLAY and options(g, 1) >= {"discard 9p"}
    assert not any(o.startswith(("win", "kong")) for o in options(g, 1))  # after a pung: discard only
    act(g, 1, "discard", "9p")
    for _ in range(3):
        step(g)


def test_added_kong_on_the_turn_its_tile_is_drawn_collects_one_from_each() -> None:
    g = table(ADDED_KONG_HANDS, draws="8m8m8m3p")
    _pung_3p_then_rounds(g)
    assert g.current == 1 and "kong 3p" in options(g, 1)
    events = act(g, 1, "kong", "3p")
    assert paid(events, R.KONG_ADDED) == [(0, 1, 1), (2, 1, 1), (3, 1, 1)]
    assert g.melds[1] == [g.melds[1][0]] and g.melds[1][0].kind is MeldKind.KONG


@pytest.mark.parametrize(("pays", "expected"), [(False, []), (True, [(0, 1, 1), (2, 1, 1), (3, 1, 1)])])
def test_a_delayed_added_kong_is_a_root_but_earns_nothing_by_default(pays: bool, expected: list) -> None:
    g = table(ADDED_KONG_HANDS, draws="8m8m8m3p9m9m9m6s", rules=NO_SWAP.with_changes(delayed_added_kong_pays=pays))
    _pung_3p_then_rounds(g)
    act(g, 1, "discard", "1m")  # keeps the 3p it drew
    for _ in range(3):
        step(g)
    assert g.current == 1 and "kong 3p" in options(g, 1)
    events = act(g, 1, "kong", "3p")
    kong = next(e for e in events if e.type is EventType.KONG)
    assert kong.paid is pays
    assert paid(events, R.KONG_ADDED) == expected
    assert g.melds[1][0].kind is MeldKind.KONG


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (DirectKongPayment.TWO_FROM_DISCARDER, [(0, 1, 2)]),
        (DirectKongPayment.ONE_FROM_DISCARDER, [(0, 1, 1)]),
        (DirectKongPayment.TWO_PLUS_ONE_FROM_OTHERS, [(0, 1, 2), (2, 1, 1), (3, 1, 1)]),
    ],
)
def test_direct_kong_payment_follows_the_setting(setting: DirectKongPayment, expected: list) -> None:
    g = table(
        [DUMMY + "3p", "333p123m456m789m6p", DUMMY, DUMMY],
        replacements="9s",
        rules=NO_SWAP.with_changes(direct_kong_payment=setting),
    )
    act(g, 0, "discard", "3p")
    assert options(g, 1) == {"pung 3p", "kong 3p", "pass"}
    events = act(g, 1, "kong", "3p")
    assert paid(events, R.KONG_DIRECT) == expected
    assert g.current == 1 and g.drawn == parse_tile("9s") and g.rivers[0] == []


# --- robbing a kong --------------------------------------------------------------------------

ROB_HANDS = [DUMMY + "3p", "33p1234567m66p99p", "123m456m789m1p9p55p", DUMMY]


def _to_the_added_kong(g: Game) -> list:
    act(g, 0, "discard", "3p")
    act(g, 1, "pung", "3p")
    act(g, 1, "discard", "9p")
    act(g, 2, "discard", "9p")  # seat 2 drew 2p and now waits on 3p
    step(g)
    step(g)
    return act(g, 1, "kong", "3p")


def test_robbing_a_kong_the_kong_is_not_made_and_the_konger_pays_as_discarder() -> None:
    g = table(ROB_HANDS, draws="2p8m8m3p")
    events = _to_the_added_kong(g)
    assert [e.type for e in events] == [EventType.KONG_DECLARED]
    assert g.phase is Phase.ROB and g.pending_seats() == [2]
    assert options(g, 2) == {"win 3p", "pass"}
    events = act(g, 2, "win", "3p")
    (win,) = won(events)
    assert Situation.ROBBING_KONG in win.hand.situations and Bonus.ROBBING_KONG in win.score.bonuses
    assert paid(events) == [(1, 2, 2)]  # 平胡 ×2 for 抢杠
    assert transfers(events)[0].reason is R.ROBBING_KONG
    assert g.melds[1][0].kind is MeldKind.PUNG
    assert not any(e.type is EventType.KONG for e in events)
    assert g.tile_census() == [4] * 27


def test_declining_to_rob_lets_the_kong_stand_and_pay() -> None:
    g = table(ROB_HANDS, draws="2p8m8m3p", replacements="9s")
    _to_the_added_kong(g)
    events = act(g, 2, "pass")
    assert paid(events, R.KONG_ADDED) == [(0, 1, 1), (2, 1, 1), (3, 1, 1)]
    assert g.melds[1][0].kind is MeldKind.KONG and g.drawn == parse_tile("9s")
    assert g.passed[2] == 2  # 过水: the declined 抢杠 win


# --- multiple winners, 杠上炮 and 呼叫转移 ---------------------------------------------------

# Seat 1 waits on 5m (46m), seat 2 on 5m or 9p (55m + 99p).
TWO_WAITERS = [DUMMY + "9s", "123m46m789m666p99p", "55m789m123m333p99p", DUMMY]


def test_several_winners_on_one_discard_are_each_paid_in_full() -> None:
    g = table(TWO_WAITERS, draws="6s6s5m")
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "6s")
    act(g, 2, "discard", "6s")
    act(g, 3, "discard", "5m")
    assert g.phase is Phase.CLAIM and g.pending_seats() == [1, 2]
    assert options(g, 2) == {"win 5m", "pung 5m", "pass"}
    act(g, 2, "win", "5m")
    events = act(g, 1, "win", "5m")
    assert [w.seat for w in won(events)] == [1, 2]
    assert paid(events) == [(3, 1, 1), (3, 2, 1)]
    assert g.in_play == [True, False, False, True]
    assert g.current == 3  # play goes on after the last winner
    run_out(g)
    assert g.next_dealer() == 3  # 一炮多响: the discarder deals next


def test_a_win_beats_a_pung_on_the_same_discard() -> None:
    g = table(TWO_WAITERS, draws="6s6s5m")
    for seat, tile in ((0, "9s"), (1, "6s"), (2, "6s"), (3, "5m")):
        act(g, seat, "discard", tile)
    act(g, 2, "pung", "5m")
    events = act(g, 1, "win", "5m")
    assert [w.seat for w in won(events)] == [1]
    assert not any(e.type is EventType.PUNGED for e in events)
    assert g.current == 2 and g.melds[2] == []


def test_kong_then_discard_into_two_winners_hands_on_the_kong_money_to_each() -> None:
    # Seat 3 punges 6s, draws the fourth 6s and adds it (collecting 1 from each of three),
    # draws 5m from the back and must discard it (void 万): 杠上炮 into seats 1 and 2.
    hands = [DUMMY + "6s", "123m46m789m666p99p", "55m789m123m333p99p", "66s111s444s789s6p9s"]
    g = table(hands, draws="3s3s3s6s", replacements="5m", voids="mssm")
    act(g, 0, "discard", "6s")
    act(g, 3, "pung", "6s")
    act(g, 3, "discard", "9s")
    for _ in range(3):
        step(g)
    events = act(g, 3, "kong", "6s")
    assert paid(events, R.KONG_ADDED) == [(0, 3, 1), (1, 3, 1), (2, 3, 1)]
    assert g.drawn == parse_tile("5m") and options(g, 3) == {"discard 5m"}
    act(g, 3, "discard", "5m")
    act(g, 1, "win", "5m")
    events = act(g, 2, "win", "5m")
    for w in won(events):
        assert Situation.AFTER_KONG_DISCARD in w.hand.situations and w.score.multiplier == 2
    assert paid(events, R.WIN_DISCARD) == [(3, 1, 2), (3, 2, 2)]
    assert paid(events, R.CALL_TRANSFER) == [(3, 1, 3), (3, 2, 3)]  # "hand value plus 3" each
    assert g.chips() == [-1, 4, 4, -7]


# --- 杠上花 and 点杠花 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payer", "expected"),
    [(KongFlowerPayer.EVERYONE, [(0, 1, 5), (2, 1, 5), (3, 1, 5)]), (KongFlowerPayer.FEEDER, [(0, 1, 15)])],
)
def test_a_win_on_the_replacement_of_a_direct_kong(payer: KongFlowerPayer, expected: list) -> None:
    g = table(
        [DUMMY + "3p", "333p123m456m789m5m", DUMMY, DUMMY],
        replacements="5m",
        rules=NO_SWAP.with_changes(kong_flower_payer=payer),
    )
    act(g, 0, "discard", "3p")
    act(g, 1, "kong", "3p")
    events = act(g, 1, "win", "5m")
    (win,) = won(events)
    assert Situation.KONG_REPLACEMENT in win.hand.situations
    assert win.score.multiplier == 4  # 平胡 × 根 × 杠上花; 加底 makes 5 a payer
    assert paid(events, R.SELF_DRAW) == expected


# --- 过水不胡 ------------------------------------------------------------------------------

# Seat 1: 22m33m44m55m66m77m8m waits 2m or 5m (清一色, 4) and 8m (清七对, 8).
PASSER = [DUMMY + "9s", "22m33m44m55m66m77m8m", DUMMY, DUMMY]


def test_a_passed_win_bars_discard_wins_until_the_next_draw_unless_worth_more() -> None:
    g = table(PASSER, draws="3s2m5m8m3s2m", voids="mpmm")
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "2m")
    assert options(g, 1) == {"win 2m", "pung 2m", "pass"}
    act(g, 1, "pass")
    assert g.passed[1] == 4
    act(g, 3, "discard", "5m")
    assert options(g, 1) == {"pung 5m", "pass"}  # the same value (4) is barred
    act(g, 1, "pass")
    act(g, 0, "discard", "8m")
    assert options(g, 1) == {"win 8m", "pass"}  # 清七对 (8) is worth strictly more
    act(g, 1, "pass")
    assert g.current == 1 and g.passed[1] is None  # seat 1 drew: the bar is lifted
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "2m")
    assert "win 2m" in options(g, 1)


def test_without_the_pass_rule_a_passed_win_can_be_taken_later() -> None:
    g = table(PASSER, draws="3s2m5m", voids="mpmm", rules=NO_SWAP.with_changes(pass_win_scope=PassWinScope.OFF))
    act(g, 0, "discard", "9s")
    act(g, 1, "discard", "3s")
    act(g, 2, "discard", "2m")
    act(g, 1, "pass")
    act(g, 3, "discard", "5m")
    assert "win 5m" in options(g, 1)


def test_a_self_draw_is_allowed_after_passing_a_win() -> None:
    g = table(PASSER, draws="3s2m3s3s5m", voids="mpmm")
    for seat, tile in ((0, "9s"), (1, "3s"), (2, "2m")):
        act(g, seat, "discard", tile)
    act(g, 1, "pass")
    act(g, 3, "discard", "3s")
    act(g, 0, "discard", "3s")
    assert g.current == 1 and "win 5m" in options(g, 1)  # worth no more than the passed win, yet allowed


# --- the last four tiles and 海底 ----------------------------------------------------------


def _late_table(hands: list[str], index: int, tile: str, voids: str, rules: RuleSet = NO_SWAP) -> Game:
    """Normal draw number ``index`` brings ``tile``; its other copies come first (passing is free then)."""
    dealt = [parse_tiles(h) for h in hands]
    used = [t for h in dealt for t in h]
    wanted = parse_tile(tile)
    left = [t for t in range(27) for _ in range(4 - used.count(t)) if t != wanted]
    for _ in range(4 - used.count(wanted) - 1):
        left.insert(1, wanted)  # drawn early by the seats after the waiter
    left.insert(index, wanted)
    g = Game(rules, 0, 0, wall=arranged_wall(0, dealt, left))
    for seat, suit in enumerate(voids):
        g.apply(Action.void(seat, Suit.from_letter(suit)))
    return g


# Seats 0 and 2 are never ready (shanten 2); the waiting seat holds 123p456p789p123s5s.
LATE_DEALER, LATE_OTHER, LATE_WAITER = "147m258m369m4679s3s", "147m258m369m3689s", "123p456p789p123s5s"


@pytest.mark.parametrize("forced", [True, False])
def test_a_seat_that_can_win_in_the_last_four_tiles_must(forced: bool) -> None:
    rules = NO_SWAP.with_changes(last_four=LastFour.DRAWS_AND_DISCARDS if forced else LastFour.OFF)
    # Seat 1's 14th draw (normal draw 52) brings its 5s and leaves 2 tiles in the wall.
    g = _late_table([LATE_DEALER, LATE_WAITER, LATE_OTHER, DUMMY], 52, "5s", "pmpm", rules)
    while not (g.current == 1 and g.drawn == parse_tile("5s")):
        step(g)
    assert g.wall_count == 2
    if forced:
        assert options(g, 1) == {"win 5s"}
        events = act(g, 1, "win", "5s")
        assert Situation.LAST_TILE not in won(events)[0].hand.situations
    else:
        assert "win 5s" in options(g, 1) and len(options(g, 1)) > 1


def test_a_discard_win_in_the_last_four_tiles_is_forced_too() -> None:
    # Seat 2 draws the 5s with 1 tile left and throws it straight back.
    g = _late_table([LATE_DEALER, LATE_WAITER, LATE_OTHER, DUMMY], 53, "5s", "pmpm")
    while not (g.phase is Phase.CLAIM and g.window and g.window.tile == parse_tile("5s") and g.wall_count <= 4):
        step(g)
    assert g.pending_seats() == [1] and options(g, 1) == {"win 5s"}


def test_a_self_draw_on_the_last_tile_is_haidi() -> None:
    g = _late_table([LATE_DEALER, DUMMY, LATE_OTHER, LATE_WAITER], 54, "5s", "pmpm")
    events = run_out(g)
    (win,) = won(events)
    assert win.seat == 3 and Situation.LAST_TILE in win.hand.situations
    assert Bonus.LAST_TILE in win.score.bonuses and g.end is EndReason.WALL_EMPTY


# --- 天胡 and 地胡 --------------------------------------------------------------------------


def test_heavenly_win_is_worth_the_cap() -> None:
    g = table(["123m456m789m333p66p", DUMMY, DUMMY, DUMMY])
    events = act(g, 0, "win", "6p")
    (win,) = won(events)
    assert Situation.HEAVENLY in win.hand.situations and Bonus.HEAVENLY in win.score.bonuses
    assert win.score.multiplier == 8
    assert paid(events) == [(1, 0, 9), (2, 0, 9), (3, 0, 9)]  # cap 8, plus 1 for 自摸加底


def test_earthly_win_on_the_first_draw() -> None:
    g = table([DUMMY + "9s", "123m456m789m123p6p", DUMMY, DUMMY], draws="6p")
    act(g, 0, "discard", "9s")
    events = act(g, 1, "win", "6p")
    (win,) = won(events)
    assert Situation.EARTHLY in win.hand.situations and win.score.multiplier == 8


def test_earthly_win_on_the_dealers_first_discard() -> None:
    g = table([DUMMY + "6p", "123m456m789m123p6p", DUMMY, DUMMY])
    act(g, 0, "discard", "6p")
    events = act(g, 1, "win", "6p")
    (win,) = won(events)
    assert Situation.EARTHLY in win.hand.situations and paid(events) == [(0, 1, 8)]


def test_no_earthly_win_once_someone_has_punged() -> None:
    hands = [DUMMY + "3s", "123m456m789m123p6p", "33s147m258m369m6s9s", DUMMY]
    g = table(hands, draws="3p3p6p", voids="msps")
    act(g, 0, "discard", "3s")
    act(g, 2, "pung", "3s")
    act(g, 2, "discard", "9s")
    step(g)
    step(g)
    events = act(g, 1, "win", "6p")
    assert Situation.EARTHLY not in won(events)[0].hand.situations


# --- modes and next dealer ------------------------------------------------------------------

TWICE = [DUMMY + "9s", "123m456m789m123p6p", DUMMY, DUMMY]
TWICE_DRAWS = "3s6s6s6s" + "6p6s3s3s" + "6p"


def test_bloody_battle_the_winner_leaves_and_play_goes_on() -> None:
    g = table(TWICE, draws=TWICE_DRAWS)
    act(g, 0, "discard", "9s")
    for _ in range(4):
        step(g)
    events = act(g, 1, "win", "6p")
    assert paid(events) == [(0, 1, 2), (2, 1, 2), (3, 1, 2)]
    assert g.in_play == [True, False, True, True] and g.current == 2
    run_out(g)
    assert 1 not in {a.seat for a in g.actions[10:]}
    assert g.next_dealer() == 1 and g.end is EndReason.WALL_EMPTY


def test_bloody_river_the_winner_plays_on_and_wins_again() -> None:
    g = table(TWICE, draws=TWICE_DRAWS, rules=RuleSet.preset("xueliu").with_changes(swap_three=False))
    act(g, 0, "discard", "9s")
    for _ in range(4):
        step(g)
    act(g, 1, "win", "6p")
    assert g.in_play == [True] * 4 and g.hand(1) == parse_tiles("123m456m789m123p6p")
    for _ in range(3):
        step(g)
    assert g.current == 1 and options(g, 1) >= {"win 6p"}
    act(g, 1, "win", "6p")
    assert [w.seat for w in g.wins] == [1, 1] and g.chips()[1] == 12
    run_out(g)
    assert g.end is EndReason.WALL_EMPTY and g.next_dealer() == 1


def test_classic_the_first_win_ends_the_hand() -> None:
    g = table(TWICE, draws=TWICE_DRAWS, rules=RuleSet.preset("classic"))
    act(g, 0, "discard", "9s")
    for _ in range(4):
        step(g)
    events = act(g, 1, "win", "6p")
    assert events[-1].type is EventType.HAND_OVER and events[-1].end is EndReason.FIRST_WIN
    assert g.over and g.next_dealer() == 1 and g.pending_seats() == []


def test_nobody_wins_so_the_dealer_stays() -> None:
    g = table([DUMMY, DUMMY, DUMMY + "3p", DUMMY], dealer=2)
    run_out(g)
    assert g.end is EndReason.WALL_EMPTY and g.wins == [] and g.next_dealer() == 2
    assert g.chips() == [0, 0, 0, 0]


def test_next_dealer_is_unknown_before_the_end() -> None:
    with pytest.raises(GameError) as err:
        Game(RuleSet(), 1, 0).next_dealer()
    assert err.value.code == "hand_not_over"


def test_three_winners_end_a_bloody_battle_without_checking_the_rest() -> None:
    for seed in range(30):
        g = Game(RuleSet(), seed, seed % 4)
        rng = random.Random(seed)
        while not g.over:
            g.apply(greedy_action(g, rng))
        if g.end is EndReason.THREE_WON:
            assert len(g.winners()) == 3 and sum(g.in_play) == 1
            assert not any(t.reason in (R.FLOWER_PIG, R.NOT_READY, R.TAX_REFUND) for t in g.transfers)
            return
    pytest.fail("no seed in 0..29 ended with three winners")


# --- the empty wall: 查花猪, 查大叫, 退税 ---------------------------------------------------


def _wall_end_table(rules: RuleSet = NO_SWAP) -> Game:
    # Seat 0 waits on 1s/4s; seat 1 is a 花猪 (voids 万 but draws nothing else); seat 2 waits on
    # 5s/9s (清一色); seat 3 holds four 3p for a concealed kong and is never ready.
    hands = ["123m456m789m11s23s9p", "1m124578p124578s", "456s789s666s99s55s", "3333p69p147m258m9m"]
    used = [t for h in hands for t in parse_tiles(h)]
    left = [t for t in range(27) for _ in range(4 - used.count(t))]
    manzu = [t for t in left if t < 9]
    other = [t for t in left if t >= 9]
    other.sort(key=lambda t: t not in parse_tiles("1s4s5s9s"))  # wait tiles early, while passing is free
    replacement = [t for t in other if t >= 18][-1]
    other.remove(replacement)
    draws = []
    for i in range(54):
        seat = (1 + i) % 4
        draws.append(manzu.pop() if seat == 1 or not other else other.pop(0))
    wall = arranged_wall(0, [parse_tiles(h) for h in hands], draws, [replacement])
    g = Game(rules, 0, 0, wall=wall)
    for seat, suit in enumerate("pmms"):
        g.apply(Action.void(seat, Suit.from_letter(suit)))
    return g


def test_empty_wall_checks_flower_pig_not_ready_and_tax_refund_in_order() -> None:
    g = _wall_end_table()
    act(g, 0, "discard", "9p")
    while not (g.phase is Phase.PLAY and g.current == 3):
        step(g)
    events = act(g, 3, "kong", "3p")
    assert paid(events, R.KONG_CONCEALED) == [(0, 3, 2), (1, 3, 2), (2, 3, 2)]
    events = run_out(g)
    checks = {e.seat: e.status for e in events if e.type is EventType.WALL_CHECK}
    assert checks[1].flower_pig and checks[0].ready and checks[2].ready and not checks[3].ready
    end = [(t.payer, t.payee, t.amount, t.reason) for t in transfers(events)]
    v0, v2 = checks[0].value, checks[2].value
    assert end == [
        (1, 0, 16, R.FLOWER_PIG),
        (1, 2, 16, R.FLOWER_PIG),
        (1, 3, 16, R.FLOWER_PIG),
        (3, 0, v0, R.NOT_READY),
        (3, 2, v2, R.NOT_READY),
        (3, 0, 2, R.TAX_REFUND),
        (3, 1, 2, R.TAX_REFUND),
        (3, 2, 2, R.TAX_REFUND),
    ]
    assert sum(g.chips()) == 0 and g.end is EndReason.WALL_EMPTY


def test_flower_pig_pays_the_cap_when_set() -> None:
    g = _wall_end_table(NO_SWAP.with_changes(flower_pig_pays=FlowerPigPenalty.CAP, cap=32))
    events = run_out(g)
    assert {t.amount for t in transfers(events) if t.reason is R.FLOWER_PIG} == {32}


def test_transfers_name_their_reasons_in_chinese() -> None:
    assert R.CALL_TRANSFER.zh == "呼叫转移" and R.TAX_REFUND.zh == "退税"
    assert Transfer(0, 1, 2, R.FLOWER_PIG).to_dict() == {
        "payer": 0,
        "payee": 1,
        "amount": 2,
        "reason": "flower_pig",
    }


def test_xueliu_and_classic_modes_exist_as_presets() -> None:
    assert RuleSet.preset("xueliu").mode is GameMode.BLOODY_RIVER
    assert RuleSet.preset("classic").mode is GameMode.FIRST_WIN
