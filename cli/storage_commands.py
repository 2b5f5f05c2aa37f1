"""``xuezhan export --chat ID``: a chat's chip ledger as CSV, from the bot's database."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from storage import StorageError, open_storage
from storage.export import write_ledger_csv
from storage.factory import describe
from storage.preflight import database_problem

DEFAULT_DB = "xuezhan.db"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "export", help="export a chat's chip ledger as CSV", description="Export a chat's chip ledger as CSV."
    )
    parser.add_argument("--chat", type=int, required=True, help="Telegram chat id (groups are negative)")
    parser.add_argument(
        "--db", default=None,
        help=f"database file or postgresql:// URL (default: $XUEZHAN_DB or {DEFAULT_DB} in this directory)"
    )
    parser.add_argument("--out", default=None, help="CSV file to write (default: standard output)")
    parser.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    target = args.db or os.environ.get("XUEZHAN_DB") or DEFAULT_DB
    try:
        backend, where = describe(target)
    except StorageError as exc:
        print(f"xuezhan export: {exc}", file=sys.stderr)
        return 2
    if backend == "sqlite" and not Path(where).is_file():
        print(f"xuezhan export: no database file at {where}", file=sys.stderr)
        return 2
    problem = database_problem(target)
    if problem is not None:
        print(f"xuezhan export: {problem}", file=sys.stderr)
        return 2
    try:
        count = asyncio.run(_export(target, args.chat, args.out))
    except (StorageError, OSError) as exc:
        print(f"xuezhan export: {exc}", file=sys.stderr)
        return 1
    if args.out:
        print(f"{count} ledger rows of chat {args.chat} written to {args.out}", file=sys.stderr)
    return 0


async def _export(target: str, chat_id: int, out: str | None) -> int:
    store = await open_storage(target)
    try:
        chat = await store.get_chat(chat_id)
        entries = await store.ledger(chat_id)
    finally:
        await store.close()
    if out is None:
        return write_ledger_csv(entries, sys.stdout, chat.timezone)
    with open(out, "w", encoding="utf-8", newline="") as handle:
        return write_ledger_csv(entries, handle, chat.timezone)
