"""Computer players: legal, never a 花猪 when avoidable, sensible swap / void / discard choices."""

from __future__ import annotations

import pytest

from engine.actions import ActionType
from engine.ai import AIPlayer, GreedyPlayer, RandomPlayer, make_player
from engine.ai_eval import Outlook, best_discard, choose_swap, choose_void
from engine.game import Game, Phase
from engine.rules import RuleSet
from engine.tiles import COPIES, counts_of, parse_tiles, tile_name

RULES = RuleSet()


def _outlook(hand: list[int], draws: float = 10.0) -> Outlook:
    unseen = tuple(COPIES - c for c in hand)
    return Outlook(unseen, draws, RULES)


def play(rules: RuleSet, seed: int, names: list[str]) -> Game:
    """Play one hand, asserting every decision is one of the seat's legal actions."""
    game = Game(rules, seed, seed % 4)
    players = [make_player(n, rules, seed=seed * 4 + s) for s, n in enumerate(names)]
    while not game.over:
        seat = game.pending_seats()[0]
        view = game.view(seat)
        action = players[seat].choose(view, view.legal)
        assert action in view.legal
        game.apply(action)
    return game


@pytest.mark.parametrize("preset", ["chengdu", "xueliu", "classic"])
def test_players_only_choose_legal_actions(preset: str) -> None:
    rules = RuleSet.preset(preset)
    for seed in range(6):
        game = play(rules, seed, ["ai", "greedy", "random", "ai"])
        assert sum(game.chips()) == 0


def test_ai_never_ends_a_hand_as_a_flower_pig() -> None:
    """Void tiles go first, so an AI seat still in at the empty wall holds at most two suits."""
    for seed in range(12):
        game = play(RULES, seed, ["ai", "ai", "random", "random"])
        for seat in (0, 1):
            if game.in_play[seat]:
                tiles = game.hand(seat) + [m.tile for m in game.melds[seat]]
                assert len({t // 9 for t in tiles}) <= 2, (seed, seat, tiles)


@pytest.mark.parametrize("player", [AIPlayer(), GreedyPlayer(), RandomPlayer(3)])
def test_swap_passes_three_tiles_of_one_suit(player: object) -> None:
    for seed in range(8):
        game = Game(RULES, seed, 0)
        view = game.view(1)
        action = player.choose(view, view.legal)  # type: ignore[attr-defined]
        assert action.type is ActionType.SWAP
        assert len(action.tiles) == 3 and len({t // 9 for t in action.tiles}) == 1


def test_swap_gives_away_the_short_suit() -> None:
    assert choose_swap(counts_of(parse_tiles("1234m2345678p169s"))) == parse_tiles("169s")
    # A suit of two tiles cannot be passed; the weaker of the other two (dots) goes.
    assert {t // 9 for t in choose_swap(counts_of(parse_tiles("123456m2358p19s")))} == {1}


def test_void_is_the_weakest_suit() -> None:
    assert choose_void(counts_of(parse_tiles("123456m234567p19s"))) == 2
    assert choose_void(counts_of(parse_tiles("19m123345p456678s"))) == 0


def test_discard_keeps_the_hand_fastest() -> None:
    hand = counts_of(parse_tiles("123m456m789m1p4p55p9p"))
    _, tile = best_discard(hand, (), _outlook(hand), [t for t in range(27) if hand[t]])
    assert tile_name(tile) in ("1p", "9p")  # either keeps the hand one step from ready


def test_ready_discard_prefers_live_waits() -> None:
    # Throwing 8m waits on 1m/4m; throwing 1m or 4m waits on 8m alone.
    hand = counts_of(parse_tiles("12348m567p789p55p"))
    candidates = [t for t in range(27) if hand[t]]
    _, tile = best_discard(hand, (), _outlook(hand), candidates)
    assert tile_name(tile) == "8m"  # two waits beat one
    unseen = [COPIES - c for c in hand]
    for t in parse_tiles("14m"):
        unseen[t] = 0  # every other 1m and 4m is visible: that wait is dead
    _, tile = best_discard(hand, (), Outlook(tuple(unseen), 10.0, RULES), candidates)
    assert tile_name(tile) in ("1m", "4m")


@pytest.mark.parametrize("preset", ["chengdu", "xueliu", "classic"])
def test_ai_takes_wins(preset: str) -> None:
    """A self-draw is always taken; only 血战到底 may wait on a discard for a bigger self-draw."""
    rules = RuleSet.preset(preset)
    for seed in range(6):
        game = Game(rules, seed, 0)
        players = [AIPlayer(rules) for _ in range(4)]
        while not game.over:
            seat = game.pending_seats()[0]
            view = game.view(seat)
            action = players[seat].choose(view, view.legal)
            may_win = any(a.type is ActionType.WIN for a in view.legal)
            if may_win and (view.phase is Phase.PLAY or preset != "chengdu"):
                assert action.type is ActionType.WIN
            game.apply(action)


def test_same_seed_same_decisions() -> None:
    a = play(RULES, 5, ["ai", "random", "greedy", "ai"])
    b = play(RULES, 5, ["ai", "random", "greedy", "ai"])
    assert a.actions == b.actions


def test_unknown_player_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown player 'robot'"):
        make_player("robot")
