"""Speed of whole hands and of each computer level's decisions, side by side in one run.

Run: ``python benchmarks/referee.py [--hands N] [--hard-hands M] [--seed S]``. Prints hands per
second for four ``random`` players (mostly the referee's own cost) and for four ``ai-v1``
players; decision latency p50/p95/p99 of ``easy``, ``ai-v1`` and ``hard`` (the hard player timed
in a seat beside three ``ai-v1``, as at a table), each against its target: ai-v1 p95 < 20 ms;
hard p95 <= 150 ms and p99 <= 400 ms on one core (issue 17). The hard player searches until it has
spent its CPU budget (``engine.ai_search.BUDGET_SECONDS``) or its wall-clock limit
(``WALL_LIMIT_SECONDS``), plus the round in hand, so its tail shows what the machine's load does.
A short warm-up fills the analysis tables first, since a long-running bot plays with warm tables.
Every hand is checked (tiles, zero-sum, replay).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ai_search import BUDGET_SECONDS, WALL_LIMIT_SECONDS
from engine.ai_stats import percentile
from engine.rules import RuleSet
from engine.selfplay import named_players, play_session

TARGET_RANDOM = 200.0
TARGET_AI = 20.0
TARGETS_MS = {"ai-v1": (20.0, None), "hard": (150.0, 400.0), "easy": (20.0, None)}


def run(names: list[str], rules: RuleSet, seed: int, hands: int, timed: str) -> tuple[float, list[float], int]:
    """(hands per second, decision seconds of the ``timed`` seats, failed checks)."""
    times: list[float] = []
    problems = 0
    start = time.perf_counter()
    for result in play_session(rules, seed, hands, named_players(names, rules), check=True):
        for seat, name in enumerate(names):
            if name == timed:
                times += result.decision_seconds[seat]
        problems += len(result.problems)
    return hands / (time.perf_counter() - start), times, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200, help="timed hands per fast configuration")
    parser.add_argument("--hard-hands", type=int, default=40, help="hands with one hard player beside three ai-v1")
    parser.add_argument("--warmup", type=int, default=30, help="untimed ai-v1 hands first")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rules = RuleSet()

    start = time.perf_counter()
    run(["ai-v1"] * 4, rules, args.seed + 10**6, args.warmup, "")
    print(f"warm-up: {args.warmup} ai-v1 hands in {time.perf_counter() - start:.1f} s; hard budget "
          f"{BUDGET_SECONDS * 1000:.0f} ms CPU, {WALL_LIMIT_SECONDS * 1000:.0f} ms wall, per searched decision")

    failed = 0
    rnd_speed, _, problems = run(["random"] * 4, rules, args.seed, args.hands, "")
    failed += problems
    ai_speed, ai_times, problems = run(["ai-v1"] * 4, rules, args.seed, args.hands, "ai-v1")
    failed += problems
    _, easy_times, problems = run(["easy"] * 4, rules, args.seed, args.hands // 2, "easy")
    failed += problems
    hard_times: list[float] = []
    for seat in range(4):  # the hard player in every seat in turn
        names = ["ai-v1"] * 4
        names[seat] = "hard"
        _, times, problems = run(names, rules, args.seed + seat * 1000, max(1, args.hard_hands // 4), "hard")
        hard_times += times
        failed += problems

    print(f"{'':32}{'measured':>12}{'target':>10}{'met':>6}")
    print(f"{'hands/s, 4 random players':32}{rnd_speed:>12.1f}{TARGET_RANDOM:>10.0f}{_met(rnd_speed >= TARGET_RANDOM)}")
    print(f"{'hands/s, 4 ai-v1 players':32}{ai_speed:>12.1f}{TARGET_AI:>10.0f}{_met(ai_speed >= TARGET_AI)}")
    for name, times in (("easy", easy_times), ("ai-v1", ai_times), ("hard", hard_times)):
        p95_target, p99_target = TARGETS_MS[name]
        p50, p95, p99 = (percentile(times, q) * 1000 for q in (50, 95, 99))
        print(f"{name + ' decision p50 (ms)':32}{p50:>12.2f}")
        print(f"{name + ' decision p95 (ms)':32}{p95:>12.2f}{p95_target:>10.0f}{_met(p95 <= p95_target)}")
        line = f"{name + ' decision p99 (ms)':32}{p99:>12.2f}"
        if p99_target is not None:
            line += f"{p99_target:>10.0f}{_met(p99 <= p99_target)}"
        print(line)
        print(f"{name + ' decisions timed':32}{len(times):>12}")
    print(f"failed checks: {failed}")
    return 1 if failed else 0


def _met(ok: bool) -> str:
    return f"{'yes' if ok else 'NO':>6}"


if __name__ == "__main__":
    sys.exit(main())
