"""The ``xuezhan`` command: one entry point, one module per group of sub-commands.

Each module in ``COMMANDS`` exposes ``register(subparsers)`` and sets ``func`` on its parser;
``func(args)`` returns the exit code. Only the named sub-command's module is imported (all of
them for ``--help`` or a name not known). Each module keeps its heavy imports
(Telegram, Pillow, numpy) inside its functions, so ``xuezhan score`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Sub-command -> the module that registers it. ``xuezhan run`` imports only ``cli.run``: every
# module imported here before the bot polls is start-up time.
COMMANDS: dict[str, str] = {
    "score": "cli.score",
    "waits": "cli.score",
    "export": "cli.storage_commands",
    "migrate": "cli.migrate",
    "recognize": "cli.recognize",
    "run": "cli.run",
    "gallery": "cli.gallery",
    "simulate": "cli.simulate",
    "arena": "cli.simulate",
    "play": "cli.play",
    "review": "cli.review",
}
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every sub-command, or only of ``command`` (a name in ``COMMANDS``)."""
    parser = argparse.ArgumentParser(prog="xuezhan", description="Sichuan mahjong (血战到底) for Telegram")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
