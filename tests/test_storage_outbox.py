"""The outbox and chat migration on a real SQLite file and a real PostgreSQL database.

The outbox row of a hand's settlement is written in the same transaction as the final action,
so it exists exactly when the hand is finished; a chat that becomes a supergroup moves every
row to its new id at once, and the books still add up under the new id.
"""

from __future__ import annotations

import pytest

from storage import HandStatus, InvalidWrite, PlayerKind, SeatTransfer, open_storage

pytestmark = pytest.mark.both_backends

OLD, NEW = -100_001, -1_000_000_000_001


@pytest.fixture
async def store(db_url):
    opened = await open_storage(db_url)
    yield opened
    problems = await opened.verify()
    await opened.close()
    assert problems == []


async def finished_hand(store, chat_id: int = OLD):
    players = [await store.player_for_user(chat_id, 100 + i, n) for i, n in enumerate("ABC")]
    players.append(await store.named_player(chat_id, "AI-1", PlayerKind.COMPUTER))
    table = await store.create_table(chat_id, 100)
    for seat, player in enumerate(players):
        table = await store.set_seat(table.id, seat, player.id)
    hand = await store.start_hand(table.id, {}, seed=1, dealer=0)
    await store.append_action(hand.id, 0, {"type": "discard", "tile": 3})
    await store.append_action(hand.id, 1, {"type": "win"}, [SeatTransfer(0, 1, 4, "win")],
                              result={"chips": [-4, 4, 0, 0]}, owe=f"settlement:{hand.id}")
    return table, hand, players


async def test_the_settlement_is_owed_exactly_when_the_hand_finishes(store) -> None:
    _, hand, _ = await finished_hand(store)
    assert (await store.get_hand(hand.id)).status is HandStatus.FINISHED
    owed = await store.owed_posts()
    assert [(p.key, p.chat_id) for p in owed] == [(f"settlement:{hand.id}", OLD)]
    # A retried final action (a lost reply) is a duplicate: no second row, no error.
    again = await store.append_action(hand.id, 1, {"type": "win"}, [SeatTransfer(0, 1, 4, "win")],
                                      result={"chips": [-4, 4, 0, 0]}, owe=f"settlement:{hand.id}")
    assert again.duplicate and len(await store.owed_posts()) == 1
    await store.mark_posted(f"settlement:{hand.id}")
    await store.mark_posted(f"settlement:{hand.id}")  # twice is fine
    await store.mark_posted("settlement:unknown")
    assert await store.owed_posts() == []


async def test_a_refused_final_action_owes_nothing(store) -> None:
    table, hand, _ = await finished_hand(store)
    second = await store.start_hand(table.id, {}, seed=2, dealer=1)
    with pytest.raises(InvalidWrite):  # a transfer naming a seat that does not exist
        await store.append_action(second.id, 0, {"type": "win"}, [SeatTransfer(0, 9, 4, "win")],
                                  result={"chips": []}, owe=f"settlement:{second.id}")
    assert [p.key for p in await store.owed_posts()] == [f"settlement:{hand.id}"]
    assert (await store.get_hand(second.id)).status is HandStatus.PLAYING


async def test_a_migrated_chat_keeps_its_settings_chips_tables_and_debts(store) -> None:
    await store.update_chat(OLD, base_stake=5, language="en")
    table, hand, players = await finished_hand(store)
    before = {t.name: t.net for t in await store.balances(OLD)}
    await store.get_chat(NEW)  # an update from the new supergroup already created its row
    assert await store.migrate_chat(OLD, NEW)
    chat = await store.get_chat(NEW)
    assert (chat.base_stake, chat.language) == (5, "en")
    assert {t.name: t.net for t in await store.balances(NEW)} == before == {"A": -4, "B": 4}
    assert await store.balances(OLD) == []
    assert (await store.get_table(table.id)).chat_id == NEW
    assert (await store.get_hand(hand.id)).chat_id == NEW
    assert [p.chat_id for p in await store.owed_posts()] == [NEW]
    assert (await store.player_for_user(NEW, 100, "A")).id == players[0].id  # the same ledger player
    assert not await store.migrate_chat(OLD, NEW)  # already moved: nothing left under the old id
    assert await store.verify() == []


async def test_migration_never_merges_two_chats_with_books(store) -> None:
    await finished_hand(store, OLD)
    await store.player_for_user(NEW, 500, "Z")
    with pytest.raises(InvalidWrite, match="already has players"):
        await store.migrate_chat(OLD, NEW)
    assert await store.balances(OLD)  # nothing moved
