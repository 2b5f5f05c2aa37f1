"""Bot load benchmark: many hosted tables at once, the real bot against the fake Telegram.

    python benchmarks/bot_load.py [--tables 200] [--seconds 45] [--people 1] [--think 1]
                                  [--computer-delay 0.5] [--peer-seconds 20] [--no-peers]

One process runs the fake Bot API server (``tests/e2e/fake_telegram.py``, on 127.0.0.1) and the
real ``Application`` (``bot.app.build_application``, long polling, a temporary SQLite file). N
groups each open a table with /newgame; one person per table (``--people 2``: two) is seated,
computer players fill the other seats, and the people press their DM buttons as
``tests/e2e/table_players.HumanPlayer`` does, all tables at once, each table's creator pressing
"Next hand" after every settlement. After ``--seconds`` the run stops and prints:

- latency from a press to the bot's reactions (p50 / p99): the callback answer, the first change
  to the presser's DM, and the last API call to the table's chats (the group and its people's
  DMs) before the table's next press -- "last DM call" counts DM calls only, "last call" also
  the group's coalesced, rate-limited table picture;
- CPU time per logged action (process CPU / actions written to storage in the window; the fake
  server and the simulated people run in the same process and are included);
- memory per table (RSS growth from the started bot to the end of the window, / N);
- hands completed, presses, API calls per second, errors (non-200 answers, warnings logged,
  refused or unanswered presses, timeouts, storage.verify problems).

Peers measured in the same run, each on a fresh server, bot and database:

1. the same load at a few tables (``--peer-tables``, default 4: far below the CPU and every
   Telegram limit, yet enough presses for a p99 -- one table makes 8 decisions in 20 s): the
   uncontended latency; the ratio N tables / a few is the cost of contention;
2. N tables with PTB's overall limit of 30 calls a second lifted (the per-group limit of 20 a
   minute kept): the ratio tells how much of the latency is Telegram's global flood limit as
   ``AIORateLimiter`` enforces it, and how much is the bot's own work.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT.parent / "tests" / "e2e"), str(ROOT)]

from bot_load_support import (  # noqa: E402
    SHOWING_METHODS,
    CountingHandler,
    Latencies,
    LoadTable,
    LoadTelegram,
    Recorder,
    SetupBypassLimiter,
    latencies,
    most_in_a_minute,
    open_lobby,
    percentile,
    play_person,
    rss_bytes,
    start_table,
)
from fake_telegram import SEND_METHODS  # noqa: E402
from harness import BotFactory, clean_environment  # noqa: E402

from bot.services import services  # noqa: E402
from storage import Storage  # noqa: E402

SETUP_TIMEOUT = 120.0
SETUP_CONCURRENCY = 40  # lobbies opened at once (a burst of 200 /newgame is not the point)
WARM_UP = 5.0  # seconds between the limits coming on and the measured window


@dataclass
class Options:
    people: int
    think: float
    computer_delay: float
    group_seconds: float | None  # XUEZHAN_GROUP_UPDATE_SECONDS; None: the bot's default


@dataclass
class Phase:
    """What one run of N tables measured."""

    name: str
    tables: int
    seconds: float
    setup_seconds: float = 0.0
    lat: Latencies = field(default_factory=Latencies)
    presses: int = 0
    decisions: int = 0
    actions: int = 0
    hands: int = 0
    cpu: float = 0.0
    rss_growth: int = 0
    rss_end: int = 0
    calls: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    group_sends_max: int = 0
    group_calls_max: int = 0
    first_errors: dict[str, str] = field(default_factory=dict)
    by_method: Counter[str] = field(default_factory=Counter)

    @property
    def cpu_per_action_ms(self) -> float:
        return 1000 * self.cpu / self.actions if self.actions else float("nan")


class ActionCounter:
    """Counts what the runners write to storage: actions, and hands (the action that ends one).

    It wraps ``append_action`` of the bot's own storage object instead of querying the
    database, because a few hundred queries through a saturated event loop take minutes.
    """

    def __init__(self, storage: Storage) -> None:
        self.actions = 0
        self.hands = 0
        original = storage.append_action

        async def append_action(*args: Any, **kwargs: Any) -> Any:
            logged = await original(*args, **kwargs)
            self.actions += 1
            self.hands += kwargs.get("result") is not None
            return logged

        storage.append_action = append_action  # type: ignore[method-assign]


async def run_phase(name: str, n: int, seconds: float, options: Options, limiter: SetupBypassLimiter) -> Phase:
    phase = Phase(name, n, seconds)
    counting = CountingHandler()
    logging.getLogger().addHandler(counting)
    try:
        with tempfile.TemporaryDirectory(prefix="xuezhan-load-") as tmp:
            async with LoadTelegram() as tg:
                factory = BotFactory(tg, Path(tmp) / "load.db")
                try:
                    await _drive(phase, tg, factory, n, seconds, options, limiter)
                finally:
                    await factory.close()
                verify = await _verify(factory)
                phase.errors.update(verify)
    finally:
        logging.getLogger().removeHandler(counting)
    phase.errors.update(counting.counts)
    phase.first_errors = counting.first
    return phase


async def _verify(factory: BotFactory) -> list[str]:
    """storage.verify() on the finished database (chips sum to zero, balances match the ledger)."""
    from storage import open_storage

    storage = await open_storage(factory.db)
    try:
        return [f"storage.verify: {problem}" for problem in await storage.verify()]
    finally:
        await storage.close()


async def _drive(phase: Phase, tg: LoadTelegram, factory: BotFactory, n: int, seconds: float, options: Options,
                 limiter: SetupBypassLimiter) -> None:
    overrides = {"XUEZHAN_LANG": "en", "XUEZHAN_COMPUTER_DELAY": str(options.computer_delay)}
    if options.group_seconds is not None:
        overrides["XUEZHAN_GROUP_UPDATE_SECONDS"] = str(options.group_seconds)
    app = await factory(rate_limiter=limiter, **overrides)
    storage = services(app).storage
    counter = ActionCounter(storage)
    rss_start = rss_bytes()
    rec = Recorder()
    people: list[asyncio.Task[None]] = []
    gate = asyncio.Semaphore(SETUP_CONCURRENCY)

    async def lobby(index: int) -> LoadTable:
        async with gate:
            return await open_lobby(tg, storage, index, options.people, SETUP_TIMEOUT)

    async def start(table: LoadTable) -> None:
        async with gate:
            await start_table(tg, table, SETUP_TIMEOUT)

    began = time.monotonic()
    progress = asyncio.create_task(_progress(phase.name, people, rec, began))
    # Every lobby first, then every Start, then the people: a table that plays while others are
    # still being dealt would take their CPU and their share of the 30-a-second budget.
    tables = list(await asyncio.gather(*(lobby(i) for i in range(n))))
    await asyncio.gather(*(start(t) for t in tables))
    for table in tables:
        for seat, user in enumerate(table.people):
            people.append(asyncio.create_task(play_person(tg, rec, table, user, options.think, seat == 0)))
    phase.setup_seconds = time.monotonic() - began
    limiter.enforce = True
    try:
        await asyncio.sleep(WARM_UP)
        actions_before, hands_before = counter.actions, counter.hands
        first_row = len(tg.rows)
        cpu_before, start = time.process_time(), time.monotonic()
        rec.measuring = True
        await asyncio.sleep(seconds)
        rec.measuring = False
        end, cpu_after = time.monotonic(), time.process_time()
        actions_after, hands_after = counter.actions, counter.hands
        phase.rss_end = rss_bytes()
    finally:
        rec.stop.set()
        progress.cancel()
        for task in people:
            task.cancel()
    phase.seconds = end - start
    phase.rss_growth = phase.rss_end - rss_start
    phase.cpu = cpu_after - cpu_before
    phase.actions = actions_after - actions_before
    phase.hands = hands_after - hands_before
    rows = [r for r in tg.rows[first_row:] if r.at < end]
    phase.calls = sum(r.method != "getUpdates" for r in rows)
    for r in rows:
        if r.method != "getUpdates":
            where = "group" if r.chat_id is not None and r.chat_id < 0 else "DM" if r.chat_id else "-"
            phase.by_method[f"{r.method} ({where})" if where != "-" else r.method] += 1
    phase.presses = len(rec.presses)
    phase.decisions = sum(p.kind == "decision" for p in rec.presses)
    phase.lat = latencies(rec.presses, rows, tables, end)
    phase.refusals.update(p.answer for p in rec.presses if p.answer)
    if rec.unanswered:
        phase.errors["press never answered"] += rec.unanswered
    for r in rows:
        if r.status != 200:
            phase.errors[f"API {r.method} -> {r.status} {r.description[:70]}"] += 1
    for table in tables:
        for m in tg.bot_messages(table.group):
            if "ran out of time" in m.shown_text or "cannot be reached" in m.shown_text:
                phase.errors["a seat went to the computer (time-out or blocked)"] += 1
    phase.group_sends_max = max((most_in_a_minute(rows, t.group.id, SEND_METHODS) for t in tables), default=0)
    phase.group_calls_max = max((most_in_a_minute(rows, t.group.id, SHOWING_METHODS) for t in tables), default=0)


async def _progress(name: str, people: list[asyncio.Task[None]], rec: Recorder, began: float) -> None:
    """A line on stderr every 10 s, so that a long run shows it is alive."""
    while True:
        await asyncio.sleep(10)
        print(f"  [{time.monotonic() - began:5.0f} s] {name.split(':')[0]}: {len(people)} people playing, "
              f"{len(rec.presses)} presses measured", file=sys.stderr, flush=True)


# --- printing ----------------------------------------------------------------------------------


def _ms(values: list[float], q: float) -> str:
    value = percentile(values, q)
    return "   -   " if value != value else f"{1000 * value:7.0f}"


def print_phase(p: Phase) -> None:
    lat = p.lat
    print(f"\n== {p.name}: {p.tables} table(s), {p.seconds:.0f} s measured (set-up {p.setup_seconds:.1f} s)")
    print(f"   presses {p.presses} (decisions {p.decisions}), actions logged {p.actions}, "
          f"hands completed {p.hands}, API calls {p.calls} ({p.calls / p.seconds:.1f}/s)")
    print("   calls: " + ", ".join(f"{m} {n}" for m, n in p.by_method.most_common()))
    print("   latency ms             p50      p99     n")
    for label, values in (("callback answered", lat.answer), ("DM changed", lat.dm),
                          ("group changed", lat.group), ("last call", lat.last),
                          ("Next hand -> new DM", lat.next_hand)):
        print(f"   {label:<20} {_ms(values, 0.5)}  {_ms(values, 0.99)}  {len(values):5d}")
    if lat.no_reaction:
        print(f"   decisions with no visible reaction before the next press: {lat.no_reaction}")
    print(f"   CPU {p.cpu:.1f} s = {p.cpu_per_action_ms:.2f} ms per logged action "
          f"(bot + fake server + simulated people, all threads)")
    print(f"   memory: RSS {p.rss_end / 2**20:.0f} MiB, growth {p.rss_growth / 2**20:.1f} MiB "
          f"= {p.rss_growth / max(p.tables, 1) / 1024:.0f} KiB per table")
    window = "a minute" if p.seconds >= 60 else f"the {p.seconds:.0f} s window"
    print(f"   busiest group: {p.group_sends_max} new messages, {p.group_calls_max} sends + edits in {window}")
    if p.refusals:
        print("   press answers: " + ", ".join(f"{text!r} x{n}" for text, n in p.refusals.most_common()))
    print("   errors: " + ("none" if not p.errors else ""))
    for what, n in p.errors.most_common(12):
        print(f"     {n:6d}  {what}")
    for what, text in list(p.first_errors.items())[:3]:
        print(f"   first {what}:\n     " + text.replace("\n", "\n     "))


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b and a == a and b == b else "-"


def print_ratios(main: Phase, light: Phase | None, unthrottled: Phase | None) -> None:
    print("\n== ratios")
    if light is not None:
        versus = f"{main.tables} tables / {light.tables}"
        for label, q in (("p50", 0.5), ("p99", 0.99)):
            print(f"   {versus}, DM changed {label}: "
                  f"{_ratio(percentile(main.lat.dm, q), percentile(light.lat.dm, q))}; "
                  f"last call {label}: {_ratio(percentile(main.lat.last, q), percentile(light.lat.last, q))}")
        print(f"   CPU per action, {versus}: {_ratio(main.cpu_per_action_ms, light.cpu_per_action_ms)}")
    if unthrottled is not None:
        for label, q in (("p50", 0.5), ("p99", 0.99)):
            print(f"   30/s limit / no overall limit ({main.tables} tables), DM changed {label}: "
                  f"{_ratio(percentile(main.lat.dm, q), percentile(unthrottled.lat.dm, q))}")
        print(f"   actions per second, 30/s limit vs none: {main.actions / main.seconds:.1f} vs "
              f"{unthrottled.actions / unthrottled.seconds:.1f}")


# --- entry point -------------------------------------------------------------------------------


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def seconds_arg(text: str) -> float:
    value = float(text)
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds in (0, 3600]")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=positive_int, default=200, help="concurrent tables (default 200)")
    parser.add_argument("--seconds", type=seconds_arg, default=45, help="measured seconds (default 45)")
    parser.add_argument("--people", type=int, choices=(1, 2), default=1, help="people per table (default 1)")
    parser.add_argument("--think", type=float, default=1.0,
                        help="seconds a person looks at a decision before pressing (default 1)")
    parser.add_argument("--computer-delay", type=float, default=0.5,
                        help="XUEZHAN_COMPUTER_DELAY, the pause before a computer player acts (default 0.5)")
    parser.add_argument("--group-seconds", type=float, default=None,
                        help="XUEZHAN_GROUP_UPDATE_SECONDS, the group picture's coalescing interval "
                             "(default: the bot's)")
    parser.add_argument("--peer-tables", type=positive_int, default=4,
                        help="tables of the uncontended peer (default 4: enough presses for a p99, "
                             "far below every limit)")
    parser.add_argument("--peer-seconds", type=seconds_arg, default=20, help="measured seconds of each peer")
    parser.add_argument("--no-peers", action="store_true", help="measure the N tables only")
    args = parser.parse_args(argv)
    if not 0 <= args.think <= 60 or not 0 <= args.computer_delay <= 30:
        parser.error("--think must be within 0..60 and --computer-delay within 0..30 seconds")
    if args.group_seconds is not None and not 0 <= args.group_seconds <= 60:
        parser.error("--group-seconds must be within 0..60 seconds")
    return args


async def main_async(args: argparse.Namespace) -> int:
    options = Options(args.people, args.think, args.computer_delay, args.group_seconds)
    group = "the bot's default" if args.group_seconds is None else f"{args.group_seconds}s"
    print(f"bot load: {args.tables} tables x {args.people} person(s) + computers, think {args.think}s, "
          f"computer delay {args.computer_delay}s, group picture every {group}, on {os.cpu_count()} CPU(s)")
    light = unthrottled = None
    if not args.no_peers:  # first, so that the N-table run starts with fonts and caches loaded
        light = await run_phase("peer: uncontended, same limits", args.peer_tables, args.peer_seconds,
                                 options, SetupBypassLimiter())
        print_phase(light)
    main = await run_phase("N tables, Telegram's limits (AIORateLimiter 30/s overall, 20/min per group)",
                           args.tables, args.seconds, options, SetupBypassLimiter())
    print_phase(main)
    if not args.no_peers:
        unthrottled = await run_phase("peer: N tables, no overall 30/s limit (20/min per group kept)",
                                      args.tables, args.peer_seconds, options,
                                      SetupBypassLimiter(overall_max_rate=0))
        print_phase(unthrottled)
    print_ratios(main, light, unthrottled)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for name in clean_environment():  # the bot's settings come from this run, not the shell
        os.environ.pop(name)
    logging.getLogger().setLevel(logging.WARNING)  # counted by each phase, not printed as they come
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
