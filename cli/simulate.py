"""``xuezhan simulate`` and ``xuezhan arena``: computer players at full speed, from a shell.

``simulate`` plays hands in a row with the dealer rotation and checks every one of them
(108 tiles accounted for, transfers summing to zero, replay giving the same state); it exits
1 if any check failed. ``arena`` measures one player against three copies of another, every
seed played four times with the challenger in each seat. Both print plain words by default
and one JSON object with ``--json``; bad input exits 2 with a clear message.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from cli.score import with_settings
from engine.actions import SEATS
from engine.ai import PLAYERS
from engine.ai_stats import percentile
from engine.rules import PRESETS, SETTING_VALUES, RuleSet
from engine.selfplay import arena, named_players, play_session

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    s = subparsers.add_parser("simulate", help="self-play: N checked hands between computer players")
    s.add_argument("--hands", type=int, default=100, help="hands to play (default 100)")
    s.add_argument("--seed", type=int, default=0, help="seed of the first hand (hand i uses seed + i)")
    s.add_argument("--rules", default="chengdu", help=f"preset: {', '.join(PRESETS)}")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help=f"change one table setting (repeatable); keys: {', '.join(SETTING_VALUES)}")
    s.add_argument(
        "--players",
        default="ai,ai,ai,ai",
        help=f"four comma-separated players by seat: {', '.join(PLAYERS)} (default ai,ai,ai,ai)",
    )
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=run_simulate)

    a = subparsers.add_parser("arena", help="one challenger against three copies of a baseline")
    a.add_argument("--challenger", default="ai", help=f"one of {', '.join(PLAYERS)}")
    a.add_argument("--baseline", default="greedy", help=f"one of {', '.join(PLAYERS)}")
    a.add_argument("--seeds", type=int, default=250, help="deals to play, each four times (default 250)")
    a.add_argument("--first-seed", type=int, default=0, help="first seed (default 0)")
    a.add_argument("--rules", default="chengdu", help=f"preset: {', '.join(PRESETS)}")
    a.add_argument("--check", action="store_true", help="also check every hand's invariants (slower)")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.set_defaults(func=run_arena)


class BadInput(ValueError):
    pass


def _rules(name: str, assignments: Sequence[str] = ()) -> RuleSet:
    """A preset changed by ``KEY=VALUE`` settings (``--set``)."""
    try:
        return with_settings(RuleSet.preset(name), assignments)
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def _player_name(name: str) -> str:
    if name not in PLAYERS:
        raise BadInput(f"unknown player {name!r}; choose one of {', '.join(PLAYERS)}")
    return name


def _fail(args: argparse.Namespace, message: str) -> int:
    if args.json:
        print(json.dumps({"ok": False, "error": "bad_input", "message": message}, ensure_ascii=False))
    else:
        print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_simulate(args: argparse.Namespace) -> int:
    try:
        rules = _rules(args.rules, args.set)
        names = [_player_name(n.strip()) for n in args.players.split(",")]
        if len(names) != SEATS:
            raise BadInput(f"--players needs {SEATS} comma-separated names, got {len(names)}")
        if args.hands < 1:
            raise BadInput(f"--hands must be at least 1, got {args.hands}")
    except BadInput as exc:
        return _fail(args, str(exc))
    chips = [0] * SEATS
    wins = [0] * SEATS
    deal_ins = [0] * SEATS
    pigs = [0] * SEATS
    times: list[float] = []
    problems: list[str] = []
    tally: Counter[str] = Counter()
    start = time.perf_counter()
    for result in play_session(rules, args.seed, args.hands, named_players(names, rules)):
        for s in range(SEATS):
            chips[s] += result.chips[s]
            wins[s] += result.won[s]
            deal_ins[s] += result.dealt_in[s]
            pigs[s] += result.flower_pig[s]
            times += result.decision_seconds[s]
        tally.update(result.tally)
        problems += [f"hand seed {result.seed}: {p}" for p in result.problems]
    seconds = time.perf_counter() - start
    seats = [
        {
            "seat": s,
            "player": names[s],
            "chips": chips[s],
            "chips_per_hand": chips[s] / args.hands,
            "wins": wins[s],
            "deal_ins": deal_ins[s],
            "flower_pigs": pigs[s],
        }
        for s in range(SEATS)
    ]
    payload: dict[str, Any] = {
        "ok": not problems,
        "hands": args.hands,
        "seed": args.seed,
        "rules": args.rules,
        "settings": args.set,
        "seconds": seconds,
        "hands_per_second": args.hands / seconds if seconds else 0.0,
        "decision_ms_p50": percentile(times, 50) * 1000,
        "decision_ms_p95": percentile(times, 95) * 1000,
        "seats": seats,
        "in_play": dict(tally.most_common()),
        "problems": problems,
    }
    if args.json:
        print(json.dumps(payload, ensure_ascii=False))
    else:
        described = " ".join([args.rules, *args.set])
        print(
            f"{args.hands} hands ({described}) in {seconds:.1f} s: {payload['hands_per_second']:.1f} hands/s; "
            f"decision p50 {payload['decision_ms_p50']:.2f} ms, p95 {payload['decision_ms_p95']:.2f} ms"
        )
        print("seat  player   chips  per hand  wins  deal-ins  花猪")
        for row in seats:
            print(
                f"{row['seat']:>4}  {row['player']:<7} {row['chips']:>6}  {row['chips_per_hand']:>8.2f}  "
                f"{row['wins']:>4}  {row['deal_ins']:>8}  {row['flower_pigs']:>4}"
            )
        print("in play: " + ", ".join(f"{name} {n}" for name, n in tally.most_common()))
        if problems:
            print(f"{len(problems)} check(s) FAILED:")
            for p in problems:
                print(f"  {p}")
        else:
            print("checks passed: 108 tiles accounted for, transfers sum to zero, replay and save identical, "
                  "the house rules kept")
    return EXIT_CHECK_FAILED if problems else 0


def run_arena(args: argparse.Namespace) -> int:
    try:
        rules = _rules(args.rules)
        challenger = _player_name(args.challenger)
        baseline = _player_name(args.baseline)
        if args.seeds < 1:
            raise BadInput(f"--seeds must be at least 1, got {args.seeds}")
    except BadInput as exc:
        return _fail(args, str(exc))
    start = time.perf_counter()
    report = arena(challenger, baseline, rules, args.seeds, first_seed=args.first_seed, check=args.check)
    seconds = time.perf_counter() - start
    payload = {"ok": not report.problems, "rules": args.rules, "seconds": seconds, **report.to_dict()}
    if args.json:
        print(json.dumps(payload, ensure_ascii=False))
    else:
        sc = report.score
        print(
            f"{challenger} vs 3 × {baseline}, {args.rules}: {report.seeds} seeds × 4 seats = "
            f"{report.games} games in {seconds:.1f} s"
        )
        print(f"score per game: {sc.mean:+.2f} chips (95% CI {sc.low:+.2f} .. {sc.high:+.2f}, clustered by seed)")
        print(
            f"win rate {report.win_rate:.1%} (each {baseline}: {report.baseline_win_rate:.1%}), "
            f"deal-in rate {report.deal_in_rate:.1%}, 花猪 rate {report.flower_pig_rate:.1%}"
        )
        print(f"decision time p50 {report.decision_ms_p50:.2f} ms, p95 {report.decision_ms_p95:.2f} ms")
        for p in report.problems:
            print(f"check FAILED: {p}")
    return EXIT_CHECK_FAILED if report.problems else 0
