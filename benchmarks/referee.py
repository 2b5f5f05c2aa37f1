"""Speed of whole hands: the referee with random players, and with four default computer players.

Run: ``python benchmarks/referee.py [--hands N] [--seed S]``. Prints hands per second for four
``random`` players (mostly the referee's own cost) and for four ``ai`` players, the AI's
decision latency p50/p95, and each number as a ratio of its target (>= 200 hands/s random,
>= 20 hands/s four AIs, p95 < 20 ms). A short warm-up hand set fills the analysis tables
first, since a long-running bot plays with warm tables; the warm-up time is printed too.
Every timed hand is also checked (tiles, zero-sum, replay) and failures are reported.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ai_stats import percentile
from engine.rules import RuleSet
from engine.selfplay import named_players, play_session

TARGET_RANDOM = 200.0
TARGET_AI = 20.0
TARGET_P95_MS = 20.0


def run(names: list[str], rules: RuleSet, seed: int, hands: int, check: bool) -> tuple[float, list[float], int]:
    """(hands per second, AI decision seconds, failed checks) for ``hands`` hands."""
    times: list[float] = []
    problems = 0
    start = time.perf_counter()
    for result in play_session(rules, seed, hands, named_players(names, rules), check=check):
        for seat, name in enumerate(names):
            if name == "ai":
                times += result.decision_seconds[seat]
        problems += len(result.problems)
    return hands / (time.perf_counter() - start), times, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200, help="timed hands per configuration")
    parser.add_argument("--warmup", type=int, default=30, help="untimed AI hands first")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rules = RuleSet()

    start = time.perf_counter()
    run(["ai"] * 4, rules, args.seed + 10**6, args.warmup, check=False)
    print(f"warm-up: {args.warmup} AI hands in {time.perf_counter() - start:.1f} s")

    failed = 0
    rnd_speed, _, problems = run(["random"] * 4, rules, args.seed, args.hands, check=False)
    failed += problems
    ai_speed, ai_times, problems = run(["ai"] * 4, rules, args.seed, args.hands, check=False)
    failed += problems
    checked_speed, _, problems = run(["ai"] * 4, rules, args.seed + 10**5, max(1, args.hands // 4), check=True)
    failed += problems
    p50 = percentile(ai_times, 50) * 1000
    p95 = percentile(ai_times, 95) * 1000
    p99 = percentile(ai_times, 99) * 1000

    print(f"{'':32}{'measured':>12}{'target':>10}{'ratio':>8}")
    print(f"{'hands/s, 4 random players':32}{rnd_speed:>12.1f}{TARGET_RANDOM:>10.0f}{rnd_speed / TARGET_RANDOM:>8.2f}")
    print(f"{'hands/s, 4 ai players':32}{ai_speed:>12.1f}{TARGET_AI:>10.0f}{ai_speed / TARGET_AI:>8.2f}")
    print(f"{'hands/s, 4 ai + all checks':32}{checked_speed:>12.1f}")
    print(f"{'ai decision p50 (ms)':32}{p50:>12.2f}")
    print(f"{'ai decision p95 (ms)':32}{p95:>12.2f}{TARGET_P95_MS:>10.0f}{TARGET_P95_MS / max(p95, 1e-9):>8.2f}")
    print(f"{'ai decision p99 (ms)':32}{p99:>12.2f}")
    print(f"decisions timed: {len(ai_times)}; failed checks: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
