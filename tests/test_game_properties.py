"""Invariants over many whole hands played by random and greedy players, every preset.

After every action: all 108 tiles are somewhere, chips sum to zero, and a seat's view never
holds another seat's concealed tiles. At the end: the action log replays to the identical
state, and the state survives JSON. Illegal actions are refused and change nothing.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_game_helpers import greedy_action

from engine.actions import Action, ActionType, GameError
from engine.events import EventType
from engine.game import Game, Phase
from engine.rules import SETTING_VALUES, RuleSet
from engine.settlement import TransferReason as R
from engine.tiles import ALL_TILES

PRESETS = ["chengdu", "xueliu", "classic"]


def random_action(game: Game, rng: random.Random) -> Action:
    return rng.choice(game.legal_actions(rng.choice(game.pending_seats())))


def check_invariants(game: Game) -> None:
    assert game.tile_census() == [4] * 27
    assert sum(game.chips()) == 0
    pending = game.pending_seats()
    for seat in range(4):
        assert bool(game.legal_actions(seat)) == (seat in pending)


def play(game: Game, rng: random.Random, chooser) -> None:
    while not game.over:
        game.apply(chooser(game, rng))
        check_invariants(game)


@pytest.mark.parametrize("preset", PRESETS)
def test_random_hands_keep_every_invariant_and_replay_exactly(preset: str) -> None:
    rules = RuleSet.preset(preset)
    for seed in range(40):
        rng = random.Random(seed)
        game = Game(rules, seed, seed % 4)
        play(game, rng, random_action)
        assert game.next_dealer() in range(4)
        log = [a.to_dict() for a in game.actions]
        replayed = Game.replay(rules, seed, seed % 4, json.loads(json.dumps(log)))
        assert replayed.to_json() == game.to_json()
        assert Game.from_json(game.to_json()).to_json() == game.to_json()


@pytest.mark.parametrize("preset", PRESETS)
def test_greedy_hands_with_real_wins_keep_every_invariant(preset: str) -> None:
    rules = RuleSet.preset(preset)
    wins = 0
    for seed in range(12):
        rng = random.Random(seed)
        game = Game(rules, seed, (seed + 1) % 4)
        play(game, rng, greedy_action)
        wins += len(game.wins)
        assert Game.replay(rules, seed, (seed + 1) % 4, game.actions).to_json() == game.to_json()
    assert wins > 0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), stop=st.integers(0, 150), preset=st.sampled_from(PRESETS))
def test_a_saved_state_continues_exactly_like_the_original(seed: int, stop: int, preset: str) -> None:
    rules = RuleSet.preset(preset)
    rng = random.Random(seed)
    game = Game(rules, seed, seed % 4)
    for _ in range(stop):
        if game.over:
            break
        game.apply(random_action(game, rng))
    restored = Game.from_json(game.to_json())
    assert restored.to_json() == game.to_json()
    for seat in range(4):
        assert restored.legal_actions(seat) == game.legal_actions(seat)
        assert restored.view(seat).to_dict() == game.view(seat).to_dict()
    rng_a, rng_b = random.Random(stop), random.Random(stop)
    while not game.over:
        game.apply(random_action(game, rng_a))
        restored.apply(random_action(restored, rng_b))
    assert restored.to_json() == game.to_json()


def _illegal_candidates(game: Game, rng: random.Random) -> list[Action]:
    seat = rng.randrange(4)
    tile = rng.choice(ALL_TILES)
    return [
        Action.discard(seat, tile),
        Action.win(seat, tile),
        Action.pung(seat, tile),
        Action.kong(seat, tile),
        Action.pass_(seat),
        Action.void(seat, tile // 9),
        Action.swap(seat, [tile, tile, tile]),
    ]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), preset=st.sampled_from(PRESETS))
def test_illegal_actions_are_refused_and_change_nothing(seed: int, preset: str) -> None:
    rules = RuleSet.preset(preset)
    rng = random.Random(seed)
    game = Game(rules, seed, seed % 4)
    while not game.over:
        before = game.to_json()
        for action in _illegal_candidates(game, rng):
            if action in game.legal_actions(action.seat):
                continue
            with pytest.raises(GameError) as err:
                game.apply(action)
            assert err.value.code in ("not_your_turn", "illegal_action")
            assert game.to_json() == before
        game.apply(random_action(game, rng))
    with pytest.raises(GameError) as err:
        game.apply(Action.pass_(0))
    assert err.value.code == "hand_over"


def test_a_view_never_shows_another_seats_concealed_tiles_or_the_wall() -> None:
    rng = random.Random(5)
    game = Game(RuleSet(), 5, 1)
    while not game.over:
        for seat in range(4):
            view = game.view(seat)
            assert list(view.hand) == game.hand(seat)
            for other in range(4):
                assert view.revealed[other] == (() if game.in_play[other] else tuple(game.hand(other)))
            data = view.to_dict()
            assert "wall" not in data and data["wall_count"] == game.wall_count
            if game.phase in (Phase.SWAP, Phase.VOID):
                assert all(v is None for s, v in enumerate(view.voids) if s != seat)
            unseen = view.unseen()
            assert all(0 <= unseen[t] <= 4 for t in ALL_TILES)
            assert sum(unseen) >= game.wall_count
        events = game.apply(random_action(game, rng))
        for event in events:
            for seat in range(4):
                shown = event.visible_to(seat)
                if event.private and seat != event.seat:
                    assert shown.tile is None and shown.tiles == () and shown.suit is None
                    assert shown.choice is None
            json.dumps(event.to_dict())


def test_every_logged_action_reads_back_equal() -> None:
    rng = random.Random(9)
    game = Game(RuleSet(), 9, 0)
    play(game, rng, random_action)
    kinds = set()
    for action in game.actions:
        assert Action.from_dict(json.loads(json.dumps(action.to_dict()))) == action
        kinds.add(action.type)
    assert {ActionType.SWAP, ActionType.VOID, ActionType.DISCARD} <= kinds


@pytest.mark.parametrize("preset", PRESETS)
def test_wins_are_paid_their_score_and_players_who_left_never_pay(preset: str) -> None:
    rules = RuleSet.preset(preset).with_changes(base=3)
    for seed in range(8):
        rng = random.Random(seed)
        game = Game(rules, seed, seed % 4)
        while not game.over:
            left = [not x for x in game.in_play]
            events = game.apply(greedy_action(game, rng))
            wins = {e.seat: e.win for e in events if e.type is EventType.WON and e.win}
            for e in events:
                t = e.transfer
                if t is None:
                    continue
                assert not left[t.payer]
                assert not left[t.payee] or t.reason in (R.TAX_REFUND, R.FLOWER_PIG)
                if t.reason in (R.WIN_DISCARD, R.ROBBING_KONG, R.SELF_DRAW):
                    assert t.amount == wins[t.payee].score.payment_per_payer * 3
            for seat, win in wins.items():
                payers = {t.payer for e in events if (t := e.transfer) and t.payee == seat}
                if win.self_drawn:
                    assert payers == {s for s in range(4) if s != seat and not left[s]}
                else:
                    assert win.from_seat in payers


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_any_combination_of_settings_plays_to_a_zero_sum_end(data: st.DataObject) -> None:
    settings_drawn = {key: data.draw(st.sampled_from(values), label=key) for key, values in SETTING_VALUES.items()}
    rules = RuleSet(**settings_drawn, base=data.draw(st.integers(1, 10)))
    seed = data.draw(st.integers(0, 2**32))
    rng = random.Random(seed)
    game = Game(rules, seed, seed % 4)
    while not game.over:
        chooser = greedy_action if rng.random() < 0.7 else random_action
        game.apply(chooser(game, rng))
    check_invariants(game)
    assert all(t.amount % rules.base == 0 for t in game.transfers)
    assert Game.replay(rules, seed, seed % 4, game.actions).to_json() == game.to_json()
