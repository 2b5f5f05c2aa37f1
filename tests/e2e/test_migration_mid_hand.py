"""A group that becomes a supergroup in the middle of a hand, or with a lobby open (issue 11, item 11).

The old group's messages can no longer be edited or pressed, so the live hand's table picture is
posted again in the supergroup and kept up to date there (nothing edits the old group's picture
after), and an open lobby is posted again there and works.
"""

from __future__ import annotations

import asyncio

from fake_telegram import FakeChat, FakeTelegram
from harness import BotFactory
from table_players import HumanPlayer, alone_at_a_table, open_lobby
from test_access_control import FAST


def table_pictures(telegram: FakeTelegram, chat: FakeChat) -> list:
    """The group's table pictures (settlement cards carry Next / End buttons, pictures none)."""
    return [m for m in telegram.bot_messages(chat) if m.photo_file_id is not None and not m.buttons]


async def test_a_hand_in_progress_follows_the_group_into_the_supergroup(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**{**FAST, "XUEZHAN_DISCARD_SECONDS": "60", "XUEZHAN_CLAIM_SECONDS": "60",
                       "XUEZHAN_GROUP_UPDATE_SECONDS": "1"})
    alice, group = await alone_at_a_table(telegram)
    await telegram.wait_for(lambda: table_pictures(telegram, group), timeout=15, what="the table picture")
    player = HumanPlayer(telegram, alice)
    for _ in range(2):
        while not await player.act():
            await asyncio.sleep(0.05)

    supergroup = telegram.migrate(group)
    moved = (await telegram.wait_for(lambda: table_pictures(telegram, supergroup), timeout=15,
                                     what="the table picture in the supergroup"))[0]
    reposted_at = len(telegram.calls)
    for _ in range(400):  # Alice plays on; the supergroup's picture follows the hand
        if moved.edit_count > 0:
            break
        if not await player.act():
            await asyncio.sleep(0.05)
    assert moved.edit_count > 0, "the supergroup's table picture was never brought up to date"
    old_edits = [c for c in telegram.calls[reposted_at:]
                 if c.method.startswith("editMessage") and c.params.get("chat_id") == group.id]
    assert old_edits == []  # the old group's picture is left alone
    # Posted there once: any other picture without buttons is a win card, which says who won.
    others = [m for m in table_pictures(telegram, supergroup) if m is not moved]
    assert all(" wins on " in (m.caption or "") for m in others), [m.caption for m in others]


async def test_an_open_lobby_is_posted_again_in_the_supergroup(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST)
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    await alice.start()
    old = await open_lobby(telegram, alice, group)
    supergroup = telegram.migrate(group)
    lobby = await telegram.wait_for_bot_message(supergroup, lambda m: "table #" in (m.text or ""))
    assert "Alice" in lobby.text and old.text.split("\n")[0] == lobby.text.split("\n")[0]
    await (await alice.press(lobby, "Add computer")).answer()
    await telegram.wait_for(lambda: lobby.edit_count > 0, what="the lobby in the supergroup to change")
    await telegram.settle()
    assert len([m for m in telegram.bot_messages(supergroup) if "table #" in (m.text or "")]) == 1
