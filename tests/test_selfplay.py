"""Self-play, its checks, the simulate / arena commands and the arena statistics."""

from __future__ import annotations

import itertools
import json

import pytest

from cli.main import main
from engine import selfplay
from engine.ai_stats import clustered_mean, percentile
from engine.game import Game
from engine.rules import RuleSet
from engine.selfplay import arena, check_hand, named_players, play_hand, play_session

RULES = RuleSet()


def test_a_played_hand_passes_every_check() -> None:
    factory = named_players(["ai", "greedy", "random", "ai"], RULES)
    result = play_hand(RULES, 11, 2, [factory(11, s) for s in range(4)])
    assert result.problems == []
    assert sum(result.chips) == 0
    assert result.end in ("three_won", "wall_empty")
    assert all(times for times in result.decision_seconds)


def test_check_hand_notices_lost_tiles_and_broken_replays() -> None:
    factory = named_players(["random"] * 4, RULES)
    result = play_hand(RULES, 4, 0, [factory(4, s) for s in range(4)])
    game = Game.replay(RULES, 4, 0, result.actions)
    assert check_hand(game) == []
    game.hands[0][0] += 1  # a tile appears from nowhere
    problems = check_hand(game)
    assert any("not accounted for" in p for p in problems)
    assert any("replaying" in p for p in problems)


def test_session_follows_the_next_dealer() -> None:
    results = list(play_session(RULES, 3, 4, named_players(["greedy"] * 4, RULES)))
    for before, after in itertools.pairwise(results):
        assert after.dealer == before.next_dealer
    assert [r.seed for r in results] == [3, 4, 5, 6]


def test_arena_plays_each_seed_in_every_seat() -> None:
    report = arena("ai", "random", RULES, 2, check=True)
    assert report.games == 8 and report.score.clusters == 2
    assert report.problems == []
    assert 0 <= report.win_rate <= 1 and report.flower_pig_rate == 0


def test_simulate_command_exits_zero_when_checks_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--hands", "3", "--seed", "1", "--players", "ai,greedy,random,ai", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["hands"] == 3 and out["problems"] == []
    assert [s["player"] for s in out["seats"]] == ["ai", "greedy", "random", "ai"]
    assert sum(s["chips"] for s in out["seats"]) == 0
    assert out["hands_per_second"] > 0


def test_simulate_command_exits_one_when_a_check_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(selfplay, "check_hand", lambda game: ["transfers do not sum to zero: [1, 0, 0, 0]"])
    assert main(["simulate", "--hands", "1", "--players", "random,random,random,random"]) == 1
    assert "FAILED" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--players", "ai,ai,ai"],
        ["simulate", "--players", "ai,ai,ai,wizard"],
        ["simulate", "--rules", "tokyo"],
        ["simulate", "--hands", "0"],
        ["arena", "--baseline", "wizard"],
        ["arena", "--seeds", "0"],
    ],
)
def test_bad_input_exits_two_with_a_message(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["message"]


def test_arena_command_prints_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--challenger", "ai", "--baseline", "random", "--seeds", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("win_rate", "deal_in_rate", "flower_pig_rate", "decision_ms_p50", "decision_ms_p95"):
        assert key in out
    assert set(out["score_per_game"]) == {"mean", "ci95_low", "ci95_high", "clusters"}
    assert out["games"] == 4
    assert main(["arena", "--baseline", "random", "--seeds", "1"]) == 0
    text = capsys.readouterr().out
    assert "score per game" in text and "95% CI" in text and "花猪 rate" in text


def test_clustered_interval_uses_seed_means() -> None:
    est = clustered_mean({1: [1.0, 3.0], 2: [2.0, 2.0], 3: [3.0, 1.0], 4: [2.0, 2.0]})
    assert est.mean == 2.0 and est.low == est.high == 2.0  # every seed averages the same
    wide = clustered_mean({1: [0.0, 0.0], 2: [4.0, 4.0]})
    assert wide.low < 2.0 < wide.high
    assert percentile([], 95) == 0.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0
