"""What sharing the tables between workers costs per press, against one process, in the same run.

    python benchmarks/table_step.py [--hands 6] [--rounds 2]

One ``TableRunner`` with four people plays whole hands by presses on PostgreSQL (a server
started for the run by tests/pg_server.py, fsync on). Each press is timed from the call to its
move being logged, shown to nobody (a view that draws nothing), once as one process plays
(``shared`` off: the table's asyncio lock) and once as one of several workers (the table's
advisory lock, catching up from the log, the seat states and the timers saved). The two
alternate ``--rounds`` times, so that the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the project's storage package, not benchmarks/storage.py

from pg_server import PgServer, find_binaries  # noqa: E402

from bot.table import callbacks  # noqa: E402
from bot.table.runner import Limits, SeatPlayer, TableRunner  # noqa: E402
from bot.table.timers import DatabaseScheduler  # noqa: E402
from engine.events import Event  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.rules import RuleSet  # noqa: E402
from storage import open_storage  # noqa: E402
from storage.models import Timer  # noqa: E402

RULES = RuleSet.preset("classic").with_changes(declare_void=False)  # every decision is a press
USERS = (1, 2, 3, 4)
CHAT = -5


class NoView:
    async def hand_started(self, runner: TableRunner, resumed: bool) -> None: ...

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None: ...

    async def prompt(self, runner: TableRunner, seat: int) -> None: ...

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None: ...


async def unfired(timer: Timer) -> None:
    return None


async def press_times(url: str, shared: bool, seed: int) -> list[float]:
    """Milliseconds of each press of one hand."""
    store = await open_storage(url)
    players = [await store.player_for_user(CHAT, user, f"P{user}") for user in USERS]
    table = await store.create_table(CHAT, None)
    for seat, player in enumerate(players):
        await store.set_seat(table.id, seat, player.id)
    hand = await store.start_hand(table.id, RULES.to_dict(), seed=seed, dealer=0)
    runner = TableRunner(table_id=table.id, chat_id=CHAT, hand=hand, game=Game(RULES, seed, 0),
                         seats=[SeatPlayer(p.id, p.name, p.user_id) for p in players], storage=store,
                         presenter=NoView(), scheduler=DatabaseScheduler(store, unfired), limits=Limits())
    runner.shared = shared
    await runner.start()
    times = []
    while not runner.game.over:
        seat = next(s for s in range(4) if runner.state[s].prompt_seq is not None)
        code = callbacks.action_code(runner.state[seat].legal[0])
        started = time.perf_counter()
        await runner.press(USERS[seat], runner.state[seat].prompt_seq or 0, code)
        times.append((time.perf_counter() - started) * 1000)
    await runner.close()
    await store.close()
    return times


async def main(hands: int, rounds: int) -> None:
    binaries = find_binaries()
    if isinstance(binaries, str):
        sys.exit(binaries)
    server = PgServer.start(binaries, durable=True)
    try:
        url = await server.create_database()
        measured: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(rounds):
            for shared in (False, True):
                for seed in range(hands):
                    measured[shared] += await press_times(url, shared, seed)
        for shared, times in measured.items():
            times.sort()
            print(f"{'several workers' if shared else 'one process':>15}: {len(times)} presses, "
                  f"median {statistics.median(times):.1f} ms, p90 {times[int(len(times) * 0.9)]:.1f} ms, "
                  f"p99 {times[int(len(times) * 0.99)]:.1f} ms")
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=6, help="hands per round and mode (default 6)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of both modes (default 2)")
    args = parser.parse_args()
    asyncio.run(main(args.hands, args.rounds))
