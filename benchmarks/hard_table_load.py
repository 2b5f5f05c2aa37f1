"""Press latency of tables whose three computer players are hard, beside the same tables with ai-v1.

    python benchmarks/hard_table_load.py [--tables 4 50] [--seconds 30] [--levels normal hard]

Each run is ``benchmarks/bot_load.py``'s (the real bot in its own process against the fake
Telegram, one person per table pressing their DM buttons, three computer players, the same think
time and computer delay), except that every table's rules are set to the level in the lobby,
before Start (``Storage.set_table_rules``, as the lobby's "Table rules" menu does). For each table
count the levels run one after the other in this invocation, so they share the machine's state.
The hard player thinks in the runner's worker threads (``bot.table.runner``), on the interpreter
the event loop also runs on: these numbers show whether its searches hold the loop up. The budget
(issue 15): callback answered p99 under 150 ms at 50 tables, and no press unanswered.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT.parent / "tests" / "e2e"), str(ROOT.parent / "tests"), str(ROOT)]

import bot_load  # noqa: E402
from bot_load_support import LoadTable, LoadTelegram, open_lobby  # noqa: E402

from engine.rules import AI_LEVELS, RuleSet  # noqa: E402
from storage import Storage  # noqa: E402


def lobby_at_level(level: str):  # type: ignore[no-untyped-def]
    """``open_lobby`` that also gives the table the chat's default rules at ``level``."""

    async def opened(tg: LoadTelegram, storage: Storage, index: int, people: int, timeout: float) -> LoadTable:
        table = await open_lobby(tg, storage, index, people, timeout)
        assert table.table_id is not None
        await storage.set_table_rules(table.table_id, RuleSet(ai_level=level).to_dict())
        return table

    return opened


async def main_async(args: argparse.Namespace) -> int:
    # a fixed think time: bot_load's runs take one as well as a spread
    options = bot_load.Options(1, args.think, args.computer_delay, None, args.warm_up)  # type: ignore[arg-type]
    print(f"hard tables: {args.tables} tables x 1 person + 3 computers, levels {args.levels}, "
          f"think {args.think}s, computer delay {args.computer_delay}s, on {os.cpu_count()} CPU(s)")
    rows = []
    for n in args.tables:
        for level in args.levels:
            bot_load.open_lobby = lobby_at_level(level)  # the one step bot_load's run does differently
            phase = await bot_load.run_xuezhan(n, args.seconds, options)
            phase.name = f"xuezhan, computers {level}"
            bot_load.print_phase(phase)
            rows.append((n, level, phase))
    print("\n| tables | computers | callback answered p50 / p99 | DM changed p50 / p99 | presses | unanswered "
          "| errors | load |")
    print("|---|---|---|---|---|---|---|---|")
    for n, level, p in rows:
        answer, dm = (f"{_ms(v, 0.5)} / {_ms(v, 0.99)} ms" for v in (p.lat.answer, p.lat.dm))
        print(f"| {n} | {level} | {answer} | {dm} | {p.presses} "
              f"| {p.errors.get('press never answered', 0)} | {sum(p.errors.values())} "
              f"| {p.load[0]:.1f} -> {p.load[1]:.1f} |")
    return 0


def _ms(values: list[float], q: float) -> str:
    return bot_load._ms(values, q).strip()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=bot_load.positive_int, nargs="+", default=[4, 50])
    parser.add_argument("--seconds", type=bot_load.seconds_arg, default=30)
    parser.add_argument("--levels", nargs="+", choices=AI_LEVELS, default=["normal", "hard"])
    parser.add_argument("--think", type=float, default=2.0)
    parser.add_argument("--computer-delay", type=float, default=0.5)
    parser.add_argument("--warm-up", type=float, default=bot_load.WARM_UP)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return bot_load.run_in_clean_environment(main_async, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
