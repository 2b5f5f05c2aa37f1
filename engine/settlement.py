"""Who pays whom (RULES.md §6): wins, kongs, 呼叫转移 and the checks at an empty wall.

Every function here is pure: it takes what happened and returns ``Transfer`` values, each a
payment between two seats with the reason a result card shows. Because every payment is a
transfer, a hand's chips sum to zero by construction; ``net`` adds them up per seat.

>>> from engine.rules import RuleSet
>>> kong_payment(0, KongKind.CONCEALED, [1, 2, 3], None, RuleSet())[0]
Transfer(payer=1, payee=0, amount=2, reason=<TransferReason.KONG_CONCEALED: 'kong_concealed'>)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from engine import analysis
from engine.rules import DirectKongPayment, KongFlowerPayer, RuleSet
from engine.scoring import Score, best_wait_value
from engine.tiles import COPIES, Meld, Suit, Tile, counts_of, suits_in, tile_name

SEATS = 4


class TransferReason(Enum):
    """Why chips moved; the value is the stable key used in JSON, logs and translations."""

    WIN_DISCARD = "win_discard"  # 点炮
    SELF_DRAW = "self_draw"  # 自摸 (杠上花 included)
    ROBBING_KONG = "robbing_kong"  # 抢杠胡: the konger pays as the discarder
    KONG_CONCEALED = "kong_concealed"  # 暗杠 (下雨)
    KONG_ADDED = "kong_added"  # 补杠 (刮风)
    KONG_DIRECT = "kong_direct"  # 直杠 (刮风)
    CALL_TRANSFER = "call_transfer"  # 呼叫转移 after 杠上炮
    FLOWER_PIG = "flower_pig"  # 查花猪
    NOT_READY = "not_ready"  # 查大叫 / 查小叫
    TAX_REFUND = "tax_refund"  # 退税

    @property
    def zh(self) -> str:
        return _REASON_ZH[self]


_REASON_ZH = {
    TransferReason.WIN_DISCARD: "点炮",
    TransferReason.SELF_DRAW: "自摸",
    TransferReason.ROBBING_KONG: "抢杠胡",
    TransferReason.KONG_CONCEALED: "暗杠",
    TransferReason.KONG_ADDED: "补杠",
    TransferReason.KONG_DIRECT: "直杠",
    TransferReason.CALL_TRANSFER: "呼叫转移",
    TransferReason.FLOWER_PIG: "查花猪",
    TransferReason.NOT_READY: "查大叫",
    TransferReason.TAX_REFUND: "退税",
}


class KongKind(Enum):
    CONCEALED = "concealed"  # 暗杠: four in hand
    ADDED = "added"  # 补杠: a fourth tile added to one's own pung
    DIRECT = "direct"  # 直杠: three in hand plus someone's discard

    @property
    def zh(self) -> str:
        return {"concealed": "暗杠", "added": "补杠", "direct": "直杠"}[self.value]

    @property
    def reason(self) -> TransferReason:
        return _KONG_REASONS[self]


_KONG_REASONS = {
    KongKind.CONCEALED: TransferReason.KONG_CONCEALED,
    KongKind.ADDED: TransferReason.KONG_ADDED,
    KongKind.DIRECT: TransferReason.KONG_DIRECT,
}
KONG_REASONS = frozenset(_KONG_REASONS.values())


@dataclass(frozen=True, slots=True)
class Transfer:
    """``amount`` chips (base stakes × ``RuleSet.base``) from ``payer`` to ``payee``."""

    payer: int
    payee: int
    amount: int
    reason: TransferReason

    def to_dict(self) -> dict[str, Any]:
        return {"payer": self.payer, "payee": self.payee, "amount": self.amount, "reason": self.reason.value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Transfer:
        reason = TransferReason(data["reason"])
        return cls(int(data["payer"]), int(data["payee"]), int(data["amount"]), reason)


def net(transfers: Iterable[Transfer], seats: int = SEATS) -> list[int]:
    """Chips won (+) or lost (-) per seat; always sums to zero."""
    out = [0] * seats
    for t in transfers:
        out[t.payer] -= t.amount
        out[t.payee] += t.amount
    return out


def _pay(payer: int, payee: int, amount: int, reason: TransferReason) -> list[Transfer]:
    """A transfer, or none when nothing moves (zero amounts are not worth a line on a card)."""
    return [Transfer(payer, payee, amount, reason)] if amount > 0 and payer != payee else []


def win_by_discard(
    winner: int, discarder: int, score: Score, rules: RuleSet, robbing: bool = False
) -> list[Transfer]:
    """点炮: only the discarder pays (抢杠胡: the konger, as if they had discarded the tile)."""
    reason = TransferReason.ROBBING_KONG if robbing else TransferReason.WIN_DISCARD
    return _pay(discarder, winner, score.payment_per_payer * rules.base, reason)


def win_by_self_draw(
    winner: int, payers: Sequence[int], score: Score, rules: RuleSet, feeder: int | None = None
) -> list[Transfer]:
    """自摸: each player still in pays. With 点杠花 承包 the ``feeder`` of the kong pays all the
    shares alone; with 算点炮 the feeder pays once, as for a discard win: the value without the
    加底 extra (the caller values the hand without 自摸加番)."""
    amount = score.payment_per_payer * rules.base
    if feeder is not None and rules.kong_flower_payer is KongFlowerPayer.FEEDER_ONCE:
        return _pay(feeder, winner, score.multiplier * rules.base, TransferReason.WIN_DISCARD)
    if feeder is not None:
        return _pay(feeder, winner, amount * len(payers), TransferReason.SELF_DRAW)
    return [t for p in payers for t in _pay(p, winner, amount, TransferReason.SELF_DRAW)]


def kong_payment(
    konger: int, kind: KongKind, others_in: Sequence[int], discarder: int | None, rules: RuleSet
) -> list[Transfer]:
    """刮风下雨, paid at once by the players still in (never capped).

    暗杠 2 from each, 补杠 1 from each, 直杠 per ``rules.direct_kong_payment`` with the
    ``discarder`` who fed it. (A late 补杠 that earns nothing is simply not passed here.)
    """
    base, reason = rules.base, kind.reason
    if kind is KongKind.CONCEALED:
        return [t for p in others_in for t in _pay(p, konger, 2 * base, reason)]
    if kind is KongKind.ADDED:
        return [t for p in others_in for t in _pay(p, konger, base, reason)]
    if discarder is None:
        raise ValueError("a direct kong (直杠) needs the seat whose discard fed it")
    setting = rules.direct_kong_payment
    if setting is DirectKongPayment.ONE_FROM_DISCARDER:
        return _pay(discarder, konger, base, reason)
    out = _pay(discarder, konger, 2 * base, reason)
    if setting is DirectKongPayment.TWO_PLUS_ONE_FROM_OTHERS:
        out += [t for p in others_in if p != discarder for t in _pay(p, konger, base, reason)]
    return out


def call_transfer(konger: int, winners: Sequence[int], collected: int) -> list[Transfer]:
    """呼叫转移: after 杠上炮 the konger hands each winner all they collected for that kong."""
    return [t for w in winners for t in _pay(konger, w, collected, TransferReason.CALL_TRANSFER)]


@dataclass(frozen=True, slots=True)
class FinalHand:
    """A seat's position when the wall runs out, as the 查叫 checks need it.

    ``unseen`` holds, per tile, the copies this seat cannot see (not in its hand, any meld,
    any river or any revealed winning hand); it decides which waits are dead (死叫).
    """

    seat: int
    concealed: tuple[Tile, ...]
    melds: tuple[Meld, ...]
    void: Suit | None
    in_play: bool
    unseen: tuple[int, ...] = (COPIES,) * 27


@dataclass(frozen=True, slots=True)
class SeatStatus:
    """What the empty-wall check found for one seat still in play."""

    seat: int
    flower_pig: bool  # 花猪: still holds three suits
    ready: bool  # 下叫: has a (live, if dead waits do not count) winning tile
    waits: tuple[Tile, ...]
    value: int  # 倍 a not-ready player owes this seat (capped, no self-draw extra)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "flower_pig": self.flower_pig,
            "ready": self.ready,
            "waits": [tile_name(t) for t in self.waits],
            "value": self.value,
        }


@dataclass(frozen=True, slots=True)
class WallEnd:
    statuses: tuple[SeatStatus, ...]
    transfers: tuple[Transfer, ...]


def seat_status(hand: FinalHand, rules: RuleSet) -> SeatStatus:
    """花猪 / ready / value for one seat; a seat holding a void tile cannot win, so is not ready."""
    all_tiles = list(hand.concealed) + [m.tile for m in hand.melds]
    if len(suits_in(all_tiles)) == 3:
        return SeatStatus(hand.seat, True, False, (), 0)
    holds_void = hand.void is not None and any(t // 9 == hand.void for t in hand.concealed)
    waits = () if holds_void else tuple(analysis.waits(counts_of(hand.concealed), hand.melds))
    dead = () if rules.dead_wait_counts_as_ready else tuple(t for t in waits if hand.unseen[t] == 0)
    live = [t for t in waits if t not in dead]
    if not live:
        return SeatStatus(hand.seat, False, False, waits, 0)
    lowest = rules.not_ready_pays_lowest
    value = best_wait_value(hand.concealed, hand.melds, rules, lowest=lowest, exclude=dead)
    return SeatStatus(hand.seat, False, True, waits, value)


def wall_end(hands: Sequence[FinalHand], kong_income: Sequence[Transfer], rules: RuleSet) -> WallEnd:
    """The empty-wall checks, in RULES.md order: 查花猪, 查大叫 (查小叫), 退税.

    ``kong_income`` is every kong payment still held by its receiver (those passed on by
    呼叫转移 are no longer theirs to refund). Nothing happens with fewer than two players in.
    """
    in_play = [h for h in hands if h.in_play]
    if len(in_play) < 2:
        return WallEnd((), ())
    statuses = [seat_status(h, rules) for h in in_play]
    by_seat = {s.seat: s for s in statuses}
    pigs = [s.seat for s in statuses if s.flower_pig]
    out: list[Transfer] = []
    pig_payees = [s.seat for s in statuses if not s.flower_pig]
    if rules.flower_pig_pays_winners:
        pig_payees += [h.seat for h in hands if not h.in_play]
    penalty = rules.flower_pig_penalty * rules.base
    for pig in pigs:
        for payee in sorted(pig_payees):
            out += _pay(pig, payee, penalty, TransferReason.FLOWER_PIG)
    ready = [s for s in statuses if s.ready]
    for s in statuses:
        if s.flower_pig or s.ready:
            continue
        for r in ready:
            out += _pay(s.seat, r.seat, r.value * rules.base, TransferReason.NOT_READY)
    for t in kong_income:
        status = by_seat.get(t.payee)
        if t.reason in KONG_REASONS and status is not None and not status.ready:
            out += _pay(t.payee, t.payer, t.amount, TransferReason.TAX_REFUND)
    return WallEnd(tuple(statuses), tuple(out))
