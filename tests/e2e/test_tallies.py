"""Balances and tallies end to end: the daily summary at simulated times, and figures vs the ledger."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from fake_telegram import ChatMessage, FakeChat, FakeTelegram, FakeUser
from harness import BotFactory
from noon import zone_at_noon
from table_players import HumanPlayer, play_until_over, start_game

from bot import tallies
from bot.ratelimit import TelegramRateLimiter
from bot.services import services
from bot.when import zone_label
from storage.models import PlayerKind

SHANGHAI, BERLIN = ZoneInfo("Asia/Shanghai"), ZoneInfo("Europe/Berlin")
LINE = re.compile(r"^(?:• |\d+\. )(.+): ([+-]\d+)$")


def quick_limiter() -> TelegramRateLimiter:
    """Telegram's limits, but a busy test group may get more than 20 messages a minute."""
    return TelegramRateLimiter(group_max_rate=1000, backoff=0.01)


class Clock:
    """A settable "now" for the bot's tallies."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def say(telegram: FakeTelegram, user: FakeUser, chat: FakeChat, text: str) -> ChatMessage:
    """Type ``text`` and return the bot's answer."""
    sent = await user.send(chat, text)
    return await telegram.wait_for_bot_message(chat, lambda m: True, after=sent.message_id)


def figures(text: str) -> dict[str, int]:
    """``name: +n`` lines of a tally, a caption or a leaderboard section."""
    out = {}
    for line in text.splitlines():
        match = LINE.match(line.strip())
        if match:
            out[match[1]] = int(match[2])
    return out


def computer_figures(text: str) -> dict[str, int]:
    """The computer players' own line: ``Computer players (not ranked): 电脑1 +3, 电脑2 -1``."""
    for line in text.splitlines():
        if line.startswith("Computer players (not ranked): "):
            pairs = (part.rsplit(" ", 1) for part in line.partition(": ")[2].split(", "))
            return {name: int(chips) for name, chips in pairs}
    return {}


def nonzero(net: dict[str, int]) -> dict[str, int]:
    return {name: chips for name, chips in net.items() if chips}


async def keep_four(telegram: FakeTelegram, user: FakeUser, group: FakeChat, names: str) -> ChatMessage:
    await user.send(group, f"/keep {names}")
    return await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))


async def tap(telegram: FakeTelegram, user: FakeUser, panel: ChatMessage, *texts: str) -> None:
    for text in texts:
        before = panel.edit_count
        await (await user.press(panel, text)).answer()
        await telegram.wait_for(lambda b=before: panel.edit_count > b, what=f"the panel after {text!r}")


def summaries(telegram: FakeTelegram, chat: FakeChat) -> list[ChatMessage]:
    return [m for m in telegram.bot_messages(chat) if (m.caption or "").startswith("Tally of the day")]


@pytest.mark.both_backends
async def test_the_daily_summary_fires_at_each_chats_local_time_and_once_after_a_restart(
    telegram: FakeTelegram, start_bot: BotFactory, monkeypatch
) -> None:
    # Two days ago, no summary is due: neither chat moved chips on its last summary's day.
    clock = Clock(datetime.now(UTC) - timedelta(days=2))
    monkeypatch.setattr(tallies, "now", clock)
    monkeypatch.setattr(tallies, "CHECK_SECONDS", 0.1)
    app = await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    chengdu = telegram.group("Chengdu", members=[alice], admins=[alice])
    berlin = telegram.group("Berlin", members=[alice, bob], admins=[bob])
    await say(telegram, alice, chengdu, "/lang en")
    await say(telegram, bob, berlin, "/lang en")

    # Settings, with clear answers to bad input and to non-admins.
    assert "not a time" in (await say(telegram, alice, chengdu, "/summary 25:61")).text
    assert "21:00" in (await say(telegram, alice, chengdu, "/summary 21:00")).text
    assert "Only group admins" in (await say(telegram, alice, berlin, "/timezone Europe/Berlin")).text
    assert "not a time zone" in (await say(telegram, bob, berlin, "/timezone Mars/Olympus")).text
    assert "Europe/Berlin" in (await say(telegram, bob, berlin, "/timezone Europe/Berlin")).text
    assert "23:59 (Europe/Berlin)" in (await say(telegram, alice, berlin, "/summary")).text

    # Both groups play today (a concealed kong each).
    for user, group in ((alice, chengdu), (bob, berlin)):
        panel = await keep_four(telegram, user, group, "me 老王 Carol Dave")
        await tap(telegram, user, panel, "Kong", "老王", "concealed")

    # Each chat's summary instant on the local day its chips moved. The ledger keeps real times, so
    # that day is read from the rows: a day taken from the clock before them ends between the two
    # when the test runs across a local midnight (16:00 UTC for Shanghai).
    storage = services(app).storage

    async def played_on(group: FakeChat, zone: ZoneInfo) -> date:
        (day,) = {row.at.astimezone(zone).date() for row in await storage.ledger(group.id)}
        return day

    shanghai_at = datetime.combine(await played_on(chengdu, SHANGHAI), time(21, 0), SHANGHAI)
    berlin_at = datetime.combine(await played_on(berlin, BERLIN), time(23, 59), BERLIN)
    (first_at, first), (second_at, second) = sorted([(shanghai_at, chengdu), (berlin_at, berlin)],
                                                    key=lambda pair: pair[0])
    clock.now = first_at - timedelta(minutes=1)
    await asyncio.sleep(0.5)
    assert summaries(telegram, chengdu) == summaries(telegram, berlin) == []

    clock.now = first_at + timedelta(seconds=30)
    await telegram.wait_for(lambda: summaries(telegram, first), what="the first chat's summary")
    posted = summaries(telegram, first)[0]
    assert posted.photo is not None
    assert figures(posted.caption) == {"老王": 6, "Alice" if first is chengdu else "Bob": -2, "Carol": -2,
                                       "Dave": -2}
    await asyncio.sleep(0.5)
    assert summaries(telegram, second) == [] and len(summaries(telegram, first)) == 1

    # The bot is down when the second chat's time passes; it posts that summary when it is back.
    await start_bot.stop(app)
    clock.now = second_at + timedelta(hours=1)
    await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
    await telegram.wait_for(lambda: summaries(telegram, second), what="the missed summary")
    await asyncio.sleep(0.5)
    assert len(summaries(telegram, first)) == len(summaries(telegram, second)) == 1


@pytest.mark.both_backends
async def test_tally_balances_and_leaderboard_equal_sums_of_the_ledger(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en", XUEZHAN_COMPUTER_DELAY="0",
                          XUEZHAN_GROUP_UPDATE_SECONDS="3")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await say(telegram, alice, group, "/lang en")
    # The chat's day in a zone where it is about noon, so that no local midnight (nor month's end)
    # falls between the chips booked below and /today or /top's "This month".
    zone = zone_at_noon()
    assert zone_label(zone) in (await say(telegram, alice, group, f"/timezone {zone}")).text
    assert "No chips have moved" in (await say(telegram, alice, group, "/today")).text

    # A hosted hand: Alice and three computer players.
    await alice.start()
    lobby = await say(telegram, alice, group, "/newgame")
    await start_game(telegram, alice, lobby)
    await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])

    # Scorekept hands in the same chat: a concealed kong and a self-drawn 平胡 with a root.
    await alice.send(group, "/keep me Carol Dave")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "I'm in" in str(m.buttons))
    await (await bob.press(lobby, "I'm in")).answer()
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))
    await tap(telegram, alice, panel, "Kong", "Carol", "concealed")
    await tap(telegram, alice, panel, "Self-draw", "Dave", "Next", "plain", "1")

    # Independent sums, straight from the ledger rows.
    storage = services(app).storage
    expected: dict[str, int] = defaultdict(int)
    for row in await storage.ledger(group.id):
        expected[row.payer_name] -= row.amount
        expected[row.payee_name] += row.amount
    assert sum(expected.values()) == 0
    assert expected["Dave"] == 3 * 3 - 2 and expected["Bob"] == -2 - 3  # 平胡 ×2 (a root) + 加底 from each

    mine = await say(telegram, alice, group, "/balance")
    assert mine.text == f"Alice: {expected['Alice']:+d} chips in this chat."
    carol = await say(telegram, bob, group, "/balance Carol")
    assert carol.text == f"Carol: {expected['Carol']:+d} chips in this chat."
    asked = await alice.send(group, "/balance", reply_to=await bob.send(group, "hi"))
    about_bob = await telegram.wait_for_bot_message(group, lambda m: True, after=asked.message_id)
    assert about_bob.text == f"Bob: {expected['Bob']:+d} chips in this chat."

    # Computer players are ranked apart from people, on a line of their own.
    kinds = {p.name: p.kind for p in await storage.players(group.id)}
    people = {name: chips for name, chips in expected.items() if kinds[name] is not PlayerKind.COMPUTER}
    computers = {name: chips for name, chips in expected.items() if kinds[name] is PlayerKind.COMPUTER}
    # A computer that neither paid nor was paid has no ledger row, so no figure: a hand can end
    # without touching one seat, and the computers' line may hold fewer than three.
    top = (await say(telegram, alice, group, "/top")).text
    all_time, _, this_month = top.partition("This month")
    assert nonzero(figures(all_time)) == nonzero(people) == nonzero(figures(this_month))
    assert computer_figures(all_time) == computers == computer_figures(this_month)
    ranked = [LINE.match(line)[1] for line in all_time.splitlines() if LINE.match(line)]
    assert [expected[name] for name in ranked] == sorted(people.values(), reverse=True)

    today = await say(telegram, alice, group, "/today")
    assert today.photo is not None and nonzero(figures(today.caption)) == nonzero(people)
    assert computer_figures(today.caption) == computers

    # /stats: Alice's own figures here and over every chat, from the same ledger.
    stats = (await say(telegram, alice, group, "/stats")).text
    here, _, everywhere = stats.partition("Alice in every chat:")
    assert here.startswith("Alice in this chat:") and everywhere
    assert f"net {expected['Alice']:+d}" in here and f"net {expected['Alice']:+d}" in everywhere
    assert "Hands 2 " in here  # the hosted hand and the scorekept one (a kong and a self-draw)
    in_dm = (await say(telegram, alice, alice, "/stats")).text  # privately: every chat only
    assert in_dm.startswith("Alice in every chat:") and f"net {expected['Alice']:+d}" in in_dm

    history = (await say(telegram, alice, group, "/history")).text
    assert "hosted hand #" in history and "Self-draw: Dave" in history
    assert "No player called" in (await say(telegram, alice, group, "/balance Nobody")).text
    assert telegram.unanswered_presses() == []


async def test_an_admin_sets_the_summary_time_and_zone_as_people_type_them(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    await say(telegram, alice, group, "/lang en")
    assert "posted at 22:30 (Asia/Shanghai)" in (await say(telegram, alice, group, "/summary 22：30")).text
    assert "posted at 21:30" in (await say(telegram, alice, group, "/summary 21点半")).text
    assert "Time zone set to UTC+8" in (await say(telegram, alice, group, "/timezone UTC+8")).text
    assert "21:30 (UTC+8)" in (await say(telegram, alice, group, "/summary")).text
    assert "Time zone set to Europe/Berlin" in (await say(telegram, alice, group, "/timezone europe/berlin")).text
    assert "Time zone set to Asia/Shanghai" in (await say(telegram, alice, group, "/timezone 北京时间")).text
    refused = await say(telegram, alice, group, "/timezone UTC+5:30")
    assert "is not a time zone I know" in refused.text and "UTC+8" in refused.text
    chat = await services(app).storage.get_chat(group.id)
    assert (chat.timezone, chat.summary_time) == ("Asia/Shanghai", "21:30")


async def test_a_group_that_refuses_pictures_gets_its_tallies_in_words(
    telegram: FakeTelegram, start_bot: BotFactory, monkeypatch
) -> None:
    """Its members may not send photos, nor may the bot: /today and the daily summary were refused
    and the group got nothing."""
    clock = Clock(datetime.now(UTC))
    monkeypatch.setattr(tallies, "now", clock)
    app = await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = telegram.group("No photos", members=[alice], admins=[alice])
    group.photos_allowed = False
    await say(telegram, alice, group, "/lang en")
    panel = await keep_four(telegram, alice, group, "me 老王 Carol Dave")
    await tap(telegram, alice, panel, "Kong", "老王", "concealed")

    today = await say(telegram, alice, group, "/today")
    assert today.photo is None and today.text.startswith("Today's tally") and figures(today.text)["老王"] == 6
    storage = services(app).storage
    zone = ZoneInfo((await storage.get_chat(group.id)).timezone)
    (day,) = {row.at.astimezone(zone).date() for row in await storage.ledger(group.id)}
    clock.now = datetime.combine(day, time(23, 59), zone) + timedelta(minutes=1)
    assert await tallies.post_due_summaries(app) == 1
    summary = telegram.bot_messages(group)[-1]
    assert summary.text.startswith("Tally of the day") and figures(summary.text)["老王"] == 6
