"""Properties: whatever mix of actions, retries, voids, records and undos is written, the
books stay sound — balances equal independent sums and every chat nets to zero."""

from __future__ import annotations

import asyncio
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage import SeatTransfer, SequenceConflict, open_storage

CHAT = -5

transfer = st.builds(
    SeatTransfer,
    payer=st.integers(0, 3),
    payee=st.integers(0, 3),
    amount=st.integers(0, 50),
    reason=st.sampled_from(["win_discard", "self_draw", "kong_direct"]),
).filter(lambda t: t.payer != t.payee)
step = st.one_of(
    st.tuples(st.just("act"), st.lists(transfer, max_size=4)),
    st.tuples(st.just("retry"), st.just([])),
    st.tuples(st.just("finish"), st.lists(transfer, max_size=4)),
    st.tuples(st.just("void"), st.just([])),
    st.tuples(st.just("record"), st.lists(transfer, min_size=1, max_size=3)),
    st.tuples(st.just("undo"), st.just([])),
)


async def play(target: str | Path, steps: list[tuple[str, list[SeatTransfer]]]) -> None:
    store = await open_storage(target, synchronous="OFF")
    try:
        players = [await store.named_player(CHAT, f"P{i}") for i in range(4)]
        ids = [p.id for p in players]
        table = await store.create_table(CHAT, None)
        for seat, player_id in enumerate(ids):
            await store.set_seat(table.id, seat, player_id)
        session = await store.start_session(CHAT, ids, None)
        expected: dict[int, int] = defaultdict(int)
        hand_moves: list[tuple[int, int, int]] = []
        record_moves: list[list[tuple[int, int, int]]] = []
        hand = await store.start_hand(table.id, {}, seed=0, dealer=0)
        seq = 0

        def move(moves, sign=1):
            for payer, payee, amount in moves:
                expected[payer] -= sign * amount
                expected[payee] += sign * amount

        for kind, transfers in steps:
            moves = [(ids[t.payer], ids[t.payee], t.amount) for t in transfers]
            if kind in ("act", "finish"):
                result = {"end": True} if kind == "finish" else None
                await store.append_action(hand.id, seq, {"n": seq}, transfers, result=result)
                move(moves)
                hand_moves += moves
                seq += 1
            elif kind == "retry" and seq:
                assert (await store.append_action(hand.id, seq - 1, {"n": seq - 1}, transfers)).duplicate
                with pytest.raises(SequenceConflict):
                    await store.append_action(hand.id, seq - 1, {"n": "other"})
            elif kind == "void":
                await store.void_hand(hand.id, "test")
                move(hand_moves, -1)
            elif kind == "record":
                await store.add_record(session.id, {"r": len(record_moves)}, transfers)
                record_moves.append(moves)
                move(moves)
            elif kind == "undo" and record_moves:
                await store.undo_last_record(session.id)
                move(record_moves.pop(), -1)
            if kind in ("finish", "void"):
                hand = await store.start_hand(table.id, {}, seed=0, dealer=0)
                seq, hand_moves = 0, []

        assert await store.verify() == []
        balances = {line.player_id: line.net for line in await store.balances(CHAT)}
        assert {p: v for p, v in balances.items() if v} == {p: v for p, v in expected.items() if v}
        assert sum(balances.values()) == 0
    finally:
        await store.close()


async def play_on_postgres(server, steps: list[tuple[str, list[SeatTransfer]]]) -> None:
    url = await server.create_database()
    try:
        await play(url, steps)
    finally:
        await server.drop_database(url)


@pytest.mark.both_backends
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=25))
def test_any_sequence_of_writes_keeps_the_books_sound(backend, request, steps):
    if backend == "postgresql":  # a new database per example, on the session's server
        asyncio.run(play_on_postgres(request.getfixturevalue("postgres_server"), steps))
        return
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(play(Path(folder) / "p.db", steps))
