"""Who pays whom (RULES.md §6), function by function, with the rule book's own numbers."""

from __future__ import annotations

import pytest

from engine.rules import DirectKongPayment, FlowerPigPenalty, RuleSet
from engine.scoring import best_wait_value, score, wait_scores
from engine.settlement import (
    FinalHand,
    KongKind,
    Transfer,
    TransferReason,
    call_transfer,
    kong_payment,
    net,
    seat_status,
    wall_end,
    win_by_discard,
    win_by_self_draw,
)
from engine.tiles import Meld, MeldKind, Suit, parse_hand, parse_tiles

R = TransferReason


def triples(transfers: list[Transfer]) -> list[tuple[int, int, int]]:
    return [(t.payer, t.payee, t.amount) for t in transfers]


def test_a_self_drawn_four_times_hand_at_base_five_costs_each_payer_twenty_five() -> None:
    rules = RuleSet(base=5, cap=None)
    s = score(parse_hand("11224466m55889p +9p zimo"), rules)  # 七对, 4
    assert s.multiplier == 4
    out = win_by_self_draw(0, [1, 2, 3], s, rules)
    assert triples(out) == [(1, 0, 25), (2, 0, 25), (3, 0, 25)] and {t.reason for t in out} == {R.SELF_DRAW}


def test_only_players_still_in_pay_a_self_draw() -> None:
    s = score(parse_hand("123m345m789m234p6p +6p zimo"), RuleSet())
    assert triples(win_by_self_draw(2, [0, 3], s, RuleSet())) == [(0, 2, 2), (3, 2, 2)]


def test_kong_flower_contract_makes_the_feeder_pay_every_share() -> None:
    s = score(parse_hand("123m456m789m7p (5555p) +7p gangshanghua"), RuleSet())
    assert triples(win_by_self_draw(0, [1, 2, 3], s, RuleSet(), feeder=2)) == [(2, 0, 3 * s.payment_per_payer)]


def test_a_discard_win_is_paid_by_the_discarder_alone() -> None:
    rules = RuleSet(base=2)
    s = score(parse_hand("111m333m444m222p6p +6p"), rules)  # 对对胡, 2
    out = win_by_discard(1, 3, s, rules)
    assert triples(out) == [(3, 1, 4)] and out[0].reason is R.WIN_DISCARD
    assert win_by_discard(1, 3, s, rules, robbing=True)[0].reason is R.ROBBING_KONG


@pytest.mark.parametrize(
    ("kind", "setting", "expected"),
    [
        (KongKind.CONCEALED, DirectKongPayment.TWO_FROM_DISCARDER, [(1, 0, 2), (2, 0, 2), (3, 0, 2)]),
        (KongKind.ADDED, DirectKongPayment.TWO_FROM_DISCARDER, [(1, 0, 1), (2, 0, 1), (3, 0, 1)]),
        (KongKind.DIRECT, DirectKongPayment.TWO_FROM_DISCARDER, [(2, 0, 2)]),
        (KongKind.DIRECT, DirectKongPayment.ONE_FROM_DISCARDER, [(2, 0, 1)]),
        (KongKind.DIRECT, DirectKongPayment.TWO_PLUS_ONE_FROM_OTHERS, [(2, 0, 2), (1, 0, 1), (3, 0, 1)]),
    ],
)
def test_kong_payments(kind: KongKind, setting: DirectKongPayment, expected: list) -> None:
    out = kong_payment(0, kind, [1, 2, 3], 2, RuleSet(direct_kong_payment=setting))
    assert triples(out) == expected and {t.reason for t in out} == {kind.reason}


def test_kong_payments_scale_with_the_base_and_skip_players_who_left() -> None:
    assert triples(kong_payment(0, KongKind.CONCEALED, [3], None, RuleSet(base=10))) == [(3, 0, 20)]
    with pytest.raises(ValueError):
        kong_payment(0, KongKind.DIRECT, [1, 2, 3], None, RuleSet())


def test_call_transfer_pays_each_winner_what_the_kong_collected() -> None:
    out = call_transfer(3, [1, 2], 3)
    assert triples(out) == [(3, 1, 3), (3, 2, 3)] and out[0].reason is R.CALL_TRANSFER
    assert call_transfer(3, [1], 0) == []


def final(seat: int, concealed: str, void: str, in_play: bool = True, melds=(), unseen=None) -> FinalHand:
    return FinalHand(
        seat,
        tuple(parse_tiles(concealed)),
        tuple(melds),
        Suit.from_letter(void),
        in_play,
        tuple(unseen) if unseen is not None else (4,) * 27,
    )


NINE_GATES = "1112345678999m"  # waits on every 万, and the waits differ in value


def test_not_ready_pays_the_highest_value_or_the_lowest_with_chaxiaojiao() -> None:
    tiles = parse_tiles(NINE_GATES)
    values = sorted({s.multiplier for s in wait_scores(tiles, (), RuleSet()).values()})
    assert len(values) > 1
    for lowest, expected in ((False, values[-1]), (True, values[0])):
        rules = RuleSet(not_ready_pays_lowest=lowest)
        hands = [final(0, NINE_GATES, "p"), final(1, "147m258p369p1p4p7p8p", "s")]
        out = wall_end(hands, [], rules)
        assert triples(list(out.transfers)) == [(1, 0, expected)]
        assert out.transfers[0].reason is R.NOT_READY
        assert expected == best_wait_value(tiles, (), rules, lowest=lowest)


def test_a_flower_pig_pays_sixteen_to_every_non_pig_still_in() -> None:
    hands = [
        final(0, "123m456m789m11p23p", "s"),
        final(1, "1m124578p124578s", "m"),
        final(2, "147m258m369m1479p", "s"),
        final(3, "1m2p3s", "m", in_play=False),
    ]
    out = wall_end(hands, [], RuleSet())
    pig = [t for t in out.transfers if t.reason is R.FLOWER_PIG]
    assert triples(pig) == [(1, 0, 16), (1, 2, 16)]
    assert [s.flower_pig for s in out.statuses] == [False, True, False]
    also_winners = wall_end(hands, [], RuleSet(flower_pig_pays_winners=True))
    assert triples([t for t in also_winners.transfers if t.reason is R.FLOWER_PIG])[-1] == (1, 3, 16)
    capped = wall_end(hands, [], RuleSet(flower_pig_pays=FlowerPigPenalty.CAP, cap=64))
    assert {t.amount for t in capped.transfers if t.reason is R.FLOWER_PIG} == {64}


def test_tax_refund_returns_kong_money_of_players_not_ready_and_pigs() -> None:
    hands = [
        final(0, "123m456m789m11p23p", "s"),
        final(1, "1m124578p124578s", "m"),
        final(2, "1347m258m147p", "s", melds=[Meld(MeldKind.CONCEALED_KONG, 17)]),
        final(3, "11s22s33s44s55s66s7s", "m"),
    ]
    income = [
        Transfer(0, 2, 2, R.KONG_CONCEALED),
        Transfer(1, 2, 2, R.KONG_CONCEALED),
        Transfer(3, 2, 2, R.KONG_CONCEALED),
        Transfer(0, 1, 1, R.KONG_ADDED),
        Transfer(2, 0, 1, R.KONG_ADDED),
    ]
    out = wall_end(hands, income, RuleSet())
    refunds = triples([t for t in out.transfers if t.reason is R.TAX_REFUND])
    assert refunds == [(2, 0, 2), (2, 1, 2), (2, 3, 2), (1, 0, 1)]
    reasons = [t.reason for t in out.transfers]
    assert reasons == sorted(reasons, key=[R.FLOWER_PIG, R.NOT_READY, R.TAX_REFUND].index)
    assert sum(net(list(out.transfers) + income)) == 0


def test_nothing_is_checked_with_fewer_than_two_players_in() -> None:
    hands = [final(0, "1m124578p124578s", "m"), final(1, "1m", "m", False), final(2, "1m", "m", False)]
    assert wall_end(hands, [], RuleSet()).transfers == ()


def test_a_dead_wait_counts_as_ready_unless_the_setting_says_otherwise() -> None:
    unseen = [4] * 27
    unseen[parse_tiles("5p")[0]] = 0  # every 5p is visible
    hand = final(0, "123m456m789m99p4p6p", "s", unseen=unseen)  # waits only on 5p
    assert seat_status(hand, RuleSet()).ready
    status = seat_status(hand, RuleSet(dead_wait_counts_as_ready=False))
    assert not status.ready and status.waits == tuple(parse_tiles("5p"))


def test_holding_a_void_tile_means_not_ready() -> None:
    status = seat_status(final(0, "123m456m789m333s6s", "s"), RuleSet())
    assert not status.ready and not status.flower_pig and status.value == 0


def test_transfers_round_trip_and_net_sums_to_zero() -> None:
    t = Transfer(1, 2, 5, R.SELF_DRAW)
    assert Transfer.from_dict(t.to_dict()) == t
    assert net([t, Transfer(2, 0, 3, R.WIN_DISCARD)]) == [3, -5, 2, 0]
