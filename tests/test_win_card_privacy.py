"""A win card posted to the group never shows the concealed tiles of a player still in the hand.

In 血流成河 a winner plays on, so their hand stays hidden until the hand ends; in 血战到底 and
the classic first-win mode a winner leaves play and the rules lay the hand open. The check runs
real games between computer players in each preset and looks at every win card the group
would get, built by the same view function the presenter uses.
"""

from __future__ import annotations

import pytest

from bot.i18n import translator
from bot.table.runner import Limits, SeatPlayer, TableRunner
from bot.table.views import win_card
from engine.ai import make_player
from engine.events import EventType
from engine.game import Game
from engine.rules import RuleSet
from storage.models import Hand, HandStatus

SEEDS = range(40)


def runner_for(game: Game, seed: int) -> TableRunner:
    hand = Hand(id=1, table_id=1, chat_id=-1, number=1, rules=game.rules.to_dict(), seed=seed,
                dealer=game.dealer, status=HandStatus.PLAYING, seats=(1, 2, 3, 4))
    seats = [SeatPlayer(i + 1, f"P{i}", None) for i in range(4)]
    return TableRunner(table_id=1, chat_id=-1, hand=hand, game=game, seats=seats, storage=None,  # type: ignore[arg-type]
                       presenter=None, scheduler=None, limits=Limits())  # type: ignore[arg-type]


def cards_while_playing(preset: str, seed: int):
    """Yield (game, card) for every win of one game, right after the winning action."""
    rules = RuleSet.preset(preset)
    game = Game(rules, seed, seed % 4)
    players = [make_player("ai", rules, seed=seed + s) for s in range(4)]
    runner = runner_for(game, seed)
    texts = translator("en")
    while not game.over:
        seat = game.pending_seats()[0]
        events = game.apply(players[seat].choose(game.view(seat), game.legal_actions(seat)))
        wins = [e.win for e in events if e.type is EventType.WON and e.win is not None]
        if wins:
            yield game, wins, win_card(runner, wins, [], texts)


@pytest.mark.parametrize("preset", ["chengdu", "xueliu", "classic"])
def test_win_cards_never_show_a_concealed_hand_still_in_play(preset: str) -> None:
    hidden_checked = opened = 0
    for seed in SEEDS:
        for game, wins, card in cards_while_playing(preset, seed):
            for win, shown in zip(wins, card.wins, strict=True):
                if game.in_play[win.seat] and not game.over:
                    # Only the winning tile and the public melds: nothing of the concealed hand.
                    assert shown.hand.concealed == (win.tile,), (preset, seed, shown.hand)
                    assert shown.hand.melds == win.hand.melds
                    hidden_checked += 1
                else:
                    assert shown.hand == win.hand  # out of play: the rules lay the hand open
                    opened += 1
    if preset == "xueliu":
        assert hidden_checked > 0, "no xueliu win happened while the winner played on"
    else:
        assert hidden_checked == 0 and opened > 0
