"""Hand snapshots: kept per playing hand, dropped with its last action, and trusted on a restart
only where they agree with the log (bot/table/snapshots.py). Storage tests run on both backends."""

from __future__ import annotations

import random

import pytest

from bot.table.snapshots import restore_game, snapshot_of
from engine.actions import Action
from engine.game import Game
from engine.rules import RuleSet
from storage import HandClosed, PlayerKind, SeatTransfer, open_storage
from storage.models import Hand, HandStatus

CHAT = -1002


@pytest.fixture
async def store(db_url):
    opened = await open_storage(db_url)
    yield opened
    await opened.close()


async def playing_hand(store) -> Hand:
    players = [await store.named_player(CHAT, f"P{i}", PlayerKind.COMPUTER) for i in range(4)]
    table = await store.create_table(CHAT, None)
    for seat, player in enumerate(players):
        table = await store.set_seat(table.id, seat, player.id)
    return await store.start_hand(table.id, {}, seed=7, dealer=0)


@pytest.mark.both_backends
async def test_a_snapshot_is_kept_replaced_and_dropped_when_the_hand_ends(store) -> None:
    hand = await playing_hand(store)
    assert await store.hand_snapshots() == {}
    await store.save_snapshot(hand.id, 0, {"n": 0})
    await store.append_action(hand.id, 0, {"a": 0})
    await store.save_snapshot(hand.id, 1, {"n": 1})
    assert await store.hand_snapshots() == {hand.id: (1, {"n": 1})}
    await store.append_action(hand.id, 1, {"a": 1}, [SeatTransfer(1, 0, 2, "t")], result={"end": True})
    assert await store.hand_snapshots() == {}
    with pytest.raises(HandClosed):
        await store.save_snapshot(hand.id, 2, {"n": 2})


def played(actions: int, seed: int = 11) -> tuple[RuleSet, Hand, list[Action], Game]:
    """A hand ``actions`` decisions in, each seat choosing at random among its legal actions."""
    rules = RuleSet()
    game = Game(rules, seed, 1)
    pick = random.Random(seed)
    while len(game.actions) < actions and not game.over:
        seat = game.pending_seats()[0]
        game.apply(pick.choice(game.legal_actions(seat)))
    hand = Hand(id=1, table_id=1, chat_id=CHAT, number=1, rules=rules.to_dict(), seed=seed, dealer=1,
                status=HandStatus.PLAYING, seats=(1, 2, 3, 4), result=None, started_at=None,  # type: ignore[arg-type]
                finished_at=None)
    return rules, hand, list(game.actions), game


def test_a_snapshot_that_agrees_with_the_log_is_restored_and_the_rest_of_the_log_applied() -> None:
    rules, hand, actions, game = played(40)
    early = Game.replay(rules, hand.seed, hand.dealer, actions[:25])
    restored = restore_game(rules, hand, actions, snapshot_of(early))
    assert restored.to_dict() == game.to_dict()


def test_a_snapshot_that_disagrees_with_the_log_is_ignored() -> None:
    rules, hand, actions, game = played(40)
    *_, other = played(40, seed=12)
    for wrong in (snapshot_of(other),                      # another hand (another seed)
                  (30, snapshot_of(game)[1]),              # claims fewer actions than it holds
                  (41, snapshot_of(game)[1]),              # more than the log has
                  (40, {"version": 999})):                 # not a state at all
        assert restore_game(rules, hand, actions, wrong).to_dict() == game.to_dict()
    # A log shorter than the snapshot (it was written ahead of the log): the log wins.
    assert restore_game(rules, hand, actions[:5], snapshot_of(game)).to_dict() == \
        Game.replay(rules, hand.seed, hand.dealer, actions[:5]).to_dict()
