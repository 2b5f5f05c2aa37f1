"""Two bot workers share the tables through one PostgreSQL database, and one is killed mid-hand.

Each worker is a real ``xuezhan run`` process in webhook mode. The fake Telegram posts every
update to one URL, a tiny splitter here, which hands each to a worker picked at random (a press
for a table may reach either); a worker that no longer answers is skipped, as a load balancer
does. Partway into the hands one worker is killed with SIGKILL. The other must finish every
table: it takes up hands the dead one was deciding for, fires the deadlines and table watches it
had set, and logs each action once, so every chip is booked once and no hand is settled twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import signal
import socket
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import time as dt_time
from pathlib import Path
from zoneinfo import ZoneInfo

import aiohttp
import pytest
from aiohttp import web
from fake_telegram import ChatMessage, FakeChat, FakeTelegram, FakeUser
from harness import BotFactory, clean_environment
from noon import zone_at_noon
from table_players import HumanPlayer, alone_at_a_table, game_buttons, hand_message, open_lobby, start_game
from test_turn_pings import swap_three

from bot import tallies
from bot.services import services
from bot.table import feature, tables
from engine.actions import Action
from engine.game import Game
from engine.rules import RuleSet
from storage import Hand, PlayerKind, SeatTransfer, Storage, open_storage

TABLES = 3
SETTLED = re.compile(r"^Hand \d+ settled")
TABLE_PICTURE = re.compile(r"^Hand \d+ · ")
KILL_AFTER_ACTIONS = 30  # logged in the hands still in play, before the kill
PING = re.compile(r"seconds (to decide|left)\.$")  # a turn ping, or its reminder
MENTION = re.compile(r"it is your turn: \d+ seconds left")


def free_port() -> int:
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Splitter:
    """The one webhook URL: each update goes to a random worker that still answers."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.first: int | None = None  # a port to try before the others (else a random order)
        self.sent: Counter[int] = Counter()
        self._random = random.Random(18)
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self) -> Splitter:
        app = web.Application()
        app.router.add_post("/hook", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/hook"
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5))
        return self

    async def _forward(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower().startswith("x-telegram")}
        headers["Content-Type"] = "application/json"
        assert self._session is not None
        order = self._random.sample(self.ports, len(self.ports))
        if self.first is not None:
            order.sort(key=lambda port: port != self.first)
        for port in order:
            try:
                async with self._session.post(f"http://127.0.0.1:{port}/hook", data=body, headers=headers) as answer:
                    if answer.status < 500:
                        self.sent[port] += 1
                        return web.Response(status=answer.status)
            except (aiohttp.ClientError, TimeoutError):
                continue
        return web.Response(status=502)

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()


async def start_worker(telegram: FakeTelegram, db: str, hook: str, port: int, log: Path,
                       **settings: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if k not in clean_environment()}
    env.update(TELEGRAM_BOT_TOKEN=telegram.token, XUEZHAN_API_URL=telegram.base_url, XUEZHAN_DB=db,
               XUEZHAN_WEBHOOK_URL=hook, XUEZHAN_WEBHOOK_PORT=str(port), XUEZHAN_WEBHOOK_LISTEN="127.0.0.1",
               XUEZHAN_LANG="en", XUEZHAN_COMPUTER_DELAY="0", XUEZHAN_GROUP_UPDATE_SECONDS="1",
               XUEZHAN_DISCARD_SECONDS="3", XUEZHAN_CLAIM_SECONDS="2")
    env.update(settings)
    with log.open("wb") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cli.main", "run", "--env-file", str(log.parent / "none.env"),
            cwd=log.parent, env=env, stdout=out, stderr=out)


async def listening(port: int, process: asyncio.subprocess.Process, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.returncode is not None:
            raise AssertionError(f"worker ended ({process.returncode}):\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"worker on port {port} never listened:\n{log.read_text()[-3000:]}")


def pings(telegram: FakeTelegram, person: FakeUser, *, deleted: bool = False) -> list[ChatMessage]:
    """The turn pings and reminders in the person's DM (by default those not deleted)."""
    found = telegram.all_bot_messages(person) if deleted else telegram.bot_messages(person)
    return [m for m in found if m.text and PING.search(m.text)]


def mentions(telegram: FakeTelegram, group: FakeChat) -> list[ChatMessage]:
    """The group's mentions of a person whose turn waits, not deleted."""
    return [m for m in telegram.bot_messages(group) if MENTION.search(m.shown_text)]


def dm_pictures(telegram: FakeTelegram, person: FakeUser) -> list[int]:
    """Every hand picture the bot ever sent the person (a hand has one, edited as it goes)."""
    return [m.message_id for m in telegram.all_bot_messages(person) if m.photo_file_id is not None]


def table_pictures(telegram: FakeTelegram, group: FakeChat) -> list[int]:
    """The group's live table messages ("Hand n · Wall w" pictures; not win or settlement cards)."""
    return [m.message_id for m in telegram.bot_messages(group) if TABLE_PICTURE.match(m.caption or "")]


def settlement_cards(telegram: FakeTelegram, group: FakeChat) -> list[ChatMessage]:
    """The group's settlement cards ("Hand n settled"), whether or not their buttons were pressed."""
    return [m for m in telegram.bot_messages(group) if SETTLED.match(m.caption or "")]


async def play(telegram: FakeTelegram, group: FakeChat, player: HumanPlayer | None, until: float,
               cards: int = 1) -> None:
    """A person (or nobody: the deadlines decide) plays until the group has ``cards`` settlement cards."""
    while time.monotonic() < until and len(settlement_cards(telegram, group)) < cards:
        acted = False
        if player is not None:
            try:
                acted = await player.act()
            except AssertionError:  # the press went down with the killed worker: the deadline decides
                acted = True
        if not acted:
            await asyncio.sleep(0.1)


@dataclass
class Workers:
    """Two ``xuezhan run`` webhook workers on one database, behind the splitter."""

    splitter: Splitter
    processes: list[asyncio.subprocess.Process]
    logs: list[Path]
    store: Storage  # the test's own view of the database
    db: str

    def log_tail(self, worker: int) -> str:
        return self.logs[worker].read_text()[-4000:]


@pytest.fixture
async def two_workers(telegram: FakeTelegram, postgres_server, tmp_path: Path) -> AsyncIterator[Workers]:
    async with running_workers(telegram, postgres_server, tmp_path) as workers:
        yield workers


@pytest.fixture
async def patient_workers(telegram: FakeTelegram, postgres_server, tmp_path: Path) -> AsyncIterator[Workers]:
    """Two workers whose people have a minute for each decision: time for a ping, a kill and a
    press before any deadline."""
    async with running_workers(telegram, postgres_server, tmp_path, XUEZHAN_DISCARD_SECONDS="60",
                               XUEZHAN_CLAIM_SECONDS="60") as workers:
        yield workers


@contextlib.asynccontextmanager
async def running_workers(telegram: FakeTelegram, postgres_server, tmp_path: Path,
                          **settings: str) -> AsyncIterator[Workers]:
    db = await postgres_server.create_database()
    ports = [free_port(), free_port()]
    splitter = await Splitter(ports).start()
    logs = [tmp_path / f"worker{i}.log" for i in range(2)]
    processes = [await start_worker(telegram, db, splitter.url, port, log, **settings)
                 for port, log in zip(ports, logs, strict=True)]
    store = await open_storage(db)
    try:
        for port, process, log in zip(ports, processes, logs, strict=True):
            await listening(port, process, log)
        await telegram.wait_for(lambda: telegram.webhook_url == splitter.url, what="the webhook set")
        yield Workers(splitter, processes, logs, store, db)
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        for process in processes:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 30)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await store.close()
        await splitter.stop()
        await postgres_server.drop_database(db)


async def open_tables(telegram: FakeTelegram, count: int) -> tuple[list[FakeChat], list[FakeUser]]:
    """``count`` groups, each with one person who starts a table with three computer players."""
    groups, people = [], []
    for n in range(count):
        person = telegram.user(f"P{n}")
        group = telegram.group(f"Table {n}", members=[person], admins=[person])
        await person.start()
        # Updates of different chats may run at once on different workers: the group's /newgame
        # seats the person only once the DM's /start is handled, as a person's pace ensures.
        await telegram.wait_for_bot_message(person, lambda m: True)
        await start_game(telegram, person, await open_lobby(telegram, person, group))
        groups.append(group)
        people.append(person)
    return groups, people


async def books_match_the_log(store: Storage, hand: Hand) -> None:
    """The hand is over, and its ledger rows hold exactly the chips its log, replayed, books."""
    actions = [Action.from_dict(a.action) for a in await store.hand_actions(hand.id)]
    game = Game.replay(RuleSet.from_dict(hand.rules), hand.seed, hand.dealer, actions)
    assert game.over and hand.status == "finished"
    booked: defaultdict[int, int] = defaultdict(int)
    for row in await store.ledger(hand.chat_id):
        if row.hand_id == hand.id:
            booked[row.payer_id] -= row.amount
            booked[row.payee_id] += row.amount
    assert [booked[player] for player in hand.seats] == game.chips()


async def test_two_workers_share_the_tables_and_one_killed_mid_hand_loses_nothing(
    telegram: FakeTelegram, two_workers: Workers
) -> None:
    store, splitter = two_workers.store, two_workers.splitter
    groups, people = await open_tables(telegram, TABLES)
    players = [HumanPlayer(telegram, p) if n < TABLES - 1 else None for n, p in enumerate(people)]  # one never presses

    async def logged() -> list[int]:
        return [len(u.actions) for u in await store.unfinished_hands()]

    until = time.monotonic() + 240
    games = [asyncio.ensure_future(play(telegram, g, p, until)) for g, p in zip(groups, players, strict=True)]
    counts = await logged()
    while time.monotonic() < until and not (len(counts) >= 2 and sum(counts) >= KILL_AFTER_ACTIONS):
        await asyncio.sleep(0.05)
        counts = await logged()
    assert len(counts) >= 2, "the kill must come while hands are in play"
    assert all(splitter.sent.values()) and len(splitter.sent) == 2, f"both workers served updates: {splitter.sent}"
    victim = random.Random(18).choice([0, 1])
    two_workers.processes[victim].send_signal(signal.SIGKILL)
    await two_workers.processes[victim].wait()

    await asyncio.gather(*games)
    seen = {g.title: [m.shown_text[:120] for m in telegram.bot_messages(g)][-4:] for g in groups}
    assert all(settlement_cards(telegram, g) for g in groups), \
        f"a table never finished: {seen}\n{two_workers.log_tail(1 - victim)}"
    # No hand settled twice: one settlement card per table, and each hand's log, replayed, books
    # exactly the chips its ledger rows hold.
    assert [len(settlement_cards(telegram, g)) for g in groups] == [1] * TABLES
    assert await store.unfinished_hands() == []
    assert await store.verify() == []
    for group in groups:
        (table,) = await store.open_tables(group.id)
        (hand,) = await store.table_hands(table.id)
        await books_match_the_log(store, hand)


async def test_hand_after_hand_at_two_workers_each_taking_up_what_the_other_dealt(
    telegram: FakeTelegram, two_workers: Workers
) -> None:
    (group,), (person,) = await open_tables(telegram, 1)
    player = HumanPlayer(telegram, person)
    until = time.monotonic() + 180
    for number in (1, 2, 3):
        await play(telegram, group, player, until, cards=number)
        cards = settlement_cards(telegram, group)
        assert len(cards) == number, f"hand {number} never finished: {two_workers.log_tail(0)}"
        # Pings and mentions sent by either worker are deleted by whichever closed their decision:
        # none is left once the hand is over.
        await telegram.wait_for(lambda: not pings(telegram, person) and not mentions(telegram, group), timeout=20,
                                what=f"hand {number}'s pings and mentions deleted: {pings(telegram, person)} "
                                     f"{mentions(telegram, group)}")
        assert len(dm_pictures(telegram, person)) == number  # each hand its own DM, never an earlier one's
        assert len(table_pictures(telegram, group)) == number  # and its own table picture, posted once
        if number < 3:
            await (await person.press(cards[-1], "Next hand")).answer()
    store = two_workers.store
    (table,) = await store.open_tables(group.id)
    hands = await store.table_hands(table.id)
    assert [h.number for h in hands] == [1, 2, 3]
    for hand in hands:
        await books_match_the_log(store, hand)
    assert await store.verify() == []
    taken_up = sum(log.read_text().count("taking up hand") for log in two_workers.logs)
    assert taken_up >= 1 and len(two_workers.splitter.sent) == 2  # the hands really moved between workers


async def test_two_workers_ticking_together_post_a_chats_daily_summary_once(
    telegram: FakeTelegram, postgres_server, monkeypatch
) -> None:
    db = await postgres_server.create_database()
    for name in clean_environment():
        monkeypatch.delenv(name)
    monkeypatch.setattr(tallies, "CHECK_SECONDS", 3600)  # the test ticks them itself, at once
    # The chats' days in a zone where it is about noon: the records below (stamped with the real
    # time) fall on the day whose 23:59 summary is due at 00:00, whatever the hour the test runs.
    zone = zone_at_noon()
    late = datetime.combine(datetime.now(ZoneInfo(zone)).date(), dt_time(23, 58), ZoneInfo(zone))
    monkeypatch.setattr(tallies, "now", lambda: late)  # before the 23:59 summary
    factory = BotFactory(telegram, db)
    try:
        workers = [await factory(XUEZHAN_LANG="en"), await factory(XUEZHAN_LANG="en")]
        groups = [telegram.group(f"Group {n}") for n in range(4)]
        storage = services(workers[0]).storage
        for group in groups:  # each played today: a scorekept record moves chips
            await storage.update_chat(group.id, timezone=zone)
            players = [await storage.named_player(group.id, name, PlayerKind.GUEST) for name in ("A", "B")]
            session = await storage.start_session(group.id, [p.id for p in players], None)
            await storage.add_record(session.id, {"kind": "test"}, [SeatTransfer(0, 1, 3, "test")])
        late += timedelta(minutes=2)
        monkeypatch.setattr(tallies, "now", lambda: late)
        for _ in range(3):
            await asyncio.gather(*(tallies.post_due_summaries(app) for app in workers for _ in range(2)))
        posted = [[m for m in telegram.bot_messages(g) if (m.caption or "").startswith("Tally of the day")]
                  for g in groups]
        assert [len(p) for p in posted] == [1] * len(groups)
    finally:
        await factory.close()
        await postgres_server.drop_database(db)


async def test_a_settlement_card_its_worker_never_posted_is_posted_once_by_the_others(
    telegram: FakeTelegram, postgres_server, monkeypatch
) -> None:
    db = await postgres_server.create_database()
    for name in clean_environment():
        monkeypatch.delenv(name)
    monkeypatch.setattr(feature, "OWED_TICK_SECONDS", 0.3)
    monkeypatch.setattr(tables, "OWED_FIRST_RETRY_SECONDS", 1.0)
    fast = {"XUEZHAN_LANG": "en", "XUEZHAN_COMPUTER_DELAY": "0", "XUEZHAN_DISCARD_SECONDS": "1",
            "XUEZHAN_CLAIM_SECONDS": "1"}
    factory = BotFactory(telegram, db)
    try:
        first = await factory(**fast)
        # No picture reaches Telegram: the worker that finishes the hand never posts its card, as
        # one killed right after the final action would not.
        telegram.fail_next("sendPhoto", 100_000, status=400, description="Bad Request: the worker is gone")
        _, group = await alone_at_a_table(telegram)
        storage = services(first).storage
        for _ in range(600):
            if [p.key for p in await storage.owed_posts()]:
                break
            await asyncio.sleep(0.1)
        assert [p.key.split(":")[0] for p in await storage.owed_posts()] == ["settlement"]
        await factory.stop(first)
        telegram.clear_faults()

        others = [await factory(**fast), await factory(**fast)]  # both tick at once, every 0.3 s
        await telegram.wait_for(lambda: settlement_cards(telegram, group), timeout=20, what="the owed card")
        await asyncio.sleep(2)
        assert len(settlement_cards(telegram, group)) == 1
        assert await services(others[0]).storage.owed_posts() == []
    finally:
        await factory.close()
        await postgres_server.drop_database(db)


async def test_a_worker_restarted_while_the_other_serves_announces_nothing_and_the_hand_goes_on(
    telegram: FakeTelegram, two_workers: Workers, tmp_path: Path
) -> None:
    """A rolling restart: one worker stops (SIGTERM) mid-hand and starts again while the other
    serves. The bot never left the group, so no "The bot is back" and no second table picture: the
    hand goes on where it was, taken up by whichever worker gets its next step."""
    store = two_workers.store
    (group,), (person,) = await open_tables(telegram, 1)
    player = HumanPlayer(telegram, person)
    until = time.monotonic() + 180

    async def logged() -> int:
        return sum(len(u.actions) for u in await store.unfinished_hands())

    while await logged() < 8:
        assert time.monotonic() < until, "the hand never got going"
        if not await player.act():
            await asyncio.sleep(0.1)
    pictures = table_pictures(telegram, group)
    restarted, port = two_workers.processes[0], two_workers.splitter.ports[0]
    restarted.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(restarted.wait(), 60) == 0
    log = tmp_path / "worker0-again.log"
    two_workers.processes[0] = await start_worker(telegram, two_workers.db, two_workers.splitter.url, port, log)
    two_workers.logs[0] = log
    await listening(port, two_workers.processes[0], log)
    await play(telegram, group, player, until)

    texts = [m.shown_text for m in telegram.bot_messages(group)]
    assert not any("The bot is back" in text for text in texts), texts
    assert len(settlement_cards(telegram, group)) == 1, f"the hand never finished: {two_workers.log_tail(1)}"
    assert table_pictures(telegram, group) == pictures  # the same table message, edited: none posted again
    (table,) = await store.open_tables(group.id)
    (hand,) = await store.table_hands(table.id)
    await books_match_the_log(store, hand)
    assert await store.verify() == []


async def test_the_worker_showing_a_decision_is_killed_and_the_other_edits_that_dm_and_deletes_its_ping(
    telegram: FakeTelegram, patient_workers: Workers
) -> None:
    """The hand's DM and its ping are the database's, not the memory of the worker that sent them.
    One worker deals and shows the swap (every update goes to it), the ping comes, and that worker
    is killed. The person's picks then reach the other worker: it takes the table up, edits the
    very DM message on screen (no second hand picture) and deletes the ping it never sent. Then
    the next decision is pinged once. Decisions have a minute: no deadline decides anything here."""
    workers = patient_workers
    workers.splitter.first = workers.splitter.ports[0]
    _, (person,) = await open_tables(telegram, 1)
    ping = await telegram.wait_for(lambda: next(iter(pings(telegram, person)), None), timeout=30,
                                   what="the swap's ping")
    (hand,) = [u.hand for u in await workers.store.unfinished_hands()]
    for _ in range(100):  # sent, then stored: a kill between the two would lose its message id
        if any(m.kind == "ping" for m in await workers.store.seat_messages(hand.id)):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the ping's message id never reached the database")
    shown = hand_message(telegram, person)
    assert shown is not None and game_buttons(shown) and dm_pictures(telegram, person) == [shown.message_id]
    workers.processes[0].send_signal(signal.SIGKILL)
    await workers.processes[0].wait()
    served = workers.splitter.sent[workers.splitter.ports[1]]

    await swap_three(telegram, person)
    await telegram.wait_for(lambda: ping.deleted, timeout=30, what=f"the ping deleted: {workers.log_tail(1)}")
    assert workers.splitter.sent[workers.splitter.ports[1]] > served  # the picks went to the other worker
    assert dm_pictures(telegram, person) == [shown.message_id]  # that DM edited, none sent again
    void = await telegram.wait_for(lambda: [m for m in pings(telegram, person) if "void" in m.text], timeout=30,
                                   what="the void decision's ping")
    assert pings(telegram, person) == void and len(void) == 1
    assert hand_message(telegram, person) is shown
    assert [m.message_id for m in pings(telegram, person, deleted=True)] == [ping.message_id, void[0].message_id]


async def test_a_hand_whose_table_picture_was_never_posted_gets_one_from_the_worker_taking_it_up(
    telegram: FakeTelegram, postgres_server, monkeypatch
) -> None:
    """The hand's table picture is the hand's, kept with its seat states (the id in ``tables`` is an
    earlier hand's, or none, until it is posted). The worker that dealt fails to post the picture
    (as one that died right after dealing would), then stops and hands the table over: the other
    posts the hand's picture, once, and edits the DM already sent. Before, it took the table's id
    (none here, or the previous hand's picture), and the group never saw this hand's table."""
    db = await postgres_server.create_database()
    for name in clean_environment():
        monkeypatch.delenv(name)
    slow = {"XUEZHAN_LANG": "en", "XUEZHAN_COMPUTER_DELAY": "0", "XUEZHAN_DISCARD_SECONDS": "60",
            "XUEZHAN_CLAIM_SECONDS": "60", "XUEZHAN_GROUP_UPDATE_SECONDS": "1"}
    factory = BotFactory(telegram, db)
    try:
        first = await factory(**slow)
        telegram.fail_next("sendPhoto", 2, status=400, description="Bad Request: the worker is gone")
        alice, group = await alone_at_a_table(telegram)
        storage = services(first).storage
        for _ in range(100):
            if [m for m in telegram.all_bot_messages(group) if "has started" in (m.text or "")] and \
                    await storage.unfinished_hands():
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(2)  # the dealer's first two pictures are refused (its DM goes out with a later change)
        assert table_pictures(telegram, group) == []
        telegram.clear_faults()
        await factory(**slow)  # the other worker
        await factory.stop(first)  # hands its table over
        await telegram.wait_for(lambda: hand_message(telegram, alice), timeout=20, what="the DM")
        await telegram.wait_for(lambda: table_pictures(telegram, group), timeout=20, what="the hand's table picture")
        await asyncio.sleep(2)
        assert len(table_pictures(telegram, group)) == 1 and len(dm_pictures(telegram, alice)) == 1
    finally:
        await factory.close()
        await postgres_server.drop_database(db)

