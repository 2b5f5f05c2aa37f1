"""How fast a restart brings open hands back: full replay of each log against its snapshot.

    python benchmarks/bot_restart.py [--hands 200] [--actions 40]

Builds a temporary SQLite file with ``--hands`` playing hands, each ``--actions`` decisions in
(random legal choices), with the snapshots the bot saves while a hand is played (every
``SNAPSHOT_EVERY`` logged actions), then times what ``Tables.resume_all`` does before any message
goes out: read every unfinished hand with its log (and the snapshots), and rebuild each game --
by replaying every log; from the snapshots as a crash leaves them (the last few actions applied
to each); and from the snapshots the bot saves at shut-down (``bot/table/snapshots.restore_game``
checks each snapshot against the log).
The issue's target: 200 open hands back in under a second.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.table.runner import SNAPSHOT_EVERY
from bot.table.snapshots import restore_game, snapshot_of
from engine.actions import Action
from engine.game import Game
from engine.rules import RuleSet
from storage import PlayerKind, Storage, open_storage
from storage.models import JSON

CHAT = -1000


async def build(storage: Storage, hands: int, actions: int) -> dict[int, tuple[int, JSON]]:
    """Open hands played ``actions`` decisions in, with the snapshots the bot saves as it plays
    (every SNAPSHOT_EVERY actions); returns what it would save at shut-down (the state at the end)."""
    final: dict[int, tuple[int, JSON]] = {}
    rules = RuleSet()
    players = [await storage.named_player(CHAT, f"AI-{i}", PlayerKind.COMPUTER) for i in range(4)]
    pick = random.Random(1)
    for _ in range(hands):
        table = await storage.create_table(CHAT, None)
        for seat, player in enumerate(players):
            table = await storage.set_seat(table.id, seat, player.id)
        hand = await storage.start_hand(table.id, rules.to_dict(), seed=pick.getrandbits(62), dealer=0)
        game = Game(rules, hand.seed, hand.dealer)
        while len(game.actions) < actions and not game.over:
            action = pick.choice(game.legal_actions(game.pending_seats()[0]))
            events = game.apply(action)
            transfers = [e.transfer for e in events if e.transfer is not None]
            await storage.append_action(hand.id, len(game.actions) - 1, action.to_dict(), transfers)
            if len(game.actions) % SNAPSHOT_EVERY == 0 and not game.over:
                await storage.save_snapshot(hand.id, *snapshot_of(game))
        final[hand.id] = snapshot_of(game)
    return final


async def resume(storage: Storage, use_snapshots: bool) -> tuple[float, int]:
    """Seconds to read the open hands and rebuild their games; the number rebuilt."""
    began = time.perf_counter()
    snapshots = await storage.hand_snapshots() if use_snapshots else {}
    games = []
    for unfinished in await storage.unfinished_hands():
        hand = unfinished.hand
        rules = RuleSet.from_dict(hand.rules)
        actions = [Action.from_dict(a.action) for a in unfinished.actions]
        games.append(restore_game(rules, hand, actions, snapshots.get(hand.id)))
    return time.perf_counter() - began, len(games)


async def main_async(hands: int, actions: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="xuezhan-restart-") as tmp:
        db = Path(tmp) / "restart.db"
        storage = await open_storage(db)
        try:
            began = time.perf_counter()
            final = await build(storage, hands, actions)
            print(f"built {hands} open hands x {actions} actions in {time.perf_counter() - began:.1f} s")
        finally:
            await storage.close()
        for label, use in (("full replay", False), ("after a crash", True), ("after a shut-down", True)):
            if label == "after a shut-down":  # the bot saves every live hand's state as it stops
                storage = await open_storage(db)
                try:
                    for hand_id, (seq, state) in final.items():
                        await storage.save_snapshot(hand_id, seq, state)
                finally:
                    await storage.close()
            times = []
            for _ in range(repeat):
                storage = await open_storage(db)  # a fresh process's view: opened, nothing cached
                try:
                    seconds, n = await resume(storage, use)
                finally:
                    await storage.close()
                times.append(seconds)
            print(f"{label:17s}: {n} hands back in {statistics.median(times):.3f} s "
                  f"(median of {repeat}; {1000 * statistics.median(times) / n:.2f} ms a hand)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=200)
    parser.add_argument("--actions", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main_async(args.hands, args.actions, args.repeat))


if __name__ == "__main__":
    main()
