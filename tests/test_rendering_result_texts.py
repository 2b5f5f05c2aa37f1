"""Win cards and the settlement name who pays what, and their captions carry the facts.

Real games between computer players in each preset; every win card and settlement card is
built by the same view functions the presenter uses, in English and Chinese, and checked
against the game's own transfers: a discard win names its one payer (never "each payer"),
a self-draw names every payer, the caption says who won and who paid, and the settlement
lays every hand open with the seat's net.
"""

from __future__ import annotations

import pytest

from bot.i18n import translator
from bot.table.runner import Limits, SeatPlayer, TableRunner
from bot.table.views import WIN_REASONS, final_card, win_card
from engine.ai import make_player
from engine.events import EventType
from engine.game import Game
from engine.rules import RuleSet
from rendering import render_result_card
from storage.models import Hand, HandStatus

SEEDS = range(12)
NAMES = ("Ann", "王小明", "Борис", "Dee 🀄")


def runner_for(game: Game, seed: int) -> TableRunner:
    hand = Hand(id=1, table_id=1, chat_id=-1, number=1, rules=game.rules.to_dict(), seed=seed,
                dealer=game.dealer, status=HandStatus.PLAYING, seats=(1, 2, 3, 4))
    seats = [SeatPlayer(i + 1, name, None) for i, name in enumerate(NAMES)]
    return TableRunner(table_id=1, chat_id=-1, hand=hand, game=game, seats=seats, storage=None,  # type: ignore[arg-type]
                       presenter=None, scheduler=None, limits=Limits())  # type: ignore[arg-type]


def play(preset: str, seed: int, language: str):
    """Yield ("win", wins, transfers, card) for each win and ("end", game, None, card) at the end."""
    rules = RuleSet.preset(preset)
    game = Game(rules, seed, seed % 4)
    players = [make_player("ai", rules, seed=seed + s) for s in range(4)]
    runner = runner_for(game, seed)
    texts = translator(language)
    while not game.over:
        seat = game.pending_seats()[0]
        events = game.apply(players[seat].choose(game.view(seat), game.legal_actions(seat)))
        wins = [e.win for e in events if e.type is EventType.WON and e.win is not None]
        if wins:
            transfers = [e.transfer for e in events if e.transfer is not None]
            yield "win", wins, transfers, win_card(runner, wins, transfers, texts)
    yield "end", game, None, final_card(runner, texts)


@pytest.mark.parametrize("preset", ["chengdu", "xueliu"])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_win_names_its_payers_and_every_caption_carries_the_facts(preset: str, language: str) -> None:
    discard_wins = self_draws = 0
    for seed in SEEDS:
        for kind, subject, transfers, card in play(preset, seed, language):
            assert card.caption and len(card.caption) <= 1024
            assert "each payer" not in card.caption and "每家付" not in card.caption
            if kind == "win":
                for win, shown in zip(subject, card.wins, strict=True):
                    paid = [t for t in transfers if t.payee == win.seat and t.reason in WIN_REASONS]
                    payers = {NAMES[t.payer] for t in paid}
                    assert paid and all(name in shown.total for name in payers), (shown.total, payers)
                    assert NAMES[win.seat] in card.caption
                    assert all(name in card.caption for name in payers)
                    if win.from_seat is not None and not win.self_drawn:
                        assert payers == {NAMES[win.from_seat]}, (shown.total, win)
                        discard_wins += 1
                    else:
                        self_draws += 1
            else:
                game = subject
                chips = game.chips()
                assert [h.name for h in card.hands] == list(NAMES)
                for seat, hand in enumerate(card.hands):
                    assert hand.concealed == tuple(game.hand(seat)) and hand.net == chips[seat]
                    assert f"{NAMES[seat]} {chips[seat]:+d}" in card.caption or (
                        chips[seat] == 0 and f"{NAMES[seat]} 0" in card.caption
                    )
    assert discard_wins and self_draws


def test_a_settlement_card_draws_with_every_hand() -> None:
    *_, (_, _, _, card) = play("chengdu", 3, "zh")
    img = render_result_card(card)
    assert max(img.size) <= 1280
