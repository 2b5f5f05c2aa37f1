"""The three levels: easy, normal (the frozen ``ai-v1``) and hard (search). Hard reads only its
seat's view, answers within its time budget however slow the clock, and all of them play legal,
flower-pig-free hands."""

from __future__ import annotations

import random
from itertools import count

import pytest

from engine.actions import Action, ActionType
from engine.ai import AIPlayer, make_player, player_for_level
from engine.ai_easy import EasyPlayer
from engine.ai_search import SearchPlayer, ThinkingShare, hidden_deal, rollout
from engine.events import EndReason
from engine.game import Game, Phase, arranged_wall
from engine.rules import RuleSet
from engine.tiles import counts_of, parse_tiles, tiles_of

CLASSIC = RuleSet.preset("classic")
HAND0 = parse_tiles("12345678m23p57p99p")  # dealer, 14 tiles, voids bamboo: search has choices


def _twin_game(shuffle_seed: int) -> Game:
    """Seat 0 holds HAND0; the other hands and the wall are a shuffle of everything else."""
    left = [4 - c for c in counts_of(HAND0)]
    rest = tiles_of(left)
    random.Random(shuffle_seed).shuffle(rest)
    hands = [HAND0, rest[:13], rest[13:26], rest[26:39]]
    game = Game(CLASSIC, 0, 0, wall=arranged_wall(0, hands, rest[39:]))
    for seat in range(4):
        game.apply(Action.void(seat, 2))
    assert game.phase is Phase.PLAY and game.current == 0
    return game


def test_levels_name_their_players() -> None:
    assert isinstance(player_for_level("easy", CLASSIC), EasyPlayer)
    assert type(player_for_level("normal", CLASSIC)) is AIPlayer
    assert isinstance(player_for_level("hard", CLASSIC), SearchPlayer)
    assert type(make_player("ai-v1")) is AIPlayer
    with pytest.raises(ValueError, match="unknown level 'expert'"):
        player_for_level("expert")


def test_hard_never_reads_the_wall_or_another_hand() -> None:
    """Two games that differ in every hidden tile but look the same from seat 0 get the same
    decision: the search deals its own hidden tiles from what the seat saw."""
    a, b = _twin_game(1), _twin_game(2)
    assert a.wall != b.wall and a.hand(1) != b.hand(1)
    view_a, view_b = a.view(0), b.view(0)
    assert view_a == view_b
    assert all(not r for r in view_a.revealed)  # the view carries no other concealed hand
    players = [SearchPlayer(CLASSIC, seed=7, budget=None, samples=20) for _ in range(2)]
    choices = [p.choose(v, v.legal) for p, v in zip(players, (view_a, view_b), strict=True)]
    assert players[0].last_samples == 20  # the search really ran
    assert choices[0] == choices[1]


def test_sampled_walls_hold_only_tiles_the_seat_cannot_see() -> None:
    view = _twin_game(3).view(0)
    unseen = view.unseen()
    for seed in range(20):
        wall = hidden_deal(view, random.Random(seed))
        assert len(wall) == sum(unseen) - 39  # three hidden hands of 13 dealt out first
        assert all(c <= u for c, u in zip(counts_of(wall), unseen, strict=True))


def test_a_slow_clock_makes_hard_weaker_never_later() -> None:
    """Every clock reading is a second later: the search stops after one round and answers."""
    ticks = count()
    player = SearchPlayer(CLASSIC, seed=1, budget=0.06, clock=lambda: float(next(ticks)))
    view = _twin_game(4).view(0)
    action = player.choose(view, view.legal)
    assert action in view.legal and player.last_samples == 1


def test_rollouts_value_a_ready_hand_over_a_broken_one() -> None:
    """Same draws: keeping 23p (ready on 1p/4p) beats breaking the wait, on average."""
    rng = random.Random(0)
    ready = counts_of(parse_tiles("123m456m789m23p55p"))
    broken = counts_of(parse_tiles("123m456m789m29p55p"))
    pool = [t for t in range(27) for _ in range(2)]
    totals = [0.0, 0.0]
    for _ in range(200):
        rng.shuffle(pool)
        totals[0] += rollout(ready, (), pool[:24], CLASSIC, 3)
        totals[1] += rollout(broken, (), pool[:24], CLASSIC, 3)
    assert totals[0] > totals[1]


@pytest.mark.parametrize("preset", ["chengdu", "xueliu", "classic"])
def test_every_level_plays_legal_hands_without_flower_pigs(preset: str) -> None:
    rules = RuleSet.preset(preset)
    for seed in range(2):
        game = Game(rules, seed, seed % 4)
        players = [
            SearchPlayer(rules, seed=seed, budget=None, samples=3),
            EasyPlayer(rules, seed),
            make_player("ai-v1", rules),
            SearchPlayer(rules, seed=seed + 1, budget=None, samples=3),
        ]
        while not game.over:
            seat = game.pending_seats()[0]
            view = game.view(seat)
            action = players[seat].choose(view, view.legal)
            assert action in view.legal
            if seat == 1 and view.phase is Phase.PLAY and any(a.type is ActionType.WIN for a in view.legal):
                assert action.type is ActionType.WIN  # easy takes every win
            game.apply(action)
        assert sum(game.chips()) == 0
        for seat in range(4):
            if game.in_play[seat] and game.end is EndReason.WALL_EMPTY:
                tiles = game.hand(seat) + [m.tile for m in game.melds[seat]]
                assert len({t // 9 for t in tiles}) <= 2, (seed, seat)


def test_without_declared_voids_no_level_ends_a_flower_pig() -> None:
    """不定张: no void is declared, yet the winning hand must lack a suit; the players drop their
    shortest suit once they hold all three, so none is left holding three suits at the empty wall."""
    rules = RuleSet.preset("chengdu").with_changes(declare_void=False)
    for seed in range(4):
        game = Game(rules, seed, seed % 4)
        players = [
            make_player("ai-v1", rules),
            EasyPlayer(rules, seed),
            make_player("greedy", rules),
            SearchPlayer(rules, seed=seed, budget=None, samples=2),
        ]
        while not game.over:
            seat = game.pending_seats()[0]
            view = game.view(seat)
            game.apply(players[seat].choose(view, view.legal))
        for seat in range(4):
            if game.in_play[seat] and game.end is EndReason.WALL_EMPTY:
                tiles = game.hand(seat) + [m.tile for m in game.melds[seat]]
                assert len({t // 9 for t in tiles}) <= 2, (seed, seat)


def test_a_spent_share_of_the_cpu_leaves_ai_v1s_answer_and_refills() -> None:
    """The bot's searches share half a core: once it is spent a hard player answers as ai-v1
    does, without searching; the share refills with the wall clock."""
    now = [0.0]
    share = ThinkingShare(share=0.5, burst=0.5, clock=lambda: now[0])
    view = _twin_game(5).view(0)
    hard = player_for_level("hard", CLASSIC, seed=3, share=share)
    assert isinstance(hard, SearchPlayer) and hard.share is share
    share.spend(0.5)
    action = hard.choose(view, view.legal)
    assert hard.last_samples == 0 and action == AIPlayer(CLASSIC).choose(view, view.legal)
    now[0] = 1.0  # a second later half a second of CPU is back
    assert share.available() == pytest.approx(0.5, abs=0.05)
    hard.choose(view, view.legal)
    assert hard.last_samples >= 1
    assert share.available() < 0.5  # and the search paid for what it used
