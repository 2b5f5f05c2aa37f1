"""Storage benchmark: write throughput, tally query time on a year of history, crash survival.

    python benchmarks/storage.py [--tables 50] [--actions 40] [--days 365] [--kills 200] [--postgres]

1. Actions written per second, each with its own transaction (action + transfers + cached
   balances), from many tables at once in one event loop, against the naive peer measured
   in the same run: a new connection (``open_storage``) per write, as a handler that opens
   the database on each request would do.
2. Daily-tally query time for a chat with a year of history (plus other chats' rows in the
   same file), against the peer that loads the chat's ledger and sums the day in Python.
3. The crash test with more kills than the test suite (SIGKILL at random moments).

With ``--postgres`` the writes and the tallies are measured on PostgreSQL too, on a server
started for the run in a temporary folder (tests/pg_server.py, with fsync on), and so is how
the write rate grows with 1, 2 and 4 worker processes sharing that database.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from storage import PlayerKind, SeatTransfer, open_storage  # noqa: E402

CHAT = -1


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def _tables(store, count: int, chat: int = CHAT) -> list[int]:
    hands = []
    for t in range(count):
        players = [await store.player_for_user(chat, 10 * t + i, f"U{t}-{i}") for i in range(3)]
        players.append(await store.named_player(chat, "电脑", PlayerKind.COMPUTER))
        table = await store.create_table(chat, None)
        for seat, player in enumerate(players):
            await store.set_seat(table.id, seat, player.id)
        hands.append((await store.start_hand(table.id, {}, seed=t, dealer=0)).id)
    return hands


def _action(seq: int) -> tuple[dict, list[SeatTransfer]]:
    transfers = (
        [SeatTransfer(s, seq % 4, 2, "kong") for s in range(4) if s != seq % 4] if seq % 4 == 3 else []
    )
    return {"type": "discard", "seq": seq, "tile": seq % 27}, transfers


async def shared_rate(path: Path | str, tables: int, actions: int, synchronous: str, max_batch: int) -> float:
    """Actions/s through one storage object (one connection), all tables at once."""
    store = await open_storage(path, synchronous=synchronous, max_batch=max_batch)
    hands = await _tables(store, tables)

    async def play(hand_id: int) -> None:
        for seq in range(actions):
            await store.append_action(hand_id, seq, *_action(seq))

    started = time.perf_counter()
    await asyncio.gather(*(play(h) for h in hands))
    rate = tables * actions / (time.perf_counter() - started)
    assert await store.verify() == []
    await store.close()
    return rate


async def bench_writes(
    folder: Path, tables: int, actions: int, synchronous: str
) -> tuple[float, float, float]:
    """Actions/s: group commit, one commit per action, a new connection per write."""
    shared = await shared_rate(folder / f"group-{synchronous}.db", tables, actions, synchronous, 256)
    single = await shared_rate(folder / f"single-{synchronous}.db", tables, actions, synchronous, 1)
    naive_path = folder / f"naive-{synchronous}.db"

    setup = await open_storage(naive_path, synchronous=synchronous)
    naive_hands = await _tables(setup, tables)
    await setup.close()
    naive_actions = max(4, actions // 4)  # it is slow; a quarter of the work gives the rate

    async def play_naive(hand_id: int) -> None:
        for seq in range(naive_actions):
            own = await open_storage(naive_path, synchronous=synchronous)
            try:
                await own.append_action(hand_id, seq, *_action(seq))
            finally:
                await own.close()

    started = time.perf_counter()
    await asyncio.gather(*(play_naive(h) for h in naive_hands))
    naive = tables * naive_actions / (time.perf_counter() - started)
    return shared, single, naive


async def build_year(path: Path | str, days: int, per_day: int) -> tuple[object, Clock, date]:
    """A chat with ``days`` days of scorekept wins and kongs, and three other chats beside it."""
    clock = Clock(datetime(2025, 1, 1, tzinfo=UTC))
    store = await open_storage(path, clock=clock, synchronous="OFF")
    rng = random.Random(7)
    sessions = {}
    for chat_id in (CHAT, -2, -3, -4):
        players = [await store.named_player(chat_id, f"P{i}") for i in range(6)]
        sessions[chat_id] = [
            await store.start_session(chat_id, [p.id for p in rng.sample(players, 4)], None) for _ in range(4)
        ]
    tz = ZoneInfo("Asia/Shanghai")
    first = date(2025, 1, 1)
    for offset in range(days):
        day = first + timedelta(days=offset)
        evening = datetime(day.year, day.month, day.day, 19, tzinfo=tz)
        for chat_sessions in sessions.values():
            for n in range(per_day):
                clock.now = evening + timedelta(minutes=4 * n + rng.random())
                winner = rng.randrange(4)
                transfers = [
                    SeatTransfer(s, winner, rng.randint(1, 16), "win") for s in range(4) if s != winner
                ]
                await store.add_record(rng.choice(chat_sessions).id, {"win": winner}, transfers)
    return store, clock, first + timedelta(days=days - 1)


async def bench_tally(where: Path | str, days: int, per_day: int, repeats: int) -> dict[str, float]:
    """``where``: a folder for a SQLite file, or a PostgreSQL URL."""
    started = time.perf_counter()
    location = where / "year.db" if isinstance(where, Path) else where
    store, _, last_day = await build_year(location, days, per_day)
    built = time.perf_counter() - started
    rows = len(await store.ledger(CHAT))
    target = last_day - timedelta(days=days // 2)

    async def timed(call) -> float:
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            await call()
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples) * 1000

    ours = await timed(lambda: store.daily_tally(CHAT, target))
    month = await timed(lambda: store.daily_tallies(CHAT, target - timedelta(days=29), target))
    year_board = await timed(lambda: store.leaderboard(CHAT, since=last_day - timedelta(days=days - 1)))
    tz = ZoneInfo((await store.get_chat(CHAT)).timezone)

    async def python_peer() -> dict[str, int]:
        nets: dict[str, int] = defaultdict(int)
        for entry in await store.ledger(CHAT):
            if entry.at.astimezone(tz).date() == target:
                nets[entry.payer_name] -= entry.amount
                nets[entry.payee_name] += entry.amount
        return nets

    peer = await timed(python_peer)
    ours_result = {line.name: line.net for line in (await store.daily_tally(CHAT, target)).lines}
    assert ours_result == {k: v for k, v in (await python_peer()).items() if v}
    await store.close()
    return {
        "rows": rows,
        "built_s": built,
        "ours_ms": ours,
        "peer_ms": peer,
        "month_ms": month,
        "year_board_ms": year_board,
    }


async def worker(url: str, index: int, tables: int, actions: int) -> None:
    """One worker process of the scaling run: its own chat and tables, writing when told "go"."""
    store = await open_storage(url)
    hands = await _tables(store, tables, chat=CHAT - 1 - index)

    async def play(hand_id: int) -> None:
        for seq in range(actions):
            await store.append_action(hand_id, seq, *_action(seq))

    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    started = time.perf_counter()
    await asyncio.gather(*(play(h) for h in hands))
    print(tables * actions, time.perf_counter() - started, flush=True)
    await store.close()


async def scaling_rate(url: str, workers: int, tables: int, actions: int) -> float:
    """Actions/s of ``workers`` processes on one database, ``tables`` tables in all, started together."""
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--worker", url, str(i), str(tables // workers), str(actions),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        for i in range(workers)
    ]
    for proc in procs:
        assert (await proc.stdout.readline()).strip() == b"ready"  # type: ignore[union-attr]
    started = time.perf_counter()
    for proc in procs:
        proc.stdin.write(b"go\n")  # type: ignore[union-attr]
        await proc.stdin.drain()  # type: ignore[union-attr]
    written = 0
    for proc in procs:
        written += int((await proc.stdout.readline()).split()[0])  # type: ignore[union-attr]
        await proc.wait()
    return written / (time.perf_counter() - started)


async def bench_postgres(args: argparse.Namespace) -> None:
    """Writes and tallies on a PostgreSQL server started for the run (fsync on, like SQLite FULL)."""
    from pg_server import PgServer, find_binaries

    binaries = find_binaries()
    if isinstance(binaries, str):
        raise SystemExit(binaries)
    server = PgServer.start(binaries, durable=True)
    try:
        print(f"== PostgreSQL writes: {args.tables} tables x {args.actions} actions, one event loop")
        for synchronous in ("FULL", "NORMAL"):  # synchronous_commit on / off
            rates = []
            for max_batch in (256, 1):
                url = await server.create_database()
                rates.append(await shared_rate(url, args.tables, args.actions, synchronous, max_batch))
                await server.drop_database(url)
            print(f"synchronous={synchronous:6} group commit: {rates[0]:6.0f} actions/s | "
                  f"a commit per action: {rates[1]:6.0f}/s ({rates[0] / rates[1]:4.1f}x)")
        print(f"== PostgreSQL, worker processes on one database: {args.tables} tables x {args.actions} actions in all")
        for workers in (1, 2, 4):
            url = await server.create_database()
            rate = await scaling_rate(url, workers, args.tables, args.actions)
            await server.drop_database(url)
            print(f"{workers} worker(s): {rate:6.0f} actions/s")
        url = await server.create_database()
        print(f"== PostgreSQL daily tally: a chat with {args.days} days x {args.per_day} records/day (+3 other chats)")
        tally = await bench_tally(url, args.days, args.per_day, repeats=50)
        print(f"ledger rows in the chat: {tally['rows']}  (built in {tally['built_s']:.1f} s)")
        print(f"daily_tally: {tally['ours_ms']:.3f} ms   peer (all rows in Python): {tally['peer_ms']:.1f} ms   "
              f"daily_tallies for 30 days: {tally['month_ms']:.2f} ms   leaderboard over the year: "
              f"{tally['year_board_ms']:.1f} ms")
    finally:
        server.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--actions", type=int, default=40, help="actions per table")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--per-day", type=int, default=30, help="records per chat per day")
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--postgres", action="store_true", help="measure PostgreSQL too (needs its binaries)")
    parser.add_argument("--worker", nargs=4, metavar=("URL", "INDEX", "TABLES", "ACTIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        url, index, tables, actions = args.worker
        await worker(url, int(index), int(tables), int(actions))
        return
    if args.postgres:
        await bench_postgres(args)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"== writes: {args.tables} tables x {args.actions} actions, one event loop")
        for synchronous in ("FULL", "NORMAL"):
            shared, single, naive = await bench_writes(folder, args.tables, args.actions, synchronous)
            print(
                f"synchronous={synchronous:6} group commit: {shared:6.0f} actions/s | "
                f"a commit per action: {single:6.0f}/s ({shared / single:4.1f}x) | "
                f"new connection per write: {naive:5.0f}/s ({shared / naive:5.1f}x)"
            )

        print(f"== daily tally: a chat with {args.days} days x {args.per_day} records/day (+3 other chats)")
        tally = await bench_tally(folder, args.days, args.per_day, repeats=50)
        print(f"ledger rows in the chat: {tally['rows']}  (built in {tally['built_s']:.1f} s)")
        print(
            f"daily_tally (SQL, index range): {tally['ours_ms']:.3f} ms   "
            f"peer (all rows, summed in Python): {tally['peer_ms']:.1f} ms   "
            f"ratio {tally['peer_ms'] / tally['ours_ms']:.0f}x"
        )
        print(
            f"daily_tallies for 30 days: {tally['month_ms']:.2f} ms   "
            f"leaderboard over the year: {tally['year_board_ms']:.1f} ms"
        )

        if args.kills:
            from crash_worker import crash_loop

            print(f"== crash: {args.kills} SIGKILLs of a writing process, full check after each")
            started = time.perf_counter()
            seen = await crash_loop(str(folder / "crash.db"), args.kills, seed=11)
            elapsed = time.perf_counter() - started
            print(
                f"{seen['kills']} kills in {elapsed:.0f} s, all checks passed: "
                f"{seen['finished']} hands finished, "
                f"{seen['playing']} in play, {seen['voided']} voided, {seen['records']} manual records, "
                f"{seen['ledger rows']} ledger rows"
            )


if __name__ == "__main__":
    asyncio.run(main())
