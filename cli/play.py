"""``xuezhan play``: the live table in a browser, no Telegram token and no network needed.

It starts the web table's server on 127.0.0.1 (or ``--host``) with a SQLite ledger, deals a
hand with you and three computer players, and prints the address to open. ``--seats N`` seats
N people instead and prints one signed link per seat, so friends on the same network can join
from their phones (use ``--host 0.0.0.0`` for that). ``--rules`` picks the table's rules by
preset (chengdu, xueliu, classic); the address without a seat link watches the table. Ctrl-C
or SIGTERM (a service manager's stop) closes the pages and the ledger and ends it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import gc
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from engine.rules import PRESETS

EXIT_BAD_INPUT = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "play", help="play in the browser against computer players (no token needed)",
        description="Serve the live table on this machine and print its address. "
                    "With --seats N, N people share the table (one link each) and computers fill the rest.",
    )
    parser.add_argument("--seats", type=int, default=1, help="people at the table, 1-4 (default 1)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 lets phones on your network join)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument("--db", type=Path, default=Path("xuezhan-play.db"),
                        help="SQLite ledger file (default xuezhan-play.db)")
    parser.add_argument("--discard-seconds", type=float, default=60, help="time for a discard (default 60)")
    parser.add_argument("--claim-seconds", type=float, default=20, help="time for a claim (default 20)")
    parser.add_argument("--rules", default="chengdu", type=str.lower,
                        help=f"the table's rules: {', '.join(PRESETS)} (default chengdu: 血战到底; "
                             "xueliu: 血流成河, winners play on; classic: the first win ends the hand, no swap)")
    parser.add_argument("--computer-delay", type=float, default=0.6,
                        help="pause before a computer player acts, in seconds (default 0.6)")
    parser.set_defaults(func=run_play)


def lan_address() -> str:
    """This machine's address on the local network (no packet is sent), or 127.0.0.1."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the outgoing interface
        return str(probe.getsockname()[0])
    return "127.0.0.1"


def run_play(args: argparse.Namespace) -> int:
    if not 1 <= args.seats <= 4:
        print("xuezhan play: --seats must be 1 to 4.", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not 0 <= args.port <= 65535:
        print("xuezhan play: --port must be 0 to 65535.", file=sys.stderr)
        return EXIT_BAD_INPUT
    if min(args.discard_seconds, args.claim_seconds) <= 0 or args.computer_delay < 0:
        print("xuezhan play: times must be positive.", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.rules not in PRESETS:
        print(f"xuezhan play: --rules must be one of {', '.join(PRESETS)}, not {args.rules!r}.", file=sys.stderr)
        return EXIT_BAD_INPUT
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(serve(args))
    return 0


async def serve(args: argparse.Namespace) -> int:
    """Serve the table until Ctrl-C (which cancels this through ``asyncio.run``) or SIGTERM.

    SIGTERM would otherwise end the process without closing the pages and the ledger. Its handler
    is set before anything opens, so a stop at any moment, even during start-up, closes what is
    open.
    """
    terminated = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, terminated.set)
    try:
        return await _serve(args, terminated)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def _serve(args: argparse.Namespace, terminated: asyncio.Event) -> int:
    from bot.table.runner import Limits
    from engine.rules import RuleSet
    from storage import StorageError, open_storage
    from storage.preflight import database_problem
    from web.local import LocalTables

    problem = database_problem(args.db)
    if problem is not None:
        print(f"xuezhan play: cannot use the ledger {args.db}: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        storage = await open_storage(args.db)
    except (StorageError, OSError) as error:
        print(f"xuezhan play: cannot open the ledger {args.db}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    local = LocalTables(storage, Limits(args.discard_seconds, args.claim_seconds, args.computer_delay))
    try:
        try:
            base = await local.server.start(args.host, args.port)
        except OSError as error:
            hint = " (is another table using it? --port 0 picks a free port)" if error.errno == errno.EADDRINUSE else ""
            print(f"xuezhan play: cannot listen on {args.host}:{args.port}: {error.strerror or error}{hint}",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
        if args.host == "0.0.0.0":
            base = base.replace("127.0.0.1", lan_address())
        table, runner = await local.open_table(args.seats, rules=RuleSet.preset(args.rules))
        gc.freeze()  # what start-up made lives as long as the server: later collections skip it
        links = local.links(base, table, runner)
        title = f"血战到底 — {args.rules} rules"
        if args.seats == 1:
            print(f"{title} — open this address in your browser:\n\n  {links[0].url}\n")
        else:
            print(f"{title} — one link per seat (send each friend theirs):\n")
            for link in links:
                print(f"  seat {link.seat + 1} ({link.name}): {link.url}")
            print()
        print(f"To watch without a seat: {local.watch_link(base, table)}")
        print("Ctrl-C stops the table.", flush=True)
        await terminated.wait()
    finally:
        await local.close()
        await storage.close()
    return 0
