"""复盘: the moments of a finished hand where one seat's choice differed most from the hard player's.

``review_hand`` replays the action log; at every decision of the seat with a real choice (a
discard, or a win / pung / kong / pass on an offered tile) it asks the hard player what it
would have done **from that seat's view at that moment** (``Game.view`` — never the wall or
another hand) and estimates what the difference cost:

- a discard: the search's estimated chips of both discards (the same sampled walls for both,
  ``engine.ai_search``), and, in words a person checks at a glance, the shanten and live outs
  (unseen copies of the tiles that bring the hand closer) each discard leaves;
- a claim: the hand ``ai-v1`` would be left with either way (shanten, value in chips), or, for a
  win passed up, what that win was worth.

It returns at most ``limit`` moments, largest cost first. Nothing here formats text or draws:
``cli/review.py`` and the bot's 复盘 do that from these values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine import ai_eval, analysis
from engine.actions import Action, ActionType
from engine.ai import CHIPS_PER_MULTIPLIER, _outlook, _void_of, _without_void
from engine.ai_search import SearchPlayer
from engine.game import Game, Phase, SeatView
from engine.rules import RuleSet
from engine.scoring import wait_scores
from engine.tiles import Meld, MeldKind, Tile, counts_of, tile_name, tiles_of

# Rollout samples per reviewed discard: fixed (not timed) so a review is reproducible.
REVIEW_SAMPLES = 60
# Differences below this many chips are noise of the estimate, not advice.
MIN_COST = 0.15
MOMENTS = 5


@dataclass(frozen=True, slots=True)
class Outs:
    """What a hand waiting to draw looks like after a choice: shanten and live outs."""

    shanten: int
    live_outs: int  # unseen copies of the tiles that lower the shanten (or complete the hand)
    tiles: tuple[Tile, ...]  # those tiles


@dataclass(frozen=True, slots=True)
class Moment:
    """One decision where the seat and the hard player disagreed."""

    turn: int  # index of the seat's action in the hand's action log
    phase: str  # "discard" or "claim"
    hand: tuple[Tile, ...]  # the seat's concealed tiles at the moment (the drawn tile included)
    melds: tuple[Meld, ...]
    offered: Tile | None  # the tile on offer, for a claim
    chosen: Action
    suggested: Action
    cost: float  # estimated chips lost by the choice (> 0)
    chosen_outs: Outs | None  # after the choice, for a discard or a pung
    suggested_outs: Outs | None
    wall_count: int

    def to_dict(self) -> dict[str, Any]:
        def outs(o: Outs | None) -> dict[str, Any] | None:
            if o is None:
                return None
            return {"shanten": o.shanten, "live_outs": o.live_outs, "tiles": [tile_name(t) for t in o.tiles]}

        return {
            "turn": self.turn,
            "phase": self.phase,
            "hand": [tile_name(t) for t in self.hand],
            "melds": [m.notation() for m in self.melds],
            "offered": None if self.offered is None else tile_name(self.offered),
            "chosen": self.chosen.to_dict(),
            "suggested": self.suggested.to_dict(),
            "cost": round(self.cost, 2),
            "chosen_outs": outs(self.chosen_outs),
            "suggested_outs": outs(self.suggested_outs),
            "wall_count": self.wall_count,
        }


def outs_after(counts: Sequence[int], melds: Sequence[Meld], unseen: Sequence[int]) -> Outs:
    """Shanten and live outs of a hand waiting to draw (3k+1 concealed tiles)."""
    k = len(melds)
    s = analysis.shanten(counts, k)
    tiles = analysis.waits(counts, melds) if s == 0 else analysis.effective_tiles(counts, k)
    return Outs(s, sum(unseen[t] for t in tiles), tuple(tiles))


def review_hand(
    rules: RuleSet,
    seed: int,
    dealer: int,
    actions: Iterable[Action | dict[str, Any]],
    seat: int,
    *,
    limit: int = MOMENTS,
    samples: int = REVIEW_SAMPLES,
    wall: Sequence[Tile] | None = None,
) -> list[Moment]:
    """Up to ``limit`` moments of ``seat``'s play that cost the most against the hard player."""
    game = Game(rules, seed, dealer, wall=wall)
    moments: list[Moment] = []
    for turn, raw in enumerate(actions):
        action = raw if isinstance(raw, Action) else Action.from_dict(raw)
        if action.seat == seat and game.phase in (Phase.PLAY, Phase.CLAIM, Phase.ROB):
            view = game.view(seat)
            if len(view.legal) > 1:
                moment = _judge(view, action, rules, samples, seed * 1000 + turn, turn)
                if moment is not None:
                    moments.append(moment)
        game.apply(action)
    moments.sort(key=lambda m: -m.cost)
    return moments[:limit]


def _judge(view: SeatView, chosen: Action, rules: RuleSet, samples: int, seed: int, turn: int) -> Moment | None:
    hard = SearchPlayer(rules, seed=seed, budget=None, samples=samples)
    suggested = hard.choose(view, view.legal)
    if suggested == chosen:
        return None
    counts = counts_of(view.hand)
    melds = view.melds[view.seat]
    unseen = view.unseen()
    outlook = _outlook(view, rules)
    if view.phase is Phase.PLAY and chosen.type is ActionType.DISCARD and suggested.type is ActionType.DISCARD:
        return _judge_discard(view, chosen, suggested, hard, counts, melds, unseen, outlook, turn)
    if view.phase is Phase.PLAY:  # a kong against a discard: too close to call in chips
        return None
    cost = _claim_cost(view, chosen, suggested, counts, melds, outlook)
    if cost < MIN_COST:
        return None
    return Moment(
        turn, "discard" if view.phase is Phase.PLAY else "claim", view.hand, melds, view.offered,
        chosen, suggested, cost,
        _outs_of(chosen, counts, melds, unseen), _outs_of(suggested, counts, melds, unseen), view.wall_count,
    )


def _judge_discard(
    view: SeatView,
    chosen: Action,
    suggested: Action,
    hard: SearchPlayer,
    counts: list[int],
    melds: tuple[Meld, ...],
    unseen: list[int],
    outlook: ai_eval.Outlook,
    turn: int,
) -> Moment | None:
    assert chosen.tile is not None and suggested.tile is not None
    values = hard.discard_values(view, counts, outlook)
    if chosen.tile in values and suggested.tile in values:
        cost = values[suggested.tile] - values[chosen.tile]
    else:  # the chosen tile was not worth searching (or a void tile was due): compare by ai-v1's model
        cost = _assess_gap(counts, melds, outlook, chosen.tile, suggested.tile)
    if cost < MIN_COST:
        return None
    return Moment(
        turn, "discard", view.hand, melds, None, chosen, suggested, cost,
        _outs_of(chosen, counts, melds, unseen), _outs_of(suggested, counts, melds, unseen), view.wall_count,
    )


def _assess_gap(
    counts: list[int], melds: tuple[Meld, ...], outlook: ai_eval.Outlook, worse: Tile, better: Tile
) -> float:
    """Chips between two discards by ``ai-v1``'s model: a step of shanten is worth about a chip."""
    out = []
    for t in (worse, better):
        counts[t] -= 1
        a = ai_eval.assess(counts, melds, outlook)
        counts[t] += 1
        out.append(a.value * CHIPS_PER_MULTIPLIER - a.shanten)
    return out[1] - out[0]


def _claim_cost(
    view: SeatView,
    chosen: Action,
    suggested: Action,
    counts: list[int],
    melds: tuple[Meld, ...],
    outlook: ai_eval.Outlook,
) -> float:
    """Chips a claim decision cost: a passed-up win is worth its payment; otherwise the hands left."""
    tile = view.offered
    if tile is not None and ActionType.WIN in (chosen.type, suggested.type):
        scores = wait_scores(tiles_of(counts), melds, outlook.rules)
        win = float(scores[tile].payment_per_payer) if tile in scores else 1.0
        return win if suggested.type is ActionType.WIN else 0.0
    left = [_hand_after(a, view, counts, melds, outlook) for a in (chosen, suggested)]
    return left[1] - left[0]


def _hand_after(
    action: Action, view: SeatView, counts: list[int], melds: tuple[Meld, ...], outlook: ai_eval.Outlook
) -> float:
    void = _void_of(view)
    after = list(counts)
    new_melds = melds
    tile = action.tile if action.tile is not None else view.offered
    if action.type is ActionType.PUNG and tile is not None:
        after[tile] -= 2
        new_melds = (*melds, Meld(MeldKind.PUNG, tile))
        best = max(
            (_value(_without_void([c - (t == d) for t, c in enumerate(after)], void), new_melds, outlook)
             for d in range(27) if after[d]),
            default=0.0,
        )
        return best
    if action.type is ActionType.KONG and tile is not None:
        after[tile] = 0
        new_melds = (*melds, Meld(MeldKind.KONG, tile))
        return _value(_without_void(after, void), new_melds, outlook) + 1.0  # the kong pays about a chip
    return _value(_without_void(after, void), melds, outlook)


def _value(counts: list[int], melds: tuple[Meld, ...], outlook: ai_eval.Outlook) -> float:
    a = ai_eval.assess(counts, melds, outlook)
    return a.value * CHIPS_PER_MULTIPLIER - a.shanten


def _outs_of(action: Action, counts: list[int], melds: tuple[Meld, ...], unseen: list[int]) -> Outs | None:
    if action.type is ActionType.DISCARD and action.tile is not None:
        after = list(counts)
        after[action.tile] -= 1
        return outs_after(after, melds, unseen)
    return None
