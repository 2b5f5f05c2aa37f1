"""Helpers for the referee's scripted tests: arranged walls, terse actions, a harmless driver.

``DUMMY`` is a 13-tile hand in 筒/条 with no pair and no run to speak of: a seat holding it can
never pung, kong or win, so scripted tests can ignore it. Dummies void 万.
"""

from __future__ import annotations

import random

from engine import analysis
from engine.actions import Action, ActionType
from engine.events import Event, EventType
from engine.game import Game, Phase, arranged_wall
from engine.rules import RuleSet
from engine.settlement import Transfer
from engine.tiles import Suit, parse_tile, parse_tiles

DUMMY = "124578p1245789s"
NO_SWAP = RuleSet(swap_three=False)


def table(
    hands: list[str],
    draws: str | list[str] = "",
    replacements: str = "",
    *,
    dealer: int = 0,
    rules: RuleSet = NO_SWAP,
    voids: str | None = None,
) -> Game:
    """A game on an arranged wall, voids chosen (by default the first suit absent from a hand)."""
    tiles = [parse_tiles(h) for h in hands]
    draw_tiles = parse_tiles(draws) if isinstance(draws, str) else [parse_tile(d) for d in draws]
    wall = arranged_wall(dealer, tiles, draw_tiles, parse_tiles(replacements))
    game = Game(rules, 0, dealer, wall=wall)
    assert game.phase is Phase.VOID
    for seat in range(4):
        if voids is not None:
            suit = Suit.from_letter(voids[seat])
        else:
            suit = next(s for s in Suit if all(t // 9 != s for t in tiles[seat]))
        game.apply(Action.void(seat, suit))
    return game


def act(game: Game, seat: int, kind: str, tile: str | None = None) -> list[Event]:
    return game.apply(Action(seat, ActionType(kind), parse_tile(tile) if tile else None))


def options(game: Game, seat: int) -> set[str]:
    """Legal actions as short strings: ``{"win 5m", "pung 5m", "pass"}``."""
    return {str(a).split(" ", 2)[2] for a in game.legal_actions(seat)}


def transfers(events: list[Event]) -> list[Transfer]:
    return [e.transfer for e in events if e.type is EventType.TRANSFER and e.transfer]


def step(game: Game) -> list[Event]:
    """One harmless move: take a forced win, else discard the drawn tile (or the first legal
    discard), and pass every claim that is not forced."""
    seat = game.pending_seats()[0]
    legal = game.legal_actions(seat)
    if len(legal) == 1 or game.phase in (Phase.SWAP, Phase.VOID):
        return game.apply(legal[0])
    if game.phase is Phase.PLAY:
        drawn = Action.discard(seat, game.drawn) if game.drawn is not None else None
        discards = [a for a in legal if a.type is ActionType.DISCARD]
        return game.apply(drawn if drawn in discards else discards[0])
    return game.apply(Action.pass_(seat))


def run_out(game: Game) -> list[Event]:
    events: list[Event] = []
    while not game.over:
        events += step(game)
    return events


def greedy_action(game: Game, rng: random.Random) -> Action:
    """A simple competent player for property tests: win when allowed, else the discard that
    keeps shanten lowest (ties at random), void the shortest suit, pass every claim."""
    seat = game.pending_seats()[0]
    legal = game.legal_actions(seat)
    wins = [a for a in legal if a.type is ActionType.WIN]
    if wins:
        return wins[0]
    if game.phase is Phase.VOID:
        counts = game.hands[seat]
        return Action.void(seat, min(Suit, key=lambda s: sum(counts[s * 9 : s * 9 + 9])))
    if game.phase is Phase.PLAY:
        counts = list(game.hands[seat])
        best: tuple[tuple[int, float], Action] | None = None
        for a in legal:
            if a.type is ActionType.DISCARD and a.tile is not None:
                counts[a.tile] -= 1
                key = (analysis.shanten(counts, len(game.melds[seat])), rng.random())
                counts[a.tile] += 1
                if best is None or key < best[0]:
                    best = (key, a)
        assert best is not None
        return best[1]
    if game.phase is Phase.SWAP:
        return rng.choice(legal)
    return Action.pass_(seat)
