"""A person's own figures (/stats) from the ledger: counted by hand, per chat and overall."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from test_storage import Clock, seated_table

from storage import SeatTransfer, open_storage
from storage.models import PlayerKind, PlayerStats

pytestmark = pytest.mark.both_backends


@pytest.fixture
async def store(db_url):
    opened = await open_storage(db_url, clock=Clock(datetime(2026, 3, 1, tzinfo=UTC)), synchronous="NORMAL")
    yield opened
    assert await opened.verify() == []
    await opened.close()


def pays(payer: int, payee: int, amount: int, reason: str) -> SeatTransfer:
    return SeatTransfer(payer, payee, amount, reason)


async def play_hand(store, table_id: int, actions: list[list[SeatTransfer]], finish: bool = True):
    hand = await store.start_hand(table_id, {}, seed=1, dealer=0)
    for seq, transfers in enumerate(actions):
        last = finish and seq == len(actions) - 1
        await store.append_action(hand.id, seq, {"n": seq}, transfers, result={"done": True} if last else None)
    return hand


async def test_stats_count_wins_deal_ins_flower_pigs_and_the_biggest_win(store):
    table, players = await seated_table(store, chat_id=-1)
    a = players[0]
    # Hand 1: A (seat 0) wins on B's discard for 4, then B self-draws: A, C, D pay 3 each.
    await play_hand(store, table.id, [
        [pays(1, 0, 4, "win_discard")],
        [pays(0, 1, 3, "self_draw"), pays(2, 1, 3, "self_draw"), pays(3, 1, 3, "self_draw")],
    ])
    # Hand 2: A self-draws (each of the three pays 5: one win of 15), deals into C once (8),
    # and pays 查花猪 to two players (16 each) at the end.
    await play_hand(store, table.id, [
        [pays(1, 0, 5, "self_draw"), pays(2, 0, 5, "self_draw"), pays(3, 0, 5, "self_draw")],
        [pays(0, 2, 8, "win_discard")],
        [pays(0, 1, 16, "flower_pig"), pays(0, 3, 16, "flower_pig"), pays(2, 1, 2, "kong_concealed")],
    ])
    # Hand 3 is voided after A won 50 on it: it does not count.
    voided = await play_hand(store, table.id, [[pays(1, 0, 50, "win_discard")]], finish=False)
    await store.void_hand(voided.id, "test")
    stats = await store.player_stats([a.id])
    assert stats == PlayerStats(
        hands=2, wins=2, self_draws=1, deal_ins=1, biggest_win=15, flower_pigs=1, flower_pig_chips=32,
        net=4 - 3 + 15 - 8 - 32,
    )
    b = await store.player_stats([players[1].id])
    assert (b.wins, b.deal_ins, b.biggest_win, b.flower_pigs) == (1, 1, 9, 0)


async def test_overall_adds_up_the_same_person_in_every_chat_and_records_count(store):
    table, players = await seated_table(store, chat_id=-1)
    await play_hand(store, table.id, [[pays(1, 0, 4, "win_discard")]])
    other, _ = await seated_table(store, chat_id=-2)
    await play_hand(store, other.id, [[pays(0, 2, 6, "robbing_kong")]])
    # A scorekept record in a third chat, then one undone: only the first counts.
    me = await store.player_for_user(-3, players[0].user_id, "A")
    guests = [await store.named_player(-3, n) for n in ("x", "y", "z")]
    session = await store.start_session(-3, [me.id, *(g.id for g in guests)], None)
    await store.add_record(session.id, {"r": 1}, [pays(1, 0, 7, "win_discard")])
    await store.add_record(session.id, {"r": 2}, [pays(2, 0, 30, "win_discard")])
    await store.undo_last_record(session.id)

    mine = await store.user_players(players[0].user_id)
    assert sorted(p.chat_id for p in mine) == [-3, -2, -1]
    assert all(p.kind is PlayerKind.USER for p in mine)
    overall = await store.player_stats([p.id for p in mine])
    assert (overall.hands, overall.wins, overall.deal_ins, overall.biggest_win, overall.net) == (3, 2, 1, 7, 4 - 6 + 7)
    assert await store.player_stats([]) == PlayerStats(0, 0, 0, 0, 0, 0, 0, 0)
