"""The easy computer player: sensible, but it never defends and now and then slips like a person.

It keeps ``ai-v1``'s swap, void, void-tiles-first discipline and claims, and takes every win it
is offered. It differs where a beginner differs: it ignores what the other seats are collecting
(no danger estimate, never folds), and on some turns it throws a tile that is merely fine instead
of the best one — any discard that keeps the hand as fast, now and then one that costs a step.
Seeded, so self-play stays reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine import ai_eval
from engine.actions import Action, ActionType
from engine.ai import AIPlayer, _of_type, _void_of
from engine.ai_eval import Outlook
from engine.game import SeatView
from engine.rules import RuleSet
from engine.tiles import Meld, Tile

# Chance that a discard is any equally fast one instead of the best, and that it costs a step.
SLIP = 0.4
BIG_SLIP = 0.15


class EasyPlayer(AIPlayer):
    """The easy level (see the module docstring)."""

    name = "easy"

    def __init__(self, rules: RuleSet | None = None, seed: int = 0) -> None:
        super().__init__(rules)
        self.rng = random.Random(seed)

    def _own_turn(self, view: SeatView, legal: Sequence[Action], counts: list[int], outlook: Outlook) -> Action:
        wins = _of_type(legal, ActionType.WIN)
        if wins:
            return wins[0]
        discards = _of_type(legal, ActionType.DISCARD)
        void = _void_of(view)
        if void is not None and any(a.tile is not None and a.tile // 9 == void for a in discards):
            return self._dump_void(view, discards)
        ranked = ai_eval.rank_discards(counts, view.melds[view.seat], outlook, [a.tile for a in discards])  # type: ignore[misc]
        keep, tile = ranked[ai_eval.best_choice([a for a, _ in ranked], outlook)]
        roll = self.rng.random()
        if roll < BIG_SLIP:
            tile = self._slip(ranked, keep.shanten + 1) or tile
        elif roll < SLIP:
            tile = self._slip(ranked, keep.shanten) or tile
        for a in _of_type(legal, ActionType.KONG):
            assert a.tile is not None
            if self._kong_pays(view, counts, view.melds[view.seat], a.tile, outlook, keep):
                return a
        return Action.discard(view.seat, tile)

    def _slip(self, ranked: list[tuple[ai_eval.Assessment, Tile]], shanten: int) -> Tile | None:
        options = [t for a, t in ranked if a.shanten == shanten]
        return self.rng.choice(options) if options else None

    def _take_win(
        self, view: SeatView, counts: list[int], melds: tuple[Meld, ...], tile: Tile, outlook: Outlook
    ) -> bool:
        return True
