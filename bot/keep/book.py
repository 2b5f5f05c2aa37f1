"""The scorekeeper's bookkeeping: the current hand's state, and each record's transfers.

A scorekeeping session (记账) for a game played with real tiles is a list of records in
storage: wins, kongs and empty-wall settlements. The state of the hand being played — who is
still in (血战到底: winners leave), which kong payments each player holds (needed for 退税 and
呼叫转移) — is not stored anywhere; it is folded from the records not undone, so an undo
(a compensating record) rewinds it for free and a restart loses nothing.

Every payment comes from ``engine.settlement`` under the chat's ``RuleSet``: this module
decides *who* is in and *what* happened, never how much anyone pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine import settlement
from engine.rules import GameMode, KongFlowerPayer, RuleSet, SelfDrawBonus
from engine.scoring import Pattern, Score, pattern_value, score
from engine.settlement import FinalHand, KongKind, Transfer
from engine.tiles import DescribedHand, HandError, Situation, check_tiles, parse_hand

WIN = "win"
KONG = "kong"
WALL = "wall"


@dataclass(frozen=True, slots=True)
class HeldKong:
    """A kong payment still held by its receiver this hand (refundable by 退税)."""

    record_seq: int
    konger: int
    kind: KongKind
    discarder: int | None
    transfers: tuple[Transfer, ...]

    @property
    def collected(self) -> int:
        return sum(t.amount for t in self.transfers)


@dataclass
class HandState:
    """The hand being played in a session: its number, who is out, the kongs still held."""

    number: int = 1
    seats: int = 4
    won: list[int] = field(default_factory=list)  # seats in the order they won
    kongs: list[HeldKong] = field(default_factory=list)  # kong money still held by its receiver
    latest: dict[int, HeldKong] = field(default_factory=dict)  # each seat's latest kong this hand

    def still_in(self, rules: RuleSet) -> list[int]:
        """Seats still playing: everyone in 血流成河, everyone who has not won otherwise."""
        if rules.mode is GameMode.BLOODY_RIVER:
            return list(range(self.seats))
        return [s for s in range(self.seats) if s not in self.won]

    def last_kong(self, konger: int) -> HeldKong | None:
        """The seat's latest kong this hand if its money is still held (杠上炮 and 点杠花 refer to it)."""
        latest = self.latest.get(konger)
        return latest if latest in self.kongs else None


def active_records(records: Sequence[Any]) -> list[tuple[int, dict[str, Any]]]:
    """(seq, record JSON) of the records that count: neither undone nor an undo themselves."""
    return [(r.seq, r.record) for r in records if r.undoes is None and r.undone_by is None]


def hand_state(records: Sequence[Any], rules: RuleSet, seats: int = 4) -> HandState:
    """Fold a session's records (``ScoreRecord`` values, in order) into the current hand."""
    state = HandState(seats=seats)
    for seq, record in active_records(records):
        kind = record.get("kind")
        if kind == KONG:
            transfers = tuple(Transfer.from_dict(t) for t in record["transfers"])
            held = HeldKong(seq, record["konger"], KongKind(record["type"]), record.get("discarder"), transfers)
            state.kongs.append(held)
            state.latest[held.konger] = held
        elif kind == WIN:
            passed = record.get("call_transfer_from")
            if passed is not None:  # 呼叫转移: that kong's income is no longer the konger's
                held = state.last_kong(passed)
                if held is not None:
                    state.kongs.remove(held)
            state.won.extend(w["seat"] for w in record["winners"] if w["seat"] not in state.won)
            if hand_over_after_win(state, rules):
                state = HandState(number=state.number + 1, seats=seats)
        elif kind == WALL:
            state = HandState(number=state.number + 1, seats=seats)
    return state


def hand_over_after_win(state: HandState, rules: RuleSet) -> bool:
    """普通 ends at the first win; 血战到底 when one player is left; 血流成河 only at the wall."""
    if rules.mode is GameMode.FIRST_WIN:
        return True
    if rules.mode is GameMode.BLOODY_RIVER:
        return False
    return len(state.won) >= state.seats - 1


# --- a win's value ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PickedValue:
    """A win valued by pattern and roots picked from buttons instead of typed tiles.

    It carries what ``engine.settlement`` reads from a ``Score`` (``payment_per_payer``), worked
    out the way RULES.md §5 does: pattern × 2^(roots + bonuses), 自摸加番 doubling before the
    cap, the cap, then 自摸加底's extra base.
    """

    pattern: Pattern
    roots: int
    doublings: int
    multiplier: int
    payment_per_payer: int
    self_draw: bool

    def to_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern.zh, "pattern_en": self.pattern.en, "roots": self.roots,
                "doublings": self.doublings, "multiplier": self.multiplier,
                "payment_per_payer": self.payment_per_payer, "self_draw": self.self_draw, "picked": True}


def picked_value(pattern: Pattern, roots: int, situations: frozenset[Situation], rules: RuleSet) -> PickedValue:
    """The value of a picked pattern with ``roots`` roots beyond those the pattern includes."""
    self_draw = Situation.SELF_DRAW in situations or Situation.KONG_REPLACEMENT in situations
    bonuses = sum(1 for s in (Situation.KONG_REPLACEMENT, Situation.AFTER_KONG_DISCARD, Situation.ROBBING_KONG)
                  if s in situations)
    if Situation.LAST_TILE in situations and rules.last_tile_bonus:
        bonuses += 1
    if Situation.LAST_COPY in situations and rules.last_copy_bonus:
        bonuses += 1
    if self_draw and rules.self_draw is SelfDrawBonus.DOUBLE:
        bonuses += 1
    uncapped = (pattern_value(pattern, rules) or pattern.multiplier) << (roots + bonuses)
    multiplier = uncapped if rules.cap is None else min(uncapped, rules.cap)
    extra = 1 if self_draw and rules.self_draw is SelfDrawBonus.ADD_BASE else 0
    return PickedValue(pattern, roots, bonuses, multiplier, multiplier + extra, self_draw)


def typed_score(text: str, situations: frozenset[Situation], rules: RuleSet) -> Score:
    """A typed winning hand (14 tiles, melds in brackets) scored with the recorded situation.

    Raises ``HandError`` with a code the bot explains (parse, tile_count, too_many_copies,
    three_suits, not_a_win).
    """
    hand = parse_hand(text)
    return score(replace(hand, situations=hand.situations | situations), rules)


def final_hand(text: str, seat: int) -> FinalHand:
    """A player's tiles at an empty wall (13, a kong counting as three); three suits is allowed (花猪)."""
    hand: DescribedHand = parse_hand(text)
    try:
        check_tiles(hand, 13)
    except HandError as error:
        if error.code != "three_suits":
            raise
    return FinalHand(seat, hand.concealed, hand.melds, None, True)


FLOWER_PIG = "flower_pig"
NOT_READY = "not_ready"
# Stand-ins for players who declare their position instead of showing their tiles: any hand
# with three suits is a 花猪, and this two-suit hand has no winning tile (3 from ready), so
# ``engine.settlement.wall_end`` classifies them exactly as declared.
_STAND_INS = {FLOWER_PIG: "1479m1479p258s25s", NOT_READY: "1479m1479p258m25p"}


def declared_hand(seat: int, declared: str) -> FinalHand:
    """The empty-wall position of a player who says "three suits" or "not ready"."""
    hand = parse_hand(_STAND_INS[declared])
    return FinalHand(seat, hand.concealed, (), None, True)


# --- transfers of each kind of record ---------------------------------------------------------


def discard_win_transfers(state: HandState, discarder: int, values: Sequence[tuple[int, Any]],
                          situations: frozenset[Situation], rules: RuleSet) -> tuple[list[Transfer], int | None]:
    """点炮 (一炮多响: each winner in full), 抢杠胡, and 呼叫转移 after a 杠上炮.

    Returns the transfers and the konger whose kong income was passed on (or None).
    """
    robbing = Situation.ROBBING_KONG in situations
    out: list[Transfer] = []
    for winner, value in values:
        out += settlement.win_by_discard(winner, discarder, value, rules, robbing=robbing)
    passed_from = None
    if Situation.AFTER_KONG_DISCARD in situations and rules.kong_cannon_transfer:
        held = state.last_kong(discarder)
        if held is not None:
            out += settlement.call_transfer(discarder, [w for w, _ in values], held.collected)
            passed_from = discarder
    return out, passed_from


def self_draw_transfers(state: HandState, winner: int, value: Any, situations: frozenset[Situation],
                        rules: RuleSet) -> list[Transfer]:
    """自摸: everyone still in pays; 点杠花 承包 / 算点炮 make the feeder of a 直杠 pay alone."""
    payers = [s for s in state.still_in(rules) if s != winner]
    feeder = None
    if Situation.KONG_REPLACEMENT in situations and rules.kong_flower_payer is not KongFlowerPayer.EVERYONE:
        held = state.last_kong(winner)
        if held is not None and held.kind is KongKind.DIRECT:
            feeder = held.discarder
    return settlement.win_by_self_draw(winner, payers, value, rules, feeder=feeder)


def kong_transfers(state: HandState, konger: int, kind: KongKind, discarder: int | None,
                   rules: RuleSet) -> list[Transfer]:
    """刮风下雨, paid at once by the others still in."""
    others = [s for s in state.still_in(rules) if s != konger]
    return settlement.kong_payment(konger, kind, others, discarder, rules)


def wall_transfers(state: HandState, hands: Sequence[FinalHand], rules: RuleSet) -> settlement.WallEnd:
    """查花猪, 查大叫 and 退税 over the hands of the players still in."""
    typed = {h.seat: h for h in hands}
    final = [typed.get(s) or FinalHand(s, (), (), None, False) for s in range(state.seats)]
    income = [t for k in state.kongs for t in k.transfers]
    return settlement.wall_end(final, income, rules)
