"""One hand of 血战到底 as a deterministic state machine (RULES.md §1-§7).

The referee never trusts a caller: ``legal_actions(seat)`` lists exactly what a seat may do
now, ``apply(action)`` refuses anything else with a ``GameError`` (and changes nothing), and
every change is reported as ``Event`` values, payments included. Draws happen by themselves
when the turn passes, so the only actions are decisions: swap, void, discard, win, pung,
kong, pass. ``pending_seats()`` says whose decision the hand is waiting for.

The state is plain data: ``Game.replay(rules, seed, dealer, actions)`` rebuilds it exactly,
and ``to_json()`` / ``Game.from_json()`` round-trip it, which is what restarts and replays
rest on.

>>> from engine.rules import RuleSet
>>> g = Game(RuleSet.preset("classic"), seed=7, dealer=0)
>>> g.phase.value, g.pending_seats(), g.wall_count
('void', [0, 1, 2, 3], 55)
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import combinations
from typing import Any

from engine import analysis, settlement
from engine.actions import SEATS, Action, ActionType, GameError
from engine.events import EndReason, Event, EventType, Win, hand_from_dict, hand_to_dict
from engine.rules import (
    GameMode,
    KongFlowerPayer,
    NextDealer,
    PassWinScope,
    RuleSet,
    SelfDrawBonus,
    SwapDirection,
)
from engine.scoring import score
from engine.settlement import FinalHand, KongKind, Transfer
from engine.tiles import (
    ALL_TILES,
    COPIES,
    NUM_KINDS,
    DescribedHand,
    Meld,
    MeldKind,
    Situation,
    Suit,
    Tile,
    counts_of,
    suits_in,
    tile_name,
    tiles_of,
)

HAND_SIZE = 13
WALL_TILES = NUM_KINDS * COPIES
DEALT_TILES = HAND_SIZE * SEATS + 1
FORCED_WIN_TILES = 4  # "last four tiles" (RULES.md §3): four or fewer left before the draw
STATE_VERSION = 1


class Phase(Enum):
    SWAP = "swap"  # 换三张: every seat picks three tiles of one suit
    VOID = "void"  # 定缺: every seat picks a suit, revealed together
    PLAY = "play"  # ``current`` seat's turn: win, kong or discard
    CLAIM = "claim"  # a discard is offered: eligible seats choose win / pung / kong / pass
    ROB = "rob"  # a 补杠 is offered: seats that can win on it choose win (抢杠胡) / pass
    OVER = "over"


class TurnKind(Enum):
    """How the current turn began; it decides what the seat may do and which bonuses apply."""

    DEAL = "deal"  # the dealer's first turn on 14 dealt tiles (天胡 possible)
    DRAW = "draw"
    REPLACEMENT = "replacement"  # after a kong (杠上花 possible)
    CLAIM = "claim"  # after a pung: discard only


@dataclass
class KongRecord:
    """A kong made in this hand and the payments it earned (for 呼叫转移 and 退税)."""

    seat: int
    tile: Tile
    kind: KongKind
    fed_by: int | None  # the discarder of a 直杠
    transfers: list[Transfer] = field(default_factory=list)
    forwarded: bool = False  # its income was handed on by 呼叫转移

    @property
    def collected(self) -> int:
        return sum(t.amount for t in self.transfers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "tile": self.tile,
            "kind": self.kind.value,
            "fed_by": self.fed_by,
            "transfers": [t.to_dict() for t in self.transfers],
            "forwarded": self.forwarded,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KongRecord:
        return cls(
            d["seat"],
            d["tile"],
            KongKind(d["kind"]),
            d["fed_by"],
            [Transfer.from_dict(t) for t in d["transfers"]],
            d["forwarded"],
        )


@dataclass
class Window:
    """A tile on offer (a discard, or a tile being added to a pung) and who may claim it.

    ``values`` keeps the uncapped value of each possible win so that a seat declining it can
    be held to 过水不胡. The window closes when every seat in ``options`` has decided.
    """

    rob: bool
    tile: Tile
    from_seat: int
    options: dict[int, list[Action]]
    values: dict[int, int]
    decisions: dict[int, Action] = field(default_factory=dict)
    after_kong: int | None = None  # index into Game.kongs: the discard follows that kong (杠上炮)
    earthly: bool = False  # the dealer's first discard, before any pung or kong (地胡)
    last_tile: bool = False  # the discard is the last wall tile itself (海底)
    last_four: bool = False  # the tile offered is one of the last four of the wall (RULES.md §3)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rob": self.rob,
            "tile": self.tile,
            "from_seat": self.from_seat,
            "options": {str(s): [a.to_dict() for a in acts] for s, acts in self.options.items()},
            "values": {str(s): v for s, v in self.values.items()},
            "decisions": {str(s): a.to_dict() for s, a in self.decisions.items()},
            "after_kong": self.after_kong,
            "earthly": self.earthly,
            "last_tile": self.last_tile,
            "last_four": self.last_four,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Window:
        return cls(
            d["rob"],
            d["tile"],
            d["from_seat"],
            {int(s): [Action.from_dict(a) for a in acts] for s, acts in d["options"].items()},
            {int(s): v for s, v in d["values"].items()},
            {int(s): Action.from_dict(a) for s, a in d["decisions"].items()},
            d["after_kong"],
            d["earthly"],
            d["last_tile"],
            d.get("last_four", False),
        )


def _touches(counts: Sequence[int], tile: Tile) -> bool:
    """Whether ``tile`` could join a pair or set of the hand: a held copy or a neighbour within two.

    A cheap filter before the full win test on every discard.
    """
    low = tile - tile % 9
    return any(counts[max(low, tile - 2) : min(low + 9, tile + 3)])


def unseen_counts(seen: Iterable[Tile]) -> list[int]:
    """Copies of each tile left unaccounted for once ``seen`` tiles are known."""
    out = [COPIES] * NUM_KINDS
    for t in seen:
        out[t] -= 1
    return out


@dataclass(frozen=True, slots=True)
class SeatView:
    """What one seat may know: its own tiles and everything on the table, never others' hands.

    ``revealed`` holds the concealed tiles of players who have left the hand (winners show
    their hands); ``won_tiles`` the self-drawn winning tiles set aside.
    """

    seat: int
    phase: Phase
    dealer: int
    current: int | None
    hand: tuple[Tile, ...]
    drawn: Tile | None
    melds: tuple[tuple[Meld, ...], ...]
    rivers: tuple[tuple[Tile, ...], ...]
    won_tiles: tuple[tuple[Tile, ...], ...]
    revealed: tuple[tuple[Tile, ...], ...]
    voids: tuple[Suit | None, ...]
    in_play: tuple[bool, ...]
    wall_count: int
    offered: Tile | None
    offered_by: int | None
    swap_direction: SwapDirection | None
    swap_given: tuple[Tile, ...]
    swap_received: tuple[Tile, ...]
    wins: tuple[Win, ...]
    transfers: tuple[Transfer, ...]
    chips: tuple[int, ...]
    legal: tuple[Action, ...]
    pending: tuple[int, ...]

    def unseen(self) -> list[int]:
        """Copies of each tile this seat cannot see (in others' hands or the wall)."""
        seen: list[Tile] = list(self.hand)
        for s in range(SEATS):
            seen += self.rivers[s]
            seen += self.won_tiles[s]
            seen += self.revealed[s]
            for m in self.melds[s]:
                seen += [m.tile] * m.size
        return unseen_counts(seen)

    def to_dict(self) -> dict[str, Any]:
        def names(tiles: Iterable[Tile]) -> list[str]:
            return [tile_name(t) for t in tiles]

        return {
            "seat": self.seat,
            "phase": self.phase.value,
            "dealer": self.dealer,
            "current": self.current,
            "hand": names(self.hand),
            "drawn": tile_name(self.drawn) if self.drawn is not None else None,
            "melds": [[m.notation() for m in ms] for ms in self.melds],
            "rivers": [names(r) for r in self.rivers],
            "won_tiles": [names(r) for r in self.won_tiles],
            "revealed": [names(r) for r in self.revealed],
            "voids": [v.letter if v is not None else None for v in self.voids],
            "in_play": list(self.in_play),
            "wall_count": self.wall_count,
            "offered": tile_name(self.offered) if self.offered is not None else None,
            "offered_by": self.offered_by,
            "swap_direction": self.swap_direction.value if self.swap_direction else None,
            "swap_given": names(self.swap_given),
            "swap_received": names(self.swap_received),
            "wins": [w.to_dict() for w in self.wins],
            "transfers": [t.to_dict() for t in self.transfers],
            "chips": list(self.chips),
            "legal": [a.to_dict() for a in self.legal],
            "pending": list(self.pending),
        }


def arranged_wall(
    dealer: int,
    hands: Sequence[Sequence[Tile]],
    draws: Sequence[Tile] = (),
    replacements: Sequence[Tile] = (),
) -> list[Tile]:
    """A full 108-tile wall that deals ``hands`` (by seat; the dealer's has 14 tiles) and then
    yields ``draws`` from the front and ``replacements`` (first one first) from the back.

    The rest of the wall is filled with the remaining tiles in order. This is how tests and
    puzzles set up a position; pass the result as ``Game(..., wall=...)``.
    """
    if len(hands) != SEATS:
        raise GameError("bad_setup", "arranged_wall needs one hand per seat")
    order = [(dealer + i) % SEATS for i in range(SEATS)]
    front: list[Tile] = []
    for i, seat in enumerate(order):
        want = HAND_SIZE + (1 if i == 0 else 0)
        if len(hands[seat]) != want:
            raise GameError("bad_setup", f"seat {seat} must be dealt {want} tiles, got {len(hands[seat])}")
        front += list(hands[seat])
    front += list(draws)
    left = unseen_counts(front + list(replacements))
    if min(left) < 0:
        raise GameError("bad_setup", "the arranged tiles use some tile more than four times")
    middle = tiles_of(left)
    return front + middle + list(reversed(replacements))


def _check_wall(wall: Sequence[Tile]) -> list[Tile]:
    tiles = list(wall)
    if len(tiles) != WALL_TILES or counts_of(tiles) != [COPIES] * NUM_KINDS:
        raise GameError("bad_setup", "a wall must hold each of the 27 tiles exactly four times")
    return tiles


class Game:
    """One hand. ``wall`` (optional) fixes the tile order instead of the seeded shuffle.

    The first 53 tiles of the wall are dealt (14 to the dealer, then 13 to each seat in
    turn order); draws take from the front, kong replacements from the back.
    """

    def __init__(self, rules: RuleSet, seed: int, dealer: int, *, wall: Sequence[Tile] | None = None) -> None:
        if not isinstance(rules, RuleSet):
            raise GameError("bad_setup", "rules must be a RuleSet")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise GameError("bad_setup", f"seed must be an integer, got {seed!r}")
        if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < SEATS:
            raise GameError("bad_setup", f"dealer must be a seat 0-3, got {dealer!r}")
        rng = random.Random(seed)
        if wall is None:
            tiles = [t for t in ALL_TILES for _ in range(COPIES)]
            rng.shuffle(tiles)
        else:
            tiles = _check_wall(wall)
        self.rules = rules
        self.seed = seed
        self.dealer = dealer
        self.direction = rng.choice(list(SwapDirection))  # drawn even when fixed: seeds keep their walls
        if rules.swap_direction is not None:
            self.direction = rules.swap_direction
        self.hands: list[list[int]] = [[0] * NUM_KINDS for _ in range(SEATS)]
        self.dealt: list[list[Tile]] = [[] for _ in range(SEATS)]
        pos = 0
        for i in range(SEATS):
            seat = (dealer + i) % SEATS
            n = HAND_SIZE + (1 if i == 0 else 0)
            self.dealt[seat] = tiles[pos : pos + n]
            for t in self.dealt[seat]:
                self.hands[seat][t] += 1
            pos += n
        self.wall: list[Tile] = tiles[pos:]
        self.melds: list[list[Meld]] = [[] for _ in range(SEATS)]
        self.rivers: list[list[Tile]] = [[] for _ in range(SEATS)]
        self.won_tiles: list[list[Tile]] = [[] for _ in range(SEATS)]
        self.swap_choices: list[tuple[Tile, ...] | None] = [None] * SEATS
        self.swapped = False
        self.voids: list[Suit | None] = [None] * SEATS
        self.in_play = [True] * SEATS
        self.phase = Phase.SWAP
        self.current: int | None = None
        self.turn_kind: TurnKind | None = None
        self.drawn: Tile | None = self.dealt[dealer][-1]
        self.turn_draws: list[Tile] = []
        self.turn_kong: int | None = None
        self.window: Window | None = None
        self.passed: list[int | None] = [None] * SEATS  # 过水: best win declined since own draw
        self.passed_tiles: list[list[Tile]] = [[] for _ in range(SEATS)]  # 过水: tiles declined since
        self.draw_counts = [0] * SEATS
        self.discards_made = 0
        self.melds_made = False
        self.kongs: list[KongRecord] = []
        self.wins: list[Win] = []
        self.transfers: list[Transfer] = []
        self.end: EndReason | None = None
        self.actions: list[Action] = []
        self._legal: dict[int, list[Action]] = {}
        if not rules.swap_three:
            self._after_swap()

    # --- queries ------------------------------------------------------------------------

    @property
    def wall_count(self) -> int:
        return len(self.wall)

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    def hand(self, seat: int) -> list[Tile]:
        """A seat's concealed tiles, sorted (the full state; use ``view`` for what a seat sees)."""
        return [t for t, n in enumerate(self.hands[seat]) if n for _ in range(n)]

    def chips(self) -> list[int]:
        """Net chips per seat so far this hand; sums to zero."""
        return settlement.net(self.transfers)

    def winners(self) -> list[int]:
        """Seats that have won, in order of their first win."""
        out: list[int] = []
        for w in self.wins:
            if w.seat not in out:
                out.append(w.seat)
        return out

    def tile_census(self) -> list[int]:
        """Copies of each tile found in hands, melds, rivers, set-aside wins and the wall."""
        counts = [0] * NUM_KINDS
        for s in range(SEATS):
            for t in range(NUM_KINDS):
                counts[t] += self.hands[s][t]
            for t in self.rivers[s] + self.won_tiles[s]:
                counts[t] += 1
            for m in self.melds[s]:
                counts[m.tile] += m.size
        for t in self.wall:
            counts[t] += 1
        return counts

    def pending_seats(self) -> list[int]:
        """Seats whose decision the hand is waiting for, in seat order."""
        if self.phase in (Phase.SWAP, Phase.VOID):
            chosen = self.swap_choices if self.phase is Phase.SWAP else self.voids
            return [s for s in range(SEATS) if chosen[s] is None]
        if self.phase in (Phase.CLAIM, Phase.ROB):
            assert self.window is not None
            return sorted(s for s in self.window.options if s not in self.window.decisions)
        if self.phase is Phase.PLAY:
            assert self.current is not None
            return [self.current]
        return []

    def legal_actions(self, seat: int) -> list[Action]:
        """Exactly what ``seat`` may do now; empty when the hand is not waiting for it."""
        self._check_seat(seat)
        cached = self._legal.get(seat)
        if cached is None:
            cached = self._legal[seat] = self._compute_legal(seat)
        return list(cached)

    def next_dealer(self) -> int:
        """RULES.md §1 and §7: by default the first winner, the discarder after a multiple win,
        the same dealer when nobody won; or the next seat always; or the first win's discarder
        (its winner when it was self-drawn; the dealer stays when nobody won)."""
        if not self.over:
            raise GameError("hand_not_over", "the next dealer is known only when the hand is over")
        setting = self.rules.next_dealer
        if setting is NextDealer.ROTATE:
            return (self.dealer + 1) % SEATS
        if not self.wins:
            return self.dealer
        first = [w for w in self.wins if w.group == self.wins[0].group]
        discarder = first[0].from_seat
        if discarder is not None and (len(first) > 1 or setting is NextDealer.DISCARDER):
            return discarder
        return first[0].seat

    def deal_events(self) -> list[Event]:
        """The deal, as private events (one per seat), for whoever shows the hand's start."""
        return [
            Event(EventType.DEALT, seat=s, tiles=tuple(self.dealt[s]), private=True) for s in range(SEATS)
        ]

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may see now (see ``SeatView``)."""
        self._check_seat(seat)
        if self.phase in (Phase.SWAP, Phase.VOID):
            voids = tuple(v if s == seat else None for s, v in enumerate(self.voids))
        else:
            voids = tuple(self.voids)
        given = self.swap_choices[seat] or ()
        received = self.swap_choices[(seat - self.direction.offset) % SEATS] if self.swapped else None
        w = self.window
        return SeatView(
            seat=seat,
            phase=self.phase,
            dealer=self.dealer,
            current=self.current,
            hand=tuple(self.hand(seat)),
            drawn=self.drawn if self.current == seat and self.phase is Phase.PLAY else None,
            melds=tuple(tuple(m) for m in self.melds),
            rivers=tuple(tuple(r) for r in self.rivers),
            won_tiles=tuple(tuple(r) for r in self.won_tiles),
            revealed=tuple(tuple(self.hand(s)) if not self.in_play[s] else () for s in range(SEATS)),
            voids=voids,
            in_play=tuple(self.in_play),
            wall_count=len(self.wall),
            offered=w.tile if w else None,
            offered_by=w.from_seat if w else None,
            swap_direction=self.direction if self.swapped else None,
            swap_given=tuple(given),
            swap_received=tuple(received or ()),
            wins=tuple(self.wins),
            transfers=tuple(self.transfers),
            chips=tuple(self.chips()),
            legal=tuple(self.legal_actions(seat)),
            pending=tuple(self.pending_seats()),
        )

    # --- applying actions ---------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Validate and perform ``action``; an illegal one raises ``GameError`` and changes nothing."""
        if not isinstance(action, Action):
            raise GameError("bad_action", f"not an Action: {action!r}")
        if self.over:
            raise GameError("hand_over", "the hand is over")
        legal = self.legal_actions(action.seat)
        if action not in legal:
            if not legal:
                raise GameError(
                    "not_your_turn", f"seat {action.seat} has nothing to decide now", seat=action.seat
                )
            raise GameError(
                "illegal_action",
                f"{action} is not allowed now; allowed: {', '.join(map(str, legal))}",
                action=str(action),
            )
        self._legal.clear()
        self.actions.append(action)
        events: list[Event] = []
        if self.phase is Phase.SWAP:
            self._choose_swap(action, events)
        elif self.phase is Phase.VOID:
            self._choose_void(action, events)
        elif self.phase is Phase.PLAY:
            self._play_turn(action, events)
        else:
            self._decide_claim(action, events)
        return events

    @classmethod
    def replay(
        cls,
        rules: RuleSet,
        seed: int,
        dealer: int,
        actions: Iterable[Action | dict[str, Any]],
        *,
        wall: Sequence[Tile] | None = None,
    ) -> Game:
        """Rebuild a hand from its action log (``Action`` values or their dicts)."""
        game = cls(rules, seed, dealer, wall=wall)
        for a in actions:
            game.apply(a if isinstance(a, Action) else Action.from_dict(a))
        return game

    # --- legal actions ------------------------------------------------------------------

    def _check_seat(self, seat: int) -> None:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < SEATS:
            raise GameError("bad_action", f"seat must be 0-3, got {seat!r}", seat=seat)

    def _compute_legal(self, seat: int) -> list[Action]:
        if self.phase is Phase.SWAP:
            return [] if self.swap_choices[seat] is not None else self._swap_options(seat)
        if self.phase is Phase.VOID:
            return [] if self.voids[seat] is not None else [Action.void(seat, s) for s in Suit]
        if self.phase is Phase.PLAY:
            return self._turn_options(seat) if seat == self.current else []
        if self.phase in (Phase.CLAIM, Phase.ROB):
            assert self.window is not None
            if seat in self.window.decisions:
                return []
            return list(self.window.options.get(seat, []))
        return []

    def _swap_options(self, seat: int) -> list[Action]:
        counts = self.hands[seat]
        out: list[Action] = []
        for suit in Suit:
            tiles = [t for t in range(suit * 9, suit * 9 + 9) for _ in range(counts[t])]
            out += [Action.swap(seat, c) for c in sorted(set(combinations(tiles, 3)))]
        return out

    def _holds_void(self, seat: int) -> bool:
        void = self.voids[seat]
        return void is not None and any(self.hands[seat][void * 9 : void * 9 + 9])

    def _drawn_in_last_four(self) -> bool:
        """Whether this turn's drawn tile is one of the last four: four or fewer tiles were left
        in the wall before it was drawn, i.e. at most three are left now (RULES.md §3)."""
        drew = self.turn_kind in (TurnKind.DRAW, TurnKind.REPLACEMENT)
        return drew and self.drawn is not None and len(self.wall) < FORCED_WIN_TILES

    def _can_win(self, seat: int, counts: list[int]) -> bool:
        """A complete hand the seat may win with: no void tile (定缺) or, with voids undeclared
        (不定张), at most two suits in the whole hand."""
        if self._holds_void(seat) or not analysis.is_win(counts, self.melds[seat]):
            return False
        if self.rules.declare_void:
            return True
        held = [t for t in ALL_TILES if counts[t]] + [m.tile for m in self.melds[seat]]
        return len(suits_in(held)) <= 2

    def _turn_options(self, seat: int) -> list[Action]:
        counts = self.hands[seat]
        void = self.voids[seat]
        holds_void = self._holds_void(seat)
        out: list[Action] = []
        if self.turn_kind is not TurnKind.CLAIM:
            assert self.drawn is not None
            if self._can_win(seat, counts):
                win = Action.win(seat, self.drawn)
                if self.rules.last_four.on_draws and self._drawn_in_last_four():
                    return [win]
                out.append(win)
            if self.wall:
                pungs = {m.tile for m in self.melds[seat] if m.kind is MeldKind.PUNG}
                out += [
                    Action(seat, ActionType.KONG, t)
                    for t in ALL_TILES
                    if counts[t] and t // 9 != void and (counts[t] == COPIES or t in pungs)
                ]
        allowed = range(void * 9, void * 9 + 9) if holds_void and void is not None else ALL_TILES
        out += [Action(seat, ActionType.DISCARD, t) for t in allowed if counts[t]]
        return out

    def _open_window(self, tile: Tile, from_seat: int, rob: bool, **context: Any) -> Window:
        """Who may claim ``tile``: each seat still in that can win, pung or kong it."""
        last_four = tile == self.drawn and self._drawn_in_last_four()
        window = Window(rob, tile, from_seat, {}, {}, last_four=last_four, **context)
        forced = last_four and self.rules.last_four.on_discards
        for seat in self._seats_after(from_seat):
            if not self.in_play[seat]:
                continue
            counts = self.hands[seat]
            void_tile = tile // 9 == self.voids[seat]
            options: list[Action] = []
            if not void_tile and _touches(counts, tile) and not self._holds_void(seat):
                counts[tile] += 1
                can_win = self._can_win(seat, counts)
                counts[tile] -= 1
                if can_win:
                    value = score(self._claim_hand(seat, window), self.rules).uncapped_multiplier
                    if not self._barred(seat, window, value):
                        window.values[seat] = value
                        if forced:
                            window.options[seat] = [Action.win(seat, tile)]
                            continue
                        options.append(Action.win(seat, tile))
            if not rob and self.wall and not void_tile:
                if counts[tile] >= 2:
                    options.append(Action.pung(seat, tile))
                if counts[tile] == 3:
                    options.append(Action.kong(seat, tile))
            if options:
                window.options[seat] = [*options, Action.pass_(seat)]
        return window

    def _barred(self, seat: int, window: Window, value: int) -> bool:
        """过水不胡 (RULES.md §3, §7): a seat that declined a win since its last draw may not win
        on a discard unless it is worth strictly more (or, by the same-tile setting, may not win
        on the tile it declined); a seat under the bar may not rob a kong at all."""
        scope = self.rules.pass_win_scope
        if scope is PassWinScope.OFF:
            return False
        if scope is PassWinScope.SAME_TILE:
            return window.tile in self.passed_tiles[seat]
        passed = self.passed[seat]
        if passed is None:
            return False
        return window.rob or value <= passed

    def _last_copy(self, tile: Tile, offered: bool) -> bool:
        """绝张: the other three copies of ``tile`` lie in rivers or melds (an ``offered`` discard
        is itself in a river and does not count)."""
        visible = sum(r.count(tile) for r in self.rivers) - (1 if offered else 0)
        visible += sum(m.size for ms in self.melds for m in ms if m.tile == tile)
        return visible >= COPIES - 1

    def _claim_hand(self, seat: int, window: Window) -> DescribedHand:
        situations: set[Situation] = set()
        if self.rules.last_copy_bonus and self._last_copy(window.tile, offered=not window.rob):
            situations.add(Situation.LAST_COPY)
        if window.rob:
            situations.add(Situation.ROBBING_KONG)
        if window.after_kong is not None:
            situations.add(Situation.AFTER_KONG_DISCARD)
        if window.last_tile:
            situations.add(Situation.LAST_TILE)
        if window.earthly:
            situations.add(Situation.EARTHLY)
        concealed = tuple(sorted([*self.hand(seat), window.tile]))
        return DescribedHand(concealed, tuple(self.melds[seat]), window.tile, frozenset(situations))

    def _seats_after(self, seat: int) -> list[int]:
        return [(seat + i) % SEATS for i in range(1, SEATS)]

    # --- phases -------------------------------------------------------------------------

    def _choose_swap(self, action: Action, events: list[Event]) -> None:
        self.swap_choices[action.seat] = action.tiles
        events.append(Event(EventType.SWAP_CHOSEN, seat=action.seat, tiles=action.tiles, private=True))
        if any(c is None for c in self.swap_choices):
            return
        offset = self.direction.offset
        dealer_drawn = self.drawn
        for giver in range(SEATS):
            for t in self.swap_choices[giver] or ():
                self.hands[giver][t] -= 1
        for giver in range(SEATS):
            receiver = (giver + offset) % SEATS
            tiles = self.swap_choices[giver] or ()
            for t in tiles:
                self.hands[receiver][t] += 1
            events.append(
                Event(
                    EventType.SWAPPED,
                    seat=receiver,
                    tiles=tiles,
                    from_seat=giver,
                    direction=self.direction,
                    private=True,
                )
            )
            gave_drawn = dealer_drawn is not None and not self.hands[receiver][dealer_drawn]
            if receiver == self.dealer and gave_drawn:
                # The dealer's "drawn" tile (their 14th) was passed on; the last one received replaces it.
                self.drawn = tiles[-1]
        self.swapped = True
        self._after_swap()

    def _after_swap(self) -> None:
        """定缺 next, or with voids undeclared (不定张) straight to the dealer's first turn."""
        if self.rules.declare_void:
            self.phase = Phase.VOID
        else:
            self._begin_play()

    def _begin_play(self) -> None:
        self.phase = Phase.PLAY
        self.current = self.dealer
        self.turn_kind = TurnKind.DEAL

    def _choose_void(self, action: Action, events: list[Event]) -> None:
        self.voids[action.seat] = action.suit
        events.append(Event(EventType.VOID_CHOSEN, seat=action.seat, suit=action.suit, private=True))
        if any(v is None for v in self.voids):
            return
        events += [Event(EventType.VOID_REVEALED, seat=s, suit=self.voids[s]) for s in range(SEATS)]
        self._begin_play()

    def _play_turn(self, action: Action, events: list[Event]) -> None:
        seat, tile = action.seat, action.tile
        assert tile is not None
        if action.type is ActionType.WIN:
            self._self_draw_win(seat, events)
        elif action.type is ActionType.KONG:
            if self.hands[seat][tile] == COPIES:
                self._make_kong(seat, tile, KongKind.CONCEALED, None, events)
            else:
                window = self._open_window(tile, seat, rob=True)
                if window.options:
                    self.window = window
                    self.phase = Phase.ROB
                    events.append(Event(EventType.KONG_DECLARED, seat=seat, tile=tile))
                else:
                    self._make_kong(seat, tile, KongKind.ADDED, None, events)
        else:
            self._discard(seat, tile, events)

    def _discard(self, seat: int, tile: Tile, events: list[Event]) -> None:
        self.hands[seat][tile] -= 1
        self.rivers[seat].append(tile)
        events.append(Event(EventType.DISCARDED, seat=seat, tile=tile))
        earthly = seat == self.dealer and self.discards_made == 0 and not self.melds_made
        last_tile = not self.wall and self.turn_kind is not TurnKind.CLAIM and tile == self.drawn
        self.discards_made += 1
        window = self._open_window(
            tile, seat, rob=False, after_kong=self.turn_kong, earthly=earthly, last_tile=last_tile
        )
        self.drawn = None
        if window.options:
            self.window = window
            self.phase = Phase.CLAIM
        else:
            self._next_turn(seat, events)

    def _decide_claim(self, action: Action, events: list[Event]) -> None:
        window = self.window
        assert window is not None
        window.decisions[action.seat] = action
        events.append(Event(EventType.CLAIM_CHOSEN, seat=action.seat, choice=action.type, private=True))
        if len(window.decisions) == len(window.options):
            self.window = None
            self._resolve(window, events)

    def _resolve(self, window: Window, events: list[Event]) -> None:
        """Close a claim window: every chosen win happens (一炮多响); else a pung/kong; else play on."""
        order = [s for s in self._seats_after(window.from_seat) if s in window.options]
        winners = [s for s in order if window.decisions[s].type is ActionType.WIN]
        events += [
            Event(EventType.PASSED, seat=s, tile=window.tile, from_seat=window.from_seat)
            for s in order
            if window.decisions[s].type is ActionType.PASS
        ]
        if self.rules.pass_win_scope is not PassWinScope.OFF:
            for s in order:
                if s in window.values and s not in winners:
                    self.passed[s] = max(self.passed[s] or 0, window.values[s])
                    self.passed_tiles[s].append(window.tile)
        tile, discarder = window.tile, window.from_seat
        if winners:
            if window.rob:
                self.hands[discarder][tile] -= 1
                self.rivers[discarder].append(tile)
            group = self._next_group()
            for s in winners:
                hand = self._claim_hand(s, window)
                sc = score(hand, self.rules)
                win = Win(s, tile, discarder, hand, sc, group)
                self.wins.append(win)
                events.append(Event(EventType.WON, seat=s, tile=tile, from_seat=discarder, win=win))
                self._pay(settlement.win_by_discard(s, discarder, sc, self.rules, robbing=window.rob), events)
            if window.after_kong is not None and self.rules.kong_cannon_transfer:
                kong = self.kongs[window.after_kong]
                kong.forwarded = True
                self._pay(settlement.call_transfer(discarder, winners, kong.collected), events)
            self._after_wins(winners, events)
            return
        if window.rob:
            self._make_kong(discarder, tile, KongKind.ADDED, None, events)
            return
        claims = [window.decisions[s] for s in order if window.decisions[s].type is not ActionType.PASS]
        if not claims:
            self._next_turn(discarder, events)
            return
        claim = claims[0]
        self.rivers[discarder].pop()
        if claim.type is ActionType.KONG:
            self._make_kong(claim.seat, tile, KongKind.DIRECT, discarder, events)
            return
        self.hands[claim.seat][tile] -= 2
        self.melds[claim.seat].append(Meld(MeldKind.PUNG, tile))
        self.melds_made = True
        events.append(Event(EventType.PUNGED, seat=claim.seat, tile=tile, from_seat=discarder))
        self._start_turn(claim.seat, TurnKind.CLAIM)

    def _start_turn(self, seat: int, kind: TurnKind) -> None:
        self.phase = Phase.PLAY
        self.current = seat
        self.turn_kind = kind
        self.turn_draws = []
        self.turn_kong = None
        self.drawn = None

    def _draw(self, seat: int, replacement: bool, events: list[Event]) -> None:
        if replacement:
            tile = self.wall.pop()
        else:
            tile = self.wall.pop(0)
            self._start_turn(seat, TurnKind.DRAW)
            self.draw_counts[seat] += 1
        self.phase = Phase.PLAY
        self.current = seat
        self.turn_kind = TurnKind.REPLACEMENT if replacement else TurnKind.DRAW
        self.hands[seat][tile] += 1
        self.drawn = tile
        self.turn_draws.append(tile)
        self.passed[seat] = None
        self.passed_tiles[seat] = []
        events.append(Event(EventType.DREW, seat=seat, tile=tile, replacement=replacement, private=True))

    def _make_kong(
        self, seat: int, tile: Tile, kind: KongKind, fed_by: int | None, events: list[Event]
    ) -> None:
        """Declare the kong, collect its payment at once, then draw the replacement tile."""
        melds = self.melds[seat]
        paid = True
        if kind is KongKind.ADDED:
            self.hands[seat][tile] -= 1
            melds[melds.index(Meld(MeldKind.PUNG, tile))] = Meld(MeldKind.KONG, tile)
            paid = self.rules.delayed_added_kong_pays or tile in self.turn_draws
        elif kind is KongKind.CONCEALED:
            self.hands[seat][tile] -= COPIES
            melds.append(Meld(MeldKind.CONCEALED_KONG, tile))
        else:
            self.hands[seat][tile] -= 3
            melds.append(Meld(MeldKind.KONG, tile))
            self._start_turn(seat, TurnKind.REPLACEMENT)
        self.melds_made = True
        record = KongRecord(seat, tile, kind, fed_by)
        if paid:
            others = [s for s in range(SEATS) if s != seat and self.in_play[s]]
            record.transfers = settlement.kong_payment(seat, kind, others, fed_by, self.rules)
        self.kongs.append(record)
        self.turn_kong = len(self.kongs) - 1
        events.append(Event(EventType.KONG, seat=seat, tile=tile, from_seat=fed_by, kong=kind, paid=paid))
        self._pay(record.transfers, events)
        self._draw(seat, replacement=True, events=events)

    def _self_draw_win(self, seat: int, events: list[Event]) -> None:
        tile = self.drawn
        assert tile is not None
        situations = {Situation.SELF_DRAW}
        if self.turn_kind is TurnKind.REPLACEMENT:
            situations.add(Situation.KONG_REPLACEMENT)
        if self.turn_kind is TurnKind.DEAL:
            situations.add(Situation.HEAVENLY)
        elif not self.wall:
            situations.add(Situation.LAST_TILE)
        if (
            self.turn_kind is TurnKind.DRAW
            and seat != self.dealer
            and self.draw_counts[seat] == 1
            and not self.melds_made
        ):
            situations.add(Situation.EARTHLY)
        if self.rules.last_copy_bonus and self._last_copy(tile, offered=False):
            situations.add(Situation.LAST_COPY)
        hand = DescribedHand(tuple(self.hand(seat)), tuple(self.melds[seat]), tile, frozenset(situations))
        payers = [s for s in range(SEATS) if s != seat and self.in_play[s]]
        feeder = None
        if Situation.KONG_REPLACEMENT in situations and self.rules.kong_flower_payer is not KongFlowerPayer.EVERYONE:
            assert self.turn_kong is not None
            feeder = self.kongs[self.turn_kong].fed_by
        as_discard = feeder is not None and self.rules.kong_flower_payer is KongFlowerPayer.FEEDER_ONCE
        sc = score(hand, _discard_rules(self.rules) if as_discard else self.rules)
        win = Win(seat, tile, None, hand, sc, self._next_group(), as_discard)
        self.wins.append(win)
        self.hands[seat][tile] -= 1
        self.won_tiles[seat].append(tile)
        self.drawn = None
        events.append(Event(EventType.WON, seat=seat, tile=tile, win=win))
        self._pay(settlement.win_by_self_draw(seat, payers, sc, self.rules, feeder), events)
        self._after_wins([seat], events)

    def _next_group(self) -> int:
        return self.wins[-1].group + 1 if self.wins else 0

    def _after_wins(self, winners: list[int], events: list[Event]) -> None:
        """Bloody continuation: winners leave (血战), play on (血流), or the hand ends (普通)."""
        mode = self.rules.mode
        if mode is GameMode.BLOODY_BATTLE:
            for s in winners:
                self.in_play[s] = False
        if mode is GameMode.FIRST_WIN:
            self._finish(EndReason.FIRST_WIN, events)
        elif mode is GameMode.BLOODY_BATTLE and len(self.winners()) >= SEATS - 1:
            self._finish(EndReason.THREE_WON, events)
        else:
            self._next_turn(winners[-1], events)

    def _next_turn(self, after: int, events: list[Event]) -> None:
        if not self.wall:
            self._wall_end(events)
            return
        seat = next(s for s in self._seats_after(after) if self.in_play[s])
        self._draw(seat, replacement=False, events=events)

    def _wall_end(self, events: list[Event]) -> None:
        """流局: 查花猪, 查大叫 and 退税 among the players still in (settlement.wall_end)."""
        finals = [
            FinalHand(
                s,
                tuple(self.hand(s)),
                tuple(self.melds[s]),
                self.voids[s],
                self.in_play[s],
                tuple(self._unseen(s)),
            )
            for s in range(SEATS)
        ]
        income = [t for k in self.kongs if not k.forwarded for t in k.transfers]
        result = settlement.wall_end(finals, income, self.rules)
        events += [Event(EventType.WALL_CHECK, seat=st.seat, status=st) for st in result.statuses]
        self._pay(result.transfers, events)
        self._finish(EndReason.WALL_EMPTY, events)

    def _unseen(self, seat: int) -> list[int]:
        seen: list[Tile] = self.hand(seat)
        for s in range(SEATS):
            seen += self.rivers[s] + self.won_tiles[s]
            if not self.in_play[s] and s != seat:
                seen += self.hand(s)
            for m in self.melds[s]:
                seen += [m.tile] * m.size
        return unseen_counts(seen)

    def _pay(self, transfers: Sequence[Transfer], events: list[Event]) -> None:
        for t in transfers:
            self.transfers.append(t)
            events.append(Event(EventType.TRANSFER, seat=t.payee, from_seat=t.payer, transfer=t))

    def _finish(self, reason: EndReason, events: list[Event]) -> None:
        self.phase = Phase.OVER
        self.end = reason
        self.current = None
        self.drawn = None
        self.window = None
        events.append(Event(EventType.HAND_OVER, end=reason))

    # --- serialisation ------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The full state (secrets included) as JSON-able data."""
        return {
            "version": STATE_VERSION,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "dealer": self.dealer,
            "direction": self.direction.value,
            "hands": [tiles_of(h) for h in self.hands],
            "dealt": self.dealt,
            "wall": self.wall,
            "melds": [[[m.kind.value, m.tile] for m in ms] for ms in self.melds],
            "rivers": self.rivers,
            "won_tiles": self.won_tiles,
            "swap_choices": [list(c) if c is not None else None for c in self.swap_choices],
            "swapped": self.swapped,
            "voids": [int(v) if v is not None else None for v in self.voids],
            "in_play": self.in_play,
            "phase": self.phase.value,
            "current": self.current,
            "turn_kind": self.turn_kind.value if self.turn_kind else None,
            "drawn": self.drawn,
            "turn_draws": self.turn_draws,
            "turn_kong": self.turn_kong,
            "window": self.window.to_dict() if self.window else None,
            "passed": self.passed,
            "passed_tiles": self.passed_tiles,
            "draw_counts": self.draw_counts,
            "discards_made": self.discards_made,
            "melds_made": self.melds_made,
            "kongs": [k.to_dict() for k in self.kongs],
            "wins": [
                {"seat": w.seat, "tile": w.tile, "from_seat": w.from_seat, "group": w.group,
                 "hand": hand_to_dict(w.hand), "as_discard": w.as_discard}
                for w in self.wins
            ],
            "transfers": [t.to_dict() for t in self.transfers],
            "end": self.end.value if self.end else None,
            "actions": [a.to_dict() for a in self.actions],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Game:
        """Restore a state written by ``to_dict`` (scores are recomputed from the stored hands)."""
        if not isinstance(d, dict):
            raise GameError("bad_state", "a saved hand state is a JSON object")
        try:
            return cls._from_dict(d)
        except GameError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise GameError("bad_state", f"not a saved hand state: {exc}") from None

    @classmethod
    def _from_dict(cls, d: dict[str, Any]) -> Game:
        if d.get("version") != STATE_VERSION:
            raise GameError("bad_state", f"unknown state version {d.get('version')!r}")
        g = cls.__new__(cls)
        g.rules = RuleSet.from_dict(d["rules"])
        g.seed = d["seed"]
        g.dealer = d["dealer"]
        g.direction = SwapDirection(d["direction"])
        g.hands = [counts_of(h) for h in d["hands"]]
        g.dealt = [list(h) for h in d["dealt"]]
        g.wall = list(d["wall"])
        g.melds = [[Meld(MeldKind(k), t) for k, t in ms] for ms in d["melds"]]
        g.rivers = [list(r) for r in d["rivers"]]
        g.won_tiles = [list(r) for r in d["won_tiles"]]
        g.swap_choices = [tuple(c) if c is not None else None for c in d["swap_choices"]]
        g.swapped = d["swapped"]
        g.voids = [Suit(v) if v is not None else None for v in d["voids"]]
        g.in_play = list(d["in_play"])
        g.phase = Phase(d["phase"])
        g.current = d["current"]
        g.turn_kind = TurnKind(d["turn_kind"]) if d["turn_kind"] else None
        g.drawn = d["drawn"]
        g.turn_draws = list(d["turn_draws"])
        g.turn_kong = d["turn_kong"]
        g.window = Window.from_dict(d["window"]) if d["window"] else None
        g.passed = list(d["passed"])
        g.passed_tiles = [list(p) for p in d.get("passed_tiles", [[] for _ in range(SEATS)])]
        g.draw_counts = list(d["draw_counts"])
        g.discards_made = d["discards_made"]
        g.melds_made = d["melds_made"]
        g.kongs = [KongRecord.from_dict(k) for k in d["kongs"]]
        g.wins = []
        for w in d["wins"]:
            hand = hand_from_dict(w["hand"])
            as_discard = w.get("as_discard", False)
            sc = score(hand, _discard_rules(g.rules) if as_discard else g.rules)
            g.wins.append(Win(w["seat"], w["tile"], w["from_seat"], hand, sc, w["group"], as_discard))
        g.transfers = [Transfer.from_dict(t) for t in d["transfers"]]
        g.end = EndReason(d["end"]) if d["end"] else None
        g.actions = [Action.from_dict(a) for a in d["actions"]]
        g._legal = {}
        return g

    @classmethod
    def from_json(cls, text: str) -> Game:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GameError("bad_state", f"not JSON: {exc}") from None
        return cls.from_dict(data)


def _discard_rules(rules: RuleSet) -> RuleSet:
    """The rules that value a self-drawn win charged to one seat as a discard win (点杠花 算点炮):
    no self-draw extra, neither 加底 nor 加番."""
    return rules.with_changes(self_draw=SelfDrawBonus.NONE)
