"""A press in a busy group is answered at once, and the lobby catches up with the table.

Telegram lets a bot send a group 20 messages a minute, and a group that asks a lot (here forty
/rules at once) has its replies queued for a minute. The answer to a press is not a message and
must not wait in that queue: Telegram stops showing an answer that comes seconds late. Before
this test, a lobby press waited for the edit of the press before it (made holding the chat's
lock) and a permission check waited for a group turn (getChatMember): 3 to 39 s here.
"""

from __future__ import annotations

import time

from fake_telegram import FakeTelegram
from harness import BotFactory


async def test_lobby_presses_in_a_busy_group_are_answered_at_once(telegram: FakeTelegram,
                                                                   start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    await alice.start()
    await bob.start()
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.send(group, "/newgame")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))
    for _ in range(40):
        await alice.send(group, "/rules")
    await telegram.wait_for(lambda: len(telegram.bot_messages(group)) >= 20, timeout=20, what="the first replies")

    slowest = 0.0
    for label in ("Join", "Add computer", "Leave", "Join", "Start", "Settings", "Table rules", "Cancel"):
        began = time.monotonic()
        await (await bob.press(lobby, label)).answer(timeout=5)
        slowest = max(slowest, time.monotonic() - began)
    assert slowest < 2.0  # a group turn is 3 s away at best, a minute at worst

    # The lobby shows the table as it is after all of them: Bob seated, one computer player.
    await telegram.wait_for(lambda: "Bob" in (lobby.text or "") and "AI-1" in (lobby.text or ""), timeout=90,
                            what="the lobby shown as it is now")


async def test_scorekeeping_presses_in_a_busy_group_are_answered_at_once(telegram: FakeTelegram,
                                                                         start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Real tiles", members=[alice, bob], admins=[alice])
    await alice.send(group, "/keep me 老王 Dave")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "I'm in" in str(m.buttons))
    await (await bob.press(lobby, "I'm in")).answer()
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))
    for _ in range(40):
        await alice.send(group, "/rules")
    await telegram.wait_for(lambda: len(telegram.bot_messages(group)) >= 20, timeout=20, what="the first replies")

    kong = panel.button("Kong").callback_data
    await (await bob.press(panel, data=kong)).answer(timeout=5)  # its panel edit waits for a group turn
    began = time.monotonic()
    second = await bob.press(panel, data=kong, check=False)  # a second tap meanwhile
    await second.answer(timeout=5)
    assert time.monotonic() - began < 2.0
