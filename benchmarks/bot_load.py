"""Bot load benchmark: many hosted tables at once, the real bot against the fake Telegram.

    python benchmarks/bot_load.py [--tables 4 50] [--seconds 30] [--people 1] [--think 2] [--think-spread 0.8]
                                  [--computer-delay 0.5] [--no-peer] [--workers 1 2 4] [--startups K]
    python benchmarks/bot_load.py --tables --startups 9   # only the start-ups, bot and peer interleaved

The fake Bot API server (``tests/e2e/fake_telegram.py``, on 127.0.0.1) and the simulated people
run in this process; the bot runs in its own process, started as an operator starts it
(``python -m cli.main run``, a temporary SQLite file), so the CPU measured is the bot's alone
(its process's user + system time, all threads, from /proc). For each table count N: N groups
each open a table with /newgame; one person per table (``--people 2``: two) is seated, computer
players fill the other seats, and the people press their DM buttons as
``tests/e2e/table_players.HumanPlayer`` does, all tables at once, each table's creator pressing
"Next hand" after every settlement. After a warm-up, ``--seconds`` are measured:

- latency from a press to the bot's reactions (p50 / p99): the callback answer, the first change
  to the presser's DM, the first change in the group, and the last API call to the table's chats
  before the table's next press;
- CPU per logged action (the bot process's CPU in the window / actions logged in the window);
- start-up: seconds from starting the process to its first getUpdates, and its idle RSS then;
- hands completed, presses, API calls by method, errors (non-200 answers, WARNING and worse lines
  the bot logged, presses never answered, seats handed to the computer, storage.verify problems).

The peer (``benchmarks/minimal_bot.py``), run just before each Xuezhan run against the same
server: a minimal python-telegram-bot application that answers each press with one callback
answer and one message edit, pressed by as many people as the Xuezhan run has, with the same
think times (``bot_load_support.Think``: log-normal, median ``--think`` seconds). The ratios
printed are Xuezhan's CPU per logged action / the peer's CPU per update, and Xuezhan's start-up /
the peer's.

``--workers 1 2 4``: several workers instead of the peer. For each table count, the bot first runs
as ``xuezhan run --workers 1`` on SQLite, then as ``xuezhan run --workers N`` for each N on one
PostgreSQL server (``tests/pg_server.py``, started for the run with fsync on, a new database per
run), all in webhook mode behind the front; the fake posts up to 40 updates at once, as Telegram
does. Those tables are seated in the ledger with their first hand dealt before the bot starts, and
the bot takes them up as after a restart (``bot_load_support.seat_tables``, as ``live_load.py``
does), so 200 tables are ready in about a minute instead of timing out in their lobbies. Each run
reports its throughput (actions logged per second), its press latencies, its API calls a second
against the bot's ~30 a second, and the CPU of the bot (front and workers) and of the PostgreSQL
server, which together say where the ceiling is.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT.parent / "tests" / "e2e"), str(ROOT.parent / "tests"), str(ROOT)]

from bot_load_support import (  # noqa: E402
    SHOWING_METHODS,
    Latencies,
    LoadTable,
    LoadTelegram,
    Recorder,
    Think,
    latencies,
    most_in_a_minute,
    most_to_chats_in_a_second,
    open_lobby,
    percentile,
    play_person,
    seat_tables,
    start_table,
    wait_for_hands,
)
from fake_telegram import SEND_METHODS, FakeUser  # noqa: E402
from harness import clean_environment  # noqa: E402
from pg_server import PgServer, find_binaries  # noqa: E402

from storage import Storage, open_storage  # noqa: E402

TELEGRAM_CALLS_PER_SECOND = 30  # the bot-wide limit bot.ratelimit keeps (FloodLimit.MESSAGES_PER_SECOND)
SETUP_TIMEOUT = 120.0
SEATED_SETUP_TIMEOUT = 300.0  # tables seated in the ledger: every hand shown by DM within Telegram's limits
SETUP_CONCURRENCY = 20  # lobbies opened at once
WARM_UP = 5.0  # seconds between the people starting and the measured window
LOG_PROBLEM = re.compile(r" (WARNING|ERROR|CRITICAL) ")
# What each worker's rate limiter logs at shut-down (bot.ratelimit.TurnStats.line).
TURN_STATS = re.compile(r"Telegram send turns: (\d+) taken, (\d+) left unused, (\d+) passed on, (\d+) lost")
# PostgreSQL's backends sampled in the window (pg_stat_activity), by what they were doing.
DB_STATES = {
    "running": "state = 'active' AND wait_event_type IS NULL",
    "lock waits": "state = 'active' AND (wait_event_type = 'Lock' OR (wait_event_type = 'LWLock'"
                  " AND wait_event NOT IN ('WALWrite', 'WALInsert')))",
    "fsync waits": "state = 'active' AND wait_event IN ('WALSync', 'WALWrite', 'WALInsert')",
    "in a transaction, waiting for the bot": "state = 'idle in transaction'",
}
DB_SAMPLE_SECONDS = 0.05


@dataclass
class Options:
    people: int
    think: Think
    computer_delay: float
    profile: Path | None = None  # py-spy's samples of the bot in each measured window go here
    warm_up: float = WARM_UP  # seconds of play before the window: the first sprites and labels drawn


@dataclass(frozen=True)
class Deployment:
    """How the bot under load runs: one process polling (``workers`` None), or ``xuezhan run
    --workers N`` in webhook mode on ``backend``."""

    backend: str = "sqlite"
    workers: int | None = None

    @property
    def label(self) -> str:
        if self.workers is None:
            return ""
        return f"{self.backend}, {self.workers} worker{'s' if self.workers > 1 else ''}"


@dataclass
class Phase:
    """What one run measured (a Xuezhan run of N tables, or its minimal peer)."""

    name: str
    tables: int
    seconds: float
    startup: float = 0.0
    idle_rss: int = 0
    setup_seconds: float = 0.0
    lat: Latencies = field(default_factory=Latencies)
    presses: int = 0
    decisions: int = 0
    actions: int = 0  # logged actions (Xuezhan) or updates handled (the peer)
    hands: int = 0
    cpu: float = 0.0
    calls: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    group_sends_max: int = 0
    group_calls_max: int = 0
    chat_calls_max_second: int = 0  # the most calls to chats within any one second of the window
    first_errors: list[str] = field(default_factory=list)
    by_method: Counter[str] = field(default_factory=Counter)
    load: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load average, before and after
    window: tuple[datetime, datetime] | None = None  # the measured window, wall clock (as storage stamps)
    deployment: str = ""  # Deployment.label
    db_cpu: float = 0.0  # the PostgreSQL server's CPU seconds in the window (all its processes)
    db_states: dict[str, float] = field(default_factory=dict)  # mean backends per DB_STATES in the window
    turns: tuple[int, int, int, int] = (0, 0, 0, 0)  # every worker's send turns, its whole life: TURN_STATS
    busiest: float = 0.0  # CPU seconds in the window of the bot's busiest process (one event loop each)
    thread_cpu: Counter[str] = field(default_factory=Counter)  # --profile: CPU seconds by thread name

    @property
    def turns_lost(self) -> float:
        """The share of the send turns taken that were lost (reserved under Telegram's limits, no call)."""
        taken, _, _, lost = self.turns
        return lost / (taken + lost) if taken + lost else 0.0

    @property
    def cpu_per_action_ms(self) -> float:
        return 1000 * self.cpu / self.actions if self.actions else float("nan")

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.seconds if self.seconds else float("nan")


# --- the bot's process ---------------------------------------------------------------------------


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[int, float]:
    """User + system CPU seconds of each thread of a process, by thread id, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    found: dict[int, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            found[int(task.name)] = (int(fields[11]) + int(fields[12])) / ticks
    return found


async def thread_names(pid: int) -> dict[int, str]:
    """The Python names of a process's threads by thread id, pool numbers dropped (``asyncio_3`` ->
    ``asyncio``), from ``py-spy dump``: Python 3.11 does not name the system's threads."""
    spy = await asyncio.create_subprocess_exec(py_spy(), "dump", "--pid", str(pid), "--nonblocking",
                                               stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    out, _ = await spy.communicate()
    return {int(m[1]): _THREAD_LABELS.get(re.sub(r"_\d+$|^Thread-\d+ ", "", m[2]), m[2])
            for m in re.finditer(r'^Thread (\d+) \([^)]*\): "([^"]*)"', out.decode(errors="replace"), re.M)}


_THREAD_LABELS = {  # what the bot's threads do
    "MainThread": "event loop", "asyncio": "pictures (to_thread pool)", "xz-computer": "computer players",
    "(_connection_worker_thread)": "SQLite (aiosqlite)", "sqlite-checkpoint": "WAL checkpoints",
}


def process_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def process_tree(pid: int) -> list[int]:
    """``pid`` and its live descendants (the front and its workers; the server and its backends)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    tree, frontier = [pid], [pid]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants."""
    total = 0.0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            total += process_cpu(member)
    return total


def cpu_by_process(pid: int) -> dict[int, float]:
    """CPU seconds of ``pid`` and of each of its live descendants, by process."""
    found = {}
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            found[member] = process_cpu(member)
    return found


def tree_rss(pid: int) -> int:
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            total += process_rss(member)
    return total


def load_average() -> float:
    return os.getloadavg()[0]


class BotProcess:
    """A bot started the way an operator starts it; ``startup`` is the time to its first getUpdates
    (with ``webhooks``: until that many workers have registered the webhook)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path, webhooks: int = 0) -> None:
        self.command, self.env, self.cwd = command, env, cwd
        self.webhooks = webhooks
        self.process: asyncio.subprocess.Process | None = None
        self.startup = 0.0
        self.idle_rss = 0
        self.stderr = b""

    async def start(self, tg: LoadTelegram) -> None:
        first_poll, first_row = len(tg.polls), len(tg.rows)
        began = time.monotonic()
        self.process = await asyncio.create_subprocess_exec(
            *self.command, cwd=self.cwd, env=self.env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        assert self.process.stderr is not None
        self._reader = asyncio.create_task(self.process.stderr.read())
        while not self._ready(tg, first_poll, first_row):
            if self.process.returncode is not None or time.monotonic() - began > 120:
                raise RuntimeError(f"{self.command} did not start: {(await self._reader).decode()[-2000:]}")
            await asyncio.sleep(0.005)
        if self.webhooks:
            self.startup = [r.at for r in tg.rows[first_row:] if r.method == "setWebhook"][self.webhooks - 1] - began
        else:
            self.startup = tg.polls[first_poll] - began  # the first getUpdates arrives (it is answered later)
        self.idle_rss = tree_rss(self.process.pid)

    def _ready(self, tg: LoadTelegram, first_poll: int, first_row: int) -> bool:
        if self.webhooks:
            return sum(r.method == "setWebhook" for r in tg.rows[first_row:]) >= self.webhooks
        return len(tg.polls) > first_poll

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def stop(self) -> None:
        """SIGTERM, as systemd sends; the bot stops polling, closes storage and exits."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 60)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self.stderr = await self._reader

    def turn_stats(self) -> tuple[int, int, int, int]:
        """The send turns every worker's rate limiter took, left unused, passed on and lost."""
        found = [tuple(map(int, m.groups())) for m in TURN_STATS.finditer(self.stderr.decode(errors="replace"))]
        return tuple(sum(column) for column in zip(*found, strict=True)) if found else (0, 0, 0, 0)  # type: ignore[return-value]

    def problems(self) -> tuple[Counter[str], list[str]]:
        """WARNING and worse lines the bot logged, by logger and first words."""
        counts: Counter[str] = Counter()
        first: list[str] = []
        for line in self.stderr.decode(errors="replace").splitlines():
            found = LOG_PROBLEM.search(line)
            if found:
                key = line[found.start() + 1:][:90]
                counts[re.sub(r"\d+", "N", key)] += 1
                if len(first) < 3:
                    first.append(line[:300])
        return counts, first


def bot_environment(tg: LoadTelegram, db: Path, **settings: str) -> dict[str, str]:
    """The bot's settings from this run. Without PYTHONDONTWRITEBYTECODE: a deployed bot's modules
    are compiled once (by pip, or its first start writes ``__pycache__``); set in a developer's
    shell, it made every start compile again each module changed since (0.1-0.2 s of start-up
    here), which is not what an operator's restart costs."""
    skip = {*clean_environment(), "PYTHONDONTWRITEBYTECODE"}
    inherited = {k: v for k, v in os.environ.items() if k not in skip}
    return {**inherited, "TELEGRAM_BOT_TOKEN": tg.token, "XUEZHAN_API_URL": tg.base_url, "XUEZHAN_DB": str(db),
            **settings}


# --- one Xuezhan run -----------------------------------------------------------------------------


async def run_xuezhan(n: int, seconds: float, options: Options, deployment: Deployment = Deployment(),
                      pg: PgServer | None = None, tree: Path | None = None) -> Phase:
    """One run of the bot; ``tree``: run the code of that source tree (``--before``) instead of this one."""
    phase = Phase("xuezhan" if tree is None else f"xuezhan ({tree})", n, seconds, deployment=deployment.label)
    with tempfile.TemporaryDirectory(prefix="xuezhan-load-") as tmp:
        db: str | Path = Path(tmp) / "load.db"
        if deployment.backend == "postgresql":
            assert pg is not None
            db = await pg.create_database()
        async with LoadTelegram() as tg:
            env = bot_environment(tg, db, XUEZHAN_LANG="en", XUEZHAN_COMPUTER_DELAY=str(options.computer_delay),
                                  **webhook_settings(deployment), **tree_path(tree))
            command = [sys.executable, "-m", "cli.main", "run"]
            if deployment.workers is not None:
                command += ["--workers", str(deployment.workers)]
            storage = await open_storage(db)
            try:
                # Several workers: the tables are seated in the ledger before the bot starts, and
                # the bot takes them up (200 tables set up through their lobbies take minutes).
                began = time.monotonic()
                seated = await seat_tables(tg, storage, n, options.people) if deployment.workers else None
                bot = BotProcess(command, env, Path(tmp), webhooks=deployment.workers or 0)
                await bot.start(tg)
                phase.startup, phase.idle_rss = bot.startup, bot.idle_rss
                before_play = time.monotonic() - began if seated is not None else 0.0
                try:
                    tables = await _play(phase, tg, bot, storage, n, seconds, options, server_pid(pg), seated,
                                         db_url=str(db) if pg is not None else None)
                finally:
                    await bot.stop()
                phase.turns = bot.turn_stats()
                phase.setup_seconds += before_play  # seating them and starting the bot
                await _count_logged(phase, storage, tables)
                phase.errors.update(f"storage.verify: {p}" for p in await storage.verify())
            finally:
                await storage.close()
            problems, phase.first_errors = bot.problems()
            phase.errors.update(problems)
    return phase


def tree_path(tree: Path | None) -> dict[str, str]:
    """PYTHONPATH that makes ``python -m cli.main`` import ``tree``'s code ahead of the installed one."""
    return {} if tree is None else {"PYTHONPATH": str(tree.resolve())}


def webhook_settings(deployment: Deployment) -> dict[str, str]:
    """The webhook on a free loopback port, for ``xuezhan run --workers N``; none for polling."""
    if deployment.workers is None:
        return {}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return {"XUEZHAN_WEBHOOK_URL": f"http://127.0.0.1:{port}/hook", "XUEZHAN_WEBHOOK_PORT": str(port),
            "XUEZHAN_WEBHOOK_LISTEN": "127.0.0.1"}


def server_pid(pg: PgServer | None) -> int | None:
    """The PostgreSQL server's main process (its backends are its children)."""
    return None if pg is None else int((pg.data / "postmaster.pid").read_text().split()[0])


async def _play(phase: Phase, tg: LoadTelegram, bot: BotProcess, storage: Storage, n: int, seconds: float,
                options: Options, db_pid: int | None = None, seated: list[LoadTable] | None = None,
                db_url: str | None = None) -> list[LoadTable]:
    """Set up ``n`` tables (or take ``seated``, written to the ledger before the bot started, once
    the bot shows them), play them, and measure the window (``db_url``: PostgreSQL's backends are
    sampled in it)."""
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
    if seated is not None:
        tables = seated
        await wait_for_hands(tg, tables, SEATED_SETUP_TIMEOUT)
    else:
        # Every lobby first, then every Start, then the people: a table that plays while others are
        # still being dealt would take their share of the CPU and of the 30-a-second budget.
        tables = list(await asyncio.gather(*(lobby(i) for i in range(n))))
        await asyncio.gather(*(start(t) for t in tables))
    phase.setup_seconds = time.monotonic() - began
    for table in tables:
        for seat, user in enumerate(table.people):
            people.append(asyncio.create_task(play_person(tg, rec, table, user, options.think, seat == 0)))
    try:
        await asyncio.sleep(options.warm_up)
        first_row = len(tg.rows)
        phase.load = (load_average(), 0.0)
        cpu_before, start_at, wall_start = tree_cpu(bot.pid), time.monotonic(), datetime.now(UTC)
        each_before = cpu_by_process(bot.pid)
        db_before = tree_cpu(db_pid) if db_pid is not None else 0.0
        rec.measuring = True
        spy = await _profile(options, bot.pid, str(n) if phase.name == "xuezhan" else f"before-{n}", seconds)
        threads_before = thread_cpu(bot.pid) if spy is not None else {}
        sampling = asyncio.create_task(sample_database(db_url, seconds)) if db_url is not None else None
        await asyncio.sleep(seconds)
        if spy is not None:
            await spy.wait()
        if sampling is not None:
            phase.db_states = await sampling
        rec.measuring = False
        end, cpu_after, wall_end = time.monotonic(), tree_cpu(bot.pid), datetime.now(UTC)
        each_after = cpu_by_process(bot.pid)
        phase.busiest = max((cpu - each_before.get(pid, 0.0) for pid, cpu in each_after.items()), default=0.0)
        if spy is not None:  # what each thread did: py-spy's samples count a thread waiting for the GIL as busy
            threads_after = thread_cpu(bot.pid)
            names = await thread_names(bot.pid)
            for tid, seconds_used in threads_after.items():
                phase.thread_cpu[names.get(tid, "other")] += seconds_used - threads_before.get(tid, 0.0)
        db_after = tree_cpu(db_pid) if db_pid is not None else 0.0
        phase.load = (phase.load[0], load_average())
    finally:
        rec.stop.set()
        for task in people:
            task.cancel()
    phase.seconds = end - start_at
    phase.cpu = cpu_after - cpu_before
    phase.db_cpu = db_after - db_before
    phase.window = (wall_start, wall_end)
    rows = [r for r in tg.rows[first_row:] if r.at < end]
    _count_calls(phase, rows)
    phase.presses = len(rec.presses)
    phase.decisions = sum(p.kind == "decision" for p in rec.presses)
    phase.lat = latencies(rec.presses, rows, tables, end)
    phase.refusals.update(p.answer for p in rec.presses if p.answer)
    if rec.unanswered:
        phase.errors["press never answered"] += rec.unanswered
    for table in tables:
        for m in tg.bot_messages(table.group):
            if "ran out of time" in m.shown_text or "cannot be reached" in m.shown_text:
                phase.errors["a seat went to the computer (time-out or blocked)"] += 1
    phase.group_sends_max = max((most_in_a_minute(rows, t.group.id, SEND_METHODS) for t in tables), default=0)
    phase.group_calls_max = max((most_in_a_minute(rows, t.group.id, SHOWING_METHODS) for t in tables), default=0)
    phase.chat_calls_max_second = most_to_chats_in_a_second(rows)
    return tables


async def sample_database(url: str, seconds: float) -> dict[str, float]:
    """What the bot's PostgreSQL backends do over ``seconds``: the mean number in each of
    ``DB_STATES`` (a backend waiting on a lock or on the log's fsync holds its callers back
    without using CPU, which the server's CPU alone would not show)."""
    import asyncpg

    counts = dict.fromkeys(DB_STATES, 0)
    samples = 0
    query = "SELECT " + ", ".join(f"count(*) FILTER (WHERE {where})" for where in DB_STATES.values()) + (
        " FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
        " AND datname = current_database()")
    conn = await asyncpg.connect(url)
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            row = await conn.fetchrow(query)
            samples += 1
            for name, value in zip(DB_STATES, row, strict=True):
                counts[name] += value
            await asyncio.sleep(DB_SAMPLE_SECONDS)
    finally:
        await conn.close()
    return {name: value / samples for name, value in counts.items()} if samples else {}


async def _profile(options: Options, pid: int, run: str, seconds: float) -> asyncio.subprocess.Process | None:
    """py-spy sampling the bot through the window (without pausing it), collapsed stacks to a file
    named after the run (``FILE-50``, ``FILE-before-50``)."""
    if options.profile is None:
        return None
    out = options.profile.with_name(f"{options.profile.stem}-{run}{options.profile.suffix}")
    return await asyncio.create_subprocess_exec(
        py_spy(), "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "50", "--nonblocking",
        "--threads", "--format", "raw", "--output", str(out),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )


def py_spy() -> str:
    """py-spy from PATH, else the one installed beside this interpreter (a venv not activated)."""
    beside = Path(sys.executable).parent / "py-spy"
    return shutil.which("py-spy") or str(beside)


def _count_calls(phase: Phase, rows: list) -> None:
    phase.calls = sum(r.method != "getUpdates" for r in rows)
    for r in rows:
        if r.method != "getUpdates":
            where = "group" if r.chat_id is not None and r.chat_id < 0 else "DM" if r.chat_id else "-"
            phase.by_method[f"{r.method} ({where})" if where != "-" else r.method] += 1
        if r.status != 200:
            phase.errors[f"API {r.method} -> {r.status} {r.description[:70]}"] += 1


async def _count_logged(phase: Phase, storage: Storage, tables: list[LoadTable]) -> None:
    """Actions logged and hands finished within the measured window, read back from storage."""
    assert phase.window is not None
    start, end = phase.window
    for table in tables:
        for hand in await storage.table_hands(table.table_id):
            phase.actions += sum(start <= a.at < end for a in await storage.hand_actions(hand.id))
            phase.hands += hand.finished_at is not None and start <= hand.finished_at < end


# --- the minimal peer ----------------------------------------------------------------------------


async def run_peer(n: int, seconds: float, options: Options) -> Phase:
    """``minimal_bot.py`` pressed by ``n x people`` people with the same think time."""
    phase = Phase("minimal PTB bot", n, seconds)
    with tempfile.TemporaryDirectory(prefix="xuezhan-peer-") as tmp:
        async with LoadTelegram() as tg:
            bot = BotProcess([sys.executable, str(ROOT / "minimal_bot.py")], bot_environment(tg, Path(tmp) / "x"),
                             Path(tmp))
            await bot.start(tg)
            phase.startup, phase.idle_rss = bot.startup, bot.idle_rss
            try:
                await _press_peer(phase, tg, bot, n * options.people, seconds, options.think)
            finally:
                await bot.stop()
            problems, phase.first_errors = bot.problems()
            phase.errors.update(problems)
    return phase


async def _press_peer(phase: Phase, tg: LoadTelegram, bot: BotProcess, people: int, seconds: float,
                      think: Think) -> None:
    users = [tg.user(f"Q{i}") for i in range(people)]
    for user in users:
        await user.start()
    for user in users:
        await tg.wait_for(lambda u=user: any(m.buttons for m in tg.bot_messages(u)), timeout=SETUP_TIMEOUT,
                          what="the peer's button")
    measuring = False
    answers: list[float] = []
    presses = 0
    stop = asyncio.Event()

    async def person(user: FakeUser) -> None:
        nonlocal presses
        message = next(m for m in tg.bot_messages(user) if m.buttons)
        rng = random.Random(user.id)
        while not stop.is_set():
            await asyncio.sleep(think.delay(rng))
            before = message.edit_count
            at = time.monotonic()
            press = tg.press(user, message, text=None, data="press", check=False)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(press.answered.wait(), 30)
                if measuring:
                    answers.append(time.monotonic() - at)
                    presses += 1
                await tg.wait_for(lambda b=before: message.edit_count > b, timeout=30, what="the edit")

    tasks = [asyncio.create_task(person(u)) for u in users]
    try:
        await asyncio.sleep(WARM_UP)
        first_row = len(tg.rows)
        phase.load = (load_average(), 0.0)
        cpu_before, start = process_cpu(bot.pid), time.monotonic()
        measuring = True
        await asyncio.sleep(seconds)
        measuring = False
        end, cpu_after = time.monotonic(), process_cpu(bot.pid)
        phase.load = (phase.load[0], load_average())
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
    phase.seconds, phase.cpu = end - start, cpu_after - cpu_before
    phase.actions = phase.presses = presses
    phase.lat.answer = answers
    _count_calls(phase, [r for r in tg.rows[first_row:] if r.at < end])


# --- printing ----------------------------------------------------------------------------------


def _ms(values: list[float], q: float) -> str:
    value = percentile(values, q)
    return "   -   " if value != value else f"{1000 * value:7.0f}"


def print_phase(p: Phase) -> None:
    lat = p.lat
    unit = "logged action" if p.name.startswith("xuezhan") else "update"
    name = f"{p.name} ({p.deployment})" if p.deployment else p.name
    print(f"\n== {name}: {p.tables} table(s), {p.seconds:.0f} s measured (set-up {p.setup_seconds:.1f} s), "
          f"load average {p.load[0]:.1f} -> {p.load[1]:.1f}")
    print(f"   start-up to polling {p.startup:.2f} s, idle RSS {p.idle_rss / 2**20:.0f} MiB")
    print(f"   presses {p.presses} (decisions {p.decisions}), {unit}s {p.actions}, "
          f"hands completed {p.hands}, API calls {p.calls} ({p.calls / p.seconds:.1f}/s)")
    print("   calls: " + ", ".join(f"{m} {n}" for m, n in p.by_method.most_common()))
    if p.decisions or not p.name.startswith("xuezhan"):
        print(f"   calls to the people per decision (answers + DM calls): {calls_per_decision(p):.2f}")
    print("   latency ms             p50      p99     n")
    for label, values in (("callback answered", lat.answer), ("DM changed", lat.dm),
                          ("group changed", lat.group), ("last call", lat.last),
                          ("Next hand -> new DM", lat.next_hand)):
        if values or p.name.startswith("xuezhan"):
            print(f"   {label:<20} {_ms(values, 0.5)}  {_ms(values, 0.99)}  {len(values):5d}")
    if lat.no_reaction:
        print(f"   decisions with no visible reaction before the next press: {lat.no_reaction}")
    print(f"   CPU {p.cpu:.2f} s = {p.cpu_per_action_ms:.2f} ms per {unit} (the bot's process, all threads"
          f"{'; the front and every worker' if p.deployment else ''})")
    if p.thread_cpu:
        total = sum(p.thread_cpu.values()) or 1.0
        print("   CPU by thread: " + ", ".join(f"{name} {100 * used / total:.0f} %"
                                              for name, used in p.thread_cpu.most_common()))
    if p.db_cpu:
        print(f"   PostgreSQL server CPU {p.db_cpu:.2f} s = {1000 * p.db_cpu / max(1, p.actions):.2f} ms per {unit}")
    if p.db_states:
        print("   PostgreSQL backends (mean in the window): "
              + ", ".join(f"{name} {value:.2f}" for name, value in p.db_states.items()))
    if any(p.turns):
        taken, unused, passed, lost = p.turns
        print(f"   send turns (every worker, its whole run): {taken} taken, {unused} left unused by their send, "
              f"{passed} passed on to another, {lost} lost ({100 * p.turns_lost:.1f} %)")
    if p.name.startswith("xuezhan"):
        window = "a minute" if p.seconds >= 60 else f"the {p.seconds:.0f} s window"
        print(f"   busiest group: {p.group_sends_max} new messages, {p.group_calls_max} sends + edits in {window}")
        print(f"   busiest second: {p.chat_calls_max_second} calls to chats")
    if p.refusals:
        print("   press answers: " + ", ".join(f"{text!r} x{n}" for text, n in p.refusals.most_common()))
    print("   errors: " + ("none" if not p.errors else ""))
    for what, n in p.errors.most_common(12):
        print(f"     {n:6d}  {what}")
    for line in p.first_errors:
        print(f"   first: {line}")


def calls_per_decision(p: Phase) -> float:
    """Callback answers and calls to private chats per decision a person made (Xuezhan: the
    decisions, swap picks' answers included; the peer: per press, one answer and one edit)."""
    to_people = sum(n for method, n in p.by_method.items()
                    if method.endswith("(DM)") or method == "answerCallbackQuery")
    made = p.decisions if p.name.startswith("xuezhan") else p.presses
    return to_people / made if made else float("nan")


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b and a == a and b == b else "-"


def print_ratios(pairs: list[tuple[Phase, Phase | None]]) -> None:
    print("\n== ratios (Xuezhan / the minimal PTB bot, measured just before it)")
    for mine, peer in pairs:
        if peer is None:
            continue
        print(f"   {mine.tables} tables: CPU per logged action {mine.cpu_per_action_ms:.2f} ms / per update "
              f"{peer.cpu_per_action_ms:.2f} ms = {_ratio(mine.cpu_per_action_ms, peer.cpu_per_action_ms)}; "
              f"start-up {mine.startup:.2f} s / {peer.startup:.2f} s = {_ratio(mine.startup, peer.startup)}; "
              f"callback answer p99 {_ms(mine.lat.answer, 0.99).strip()} ms / "
              f"{_ms(peer.lat.answer, 0.99).strip()} ms")


def to_chats(p: Phase) -> float:
    """Calls to chats a second: what the bot's ~30 a second counts (press answers are not)."""
    return sum(n for method, n in p.by_method.items() if method.endswith(("(DM)", "(group)"))) / p.seconds


def print_scaling(phases: list[Phase]) -> None:
    """One line per deployment at one table count: what scales with workers, and what does not."""
    print(f"\n== workers at {phases[0].tables} tables ({phases[0].seconds:.0f} s each; Telegram allows ~30 calls/s)")
    print("   deployment               actions/s  press->answer p99  press->DM p50 / p99  to chats/s  turns lost  "
          "most in 1 s  bot CPU/s  db CPU/s  db lock waits  load")
    verdicts = []
    for p in phases:
        waits = p.db_states.get("lock waits")
        print(f"   {p.deployment:<24} {p.actions_per_second:9.1f}  {_ms(p.lat.answer, 0.99)} ms"
              f"     {_ms(p.lat.dm, 0.5)} / {_ms(p.lat.dm, 0.99)} ms  {to_chats(p):10.1f}  {100 * p.turns_lost:8.1f} %"
              f"  {p.chat_calls_max_second:11d}  {p.cpu / p.seconds:9.2f}  {p.db_cpu / p.seconds:8.2f}  "
              f"{'-' if waits is None else f'{waits:.2f}':>13}  {p.load[1]:4.1f}")
        verdicts.append(f"{p.deployment}: {ceiling(p)}")
    print("   ceiling: " + "\n            ".join(verdicts))


def ceiling(p: Phase) -> str:
    """What held a run back, from what was measured, with the figures that say so:

    - nothing, when every DM changed within a second of its press (the people set the pace);
    - Telegram's limit, when the calls to chats reach 90 % of it, or would have but for turns the
      bot reserved and then lost (the limit was spent; some of it on nothing);
    - the CPU, when the machine had more runnable work than cores (load average), the bot's and
      the database's processes together used 90 % of them, or one of the bot's processes (one event
      loop: the front or a worker) used 90 % of a core;
    - the database, when its server used most of a core or its backends spent the window waiting
      on locks or the log's fsync (a backend at a time, on average);
    - otherwise none of those: the figures are printed and the bot's own waits are what is left."""
    calls, limit = to_chats(p), TELEGRAM_CALLS_PER_SECOND
    cores = os.cpu_count() or 1
    busy = (p.cpu + p.db_cpu) / p.seconds
    db_waits = p.db_states.get("lock waits", 0.0) + p.db_states.get("fsync waits", 0.0)
    loop = p.busiest / p.seconds
    figures = (f"{calls:.1f} of ~{limit} calls/s, {100 * p.turns_lost:.0f} % of turns lost, CPU {busy:.2f} of {cores} "
               f"cores (load {max(p.load):.1f}, busiest bot process {loop:.2f}), database "
               f"{p.db_cpu / p.seconds:.2f} CPU-s/s, {db_waits:.2f} backends waiting")
    if percentile(p.lat.dm, 0.99) < 1.0:
        return f"none reached (the bot keeps up; the people set the pace): {figures}"
    if calls >= 0.9 * limit:
        return f"Telegram's ~{limit} calls/s: {figures}"
    if p.turns_lost and calls / (1 - p.turns_lost) >= 0.9 * limit:
        return f"Telegram's ~{limit} calls/s, part of it spent on turns lost: {figures}"
    if max(p.load) >= cores or busy >= 0.9 * cores or loop >= 0.9:
        return f"the CPU: {figures}"
    if p.db_cpu / p.seconds >= 0.8 or db_waits >= 1.0:
        return f"the database: {figures}"
    return f"not Telegram's limit, the CPU nor the database (the bot's own waits): {figures}"


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
    parser.add_argument("--tables", type=positive_int, nargs="*", default=[4, 50],
                        help="concurrent tables of each run (default: 4 50; none, with --startups: only the "
                        "start-ups)")
    parser.add_argument("--seconds", type=seconds_arg, default=30, help="measured seconds of each run (default 30)")
    parser.add_argument("--people", type=int, choices=(1, 2), default=1, help="people per table (default 1)")
    parser.add_argument("--think", type=float, default=2.0,
                        help="median seconds a person looks at a decision before pressing (default 2)")
    parser.add_argument("--think-spread", type=float, default=0.8,
                        help="sigma of the log-normal think time (default 0.8: mean 2.75 s, 19%% over 4 s, "
                        "at most 12 s); 0: always --think")
    parser.add_argument("--computer-delay", type=float, default=0.5,
                        help="XUEZHAN_COMPUTER_DELAY, the pause before a computer player acts (default 0.5)")
    parser.add_argument("--warm-up", type=float, default=WARM_UP,
                        help=f"seconds of play before each Xuezhan window (default {WARM_UP:g}): a new process "
                        "draws each tile sprite and text label once, a one-off cost, not a per-action one")
    parser.add_argument("--no-peer", action="store_true", help="measure the Xuezhan runs only")
    parser.add_argument("--workers", type=positive_int, nargs="+", default=None, metavar="N",
                        help="instead of the peer: SQLite with one worker, then PostgreSQL with N workers "
                        "for each N (xuezhan run --workers N, webhook mode)")
    parser.add_argument("--before", type=Path, default=None, metavar="DIR",
                        help="also run the bot from the source tree DIR (e.g. a git worktree of an older "
                        "commit), between the peer and this tree's run, so before and after share the load")
    parser.add_argument("--startups", type=int, default=0, metavar="K",
                        help="then start the peer, --before's bot and this tree's bot K times each, "
                        "interleaved, and print the median start-up of each")
    parser.add_argument("--profile", type=Path, default=None,
                        help="record the bot with py-spy in each window, to FILE-<tables>.<ext> (collapsed stacks)")
    args = parser.parse_args(argv)
    if not args.tables and not args.startups:
        parser.error("give --tables N..., --startups K, or both")
    if (not 0 <= args.think <= 60 or not 0 <= args.think_spread <= 3 or not 0 <= args.computer_delay <= 30
            or not 0 <= args.warm_up <= 600):
        parser.error("--think must be within 0..60, --think-spread 0..3, --computer-delay 0..30 and --warm-up 0..600 "
                     "seconds")
    return args


async def main_async(args: argparse.Namespace) -> int:
    options = Options(args.people, Think(args.think, args.think_spread), args.computer_delay, args.profile,
                      args.warm_up)
    if args.tables:
        print(f"bot load: {args.tables} tables x {args.people} person(s) + computers, {options.think.describe()}, "
              f"computer delay {args.computer_delay}s, on {os.cpu_count()} CPU(s)")
    if args.workers:
        return await compare_workers(args, options)
    pairs: list[tuple[Phase, Phase | None]] = []
    for n in args.tables:
        peer = None
        if not args.no_peer:
            peer = await run_peer(n, args.seconds, options)
            print_phase(peer)
        if args.before is not None:
            before = await run_xuezhan(n, args.seconds, options, tree=args.before)
            print_phase(before)
            pairs.append((before, peer))
        mine = await run_xuezhan(n, args.seconds, options)
        print_phase(mine)
        pairs.append((mine, peer))
    if pairs:
        print_ratios(pairs)
    if args.startups:
        await compare_startups(args.startups, args.before)
    return 0


async def compare_startups(repeats: int, before: Path | None) -> None:
    """Start-up to the first getUpdates, each bot started ``repeats`` times in turn: the medians.

    One start-up swings with what else the machine does at that second (0.35-0.65 s for the peer
    in one session); interleaving the bots and taking medians makes their ratio comparable."""
    bots: list[tuple[str, list[str], dict[str, str]]] = [("minimal PTB bot", [str(ROOT / "minimal_bot.py")], {})]
    if before is not None:
        bots.append((f"xuezhan ({before})", ["-m", "cli.main", "run"], tree_path(before)))
    bots.append(("xuezhan", ["-m", "cli.main", "run"], {}))
    times: dict[str, list[float]] = {name: [] for name, _, _ in bots}
    for _ in range(repeats):
        for name, command, extra in bots:
            with tempfile.TemporaryDirectory(prefix="xuezhan-start-") as tmp:
                async with LoadTelegram() as tg:
                    bot = BotProcess([sys.executable, *command],
                                     bot_environment(tg, Path(tmp) / "start.db", **extra), Path(tmp))
                    await bot.start(tg)
                    times[name].append(bot.startup)
                    await bot.stop()
    peer = statistics.median(times["minimal PTB bot"])
    print(f"\n== start-up to polling, median of {repeats} interleaved starts (load average {load_average():.1f})")
    for name, values in times.items():
        mid = statistics.median(values)
        print(f"   {name:<40} {mid:5.2f} s = {mid / peer:4.2f}x the peer   "
              f"(all: {', '.join(f'{v:.2f}' for v in values)})")


async def compare_workers(args: argparse.Namespace, options: Options) -> int:
    """SQLite with one worker, then PostgreSQL with each number of workers, at each table count."""
    binaries = find_binaries()
    if isinstance(binaries, str):
        print(f"cannot compare workers: {binaries}", file=sys.stderr)
        return 2
    pg = PgServer.start(binaries, durable=True)
    try:
        for n in args.tables:
            phases = [await run_xuezhan(n, args.seconds, options, Deployment("sqlite", 1))]
            print_phase(phases[-1])
            for workers in args.workers:
                phases.append(await run_xuezhan(n, args.seconds, options, Deployment("postgresql", workers), pg))
                print_phase(phases[-1])
            print_scaling(phases)
    finally:
        pg.stop()
    return 0


def run_in_clean_environment(run: Callable[[argparse.Namespace], Awaitable[int]], args: argparse.Namespace) -> int:
    """Runs a benchmark whose bot takes its settings from this run, not from the shell that started it."""
    for name in clean_environment():
        os.environ.pop(name)
    return asyncio.run(run(args))


def main(argv: list[str] | None = None) -> int:
    return run_in_clean_environment(main_async, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
