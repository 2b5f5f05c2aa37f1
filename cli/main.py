"""The ``xuezhan`` command: one entry point, one module per group of sub-commands.

Each module in ``COMMAND_MODULES`` exposes ``register(subparsers)`` and sets ``func`` on
its parser; ``func(args)`` returns the exit code. Each module keeps its heavy imports
(Telegram, Pillow, numpy) inside its functions, so ``xuezhan score`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMAND_MODULES = (
    "cli.score",
    "cli.storage_commands",
    "cli.migrate",
    "cli.recognize",
    "cli.run",
    "cli.gallery",
    "cli.simulate",
    "cli.play",
    "cli.review",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xuezhan", description="Sichuan mahjong (血战到底) for Telegram")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
