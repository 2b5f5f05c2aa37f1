"""A process that plays hands against a real database until it is killed (``kill -9``).

Run as ``python tests/crash_worker.py DB SEED [TABLES]`` (DB: a SQLite path or a PostgreSQL
URL). It does what the bot does on start-up and in play: resume every unfinished hand by
replaying its log, retry the last logged action once (as a retried Telegram update would),
then play hands on several tables at once from one event loop, book scorekeeping records and
undo some, void a hand now and
then. It prints ``ready`` after its first write so the test knows it is inside the loop.

:func:`check_database` is what the crash test runs after every kill: it replays every
hand's log through the real referee (``engine.game.Game``), which proves the log is a legal
prefix, and compares the ledger with the transfers the referee books for each action.
"""

from __future__ import annotations

import asyncio
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

ROOT = __file__.rsplit("/tests/", 1)[0]
if ROOT not in sys.path:  # run as a script: make the project importable
    sys.path.insert(0, ROOT)

from engine.actions import Action  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.rules import RuleSet  # noqa: E402
from engine.settlement import Transfer  # noqa: E402
from storage import (  # noqa: E402
    HandStatus,
    PlayerKind,
    SeatTransfer,
    Storage,
    open_storage,
)

CHAT = -424242
PLAYERS = 6


RULES_BY_PRESET = ("chengdu", "xueliu", "classic")


class EngineHand:
    """One real hand (``engine.game.Game``) driven by uniformly random legal actions.

    ``apply`` returns the transfers the referee booked for that action, so replaying a log
    reproduces them exactly; ``Game.apply`` refuses any action that is not legal there.
    """

    def __init__(self, rules: dict[str, Any], seed: int, dealer: int) -> None:
        self.game = Game(RuleSet.from_dict(rules), seed, dealer)

    @property
    def seq(self) -> int:
        return len(self.game.actions)

    @property
    def finished(self) -> bool:
        return self.game.over

    def choose(self, rng: random.Random) -> dict[str, Any]:
        seat = rng.choice(self.game.pending_seats())
        return rng.choice(self.game.legal_actions(seat)).to_dict()

    def apply(self, action: dict[str, Any]) -> tuple[list[Transfer], dict[str, Any] | None]:
        booked = len(self.game.transfers)
        self.game.apply(Action.from_dict(action))
        transfers = self.game.transfers[booked:]
        result = None
        if self.game.over:
            result = {
                "chips": self.game.chips(),
                "winners": self.game.winners(),
                "next_dealer": self.game.next_dealer(),
            }
        return transfers, result


def replay(rules: dict[str, Any], seed: int, dealer: int, actions: Sequence[dict[str, Any]]):
    """Rebuild a hand from its log; raises GameError if the log is not a legal prefix."""
    hand = EngineHand(rules, seed, dealer)
    booked = [hand.apply(action)[0] for action in actions]
    return hand, booked


async def _setup(store: Storage, tables: int) -> list[int]:
    """Players and tables, idempotent so that a kill half-way through is simply resumed."""
    players = [await store.player_for_user(CHAT, 9000 + i, f"P{i}") for i in range(PLAYERS - 1)]
    players.append(await store.named_player(CHAT, "电脑", PlayerKind.COMPUTER))
    open_ids = [t.id for t in await store.open_tables(CHAT)]
    while len(open_ids) < tables:
        open_ids.append((await store.create_table(CHAT, None)).id)
    for index, table_id in enumerate(open_ids[:tables]):
        table = await store.get_table(table_id)
        for seat in range(4):
            if table.seats[seat] is None:
                await store.set_seat(table_id, seat, players[(index + seat) % PLAYERS].id)
    return open_ids[:tables]


async def _play_table(store: Storage, table_id: int, rng: random.Random, resume: Any, ready: asyncio.Event):
    while True:
        if resume is not None:
            hand = resume.hand
            logged = [a.action for a in resume.actions]
            model, _ = replay(hand.rules, hand.seed, hand.dealer, logged)
            if logged and rng.random() < 0.5:
                again = await store.append_action(hand.id, len(logged) - 1, logged[-1])
                assert again.duplicate, "a retried action was written twice"
            resume = None
        else:
            rules = RuleSet.preset(rng.choice(RULES_BY_PRESET)).to_dict()
            hand = await store.start_hand(table_id, rules, seed=rng.randrange(2**31), dealer=rng.randrange(4))
            model = EngineHand(hand.rules, hand.seed, hand.dealer)
        while not model.finished:
            if rng.random() < 0.001:
                await store.void_hand(hand.id, "abandoned")
                break
            seq, action = model.seq, model.choose(rng)
            transfers, result = model.apply(action)
            written = await store.append_action(hand.id, seq, action, transfers, result=result)
            assert not written.duplicate
            ready.set()
        if model.finished:
            print("finished", flush=True)  # kill_at_random(until_finished=True) waits for this line


async def _keep_scores(store: Storage, rng: random.Random) -> None:
    """A scorekeeping session in the same chat: records and undos, forever."""
    sessions = await store.open_sessions(CHAT)
    if sessions:
        session = sessions[0]
    else:
        players = await store.players(CHAT)
        session = await store.start_session(CHAT, [p.id for p in players[:4]], None)
    while True:
        if rng.random() < 0.3:
            await store.undo_last_record(session.id)
        else:
            payer, payee = rng.sample(range(4), 2)
            await store.add_record(session.id, {"win": payee}, [SeatTransfer(payer, payee, rng.randint(1, 16), "win")])
        await asyncio.sleep(0.005)


async def work(path: str, seed: int, tables: int) -> None:
    rng = random.Random(seed)
    # NORMAL is enough to survive a killed process in WAL mode (FULL adds power-cut safety),
    # and lets each life of the worker get through more hands before it is killed.
    store = await open_storage(path, synchronous="NORMAL")
    table_ids = await _setup(store, tables)
    unfinished = {u.table.id: u for u in await store.unfinished_hands()}
    ready = asyncio.Event()

    async def announce() -> None:
        await ready.wait()
        print("ready", flush=True)

    await asyncio.gather(
        announce(),
        _keep_scores(store, random.Random(rng.random())),
        *(_play_table(store, t, random.Random(rng.random()), unfinished.get(t), ready) for t in table_ids),
    )


async def check_database(path: str) -> dict[str, int]:
    """Everything the crash test asserts after a kill; returns counts for the report."""
    store = await open_storage(path)
    try:
        problems = await store.verify()
        assert problems == [], problems
        entries = await store.ledger(CHAT)
        by_hand: dict[int, list[Any]] = defaultdict(list)
        by_record: dict[int, list[Any]] = defaultdict(list)
        net: Counter[int] = Counter()
        for entry in entries:
            net[entry.payer_id] -= entry.amount
            net[entry.payee_id] += entry.amount
            if entry.hand_id is not None:
                by_hand[entry.hand_id].append(entry)
            else:
                by_record[entry.record_id].append(entry)
        balances = {line.player_id: line.net for line in await store.balances(CHAT)}
        assert {p: n for p, n in net.items() if n} == {p: n for p, n in balances.items() if n}, "balances != ledger"
        assert sum(balances.values()) == 0

        counts = Counter()
        tables = {t.id for t in await store.open_tables(CHAT)}
        for table_id in tables:
            for hand in await store.table_hands(table_id):
                _check_hand(hand, await store.hand_actions(hand.id), by_hand.get(hand.id, []))
                counts[hand.status.value] += 1
        for session in await store.open_sessions(CHAT):
            records = {r.id: r for r in await store.session_records(session.id)}
            for record in records.values():
                rows = by_record.get(record.id, [])
                if record.undoes is not None:
                    original = by_record.get(record.undoes, [])
                    assert sorted((r.payee_id, r.payer_id, r.amount) for r in original) == sorted(
                        (r.payer_id, r.payee_id, r.amount) for r in rows
                    ), f"undo {record.id} does not mirror record {record.undoes}"
                else:
                    assert len(rows) == 1, f"record {record.id} half-booked"
            counts["records"] += len(records)
        counts["ledger rows"] = len(entries)
        return dict(counts)
    finally:
        await store.close()


def _check_hand(hand: Any, logged: Sequence[Any], rows: Sequence[Any]) -> None:
    assert [a.seq for a in logged] == list(range(len(logged))), f"hand {hand.id}: log is not contiguous"
    model, expected = replay(hand.rules, hand.seed, hand.dealer, [a.action for a in logged])
    seat_of = {player: seat for seat, player in enumerate(hand.seats)}
    booked: dict[int, Counter] = defaultdict(Counter)
    reversal: Counter = Counter()
    for row in rows:
        line = (seat_of[row.payer_id], seat_of[row.payee_id], row.amount)
        if row.hand_seq is None:
            reversal[line] += 1
        else:
            booked[row.hand_seq][line] += 1
    for seq, transfers in enumerate(expected):
        want = Counter((t.payer, t.payee, t.amount) for t in transfers)
        assert booked.get(seq, Counter()) == want, f"hand {hand.id} action {seq}: ledger {booked.get(seq)} != {want}"
    assert set(booked) <= set(range(len(expected))), f"hand {hand.id}: chips booked for actions not in the log"
    if hand.status is not HandStatus.VOIDED:
        net = [0] * 4
        for (payer, payee, amount), count in sum(booked.values(), Counter()).items():
            net[payer] -= amount * count
            net[payee] += amount * count
        assert net == model.game.chips(), f"hand {hand.id}: ledger {net} != referee {model.game.chips()}"
    if hand.status is HandStatus.FINISHED:
        assert model.finished, f"hand {hand.id} finished without its settlement"
        assert hand.result is not None and hand.result["chips"] == model.game.chips()
    elif hand.status is HandStatus.PLAYING:
        assert not model.finished, f"hand {hand.id} settled but still playing"
        assert not reversal
    else:
        restored = Counter({(b, a, n): c for (a, b, n), c in sum(booked.values(), Counter()).items()})
        assert reversal == restored, f"voided hand {hand.id} not fully restored"


def _wait_for_line(worker: subprocess.Popen[bytes], line: bytes, timeout: float, got: bytearray) -> bool:
    """Read the worker's output (straight from its pipe, into ``got``) until ``line`` is one of its
    lines; False if the worker ends or ``timeout`` seconds pass first."""
    fd = worker.stdout.fileno()  # type: ignore[union-attr]
    deadline = time.monotonic() + timeout
    while line not in got.split(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return False
        chunk = os.read(fd, 4096)
        if not chunk:
            return False
        got += chunk
    return True


def _last_words(worker: subprocess.Popen[bytes]) -> bytes:
    """The worker's stderr, once it has ended (killed if need be), for a failure's message."""
    if worker.poll() is None:
        worker.kill()
        worker.wait()
    return worker.stderr.read()[-3000:]  # type: ignore[union-attr]


def kill_at_random(path: str, seed: int, rng: random.Random, linger: float = 0.25,
                   until_finished: bool = False) -> str:
    """Start a worker on ``path`` and SIGKILL it at a random moment; returns where it was hit.

    Half the kills land at a random time after start (possibly during start-up or a
    migration), half at a random time (up to ``linger`` seconds) after the worker reported
    it is writing. With ``until_finished`` such a kill first lets the worker settle a hand: on a
    loaded machine a life of ``linger`` seconds may settle none, whatever ``linger`` is.
    """
    worker = subprocess.Popen(
        [sys.executable, __file__, path, str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        if rng.random() < 0.5:
            time.sleep(rng.uniform(0.0, 0.5))
            moment = "anytime"
        else:
            said = bytearray()
            if not _wait_for_line(worker, b"ready", 20, said):
                raise AssertionError(f"worker never started writing: {bytes(said)!r} {_last_words(worker)!r}")
            if until_finished and not _wait_for_line(worker, b"finished", 120, said):
                raise AssertionError(f"worker settled no hand in 120 s: {_last_words(worker)!r}")
            time.sleep(rng.uniform(0.0, linger))
            moment = "writing"
        if worker.poll() is not None:
            raise AssertionError(f"worker died by itself: {worker.stderr.read().decode()}")  # type: ignore[union-attr]
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        return moment
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        worker.stdout.close()  # type: ignore[union-attr]
        worker.stderr.close()  # type: ignore[union-attr]


async def crash_loop(path: str, kills: int, seed: int = 0, linger: float = 0.25) -> Counter:
    """Kill a worker ``kills`` times, checking the database after every kill."""
    rng = random.Random(seed)
    seen: Counter = Counter()
    for round_number in range(kills):
        # Until a hand has been settled, a kill while writing waits for one (the test needs the
        # final action's transaction hit too): the same kills, at least one settlement, any load.
        seen[kill_at_random(path, rng.randrange(2**31), rng, linger, until_finished=not seen["finished"])] += 1
        counts = await check_database(path)
        seen["kills"] = round_number + 1
        for key, value in counts.items():
            seen[key] = value
    return seen


if __name__ == "__main__":
    db, seed = sys.argv[1], int(sys.argv[2])
    asyncio.run(work(db, seed, int(sys.argv[3]) if len(sys.argv) > 3 else 4))
