"""Forum groups (topics on): a table, a scorekeeping session and the daily summary post in the topic
the group plays in, also after a restart; what is asked in General is answered in General."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from fake_telegram import FakeChat, FakeTelegram, FakeUser
from harness import BotFactory
from table_players import HumanPlayer, game_buttons, hand_message, play_until_over, start_game

from bot import tallies
from bot.ratelimit import TelegramRateLimiter
from bot.services import services

FAST = {"XUEZHAN_COMPUTER_DELAY": "0", "XUEZHAN_GROUP_UPDATE_SECONDS": "3", "XUEZHAN_LANG": "en"}


def forum(telegram: FakeTelegram, *members: FakeUser) -> tuple[FakeChat, int, int]:
    """A forum supergroup (the first member its admin) with a chat topic and a mahjong topic."""
    group = telegram.group("Club", members=members, admins=members[:1], forum=True)
    return group, group.new_topic("Chat", members[0]), group.new_topic("麻将", members[0])


def topics_of(telegram: FakeTelegram, group: FakeChat) -> set[int | None]:
    return {m.thread_id for m in telegram.bot_messages(group)}


async def test_a_table_opened_in_a_topic_posts_there_also_after_a_restart(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group, _, mahjong = forum(telegram, alice, bob)
    await alice.start()
    await bob.start()
    await alice.send(group, "/newgame", topic=mahjong)
    lobby = await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))
    assert lobby.thread_id == mahjong
    await (await alice.press(lobby, "Settings")).answer()  # the rules menu opens below the lobby
    menu = await telegram.wait_for_bot_message(group, lambda m: bool(m.buttons), after=lobby.message_id)
    assert menu.thread_id == mahjong
    await (await bob.press(lobby, "Join")).answer()
    await telegram.wait_for(lambda: "Bob" in lobby.text, what="Bob in the lobby")
    await start_game(telegram, alice, lobby)
    players = [HumanPlayer(telegram, alice), HumanPlayer(telegram, bob)]
    made = 0
    while made < 3:  # into the hand: the swaps and a void
        await telegram.wait_for(lambda: any(hand_message(telegram, u) and game_buttons(hand_message(telegram, u))
                                            for u in (alice, bob)), timeout=30, what="a decision")
        acted = [await player.act() for player in players]
        made += sum(acted)
        if not any(acted):
            await asyncio.sleep(0.05)
    await start_bot.stop(app)

    app = await start_bot(**FAST)
    resumed = await telegram.wait_for_bot_message(group, lambda m: "continues" in (m.text or ""), timeout=10)
    assert resumed.thread_id == mahjong
    card = await play_until_over(telegram, group, players)
    assert card.thread_id == mahjong
    await (await alice.press(card, data=next(b.callback_data for b in card.buttons
                                              if (b.callback_data or "").endswith(":end")))).answer()
    over = await telegram.wait_for_bot_message(group, lambda m: "is over after" in (m.text or ""))
    assert over.thread_id == mahjong
    assert topics_of(telegram, group) == {mahjong}  # the lobby, pictures, cards, mentions, the end

    table = await services(app).storage.get_table(int(re.search(r"#(\d+)", lobby.text)[1]))
    assert table.topic_id == mahjong
    # Asked in General, answered in General.
    await alice.send(group, "/help")
    await telegram.wait_for(lambda: None in topics_of(telegram, group), what="the answer in General")
    assert telegram.unanswered_presses() == []


async def keep_a_kong_and_end(telegram: FakeTelegram, alice: FakeUser, group: FakeChat, topic: int) -> None:
    """A /keep session opened in ``topic``: one concealed kong, then ended; its posts stay there."""
    await alice.send(group, "/keep me 老王 Carol Dave", topic=topic)
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))
    assert panel.thread_id == topic
    for text in ("Kong", "老王", "concealed", "End", "End it"):
        before = panel.edit_count
        await (await alice.press(panel, text)).answer()
        await telegram.wait_for(lambda b=before: panel.edit_count > b, what=f"the panel after {text!r}")
    chart = await telegram.wait_for_bot_message(group, lambda m: m.photo is not None)
    assert chart.thread_id == topic


async def test_scorekeeping_and_the_daily_summary_post_in_the_topic_the_group_plays_in(
    telegram: FakeTelegram, start_bot: BotFactory, monkeypatch
) -> None:
    clock = datetime.now(UTC)
    monkeypatch.setattr(tallies, "now", lambda: clock)
    app = await start_bot(rate_limiter=TelegramRateLimiter(group_max_rate=1000, backoff=0.01), XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    (group, chat, mahjong), (other, _, gone) = forum(telegram, alice), forum(telegram, alice)
    await keep_a_kong_and_end(telegram, alice, group, mahjong)
    await keep_a_kong_and_end(telegram, alice, other, gone)

    # The day's summary follows the play into the topic; where an admin deleted that topic since,
    # it goes to the main chat.
    storage = services(app).storage
    assert (await storage.get_chat(group.id)).summary_topic_id == mahjong
    del other.topics[gone]
    zone = ZoneInfo((await storage.get_chat(group.id)).timezone)
    (day,) = {row.at.astimezone(zone).date() for row in await storage.ledger(group.id)}
    clock = datetime.combine(day, time(23, 59), zone) + timedelta(minutes=1)
    assert await tallies.post_due_summaries(app) == 2
    for chat_, topic in ((group, mahjong), (other, None)):
        summary = telegram.bot_messages(chat_)[-1]
        assert (summary.caption or "").startswith("Tally of the day") and summary.thread_id == topic

    # An admin sets the summary elsewhere.
    sent = await alice.send(group, "/summary 22:00", topic=chat)
    answer = await telegram.wait_for_bot_message(group, lambda m: True, after=sent.message_id)
    assert answer.thread_id == chat
    assert (await storage.get_chat(group.id)).summary_topic_id == chat


async def test_a_table_whose_topic_is_deleted_goes_on_in_the_main_chat(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """An admin deletes the topic mid-hand: every post there is refused, and without the settlement
    card nobody could press Next hand or End."""
    await start_bot(**FAST)
    alice = telegram.user("Alice")
    group, _, mahjong = forum(telegram, alice)
    await alice.start()
    await alice.send(group, "/newgame", topic=mahjong)
    lobby = await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))
    await start_game(telegram, alice, lobby)
    await telegram.wait_for_bot_message(group, lambda m: m.photo is not None)
    del group.topics[mahjong]
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])
    assert card.thread_id is None and card.caption.startswith("Hand 1 settled")


async def test_a_session_whose_topic_is_deleted_shows_its_panel_in_the_main_chat(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(rate_limiter=TelegramRateLimiter(group_max_rate=1000, backoff=0.01), XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group, _, mahjong = forum(telegram, alice)
    await alice.send(group, "/keep me 老王 Carol Dave", topic=mahjong)
    await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))
    del group.topics[mahjong]
    sent = await alice.send(group, "/keep")  # in General: the open session's panel again, where it can be
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"),
                                                after=sent.message_id)
    assert panel.thread_id is None and panel.button("Kong")
