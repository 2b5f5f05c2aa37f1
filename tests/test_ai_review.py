"""复盘 advice on arranged hands with an obvious best move, and ``xuezhan review`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

from cli.main import main as xuezhan
from engine.actions import Action, ActionType
from engine.game import Game, Phase, arranged_wall
from engine.review import review_hand
from engine.rules import RuleSet
from engine.tiles import parse_tiles, tile_name

RULES = RuleSet.preset("classic")  # no swap: the dealt hands are the hands played
# Seat 0 (dealer) can discard 9p and be ready on 1p/4p; seats 1-3 hold no bamboo (their void).
HANDS = [
    parse_tiles("123m456m789m23p55p9p"),
    parse_tiles("111m222m333m444p5p"),
    parse_tiles("555m666m777m666p7p"),
    parse_tiles("888m999m888p999p4p"),
]


def _game(draws: str) -> tuple[Game, list[int]]:
    wall = arranged_wall(0, HANDS, parse_tiles(draws))
    game = Game(RULES, 0, 0, wall=wall)
    for seat in range(4):
        game.apply(Action.void(seat, 2))
    return game, wall


def _pass_others(game: Game) -> None:
    """Every seat other than 0 passes on an offered tile."""
    while game.phase is Phase.CLAIM and any(s != 0 for s in game.pending_seats()):
        seat = next(s for s in game.pending_seats() if s != 0)
        game.apply(Action.pass_(seat))


def test_breaking_a_ready_hand_is_the_moment_named() -> None:
    game, wall = _game("6p")
    game.apply(Action.discard(0, parse_tiles("2p")[0]))  # the mistake: 9p would leave it ready
    moments = review_hand(RULES, 0, 0, game.actions, 0, wall=wall, samples=30)
    assert moments, "the broken ready hand must be reported"
    m = moments[0]
    assert tile_name(m.chosen.tile) == "2p" and tile_name(m.suggested.tile) == "9p"
    assert m.cost > 0
    assert m.suggested_outs.shanten == 0 and m.suggested_outs.live_outs == 8  # 1p and 4p, all unseen
    assert m.chosen_outs.shanten == 1


def test_the_best_discard_is_no_moment() -> None:
    game, wall = _game("6p")
    game.apply(Action.discard(0, parse_tiles("9p")[0]))
    assert review_hand(RULES, 0, 0, game.actions, 0, wall=wall, samples=30) == []


def test_a_win_passed_up_is_named_with_its_value() -> None:
    game, wall = _game("1p")
    game.apply(Action.discard(0, parse_tiles("9p")[0]))  # ready on 1p/4p
    _pass_others(game)
    game.apply(Action.discard(1, parse_tiles("1p")[0]))  # seat 1 draws 1p and throws it
    assert any(a.type is ActionType.WIN for a in game.legal_actions(0))
    game.apply(Action.pass_(0))
    moments = review_hand(RULES, 0, 0, game.actions, 0, wall=wall, samples=10)
    assert [m.suggested.type for m in moments] == [ActionType.WIN]
    assert moments[0].chosen.type is ActionType.PASS and moments[0].cost >= 1


def test_review_command_prints_the_moment_and_refuses_bad_logs(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    game, wall = _game("6p")
    game.apply(Action.discard(0, parse_tiles("2p")[0]))
    log = tmp_path / "hand.json"
    log.write_text(json.dumps({"rules": "classic", "seed": 0, "dealer": 0, "wall": wall,
                               "actions": [a.to_dict() for a in game.actions]}))
    assert xuezhan(["review", str(log), "--seat", "0", "--json", "--samples", "60"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = out["seats"]["0"][0]
    assert first["chosen"]["tile"] == "2p" and first["suggested"]["tile"] == "9p"
    assert first["suggested_outs"] == {"shanten": 0, "live_outs": 8, "tiles": ["1p", "4p"]}
    pictures = tmp_path / "pictures"
    args = ["review", str(log), "--seat", "0", "--lang", "en", "--samples", "60", "--pictures", str(pictures)]
    assert xuezhan(args) == 0
    text = capsys.readouterr().out
    assert (pictures / "seat0-1.png").stat().st_size > 1000
    assert "discard 2p" in text and "discard 9p" in text and "ready, 8 winning tiles left" in text
    (tmp_path / "taken").write_text("a file where the folder of pictures would go")
    assert xuezhan([*args[:-1], str(tmp_path / "taken" / "pictures")]) == 2
    assert "cannot write the pictures" in capsys.readouterr().err
    log.write_text("{not json")
    assert xuezhan(["review", str(log)]) == 2
    assert "not JSON" in capsys.readouterr().err
    log.write_text(json.dumps({"seed": 0}))
    assert xuezhan(["review", str(log)]) == 2
    assert "no rules, dealer, actions" in capsys.readouterr().err
    log.write_bytes(b"\xff\xfe\x00")
    assert xuezhan(["review", str(log)]) == 2
    assert "is not a text file" in capsys.readouterr().err
    assert xuezhan(["review", str(tmp_path)]) == 2  # a folder
    assert "xuezhan review:" in capsys.readouterr().err
