"""What several bot workers share in storage: timers any worker may fire (claimed once, taken over
after a lease), each live hand's seat states and progress, and the per-table lock. The first
tests run on both backends; the last ones start several "workers" (storages) on one PostgreSQL
database."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from storage import InvalidWrite, NotFound, open_storage, pg_locks
from storage.pg_locks import TABLE_LOCK_CLASS

pytestmark = pytest.mark.both_backends

CHAT = -1001


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 4, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(db_url, clock):
    opened = await open_storage(db_url, clock=clock)
    yield opened
    await opened.close()


async def _hand(store):
    players = [await store.named_player(CHAT, name) for name in "ABCD"]
    table = await store.create_table(CHAT, None)
    for seat, player in enumerate(players):
        await store.set_seat(table.id, seat, player.id)
    return await store.start_hand(table.id, {}, seed=1, dealer=0)


async def test_a_due_timer_is_claimed_once_then_finished(store, clock):
    await store.set_timers({"deadline:1:0": (0, {"seq": 3}), "deadline:1:1": (30, {"seq": 3})})
    claimed = await store.claim_timers("w1", lease_seconds=10)
    assert [(t.key, t.data, t.claimed_by) for t in claimed] == [("deadline:1:0", {"seq": 3}, "w1")]
    assert claimed[0].due_at == clock.now
    assert await store.claim_timers("w2", lease_seconds=10) == []  # w1 holds it
    assert await store.finish_timer(claimed[0]) is True
    assert set(await store.timers()) == {"deadline:1:1"}
    clock.advance(30)
    assert [t.key for t in await store.claim_timers("w2", lease_seconds=10)] == ["deadline:1:1"]


async def test_a_claim_older_than_the_lease_is_taken_over_and_the_first_claim_cannot_finish_it(store, clock):
    await store.set_timers({"wake:7": (0, {})})
    (first,) = await store.claim_timers("dead-worker", lease_seconds=5)
    clock.advance(4)
    assert await store.claim_timers("w2", lease_seconds=5) == []
    clock.advance(1)
    (second,) = await store.claim_timers("w2", lease_seconds=5)
    assert second.claimed_by == "w2"
    assert await store.finish_timer(first) is False  # the dead worker's claim no longer holds it
    assert await store.finish_timer(second) is True
    assert await store.timers() == {}


async def test_setting_a_claimed_timer_again_keeps_the_new_one(store, clock):
    await store.set_timers({"deadline:2:3": (0, {"seq": 5})})
    (claimed,) = await store.claim_timers("w1", lease_seconds=10)
    await store.set_timers({"deadline:2:3": (15, {"seq": 9})})  # a new decision opened meanwhile
    assert await store.finish_timer(claimed) is False
    due, data = (await store.timers())["deadline:2:3"]
    assert data == {"seq": 9} and due == (clock.now + timedelta(seconds=15)).timestamp()
    assert await store.claim_timers("w1", lease_seconds=10) == []


async def test_timers_are_cancelled_and_set_in_one_call(store):
    await store.set_timers({"a": (5, {}), "b": (5, {}), "c": (5, {})})
    await store.set_timers({"a": None, "b": (1, {"x": 1}), "gone": None})
    assert sorted(await store.timers()) == ["b", "c"]
    with pytest.raises(InvalidWrite):
        await store.set_timers({"d": (-1, {})})
    await store.set_timers({"b": (9, {"x": 2}), "e": (3, {})}, keep_existing=True)  # b stays as it was
    assert (await store.timers())["b"][1] == {"x": 1} and "e" in await store.timers()


async def test_claims_come_earliest_first_and_at_most_the_limit(store, clock):
    await store.set_timers({f"t{n}": (n, {"n": n}) for n in range(6)})
    clock.advance(10)
    claimed = await store.claim_timers("w", lease_seconds=60, limit=4)
    assert [t.data["n"] for t in claimed] == [0, 1, 2, 3]


async def test_seat_states_are_versioned_and_progress_gives_what_a_worker_misses(store):
    hand = await _hand(store)
    for seq in range(4):
        await store.append_action(hand.id, seq, {"n": seq})
    progress = await store.hand_progress(hand.id, after=2)
    assert [a.seq for a in progress.actions] == [2, 3] and [a.action for a in progress.actions] == [{"n": 2}, {"n": 3}]
    assert (progress.seat_states, progress.version, progress.hand.id) == (None, 0, hand.id)
    assert await store.save_seat_states(hand.id, {"seats": [{"auto": True}]}) == 1
    assert await store.save_seat_states(hand.id, {"seats": [{"auto": False}]}) == 2
    progress = await store.hand_progress(hand.id, after=4)
    assert (progress.actions, progress.seat_states, progress.version) == ((), {"seats": [{"auto": False}]}, 2)
    assert await store.playing_hand(hand.table_id) == hand.id
    # Votes for Next hand / End are kept beside the seat states, once per person.
    assert [await store.add_vote(hand.id, "next", user) for user in (7, 8, 7)] == [1, 2, 2]
    assert await store.add_vote(hand.id, "end", 7) == 1
    assert (await store.hand_progress(hand.id, after=4)).seat_states["seats"] == [{"auto": False}]
    await store.void_hand(hand.id, "test")
    assert await store.playing_hand(hand.table_id) is None
    with pytest.raises(NotFound):
        await store.hand_progress(hand.id + 100, after=0)


async def test_seat_messages_are_replaced_and_dropped_only_where_the_row_still_holds_the_one_seen(store):
    hand = await _hand(store)
    assert await store.put_seat_message(hand.id, 1, "dm", 50, {"decision": 0}, replacing=None) is True
    # A second worker that saw no DM (it sent one of its own meanwhile) writes nothing.
    assert await store.put_seat_message(hand.id, 1, "dm", 51, {"decision": 0}, replacing=None) is False
    assert await store.put_seat_message(hand.id, 1, "dm", 50, {"decision": 2}, replacing=50) is True
    assert await store.put_seat_message(hand.id, 1, "ping", 60, {"decision": 2}, replacing=None) is True
    # A ping replaced by a reminder: the writer that still saw the first ping loses.
    assert await store.put_seat_message(hand.id, 1, "ping", 61, {"decision": 2, "stage": "reminder"},
                                        replacing=60) is True
    assert await store.put_seat_message(hand.id, 1, "ping", 62, {"decision": 2}, replacing=60) is False
    progress = await store.hand_progress(hand.id, after=0)
    assert [(m.seat, m.kind, m.message_id, m.shows) for m in progress.messages] == [
        (1, "dm", 50, {"decision": 2}), (1, "ping", 61, {"decision": 2, "stage": "reminder"})]
    # Two workers deleting the same ping: exactly one removes it (and deletes it from the chat).
    assert [await store.drop_seat_message(hand.id, 1, "ping", 61) for _ in range(2)] == [True, False]
    assert await store.drop_seat_message(hand.id, 1, "dm", 49) is False  # not the DM it holds
    assert [m.kind for m in await store.seat_messages(hand.id)] == ["dm"]
    with pytest.raises(InvalidWrite):
        await store.put_seat_message(hand.id, 1, "poster", 70, {}, replacing=None)
    with pytest.raises(InvalidWrite):
        await store.drop_seat_message(hand.id, 4, "dm", 50)
    with pytest.raises(NotFound):
        await store.put_seat_message(hand.id + 100, 1, "dm", 70, {}, replacing=None)
    # The table's next hand starts with no messages: the finished hand's rows go with its deal.
    await store.void_hand(hand.id, "test")
    following = await store.start_hand(hand.table_id, {}, seed=2, dealer=1)
    assert await store.seat_messages(hand.id) == () and await store.seat_messages(following.id) == ()


async def test_the_table_lock_serialises_one_table_within_a_process(store):
    inside: list[int] = []

    async def decide(table_id: int) -> None:
        async with store.table_lock(table_id):
            inside.append(table_id)
            assert inside.count(table_id) == 1 or not store.shared
            await asyncio.sleep(0.01)
            inside.remove(table_id)

    await asyncio.gather(*(decide(t) for t in (1, 2, 1, 2)))
    assert inside == []


# --- several workers on one PostgreSQL database ---------------------------------------------------


@pytest.fixture
async def workers(postgres_server):
    url = await postgres_server.create_database()
    stores = [await open_storage(url) for _ in range(3)]
    yield stores
    for opened in stores:
        await opened.close()
    await postgres_server.drop_database(url)


async def test_workers_claiming_at_once_fire_every_timer_exactly_once(workers):
    await workers[0].set_timers({f"deadline:{n}:0": (0, {"n": n}) for n in range(300)})
    fired: list[tuple[str, int]] = []

    async def worker(name: str, store) -> None:
        while True:
            claimed = await store.claim_timers(name, lease_seconds=60, limit=7)
            if not claimed:
                return
            for timer in claimed:
                fired.append((name, timer.data["n"]))
                assert await store.finish_timer(timer)

    await asyncio.gather(*(worker(f"w{i}", store) for i, store in enumerate(workers) for _ in range(2)))
    assert sorted(n for _, n in fired) == list(range(300))
    assert len({name for name, _ in fired}) > 1  # they really shared the work
    assert await workers[1].timers() == {}


async def test_one_table_is_decided_by_one_worker_at_a_time(workers):
    holders: list[str] = []
    overlaps = 0

    async def decide(name: str, store, table_id: int) -> None:
        nonlocal overlaps
        for _ in range(15):
            async with store.table_lock(table_id):
                holders.append(name)
                overlaps += len(holders) > 1
                await asyncio.sleep(0.002)
                holders.remove(name)

    await asyncio.gather(*(decide(f"w{i}", store, 42) for i, store in enumerate(workers)))
    assert overlaps == 0
    # Other tables, and a chat's lobby of the same number, are not held up by a held table.
    async with workers[0].table_lock(42):
        started = time.monotonic()
        async with workers[1].table_lock(43), workers[2].chat_lock(42):
            pass
        assert time.monotonic() - started < 1


async def test_a_dead_workers_table_lock_is_released_with_its_connection(workers):
    dead, alive = workers[0], workers[1]
    await dead.locks.acquire((TABLE_LOCK_CLASS, 5))
    waiting = asyncio.ensure_future(alive.locks.acquire((TABLE_LOCK_CLASS, 5)))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    dead.locks._conn.terminate()  # what kill -9 does to its connection
    await asyncio.wait_for(waiting, 5)
    await alive.locks.release((TABLE_LOCK_CLASS, 5))


async def test_workers_count_the_live_others_and_a_dead_one_stops_counting(workers, monkeypatch):
    monkeypatch.setattr(pg_locks, "HEARTBEAT_SECONDS", 3600.0)  # no beat: "first" stands for a killed process
    first, second, third = workers
    assert await first.join_workers() == 0  # the first to start: nobody serves the tables yet
    assert await second.join_workers() == 1
    assert await third.join_workers() == 2
    first.locks._conn.terminate()  # what kill -9 does to its connection
    await counted(third, 1)  # once the server has ended that session
    # A live worker whose connection was dropped (the server restarted) says again that it lives
    # with its connection's next statement (its next table lock), and the dead one counts again
    # once its process asks again (a new connection: here the same process, so the same mark).
    second.locks._conn.terminate()
    async with second.table_lock(7):
        assert await third.join_workers() == 1
    assert await first.join_workers() == 2
    assert await third.join_workers() == 2


async def counted(store, others: int, timeout: float = 10) -> None:
    """Until ``store`` counts ``others`` other live workers (a dropped session's locks go when the
    server has ended it, which a loaded machine may take a while to do)."""
    deadline = time.monotonic() + timeout
    while (found := await store.join_workers()) != others:
        assert time.monotonic() < deadline, f"{found} other live workers, not {others}"
        await asyncio.sleep(0.02)


async def test_a_live_worker_whose_connection_dropped_counts_again_within_a_heartbeat(
    workers, postgres_server, monkeypatch
):
    monkeypatch.setattr(pg_locks, "HEARTBEAT_SECONDS", 0.1)
    first, second, third = workers
    assert [await store.join_workers() for store in workers] == [0, 1, 2]
    # The server restarted under an idle worker (no table lock asked for): its session ends, and
    # with it the worker's mark. The session is ended server-side and waited for, as a restart does.
    dropped = second.locks._conn.get_server_pid()
    admin = await asyncpg.connect(postgres_server.url())
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1, 10000)", dropped)
        assert await admin.fetchval("SELECT count(*) FROM pg_locks WHERE pid = $1", dropped) == 0
    finally:
        await admin.close()
    # Without the heartbeat it would stay uncounted until it next locked a table.
    await counted(third, 2)
    await counted(first, 2)


async def test_a_worker_whose_dropped_session_still_held_its_mark_takes_it_once_that_session_ends(
    workers, postgres_server, monkeypatch
):
    monkeypatch.setattr(pg_locks, "HEARTBEAT_SECONDS", 0.1)
    _, second, third = workers
    assert [await store.join_workers() for store in workers] == [0, 1, 2]
    dropped = second.locks._conn.get_server_pid()
    admin = await asyncpg.connect(postgres_server.url())
    database = await admin.fetchval("SELECT datname FROM pg_stat_activity WHERE pid = $1", dropped)
    old = await asyncpg.connect(postgres_server.url(database))  # advisory locks are the database's
    try:
        mark = await admin.fetchval(
            "SELECT objid FROM pg_locks WHERE pid = $1 AND locktype = 'advisory' AND classid = $2 AND granted",
            dropped, pg_locks.WORKER_LOCK_CLASS)
        key = (pg_locks.WORKER_LOCK_CLASS, pg_locks._object(int(mark)))
        # "old" stands for the dropped session that the server has not ended yet: it holds the mark
        # when the worker reconnects (it takes it the moment the worker's session ends).
        holding = asyncio.ensure_future(old.fetchval("SELECT pg_advisory_lock($1, $2)", *key))
        assert await admin.fetchval("SELECT pg_terminate_backend($1, 10000)", dropped)
        await asyncio.wait_for(holding, 10)
        # The worker's next heartbeat opens a new session, whose try for the mark fails.
        await until_true(lambda: second.locks._conn is not None and not second.locks._conn.is_closed()
                         and second.locks._conn.get_server_pid() != dropped)
        renewed = second.locks._conn.get_server_pid()
        assert await admin.fetchval("SELECT pg_terminate_backend($1, 10000)", old.get_server_pid())
        # Once the old session is gone the worker holds its mark again (before: never, as its later
        # statements ran on a live connection and never asked for it).
        held_by_it = "SELECT count(*) FROM pg_locks WHERE pid = $1 AND classid = $2 AND objid = $3 AND granted"
        deadline = time.monotonic() + 10
        while await admin.fetchval(held_by_it, renewed, key[0], int(mark)) == 0:
            assert time.monotonic() < deadline, "the worker never took its mark again"
            await asyncio.sleep(0.02)
    finally:
        await admin.close()
        old.terminate()
    await counted(third, 2)


async def until_true(check, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_one_process_is_alone(tmp_path):
    store = await open_storage(tmp_path / "alone.db")
    try:
        assert await store.join_workers() == 0
    finally:
        await store.close()


async def test_workers_starting_together_join_one_at_a_time(workers):
    # Each counts the others before marking itself, one at a time: exactly one is the first.
    assert sorted(await asyncio.gather(*(store.join_workers() for store in workers))) == [0, 1, 2]
