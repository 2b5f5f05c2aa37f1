"""Computer players: they fill empty seats, take over for absent players and play self-play.

Every player has one method, ``choose(view, legal) -> Action``: it sees only the seat's
``SeatView`` (its own tiles and the table, never another hand or the wall) and must return
one of ``legal``. Three players exist:

- ``RandomPlayer`` — a uniform choice among the legal actions (seeded), the floor.
- ``GreedyPlayer`` — lowest shanten, then most effective tiles; always wins; pungs and
  kongs when that does not make the hand slower. The baseline to beat.
- ``AIPlayer`` — the default: picks the swap and void by the hand they leave, values hands
  by route (plain, flush, all pungs) and live outs (``engine.ai_eval``), keeps away from
  other players' likely wins, weighs pungs and kongs against what they cost, and takes a
  win off a discard unless waiting for a self-draw is clearly worth more.

>>> make_player("greedy").name
'greedy'
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from engine import ai_eval, analysis
from engine.actions import Action, ActionType
from engine.ai_eval import Assessment, Outlook
from engine.game import Phase, SeatView
from engine.rules import DirectKongPayment, GameMode, RuleSet, SelfDrawBonus
from engine.scoring import wait_scores
from engine.tiles import COPIES, Meld, MeldKind, Tile, counts_of, tiles_of

if TYPE_CHECKING:
    from engine.ai_search import ThinkingShare


class Player(Protocol):
    name: str

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action: ...


class RandomPlayer:
    """Uniform over the legal actions; seeded so self-play is reproducible."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        return self.rng.choice(list(legal))


def _of_type(legal: Sequence[Action], kind: ActionType) -> list[Action]:
    return [a for a in legal if a.type is kind]


def _swap_action(legal: Sequence[Action], tiles: Sequence[Tile]) -> Action:
    want = tuple(sorted(tiles))
    for a in legal:
        if a.tiles == want:
            return a
    return _of_type(legal, ActionType.SWAP)[0]


def _void_action(legal: Sequence[Action], suit: int) -> Action:
    for a in legal:
        if a.suit is not None and int(a.suit) == suit:
            return a
    return legal[0]


def _without_void(counts: Sequence[int], void: int | None) -> list[int]:
    """The hand as it will be once the void suit is gone (those tiles must be thrown first)."""
    out = list(counts)
    if void is not None:
        out[void * 9 : void * 9 + 9] = [0] * 9
    return out


def _void_of(view: SeatView) -> int | None:
    """The seat's void suit. Where no void is declared (不定张) the winning hand must still lack a
    suit, so while the hand and melds hold all three suits the shortest one is treated as the
    void (fewest tiles first, so the choice does not flip as tiles go): never a 花猪 by drift."""
    v = view.voids[view.seat]
    if v is None and view.phase in (Phase.PLAY, Phase.CLAIM, Phase.ROB):
        return _implied_void(counts_of(view.hand), view.melds[view.seat])
    return None if v is None else int(v)


def _implied_void(counts: Sequence[int], melds: Sequence[Meld]) -> int | None:
    meld_suits = {m.tile // 9 for m in melds}
    held = [s for s in range(3) if s in meld_suits or any(counts[9 * s : 9 * s + 9])]
    if len(held) < 3:
        return None
    options = [s for s in range(3) if s not in meld_suits]
    totals = ai_eval.suit_totals(counts)
    return min(options, key=lambda s: (totals[s], *ai_eval.void_cost(counts, s, len(melds)), s))


class GreedyPlayer:
    """Lowest shanten first, then the most effective tiles (counted as copies not in hand)."""

    name = "greedy"

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        counts = counts_of(view.hand)
        melds = view.melds[view.seat]
        if view.phase is Phase.SWAP:
            return _swap_action(legal, self._swap(counts))
        if view.phase is Phase.VOID:
            totals = ai_eval.suit_totals(counts)
            return _void_action(legal, min(range(3), key=lambda s: (totals[s], s)))
        wins = _of_type(legal, ActionType.WIN)
        if wins:
            return wins[0]
        void = _void_of(view)
        k = len(melds)
        if view.phase is Phase.PLAY:
            discards = _of_type(legal, ActionType.DISCARD)
            best_key, best = None, discards[0]
            for a in discards:
                assert a.tile is not None
                counts[a.tile] -= 1
                key = self._key(_without_void(counts, void), k, void)
                counts[a.tile] += 1
                if best_key is None or key < best_key:
                    best_key, best = key, a
            for a in _of_type(legal, ActionType.KONG):
                assert a.tile is not None
                after = list(counts)
                concealed = counts[a.tile] == COPIES
                after[a.tile] -= COPIES if concealed else 1
                new_k = k + 1 if concealed else k
                if best_key is not None and self._key(_without_void(after, void), new_k, void) <= best_key:
                    return a
            return best
        # a claim window: pung / kong the offered tile when it is not slower
        tile = view.offered
        assert tile is not None
        now = self._key(_without_void(counts, void), k, void)
        for a in sorted(legal, key=lambda a: a.type is not ActionType.KONG):
            if a.type is ActionType.KONG:
                after = list(counts)
                after[tile] -= 3
                if self._key(_without_void(after, void), k + 1, void)[0] <= now[0]:
                    return a
            elif a.type is ActionType.PUNG:
                after = list(counts)
                after[tile] -= 2
                best = min(
                    analysis.shanten(_without_void([c - (t == d) for t, c in enumerate(after)], void), k + 1)
                    for d in range(27)
                    if after[d]
                )
                if best <= now[0]:
                    return a
        return _of_type(legal, ActionType.PASS)[0]

    @staticmethod
    def _key(counts: list[int], k: int, void: int | None) -> tuple[int, int]:
        s = analysis.shanten(counts, k)
        eff = analysis.effective_tiles(counts, k)
        return s, -sum(COPIES - counts[t] for t in eff if t // 9 != void)

    @staticmethod
    def _swap(counts: list[int]) -> list[Tile]:
        totals = ai_eval.suit_totals(counts)
        suit = min((s for s in range(3) if totals[s] >= 3), key=lambda s: (totals[s], s))
        held = [t for t in range(suit * 9, suit * 9 + 9) for _ in range(counts[t])]
        return held[:3]


# --- the default computer player -----------------------------------------------------------

# A win is worth roughly this many times its multiplier in chips (discards pay once,
# self-draws once per player still in).
CHIPS_PER_MULTIPLIER = 1.8
# A kong's payment is refunded (退税) if the hand is not ready at the empty wall.
KONG_PAYMENT_WEIGHT = 0.5
# A kong paying at least this many base stakes at once is worth one step of speed.
KONG_SLOWER_PAYMENT = 2
# Chips a seat expects to lose per draw it stays in the hand (others' wins, dealing in), per
# unit of the likeliest opponent's chance of being ready.
STAY_RISK_PER_THREAT = 0.3
# With fewer wall tiles than this, every win is taken.
TAKE_ANY_WIN_WALL = 12
# A pung that leaves the hand no faster must raise its value by this factor.
PUNG_VALUE_RATIO = 1.0
# How much a tile's danger (someone may win on it) weighs against hand value.
DANGER_WEIGHT = 0.5
# The danger model: how fast opponents become ready, the share of their suits' tiles a ready
# hand waits on, and what dealing in costs (in multiplier units).
READY_BASE = 0.05
READY_PER_DISCARD = 0.045
READY_PER_MELD = 0.12
WAIT_SHARE = 0.15
DEAL_IN_COST = 1.5
# With few draws left and a hand this far from ready, play safe instead of building.
FOLD_SHANTEN = 2
FOLD_DRAWS = 4.0
FOLD_READY = 0.6


class AIPlayer:
    """The default computer player (see the module docstring)."""

    name = "ai"

    def __init__(self, rules: RuleSet | None = None) -> None:
        # The seat's view does not carry the table's rules; the player is told them.
        self.rules = rules or RuleSet()

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        counts = counts_of(view.hand)
        if view.phase is Phase.SWAP:
            return _swap_action(legal, ai_eval.choose_swap(counts))
        if view.phase is Phase.VOID:
            return _void_action(legal, ai_eval.choose_void(counts, view.melds[view.seat]))
        outlook = _outlook(view, self.rules)
        if view.phase is Phase.PLAY:
            return self._own_turn(view, legal, counts, outlook)
        return self._claim(view, legal, counts, outlook)

    # --- own turn: win, kong or discard ---------------------------------------------------

    def _own_turn(self, view: SeatView, legal: Sequence[Action], counts: list[int], outlook: Outlook) -> Action:
        wins = _of_type(legal, ActionType.WIN)
        if wins:
            return wins[0]
        void = _void_of(view)
        melds = view.melds[view.seat]
        discards = _of_type(legal, ActionType.DISCARD)
        if void is not None and any(a.tile is not None and a.tile // 9 == void for a in discards):
            return self._dump_void(view, discards)
        ranked = ai_eval.rank_discards(counts, melds, outlook, [a.tile for a in discards if a.tile is not None])
        danger, most_ready = _threat(view)
        options = [Assessment(a.shanten, a.value - DANGER_WEIGHT * danger[t]) for a, t in ranked]
        keep, tile = ranked[ai_eval.best_choice(options, outlook)]
        late = outlook.draws_left <= FOLD_DRAWS or most_ready >= FOLD_READY
        if keep.shanten >= FOLD_SHANTEN and late:
            tile = min((t for _, t in ranked), key=lambda t: (danger[t], t))
        for a in _of_type(legal, ActionType.KONG):
            assert a.tile is not None
            if self._kong_pays(view, counts, melds, a.tile, outlook, keep):
                return a
        return Action.discard(view.seat, tile)

    def _kong_pays(
        self,
        view: SeatView,
        counts: list[int],
        melds: tuple[Meld, ...],
        tile: Tile,
        outlook: Outlook,
        keep: Assessment,
    ) -> bool:
        """Kong on one's turn when the hand is no slower after it; its payment settles ties."""
        after = list(counts)
        others = sum(view.in_play) - 1
        if counts[tile] == COPIES:
            after[tile] = 0
            new_melds = (*melds, Meld(MeldKind.CONCEALED_KONG, tile))
            payment = 2 * others
        else:
            after[tile] -= 1
            new_melds = tuple(Meld(MeldKind.KONG, tile) if m.tile == tile else m for m in melds)
            payment = others if view.drawn == tile else 0
        return _no_worse(ai_eval.assess(after, new_melds, outlook), keep, payment)

    def _dump_void(self, view: SeatView, discards: Sequence[Action]) -> Action:
        """Throw void tiles first; the safest one (fewest seats that could want it) goes first."""
        danger = _danger(view)
        unseen = view.unseen()
        return min(
            (a for a in discards if a.tile is not None and a.tile // 9 == _void_of(view)),
            key=lambda a: (danger[a.tile], unseen[a.tile], a.tile),  # type: ignore[index]
        )

    # --- a tile on offer: win, pung, kong or pass -------------------------------------------

    def _claim(self, view: SeatView, legal: Sequence[Action], counts: list[int], outlook: Outlook) -> Action:
        tile = view.offered
        assert tile is not None
        melds = view.melds[view.seat]
        wins = _of_type(legal, ActionType.WIN)
        passes = _of_type(legal, ActionType.PASS)
        if wins:
            if not passes or self._take_win(view, counts, melds, tile, outlook):
                return wins[0]
            return passes[0]
        void = _void_of(view)
        if void is not None and tile // 9 == void:  # only possible with an implied void (不定张)
            return passes[0] if passes else legal[0]
        base = _without_void(counts, void)
        keep = ai_eval.assess(base, melds, outlook)
        for a in sorted(legal, key=lambda a: a.type is not ActionType.KONG):
            if a.type is ActionType.KONG:
                after = list(base)
                after[tile] -= 3
                payment = 2 if self.rules.direct_kong_payment is not DirectKongPayment.ONE_FROM_DISCARDER else 1
                if _no_worse(ai_eval.assess(after, (*melds, Meld(MeldKind.KONG, tile)), outlook), keep, payment):
                    return a
            elif a.type is ActionType.PUNG:
                after = list(counts)
                after[tile] -= 2
                new = _best_after_discard(after, (*melds, Meld(MeldKind.PUNG, tile)), void, outlook)
                if new.shanten < keep.shanten or (
                    new.shanten == keep.shanten and new.value > PUNG_VALUE_RATIO * keep.value
                ):
                    return a
        return passes[0] if passes else legal[0]

    def _take_win(
        self, view: SeatView, counts: list[int], melds: tuple[Meld, ...], tile: Tile, outlook: Outlook
    ) -> bool:
        """Take the discard unless a self-draw on the same waits is clearly worth more.

        Only in 血战到底 can waiting pay: in 血流成河 a win now does not stop later wins, and
        in 普通 the first win ends the hand.
        """
        rules = outlook.rules
        if rules.mode is not GameMode.BLOODY_BATTLE or view.wall_count < TAKE_ANY_WIN_WALL:
            return True
        scores = wait_scores(tiles_of(counts), melds, rules)
        now = scores[tile].multiplier if tile in scores else 1

        live = sum(outlook.unseen[t] for t in scores)
        others = sum(view.in_play) - 1
        if rules.self_draw is SelfDrawBonus.ADD_BASE:
            self_draw_pay = (now + 1) * others
        elif rules.self_draw is SelfDrawBonus.DOUBLE:
            self_draw_pay = min(2 * now, rules.cap or 2 * now) * others
        else:
            self_draw_pay = now * others
        draws = outlook.draws_left
        p_self = 1.0 - (1.0 - min(1.0, live / outlook.unseen_total)) ** draws
        # Staying in costs: each further turn risks paying others' wins, more so when they look ready.
        risk = STAY_RISK_PER_THREAT * _threat(view)[1] * draws
        return now >= p_self * self_draw_pay - risk


def _outlook(view: SeatView, rules: RuleSet) -> Outlook:
    active = max(1, sum(view.in_play))
    return Outlook(tuple(view.unseen()), view.wall_count / active, rules)


def _best_after_discard(counts: list[int], melds: tuple[Meld, ...], void: int | None, outlook: Outlook) -> Assessment:
    """The hand after its best discard (a void tile, while one is held)."""
    stripped = _without_void(counts, void)
    if stripped != counts:
        return ai_eval.assess(stripped, melds, outlook)
    return ai_eval.best_discard(counts, melds, outlook, [t for t in range(27) if counts[t]])[0]


def _no_worse(after: Assessment, keep: Assessment, payment: int) -> bool:
    """A kong is taken when it leaves the hand no slower; its payment now outweighs small losses."""
    if after.shanten == keep.shanten + 1 and payment >= KONG_SLOWER_PAYMENT:
        return True
    if after.shanten != keep.shanten:
        return after.shanten < keep.shanten
    return after.value * CHIPS_PER_MULTIPLIER + KONG_PAYMENT_WEIGHT * payment >= keep.value * CHIPS_PER_MULTIPLIER


def _danger(view: SeatView) -> list[float]:
    return _threat(view)[0]


def _threat(view: SeatView) -> tuple[list[float], float]:
    """Expected loss (in multiplier units) of discarding each tile, and the likeliest opponent's
    chance of being ready.

    Void discipline makes discards talk: a seat whose river turns from its void suit to other
    tiles holds no void tile any more, and from then on grows likelier to be ready with every
    discard and meld. A tile of a seat's void suit can never be its win; the suit it keeps
    throwing is the one it is not collecting; a tile with few unseen copies is a rarer wait;
    a tile the seat threw itself is one it did not want.
    """
    unseen = view.unseen()
    out = [0.0] * 27
    most_ready = 0.0
    for s in range(len(view.in_play)):
        if s == view.seat or not view.in_play[s]:
            continue
        void = None if view.voids[s] is None else int(view.voids[s])  # type: ignore[arg-type]
        river = view.rivers[s]
        clean_at = next((i for i, t in enumerate(river) if t // 9 != void), len(river))
        melds = view.melds[s]
        turns = len(river) - clean_at + len(melds)
        ready = min(0.9, READY_BASE + READY_PER_DISCARD * turns + READY_PER_MELD * len(melds))
        most_ready = max(most_ready, ready)
        thrown = [0, 0, 0]
        for t in river[clean_at:]:
            thrown[t // 9] += 1
        kept_suits = [x for x in range(3) if x != void]
        total = sum(thrown[x] for x in kept_suits) + len(kept_suits)
        cost = DEAL_IN_COST * (1 + 0.25 * len(melds))
        own = set(river)
        for t in range(27):
            suit = t // 9
            if suit == void:
                continue
            suit_weight = len(kept_suits) * (total - thrown[suit] - 1) / max(1, total * (len(kept_suits) - 1))
            chance = ready * WAIT_SHARE * suit_weight * (unseen[t] + 0.5) / 4.5
            out[t] += chance * (0.5 if t in own else 1.0) * cost
    return out, most_ready


PLAYERS = ("random", "greedy", "easy", "ai", "ai-v1", "hard", "hard-60")
# The three levels a table can choose (简单 / 普通 / 困难) and the player each one seats.
LEVELS = {"easy": "easy", "normal": "ai-v1", "hard": "hard"}


def make_player(name: str, rules: RuleSet | None = None, seed: int = 0) -> Player:
    """A player by name (see ``PLAYERS``; ``ai`` and ``ai-v1`` are the same frozen normal player;
    ``hard-N``, e.g. ``hard-60``, is the hard player held to N search rounds instead of its time
    budget, so its strength can be measured on a loaded machine); an unknown name is a ValueError."""
    if name == "random":
        return RandomPlayer(seed)
    if name == "greedy":
        return GreedyPlayer()
    if name in ("ai", "ai-v1"):
        return AIPlayer(rules)
    if name == "easy":
        from engine.ai_easy import EasyPlayer  # imported here: it builds on this module

        return EasyPlayer(rules, seed)
    rounds = name.removeprefix("hard-") if name.startswith("hard-") else ""
    if name == "hard" or (rounds.isascii() and rounds.isdigit() and 0 < int(rounds) <= 10_000):
        from engine.ai_search import SearchPlayer

        if name == "hard":
            return SearchPlayer(rules, seed=seed)
        return SearchPlayer(rules, seed=seed, budget=None, samples=int(rounds))  # whatever the clock
    raise ValueError(f"unknown player {name!r}; choose one of {', '.join(PLAYERS)}")


def player_for_level(
    level: str, rules: RuleSet | None = None, seed: int = 0, share: ThinkingShare | None = None
) -> Player:
    """The computer player of a table level (``easy``, ``normal`` or ``hard``); a hard player's
    searches draw on ``share`` (``engine.ai_search.ThinkingShare``) when one is given."""
    try:
        name = LEVELS[level]
    except KeyError:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}") from None
    if name == "hard" and share is not None:
        from engine.ai_search import SearchPlayer

        return SearchPlayer(rules, seed=seed, share=share)
    return make_player(name, rules, seed)
