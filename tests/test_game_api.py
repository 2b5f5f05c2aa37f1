"""The referee's surface: construction, errors with codes, actions and events in JSON, views."""

from __future__ import annotations

import pytest
from test_game_helpers import DUMMY, act, table

from engine.actions import Action, ActionType, GameError
from engine.events import EventType
from engine.game import Game, Phase, arranged_wall
from engine.rules import RuleSet
from engine.tiles import Suit, parse_tile, parse_tiles


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"rules": "chengdu", "seed": 1, "dealer": 0}, "bad_setup"),
        ({"rules": RuleSet(), "seed": "x", "dealer": 0}, "bad_setup"),
        ({"rules": RuleSet(), "seed": 1, "dealer": 4}, "bad_setup"),
        ({"rules": RuleSet(), "seed": 1, "dealer": 0, "wall": [0] * 108}, "bad_setup"),
    ],
)
def test_a_bad_setup_is_refused_with_a_code(kwargs: dict, code: str) -> None:
    with pytest.raises(GameError) as err:
        Game(**kwargs)
    assert err.value.code == code


def test_arranged_wall_deals_the_given_hands_and_draws() -> None:
    hands = [parse_tiles(DUMMY + "3p"), parse_tiles(DUMMY), parse_tiles(DUMMY), parse_tiles(DUMMY)]
    wall = arranged_wall(0, hands, parse_tiles("9m8m"), parse_tiles("1m"))
    g = Game(RuleSet(swap_three=False), 0, 0, wall=wall)
    assert g.hand(0) == sorted(hands[0]) and g.wall[:2] == parse_tiles("9m8m") and g.wall[-1] == 0
    with pytest.raises(GameError):
        arranged_wall(0, hands, parse_tiles("1p"))  # a fifth 1p


@pytest.mark.parametrize(
    "data",
    [
        {"seat": 5, "type": "discard", "tile": "5p"},
        {"seat": 1, "type": "chow", "tile": "5p"},
        {"seat": 1, "type": "discard", "tile": "0p"},
        {"seat": 1, "type": "void", "suit": "z"},
        {"type": "pass"},
        "discard 5p",
    ],
)
def test_an_unreadable_action_is_a_bad_action(data: object) -> None:
    with pytest.raises(GameError) as err:
        Action.from_dict(data)
    assert err.value.code == "bad_action"


def test_actions_read_as_the_log_writes_them() -> None:
    assert Action.swap(0, parse_tiles("9m1m2m")).to_dict() == {"seat": 0, "type": "swap", "tiles": ["1m", "2m", "9m"]}
    assert Action.void(2, Suit.BAMBOO).to_dict() == {"seat": 2, "type": "void", "suit": "s"}
    assert Action.from_dict({"seat": 3, "type": "pass"}) == Action.pass_(3)
    assert str(Action.kong(1, parse_tile("5p"))) == "seat 1 kong 5p"


def test_it_is_nobodys_turn_but_the_pending_seats() -> None:
    g = table([DUMMY + "3p", DUMMY, DUMMY, DUMMY])
    assert g.pending_seats() == [0] and g.legal_actions(1) == []
    with pytest.raises(GameError) as err:
        act(g, 1, "discard", "1p")
    assert err.value.code == "not_your_turn"
    with pytest.raises(GameError) as err:
        act(g, 0, "discard", "9m")
    assert err.value.code == "illegal_action" and "allowed" in err.value.message
    with pytest.raises(GameError) as err:
        g.apply("discard")  # type: ignore[arg-type]
    assert err.value.code == "bad_action"
    with pytest.raises(GameError) as err:
        g.legal_actions(7)
    assert err.value.code == "bad_action"


def test_a_broken_saved_state_is_a_bad_state() -> None:
    for text in ("{", "[]", '{"version": 99}', '{"version": 1}'):
        with pytest.raises(GameError) as err:
            Game.from_json(text)
        assert err.value.code == "bad_state"


def test_claim_choices_stay_secret_until_the_window_closes() -> None:
    g = table([DUMMY + "9s", "123m46m789m666p99p", "55m789m123m333p99p", DUMMY], draws="6s6s5m")
    for seat, tile in ((0, "9s"), (1, "6s"), (2, "6s"), (3, "5m")):
        act(g, seat, "discard", tile)
    (event,) = act(g, 1, "pass")
    assert event.type is EventType.CLAIM_CHOSEN and event.private
    assert event.visible_to(2).choice is None and event.visible_to(1).choice is ActionType.PASS
    assert g.phase is Phase.CLAIM and g.pending_seats() == [2]
    assert g.view(2).offered == parse_tile("5m") and g.view(2).offered_by == 3


def test_the_deal_events_are_private_to_each_seat() -> None:
    g = Game(RuleSet(), 1, 0)
    events = g.deal_events()
    assert [len(e.tiles) for e in events] == [14, 13, 13, 13]
    assert events[1].visible_to(0).tiles == () and events[1].visible_to(1).tiles == tuple(g.dealt[1])
    assert events[0].to_dict()["type"] == "dealt"
