"""Test-side people at a hosted table: they read their DM's buttons and press them.

``HumanPlayer.act`` presses one sensible button if the DM shows a decision: three tiles of one
suit then "pass these three" when swapping, the first suit when voiding, a win when offered,
otherwise pass on claims and discard the first tile offered. It only uses what the person
sees (their DM message and its buttons), like a person would.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter

from fake_telegram import Button, ChatMessage, FakeChat, FakeTelegram, FakeUser

GAME_DATA = re.compile(r"^gm:\d+:(\d+):(\w+)$")


def game_buttons(message: ChatMessage) -> list[tuple[Button, str]]:
    out = []
    for b in message.buttons:
        match = GAME_DATA.match(b.callback_data or "")
        if match:
            out.append((b, match[2]))
    return out


def hand_message(telegram: FakeTelegram, user: FakeUser) -> ChatMessage | None:
    """The user's newest DM photo from the bot (the hand picture)."""
    photos = [m for m in telegram.bot_messages(user) if m.photo_file_id is not None]
    return photos[-1] if photos else None


def choose(buttons: list[tuple[Button, str]]) -> list[Button]:
    """The presses a simple person makes for the decision these buttons offer."""
    codes = {code: b for b, code in buttons}
    if "sc" in codes:
        return [codes["sc"]]
    toggles = [(b, code) for b, code in buttons if code.startswith("t")]
    if toggles:
        picked = [b for b in toggles if b[0].text.startswith("✓")]
        if picked:  # already chose; confirm appears at three
            return []
        suits = Counter(b.text[-1] for b, _ in toggles)
        suit = next(s for s, n in suits.most_common() if n >= 3)
        return [b for b, _ in toggles if b.text.endswith(suit)][:3]
    for prefix in ("w", "v", "x", "d"):
        for b, code in buttons:
            if code.startswith(prefix):
                return [b]
    return []


class HumanPlayer:
    def __init__(self, telegram: FakeTelegram, user: FakeUser) -> None:
        self.telegram = telegram
        self.user = user
        self.presses = 0

    async def act(self) -> bool:
        """Press the buttons of one decision; False if the DM shows none."""
        message = hand_message(self.telegram, self.user)
        if message is None:
            return False
        presses = choose(game_buttons(message))
        before = message.edit_count
        for button in presses:
            press = await self.user.press(message, data=button.callback_data)
            await press.answer()
            self.presses += 1
        if presses:  # the DM is edited (or replaced) once the bot took the decision
            await self.telegram.wait_for(
                lambda: message.edit_count > before or hand_message(self.telegram, self.user) is not message,
                timeout=15, what=f"{self.user.first_name}'s DM to change",
            )
        return bool(presses)


async def play_until_over(telegram: FakeTelegram, group: FakeChat, players: list[HumanPlayer],
                          timeout: float = 60.0) -> ChatMessage:
    """Let the people decide until the group gets the settlement card (with Next hand / End)."""

    def final_card() -> ChatMessage | None:
        for m in reversed(telegram.bot_messages(group)):
            if any((b.callback_data or "").endswith(":next") for b in m.buttons):
                return m
        return None

    async def someone_acted() -> bool:
        acted = False
        for player in players:
            acted = await player.act() or acted
        return acted

    loop = telegram.wait_for
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = final_card()
        if found is not None:
            return found
        if not await someone_acted():
            await asyncio.sleep(0.05)
    seen = [(p.user.first_name, m.caption, [b.text for b in m.buttons])
            for p in players if (m := hand_message(telegram, p.user))]
    group_seen = [m.shown_text[:200] for m in telegram.bot_messages(group)][-5:]
    return await loop(final_card, timeout=1, what=f"the settlement card; DMs: {seen}; group: {group_seen}")


async def start_game(telegram: FakeTelegram, user: FakeUser, lobby: ChatMessage) -> None:
    """Press Start; when the lobby asks about empty seats, agree to computer players in them."""
    await (await user.press(lobby, "Start")).answer()
    await telegram.wait_for(lambda: "has started" in (lobby.text or "") or any(
        (b.callback_data or "").endswith(":go") for b in lobby.buttons), what="the game to start or the question")
    if any((b.callback_data or "").endswith(":go") for b in lobby.buttons):
        await (await user.press(lobby, data=next(b.callback_data for b in lobby.buttons
                                                 if (b.callback_data or "").endswith(":go")))).answer()


async def open_lobby(telegram: FakeTelegram, creator: FakeUser, group: FakeChat) -> ChatMessage:
    """``creator`` sends /newgame in ``group``; the lobby message the bot posts."""
    await creator.send(group, "/newgame")
    return await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))


async def alone_at_a_table(telegram: FakeTelegram) -> tuple[FakeUser, FakeChat]:
    """Alice opens a table in her group and starts it with three computer players."""
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    await alice.start()
    await start_game(telegram, alice, await open_lobby(telegram, alice, group))
    return alice, group
