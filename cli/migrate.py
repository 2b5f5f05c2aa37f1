"""``xuezhan migrate --from sqlite:///xuezhan.db --to postgresql://…``: move a bot's database.

Stop the bot first (the copy is of one moment of the source). The command copies every row
(:mod:`storage.copy`, one transaction on the target, ids kept), then checks the result three
ways and says what it found:

- every table holds the same rows, column for column, in both databases;
- ``verify()`` of the target is clean and every chat's balances are the source's;
- every hand's action log replays through the referee (``engine.game.Game``), and the ledger
  holds, for each action, exactly the chips the referee books for it; a finished hand is over.

Running it again is safe: it brings the target up to the source's current state. A target
that holds rows the source does not (a bot already wrote there) is refused untouched.
Exit codes: 0 copied and verified, 1 refused or a check failed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from storage import HandStatus, StorageError, open_storage
from storage.factory import describe, redacted
from storage.preflight import sqlite_problem


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "migrate", help="copy a SQLite database into PostgreSQL and verify the copy",
        description="Copy every row of the bot's SQLite database into PostgreSQL, then verify counts, "
        "balances and every hand replayed. Stop the bot first; safe to run again.",
    )
    parser.add_argument("--from", dest="source", required=True, help="sqlite:///path or a file path")
    parser.add_argument("--to", dest="target", required=True, help="postgresql://user:password@host/database")
    parser.set_defaults(func=run_migrate)


def run_migrate(args: argparse.Namespace) -> int:
    try:
        source_kind, source = describe(args.source)
        target_kind, target = describe(args.target)
    except StorageError as exc:
        return _say(f"xuezhan migrate: {exc}", 2)
    if source_kind != "sqlite" or target_kind != "postgresql":
        return _say("xuezhan migrate: copies from SQLite (--from sqlite:///path) to PostgreSQL "
                    "(--to postgresql://…)", 2)
    if not Path(source).is_file():
        return _say(f"xuezhan migrate: no database file at {source}", 2)
    problem = sqlite_problem(Path(source))
    if problem is not None:
        return _say(f"xuezhan migrate: {problem}", 2)
    try:
        problems = asyncio.run(_migrate(source, target))
    except (StorageError, OSError) as exc:
        return _say(f"xuezhan migrate: {exc}", 1)
    if problems:
        return _say("xuezhan migrate: the copy does not match:\n  " + "\n  ".join(problems), 1)
    print(f"verified: {redacted(target)} holds everything {source} holds")
    return 0


def _say(message: str, code: int) -> int:
    print(message, file=sys.stderr)
    return code


async def _migrate(source_path: str, target_url: str) -> list[str]:
    from storage.copy import copy_database  # asyncpg is loaded only by this command

    report = await copy_database(source_path, target_url)
    for table, count in report.rows.items():
        print(f"{table:16} {count:8d} rows")
    problems = list(report.differences)
    source, target = await open_storage(source_path), await open_storage(target_url)
    try:
        problems += [f"target: {p}" for p in await target.verify()]
        for chat_id in report.chats:
            if await source.balances(chat_id) != await target.balances(chat_id):
                problems.append(f"chat {chat_id}: balances differ")
        ledger = {chat_id: await target.ledger(chat_id) for chat_id in report.chats}
        for hand_id in report.hands:
            problems += await _replay_problems(target, hand_id, ledger)
    finally:
        await source.close()
        await target.close()
    print(f"{len(report.hands)} hands replayed, {len(report.chats)} chats' balances compared")
    return problems


async def _replay_problems(store: Any, hand_id: int, ledger: dict[int, list[Any]]) -> list[str]:
    """Replay one hand through the referee; what disagrees with its logged chips."""
    from engine.actions import Action, GameError
    from engine.game import Game
    from engine.rules import RuleSet

    hand = await store.get_hand(hand_id)
    seat_of = {player: seat for seat, player in enumerate(hand.seats)}
    booked: dict[int, Counter[tuple[int, int, int]]] = defaultdict(Counter)
    for row in ledger[hand.chat_id]:
        if row.hand_id == hand_id and row.hand_seq is not None:
            booked[row.hand_seq][(seat_of[row.payer_id], seat_of[row.payee_id], row.amount)] += 1
    try:
        game = Game(RuleSet.from_dict(hand.rules), hand.seed, hand.dealer)
        for logged in await store.hand_actions(hand_id):
            before = len(game.transfers)
            game.apply(Action.from_dict(logged.action))
            wanted = Counter((t.payer, t.payee, t.amount) for t in game.transfers[before:] if t.amount)
            if booked.get(logged.seq, Counter()) != wanted:
                return [f"hand {hand_id} action {logged.seq}: ledger {dict(booked.get(logged.seq, {}))} "
                        f"but the referee books {dict(wanted)}"]
    except (GameError, KeyError, ValueError) as exc:
        return [f"hand {hand_id}: its log does not replay ({exc})"]
    if (hand.status is HandStatus.FINISHED) != game.over:
        return [f"hand {hand_id} is {hand.status.value} but the replayed hand is {'over' if game.over else 'not over'}"]
    return []
