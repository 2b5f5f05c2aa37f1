"""Web table load benchmark: N tables of four browsers, simulated by WebSocket clients on loopback.

    python benchmarks/live_load.py [--tables 200] [--seconds 30] [--think 1] [--no-dm]

The server runs in its own process exactly as ``xuezhan play`` runs it (``web.local``: the real
``TableRunner``, SQLite ledger, the web hub, aiohttp), with N tables of four people each, all
seated by signed seat links. This process opens the 4 x N sockets and plays like people: each
seat waits ``--think`` seconds before each decision, then sends it; at the end of a hand a seat
asks for the next one.

Measured, on the clients' clock (one machine, one monotonic clock): **action to all four
views** -- from sending a decision on one's turn (a discard, a self-drawn win, a kong: the
table waits for that seat alone, so the next logged action is this one) to the moment the last
of the table's four sockets has received the frame that shows it; p50 / p99 over the measured
window. Also the server's CPU time per logged action and the frames per second.

Then, unless ``--no-dm``, the DM path at the same N in the same run (``measure_dm``): the real
bot in its own process on ``bot_load``'s fake Bot API, which enforces Telegram's limits, one
person per table pressing DM buttons; its tables are seated in the ledger in bulk and taken up
by the bot as after a restart, so the set-up takes about a minute at 200 tables instead of
timing out.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT.parent / "tests" / "web")]

from web_person import decide  # noqa: E402  (the same simple person as the web tests)

WARM_UP = 5.0
SETUP_TIMEOUT = 180.0
DM_SETUP_TIMEOUT = 600.0  # the bot shows 200 hands by DM within Telegram's limits: about a minute


# --- the server process --------------------------------------------------------------------------


async def serve(tables: int, db: Path, synchronous: str) -> None:
    """Open ``tables`` tables of four people, print their seat tokens as one JSON line, serve."""
    from bot.table.runner import Limits
    from storage import open_storage
    from web.auth import seat_token
    from web.local import LocalTables

    storage = await open_storage(db, synchronous=synchronous)
    local = LocalTables(storage, Limits(discard_seconds=120, claim_seconds=120, computer_delay=0.0))
    url = await local.server.start("127.0.0.1", 0)
    seats = []
    for index in range(tables):
        names = [f"T{index}-{s}" for s in range(4)]
        table, runner = await local.open_table(4, names, first_user=1 + 4 * index)
        seats.append([seat_token(local.secret, table.id, p.user_id) for p in runner.seats])
    gc.freeze()  # as ``xuezhan play`` does once its table is open
    print(json.dumps({"url": url, "tables": seats}), flush=True)
    lags: list[float] = []
    watch = asyncio.create_task(loop_lag(lags))
    try:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # "start"
        lags.clear()
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # "measured" (or EOF)
        print(json.dumps({"lag": lags}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the benchmark closes it
    finally:
        watch.cancel()
        await local.close()
        await storage.close()


async def loop_lag(lags: list[float], every: float = 0.02) -> None:
    """How late the event loop wakes a 20 ms timer: time the process waited for a CPU (or was busy)."""
    loop = asyncio.get_running_loop()
    while True:
        began = loop.time()
        await asyncio.sleep(every)
        lags.append(loop.time() - began - every)


# --- the simulated browsers ------------------------------------------------------------------


@dataclass
class Recorder:
    measuring: bool = False
    sent: dict[tuple[int, int], float] = field(default_factory=dict)  # (table, v after) -> sent at
    arrived: dict[tuple[int, int], dict[int, float]] = field(default_factory=dict)  # -> seat -> first arrival
    frames: int = 0
    actions: int = 0
    hands: int = 0
    refusals: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def latencies(self) -> list[float]:
        out = []
        for key, at in self.sent.items():
            seen = self.arrived.get(key, {})
            if len(seen) == 4:
                out.append(max(seen.values()) - at)
        return out

    def incomplete(self) -> int:
        return sum(len(self.arrived.get(key, {})) < 4 for key in self.sent)


async def browser(session: Any, url: str, token: str, rec: Recorder, think: float, stop: asyncio.Event) -> None:
    acted: set[tuple[int, int | None]] = set()
    pending: set[asyncio.Task[None]] = set()
    async with session.ws_connect(url + "ws", max_msg_size=1 << 20) as ws:
        await ws.send_json({"hello": {"token": token}})

        async def later(send: Callable[[], Awaitable[None]]) -> None:
            await asyncio.sleep(think)
            if not stop.is_set():
                await send()

        def spawn(send: Callable[[], Awaitable[None]]) -> None:
            task = asyncio.create_task(later(send))
            pending.add(task)
            task.add_done_callback(pending.discard)

        async for message in ws:
            now = time.monotonic()
            data = json.loads(message.data)
            if data["type"] == "refused":
                rec.refusals[data["key"]] += 1
                continue
            if data["type"] != "state":
                continue
            rec.frames += rec.measuring
            table, v, seat = data["table"], data["v"], data["seat"]
            rec.arrived.setdefault((table, v), {}).setdefault(seat, now)
            if data["over"] and seat == 0 and (data["hand_id"], None) not in acted:
                acted.add((data["hand_id"], None))
                rec.hands += rec.measuring

                async def next_hand(hand_id: int = data["hand_id"]) -> None:
                    await ws.send_json({"act": {"next": hand_id}})

                spawn(next_hand)
            elif data["actions"] and (data["hand_id"], data["seq"]) not in acted:
                acted.add((data["hand_id"], data["seq"]))
                on_turn = data["view"]["phase"] == "play"

                async def act(frame: dict[str, Any] = data, on_turn: bool = on_turn) -> None:
                    messages = decide(frame)
                    if on_turn and rec.measuring:
                        rec.sent[(frame["table"], frame["v"] + 1)] = time.monotonic()
                    for body in messages:
                        await ws.send_json({"act": body})
                    rec.actions += rec.measuring

                spawn(act)
            if stop.is_set():
                break
        for task in pending:
            task.cancel()


def process_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure_web(tables: int, seconds: float, think: float, synchronous: str) -> tuple[int, list[float]]:
    """Returns the exit code (1 if a simulated browser failed) and the latencies in seconds."""
    import aiohttp

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 16 * tables + 256)), hard))
    with tempfile.TemporaryDirectory(prefix="xuezhan-live-") as tmp:
        server = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--serve", str(tables), "--db", str(Path(tmp) / "live.db"),
            "--synchronous", synchronous,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        assert server.stdout is not None and server.stdin is not None
        began = time.monotonic()
        line = await asyncio.wait_for(server.stdout.readline(), SETUP_TIMEOUT)
        if not line:
            raise SystemExit("live_load: the server process did not start (its error is above)")
        setup = json.loads(line)
        rec, stop = Recorder(), asyncio.Event()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            clients = [asyncio.create_task(browser(session, setup["url"], token, rec, think, stop))
                       for seats in setup["tables"] for token in seats]
            print(f"web: {tables} tables, {len(clients)} sockets open after {time.monotonic() - began:.1f} s; "
                  f"warming up {WARM_UP:.0f} s, measuring {seconds:.0f} s", flush=True)
            await asyncio.sleep(WARM_UP)
            gc.freeze()  # these clients stand in for 800 phones: their set-up need not be collected again
            server.stdin.write(b"start\n")
            client_lags: list[float] = []
            watch = asyncio.create_task(loop_lag(client_lags))
            cpu_before, start, load_before = process_cpu(server.pid), time.monotonic(), os.getloadavg()[0]
            client_before = time.process_time()
            rec.measuring = True
            await asyncio.sleep(seconds)
            rec.measuring = False
            cpu = process_cpu(server.pid) - cpu_before
            client_cpu = time.process_time() - client_before
            watch.cancel()
            server.stdin.write(b"measured\n")
            await server.stdin.drain()
            server_lags = json.loads(await asyncio.wait_for(server.stdout.readline(), 30))["lag"]
            elapsed = time.monotonic() - start
            await asyncio.sleep(min(2.0, think + 1))  # the last measured actions reach every view
            stop.set()
            for client in clients:
                client.cancel()
            results = await asyncio.gather(*clients, return_exceptions=True)
        server.stdin.close()
        await asyncio.wait_for(server.wait(), 30)
    for result in results:
        if isinstance(result, Exception) and not isinstance(result, asyncio.CancelledError):
            rec.errors[type(result).__name__] += 1
    lat = rec.latencies()
    p50, p99 = percentile(lat, 0.5) * 1000, percentile(lat, 0.99) * 1000
    print(f"\nweb table, {tables} tables x 4 browsers, think {think:g} s, {elapsed:.0f} s measured, "
          f"SQLite synchronous={synchronous}, machine load {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"  action -> all four views: p50 {p50:6.1f} ms   p99 {p99:6.1f} ms   max "
          f"{max(lat, default=float('nan')) * 1000:6.1f} ms   ({len(lat)} turn actions timed, "
          f"{rec.incomplete()} not seen by all four)")
    print(f"  decisions sent {rec.actions} ({rec.actions / elapsed:.0f}/s), frames received "
          f"{rec.frames} ({rec.frames / elapsed:.0f}/s), hands finished {rec.hands}")
    print(f"  server CPU {cpu:.1f} s = {1000 * cpu / max(1, rec.actions):.2f} ms per decision "
          f"({100 * cpu / elapsed:.0f}% of one core); the simulated browsers "
          f"{100 * client_cpu / elapsed:.0f}% of one core")
    print("  event loop lag (a 20 ms timer woken late: waiting for a CPU, or busy): server p50 "
          f"{percentile(server_lags, 0.5) * 1000:.1f} ms p99 {percentile(server_lags, 0.99) * 1000:.1f} ms; "
          f"browsers p50 {percentile(client_lags, 0.5) * 1000:.1f} ms "
          f"p99 {percentile(client_lags, 0.99) * 1000:.1f} ms")
    print(f"  refusals {dict(rec.refusals) or 'none'}, errors {dict(rec.errors) or 'none'}")
    if tables == 200:
        print(f"  target p99 < 100 ms at 200 tables: {'met' if p99 < 100 else 'NOT met'}", flush=True)
    else:
        print(f"  p99 < 100 ms here: {'yes' if p99 < 100 else 'no'} (the target is set at 200 tables)", flush=True)
    return (0 if not rec.errors else 1), lat


async def measure_dm(tables: int, seconds: float, think: float) -> dict[str, Any]:
    """The DM path at the same number of tables, in the same run: the real bot (its own process,
    ``python -m cli.main run``) on the fake Bot API of ``bot_load``, which enforces Telegram's
    limits (about 30 calls a second per bot, 20 messages a minute per group). One person per
    table presses DM buttons after ``think`` seconds (``bot_load_support.play_person``); the
    computers fill the other seats. Returns the latencies and counts."""
    sys.path[:0] = [str(ROOT.parent / "tests" / "e2e")]
    from bot_load import BotProcess, bot_environment
    from bot_load_support import LoadTelegram, Recorder, latencies, play_person, seat_tables, wait_for_hands

    from storage import open_storage

    with tempfile.TemporaryDirectory(prefix="xuezhan-live-dm-") as tmp:
        db = Path(tmp) / "dm.db"
        async with LoadTelegram() as tg:
            storage = await open_storage(db, default_language="en")
            try:
                seated = await seat_tables(tg, storage, tables)
            finally:
                await storage.close()
            began = time.monotonic()
            env = bot_environment(tg, db, XUEZHAN_LANG="en", XUEZHAN_COMPUTER_DELAY="0.5")
            bot = BotProcess([sys.executable, "-m", "cli.main", "run"], env, Path(tmp))
            await bot.start(tg)
            rec = Recorder()
            people: list[asyncio.Task[None]] = []
            try:
                try:
                    await wait_for_hands(tg, seated, DM_SETUP_TIMEOUT)
                except TimeoutError as error:
                    raise SystemExit(f"live_load: the bot did not show every hand by DM: {error}") from None
                setup = time.monotonic() - began
                print(f"DM: {tables} tables resumed by the bot, every hand shown by DM after {setup:.1f} s; "
                      f"warming up {WARM_UP:.0f} s, measuring {seconds:.0f} s", flush=True)
                people = [asyncio.create_task(play_person(tg, rec, t, t.people[0], think, True)) for t in seated]
                await asyncio.sleep(WARM_UP)
                first_row, load_before = len(tg.rows), os.getloadavg()[0]
                start = time.monotonic()
                rec.measuring = True
                await asyncio.sleep(seconds)
                rec.measuring = False
                end = time.monotonic()
            finally:
                rec.stop.set()
                for task in people:
                    task.cancel()
                await asyncio.gather(*people, return_exceptions=True)
                await bot.stop()
            rows = [r for r in tg.rows[first_row:] if r.at < end]
    lat = latencies(rec.presses, rows, seated, end)
    problems, _ = bot.problems()
    return {"lat": lat, "seconds": end - start, "load": (load_before, os.getloadavg()[0]),
            "presses": sum(p.kind == "decision" for p in rec.presses),
            "calls": sum(r.method != "getUpdates" for r in rows),
            "refused": sum(r.status == 429 for r in rows), "problems": problems, "unanswered": rec.unanswered}


def print_dm(tables: int, think: float, dm: dict[str, Any]) -> None:
    lat = dm["lat"]

    def line(name: str, values: list[float]) -> str:
        return (f"  {name:<40} p50 {percentile(values, 0.5) * 1000:8.0f} ms   p99 "
                f"{percentile(values, 0.99) * 1000:8.0f} ms   ({len(values)})")

    print(f"\nDM path, same run: {tables} tables x 1 person + 3 computers, think {think:g} s, "
          f"{dm['seconds']:.0f} s measured, machine load {dm['load'][0]:.1f} -> {dm['load'][1]:.1f}")
    print(line("press -> callback answered", lat.answer))
    print(line("press -> presser's DM changed", lat.dm))
    print(line("press -> group picture changed", lat.group))
    print(line("press -> last call to the table's chats", lat.last))
    print(f"  decisions pressed {dm['presses']}, API calls {dm['calls']} ({dm['calls'] / dm['seconds']:.0f}/s; "
          f"{dm['refused']} answered 429), presses never answered {dm['unanswered']}, "
          f"no reaction {lat.no_reaction}")
    if dm["problems"]:
        print(f"  the bot logged: {dict(dm['problems'].most_common(5))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200, help="tables of four browsers (default 200)")
    parser.add_argument("--seconds", type=float, default=30, help="measured seconds (default 30)")
    parser.add_argument("--think", type=float, default=1.0, help="seconds a person takes per decision (default 1)")
    parser.add_argument("--no-dm", action="store_true", help="skip the DM path's run")
    parser.add_argument("--no-web", action="store_true", help="skip the web table's run (the DM path alone)")
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL",
                        help="SQLite durability of the ledger (default FULL, as the bot runs)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(serve(args.serve, args.db, args.synchronous))
        return 0
    if args.tables < 1 or args.seconds <= 0 or args.think < 0:
        parser.error("--tables must be at least 1, --seconds positive, --think not negative")
    code, web = (0, []) if args.no_web else asyncio.run(
        measure_web(args.tables, args.seconds, args.think, args.synchronous))
    if not args.no_dm:
        dm = asyncio.run(measure_dm(args.tables, args.seconds, args.think))
        print_dm(args.tables, args.think, dm)
        if web:
            last = dm["lat"].last
            print(f"\nside by side, {args.tables} tables: web action -> all four views p50 "
                  f"{percentile(web, 0.5) * 1000:.0f} ms, p99 {percentile(web, 0.99) * 1000:.0f} ms; "
                  f"DM press -> the table's last Telegram call p50 {percentile(last, 0.5) * 1000:.0f} ms, "
                  f"p99 {percentile(last, 0.99) * 1000:.0f} ms", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
