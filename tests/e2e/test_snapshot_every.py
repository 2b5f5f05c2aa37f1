"""A playing hand's snapshot is saved as it goes (every SNAPSHOT_EVERY logged actions), not only at
shut-down, so a restart after a crash applies only the last few actions to it."""

from __future__ import annotations

import asyncio
import time

from fake_telegram import FakeTelegram
from harness import BotFactory
from table_players import HumanPlayer, alone_at_a_table, hand_message

from bot.services import services
from bot.table.runner import SNAPSHOT_EVERY
from engine.actions import Action
from engine.game import Game

FAST = {"XUEZHAN_COMPUTER_DELAY": "0", "XUEZHAN_GROUP_UPDATE_SECONDS": "3", "XUEZHAN_LANG": "en"}


async def test_a_playing_hand_keeps_a_snapshot_every_few_actions(telegram: FakeTelegram,
                                                                 start_bot: BotFactory) -> None:
    app = await start_bot(**FAST)
    alice, group = await alone_at_a_table(telegram)
    storage = services(app).storage
    player = HumanPlayer(telegram, alice)
    deadline = time.monotonic() + 60
    await telegram.wait_for(lambda: hand_message(telegram, alice), timeout=15, what="Alice's hand")
    table = (await storage.open_tables(group.id))[0]
    hand = (await storage.table_hands(table.id))[-1]
    snapshot = None
    while snapshot is None:  # Alice plays while she has decisions (after a win she has none)
        assert time.monotonic() < deadline, "no snapshot was saved while the hand was played"
        if not await player.act():
            await asyncio.sleep(0.05)
        snapshot = (await storage.hand_snapshots()).get(hand.id)
    seq, state = snapshot
    assert seq > 0 and seq % SNAPSHOT_EVERY == 0
    # It is a state of this hand that agrees with the log: a restart would start from it.
    actions = [Action.from_dict(a.action) for a in await storage.hand_actions(hand.id)]
    saved = Game.from_dict(state)
    assert (saved.seed, saved.dealer) == (hand.seed, hand.dealer)
    assert list(saved.actions) == actions[:seq]
