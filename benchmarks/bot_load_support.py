"""The pieces of ``bot_load.py``: a fake Telegram that scales to hundreds of chats, simulated
people at hosted tables, and the arithmetic that turns the call log into latencies. All of it
runs in the benchmark's process; the bot runs in a process of its own.

Why a subclass of the test fake: ``FakeTelegram.wait_for`` wakes every waiter on every API call
and re-checks its predicate, which is fine for a test with four people but quadratic with
hundreds of tables; and the fake keeps every uploaded PNG in memory, which would swamp the
bot's own memory in the measurement. ``LoadTelegram`` keeps the same Bot API behaviour but
wakes only the waiters of the chat a call touched, keeps image sizes instead of image bytes,
and records each call as a compact row (method, chat, time, status) for the latency analysis.
In webhook mode it posts up to ``WEBHOOK_CONNECTIONS`` updates at once, as Telegram does (its
``max_connections`` defaults to 40), where the test fake posts one at a time.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import dataclasses
import itertools
import json
import math
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from fake_telegram import ChatMessage, FakeChat, FakeTelegram, FakeUser
from fake_telegram import _image_size as image_size
from table_players import choose, game_buttons

from storage import Storage

# Methods that change what a chat shows (the bot's visible reaction to a press).
SHOWING_METHODS = frozenset({"sendMessage", "sendPhoto", "editMessageText", "editMessageCaption",
                             "editMessageMedia", "editMessageReplyMarkup", "deleteMessage"})
WEBHOOK_CONNECTIONS = 40  # Telegram's default max_connections for a webhook
NEXT_DATA = re.compile(r":next$")  # the settlement card's "Next hand" (lb:<table>:next, ah:<table>:<hand>:next)


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    chat_id: int | None
    at: float
    status: int
    query_id: str | None
    description: str = ""  # Telegram's error text, for answers other than 200


class LoadTelegram(FakeTelegram):
    """``FakeTelegram`` with per-chat wake-ups, compact call rows and no image bytes kept."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[Call] = []
        self.polls: list[float] = []  # arrival times of getUpdates requests
        self._chat_changed: dict[int, asyncio.Event] = {}
        self._sizes: dict[str, tuple[int, int]] = {}

    async def _deliver_by_webhook(self) -> None:
        """Post updates to the webhook, up to ``WEBHOOK_CONNECTIONS`` at once; one not taken
        (not 2xx, or no connection) is posted again a little later, as Telegram does."""
        posting: dict[int, asyncio.Task[None]] = {}

        async def post(session: aiohttp.ClientSession, update: dict[str, Any]) -> None:
            if not await self._post_update(session, update):
                await asyncio.sleep(0.1)
            del posting[update["update_id"]]

        connector = aiohttp.TCPConnector(limit=WEBHOOK_CONNECTIONS)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10), connector=connector) as session:
            try:
                while self.webhook_url and not self._closing:
                    waiting = [u for u in self._updates if u["update_id"] not in posting]
                    room = WEBHOOK_CONNECTIONS - len(posting)
                    if not waiting or room <= 0:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._changed.wait(), 0.1)
                        continue
                    for update in waiting[:room]:
                        posting[update["update_id"]] = asyncio.create_task(post(session, update))
            finally:
                for task in list(posting.values()):
                    task.cancel()
                await asyncio.gather(*posting.values(), return_exceptions=True)
        self._webhook_task = None

    def chat_changed(self, chat_id: int) -> asyncio.Event:
        """An event set by the next API call that touches ``chat_id`` (capture it, then check)."""
        return self._chat_changed.setdefault(chat_id, asyncio.Event())

    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info.get("method") == "getUpdates":
            self.polls.append(time.monotonic())  # when it arrives: a long poll is answered much later
        response = await super()._handle(request)
        # Nothing awaits between the base class recording this call and returning its answer,
        # so the newest row is this request's.
        if response.status != 200 and self.rows and isinstance(response.text, str):
            description = json.loads(response.text).get("description", "")
            self.rows[-1] = dataclasses.replace(self.rows[-1], description=description)
        return response

    def _record(self, method: str, params: Mapping[str, Any], status: int) -> None:
        now = time.monotonic()
        chat_id = params.get("chat_id")
        chat_id = chat_id if isinstance(chat_id, int) else None
        query_id = params.get("callback_query_id") if method == "answerCallbackQuery" else None
        self.rows.append(Call(method, chat_id, now, status, query_id))
        if method != "getUpdates":
            self._last_activity = now
        if chat_id is not None:
            event = self._chat_changed.pop(chat_id, None)
            if event is not None:
                event.set()
        self._notify()

    def _store_file(self, data: bytes) -> str:
        file_id = super()._store_file(data)
        self._sizes[file_id] = image_size(data)
        self.files[file_id] = b""  # the id stays valid for reuse; the bytes are not the bot's memory
        return file_id

    def _photo_sizes(self, file_id: str) -> list[dict[str, Any]]:
        width, height = self._sizes.get(file_id, (0, 0))
        return [{"file_id": file_id, "file_unique_id": file_id[-12:], "width": width, "height": height,
                 "file_size": 1}]

    def newest_photo(self, chat_id: int) -> ChatMessage | None:
        """The chat's newest bot photo (a player's hand picture in a DM), scanning from the end."""
        for message in reversed(self._chat_messages.get(chat_id, [])):
            if message.from_bot and not message.deleted and message.photo_file_id is not None:
                return message
        return None

    def next_hand_button(self, chat_id: int, after: int) -> tuple[ChatMessage, str] | None:
        """The settlement card's "Next hand" button in a group, on a message newer than ``after``."""
        for message in reversed(self._chat_messages.get(chat_id, [])):
            if message.message_id <= after:
                return None
            if message.from_bot and not message.deleted:
                for button in message.buttons:
                    if NEXT_DATA.search(button.callback_data or ""):
                        return message, button.callback_data or ""
        return None


@dataclass(frozen=True)
class Think:
    """How long a simulated person looks at a decision before pressing.

    People are not metronomes: most decide in a second or three, some look away for longer. The
    delay is log-normal around ``median`` seconds with ``spread`` its sigma (0: always
    ``median``), at most ``longest`` (below the claim timer, so no seat runs out of time). With
    the benchmark's default (median 2 s, spread 0.8) the mean is 2.75 s and 19 % of decisions
    take longer than 4 s. The three picks of the swap follow each other ``between`` apart."""

    median: float
    spread: float = 0.0
    longest: float = 12.0
    between: tuple[float, float] = (0.2, 0.6)

    def delay(self, rng: random.Random) -> float:
        if self.median <= 0:
            return 0.0
        return min(self.longest, self.median * math.exp(rng.gauss(0.0, self.spread))) if self.spread else self.median

    def describe(self) -> str:
        if not self.spread:
            return f"think {self.median:g} s"
        return (f"think log-normal median {self.median:g} s, sigma {self.spread:g} (mean "
                f"{min(self.longest, self.median * math.exp(self.spread ** 2 / 2)):.2f} s), at most {self.longest:g} s")


@dataclass
class Press:
    """One button press of a simulated person, and what the bot answered."""

    table: int
    user_id: int
    kind: str  # "toggle" (swap-three pick), "decision" (any other game button), "next" (Next hand)
    at: float
    query_id: str = ""
    answer: str | None = None


@dataclass
class LoadTable:
    """One group with its people, as the load generator sees it."""

    index: int
    group: FakeChat
    people: list[FakeUser]
    table_id: int = 0
    lobby: ChatMessage | None = None
    last_card: int = 0  # the newest group message whose Next hand button was already pressed


@dataclass
class Recorder:
    """Presses made while ``measuring`` is on; ``stop`` ends every person's loop."""

    presses: list[Press] = field(default_factory=list)
    measuring: bool = False
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    unanswered: int = 0

    def add(self, press: Press) -> None:
        if self.measuring:
            self.presses.append(press)


async def _press(tg: LoadTelegram, rec: Recorder, table: LoadTable, user: FakeUser, message: ChatMessage,
                 data: str, kind: str) -> None:
    record = Press(table.index, user.id, kind, time.monotonic())
    press = tg.press(user, message, text=None, data=data, check=False)
    record.query_id = press.query_id
    rec.add(record)
    try:
        await asyncio.wait_for(press.answered.wait(), 30)
        record.answer = press.answer_text
    except TimeoutError:
        rec.unanswered += 1


async def _wait_change(tg: LoadTelegram, chats: list[int], rec: Recorder, timeout: float) -> None:
    """Until an API call touches one of ``chats`` (or ``timeout``, or the run stops)."""
    waits = [asyncio.ensure_future(tg.chat_changed(c).wait()) for c in chats]
    waits.append(asyncio.ensure_future(rec.stop.wait()))
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


async def play_person(tg: LoadTelegram, rec: Recorder, table: LoadTable, user: FakeUser, think: float | Think,
                      creator: bool) -> None:
    """Press buttons as ``table_players.HumanPlayer`` does, until ``rec.stop``.

    The person looks at their newest DM photo; if it offers a decision they press it (after
    ``think``: a ``Think``, or fixed seconds) and wait until the DM changes. The table's creator
    also presses "Next hand" on each settlement card, so a table plays hand after hand.
    """
    think = think if isinstance(think, Think) else Think(think)
    rng = random.Random(user.id)  # each person's delays are the same from run to run
    group = table.group.id
    acted_on: tuple[int, int] | None = None  # (message id, edit count) last pressed on
    while not rec.stop.is_set():
        if creator:
            found = tg.next_hand_button(group, table.last_card)
            if found is not None:
                card, data = found
                table.last_card = card.message_id
                await _press(tg, rec, table, user, card, data, "next")
                continue
        message = tg.newest_photo(user.id)
        shown = (message.message_id, message.edit_count) if message is not None else None
        presses = choose(game_buttons(message)) if message is not None and shown != acted_on else []
        if not presses or message is None:
            await _wait_change(tg, [user.id, group] if creator else [user.id], rec, 1.0)
            continue
        delay = think.delay(rng)
        if delay:
            await asyncio.sleep(delay)
            if rec.stop.is_set():
                return
            if tg.newest_photo(user.id) is not message or (message.message_id, message.edit_count) != shown:
                continue  # the DM changed while they looked: they look again, as a person would
        for index, button in enumerate(presses):
            if index and think.median > 0:
                await asyncio.sleep(rng.uniform(*think.between))
            kind = "toggle" if re.search(r":t\d+$", button.callback_data or "") else "decision"
            await _press(tg, rec, table, user, message, button.callback_data or "", kind)
        acted_on = shown


# --- setting tables up ------------------------------------------------------------------------


async def wait_until(tg: LoadTelegram, chat_id: int, predicate: Any, timeout: float, what: str) -> Any:
    """Until ``predicate()`` holds, re-checked whenever an API call touches ``chat_id``."""
    deadline = time.monotonic() + timeout
    while True:
        event = tg.chat_changed(chat_id)
        found = predicate()
        if found:
            return found
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), min(left, 1.0))


_names = itertools.count(1)


async def open_lobby(tg: LoadTelegram, storage: Storage, index: int, people: int, timeout: float) -> LoadTable:
    """A group whose creator opens a lobby (/newgame), with ``people`` persons seated.

    The people have pressed Start in the bot's DM before: they are recorded as reachable the
    way ``/start`` records them (``save_user(..., started_dm=True)``) instead of sending
    /start through Telegram, which would spend the bot's 30-a-second budget on set-up.
    """
    users = [tg.user(f"P{next(_names)}", started=True) for _ in range(people)]
    group = tg.group(f"Load {index}", members=users, admins=users[:1])
    table = LoadTable(index, group, users)
    for user in users:
        await storage.save_user(user.id, user.first_name, started_dm=True)
    await users[0].send(group, "/newgame")
    lobby = await wait_until(
        tg, group.id, lambda: next((m for m in tg.bot_messages(group) if m.buttons), None), timeout, "the lobby"
    )
    start = lobby.button(data=next(b.callback_data for b in lobby.buttons
                                   if (b.callback_data or "").endswith(":start")))
    table.table_id = int((start.callback_data or "").split(":")[1])
    table.lobby = lobby
    for user in users[1:]:
        join = tg.press(user, lobby, text=None, data=f"lb:{table.table_id}:join", check=True)
        await asyncio.wait_for(join.answered.wait(), timeout)
    return table


async def start_table(tg: LoadTelegram, table: LoadTable, timeout: float) -> None:
    """The creator presses Start (and agrees to computer players if the lobby asks); returns
    once every person has their hand by DM."""
    assert table.lobby is not None
    lobby = table.lobby
    tg.press(table.people[0], lobby, text=None, data=f"lb:{table.table_id}:start", check=True)

    def started_or_asked() -> bool:
        return tg.newest_photo(table.people[0].id) is not None or any(
            (b.callback_data or "").endswith(":go") for b in lobby.buttons)

    await wait_until(tg, table.group.id, started_or_asked, timeout, "the game to start or the question")
    go = next((b.callback_data for b in lobby.buttons if (b.callback_data or "").endswith(":go")), None)
    if go is not None and tg.newest_photo(table.people[0].id) is None:
        tg.press(table.people[0], lobby, text=None, data=go, check=True)
    for user in table.people:
        await wait_until(tg, user.id, lambda u=user: tg.newest_photo(u.id), timeout, "the first hand by DM")


async def seat_tables(tg: LoadTelegram, storage: Storage, tables: int, people: int = 1,
                      prefix: str = "W") -> list[LoadTable]:
    """``tables`` groups, each with ``people`` persons (who have started the bot's DM) and computers
    in the other seats, written to the ledger with hand 1 dealt, as a table is after its lobby's
    Start. The bot then takes them up as it does after a restart (``Tables.resume_all``; with
    several workers, one worker per hand): the group gets its table picture and each person their
    hand by DM. Seating 200 tables through /newgame, Join and Start instead spends the bot's
    30-calls-a-second budget for minutes before anyone plays (at 200 tables that set-up timed
    out), and it is not what is measured. Write them before the bot starts."""
    import secrets

    from engine.rules import RuleSet
    from storage.models import PlayerKind, TableStatus

    seated = []
    for index in range(tables):
        users = [tg.user(f"{prefix}{index}-{seat}" if people > 1 else f"{prefix}{index}", started=True)
                 for seat in range(people)]
        group = tg.group(f"Live {index}", members=users, admins=users[:1])
        chat = await storage.get_chat(group.id)
        table = await storage.create_table(group.id, users[0].id)
        for seat in range(4):
            if seat < people:
                await storage.save_user(users[seat].id, users[seat].first_name, started_dm=True)
                player = await storage.player_for_user(group.id, users[seat].id, users[seat].first_name)
            else:
                player = await storage.named_player(group.id, f"AI-{seat}", PlayerKind.COMPUTER)
            await storage.set_seat(table.id, seat, player.id)
        await storage.set_table_status(table.id, TableStatus.PLAYING)
        rules = RuleSet.from_dict(chat.rules).with_changes(base=chat.base_stake)
        await storage.start_hand(table.id, rules.to_dict(), secrets.randbits(62), secrets.randbelow(4))
        seated.append(LoadTable(index, group, users, table_id=table.id))
    return seated


async def wait_for_hands(tg: LoadTelegram, tables: list[LoadTable], timeout: float) -> float:
    """Until every person of ``tables`` has their hand by DM (the bot took the tables up); the seconds
    it took. Raises ``TimeoutError`` naming how many are still waiting."""
    began = time.monotonic()
    people = [user for table in tables for user in table.people]
    while True:
        waiting = sum(tg.newest_photo(user.id) is None for user in people)
        if not waiting:
            return time.monotonic() - began
        if time.monotonic() - began > timeout:
            raise TimeoutError(f"{waiting} of {len(people)} people had no hand by DM after {timeout:.0f} s")
        await asyncio.sleep(0.5)


# --- what the call log says ---------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


@dataclass
class Latencies:
    """Seconds from a press to the bot's reactions, per kind of reaction."""

    answer: list[float] = field(default_factory=list)  # answerCallbackQuery
    dm: list[float] = field(default_factory=list)  # first change to the presser's DM
    group: list[float] = field(default_factory=list)  # first change in the group (coalesced, group-limited)
    last: list[float] = field(default_factory=list)  # last call to the table's chats before the next press
    next_hand: list[float] = field(default_factory=list)  # "Next hand" to the new hand's DM picture
    no_reaction: int = 0


def latencies(presses: list[Press], rows: list[Call], tables: list[LoadTable], until: float) -> Latencies:
    """Attribute every API call to the latest earlier press at the same table and measure."""
    out = Latencies()
    answered = {r.query_id: r.at for r in rows if r.query_id is not None and r.status == 200}
    out.answer = [answered[p.query_id] - p.at for p in presses if p.query_id in answered]
    chat_table: dict[int, int] = {}
    for t in tables:
        chat_table[t.group.id] = t.index
        for user in t.people:
            chat_table[user.id] = t.index
    by_table: dict[int, list[Press]] = {}
    for p in sorted(presses, key=lambda p: p.at):
        by_table.setdefault(p.table, []).append(p)
    calls_by_table: dict[int, list[Call]] = {}
    for r in rows:
        if r.chat_id in chat_table and r.method in SHOWING_METHODS and r.status == 200:
            calls_by_table.setdefault(chat_table[r.chat_id], []).append(r)
    for index, table_presses in by_table.items():
        calls = calls_by_table.get(index, [])
        times = [c.at for c in calls]
        for i, press in enumerate(table_presses):
            end = table_presses[i + 1].at if i + 1 < len(table_presses) else until
            start = bisect.bisect_left(times, press.at)
            after = itertools.islice(calls, start, None)
            if press.kind == "next":
                photo = next((c.at for c in after if c.chat_id == press.user_id and c.method == "sendPhoto"), None)
                if photo is not None:
                    out.next_hand.append(photo - press.at)
                continue
            if press.kind != "decision":
                continue
            dm = group = None
            for c in after:
                if dm is None and c.chat_id == press.user_id:
                    dm = c.at - press.at
                if group is None and c.chat_id is not None and c.chat_id < 0:
                    group = c.at - press.at
                if dm is not None and group is not None:
                    break
            if dm is not None:
                out.dm.append(dm)
            if group is not None:
                out.group.append(group)
            mine = calls[start:bisect.bisect_left(times, end)]
            if mine:
                out.last.append(mine[-1].at - press.at)
            else:
                out.no_reaction += 1
    return out


def most_in_a_minute(rows: list[Call], chat_id: int, methods: frozenset[str]) -> int:
    """The most successful calls of ``methods`` to ``chat_id`` within any 60 seconds."""
    return _most_within([r.at for r in rows if r.chat_id == chat_id and r.status == 200 and r.method in methods], 60)


def most_to_chats_in_a_second(rows: list[Call]) -> int:
    """The most calls to chats (every method with a ``chat_id``: what the bot's ~30 a second
    counts) within any one second: a mean under 30 a second may still hide bursts over it."""
    return _most_within(sorted(r.at for r in rows if r.chat_id is not None), 1)


def _most_within(times: list[float], seconds: float) -> int:
    best, left = 0, 0
    for right, at in enumerate(times):
        while at - times[left] >= seconds:
            left += 1
        best = max(best, right - left + 1)
    return best
