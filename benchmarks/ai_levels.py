"""The level results table of docs/ai.md: each challenger against three copies of a baseline, per preset.

Run: ``python benchmarks/ai_levels.py [--seeds N] [--first-seed S] [--rules chengdu,xueliu,classic]
[--pairs hard:ai-v1,hard:greedy,...]``. Every pair is ``engine.selfplay.arena`` (the same as
``xuezhan arena``): each seed played four times with the challenger in every seat, chips per
game with a 95% interval clustered by seed. Prints one Markdown row per pair and preset, with
the issue-17 target where there is one. Seeds 77000 and up were never used for tuning (see
docs/ai.md); the hard player's strength depends on the CPU it gets within its time budget, so
run it on a quiet machine, one process per core, or name ``hard-N`` (N search rounds whatever
the clock) to measure the search itself on a loaded one. Each row also gives the challenger's
decision p95 and the search rounds per searched discard of every hard player in the games.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ai_search import SearchPlayer
from engine.rules import RuleSet
from engine.selfplay import arena

DEFAULT_PAIRS = "hard:ai-v1,hard:greedy,hard:easy,ai-v1:greedy,ai-v1:easy,easy:random,easy:ai-v1,ai-v1:random"
# (challenger, baseline, preset) -> (lowest mean, interval must be above 0)
TARGETS = {
    ("hard", "ai-v1", "chengdu"): 0.5,
    ("hard", "ai-v1", "xueliu"): 0.5,
    ("hard", "ai-v1", "classic"): 0.3,
    ("hard", "greedy", "chengdu"): 1.5,
    ("easy", "random", None): 0.0,
}


def target_of(challenger: str, baseline: str, preset: str) -> str:
    if challenger.startswith("hard-"):  # the hard player held to N rounds: the same targets
        challenger = "hard"
    if (challenger, baseline) == ("easy", "ai-v1"):
        return "< 0"
    for key in ((challenger, baseline, preset), (challenger, baseline, None)):
        if key in TARGETS:
            return f">= {TARGETS[key]:+.1f}, CI > 0" if TARGETS[key] else "> 0"
    return ""


@contextmanager
def counting_search_rounds() -> Iterator[list[int]]:
    """The rounds every hard search of the run played (one entry per searched discard). A
    budgeted ``hard`` plays as many as the machine gives it, so its row means little without
    them; the search method is wrapped for the run and put back after."""
    rounds: list[int] = []
    search = SearchPlayer._search

    def counted(self: SearchPlayer, *args: Any) -> dict[int, float]:
        out = search(self, *args)
        rounds.append(self.last_samples)
        return out

    SearchPlayer._search = counted  # type: ignore[method-assign]
    try:
        yield rounds
    finally:
        SearchPlayer._search = search  # type: ignore[method-assign]


def spread(rounds: list[int]) -> str:
    """p10 / p50 / p90 of the rounds, or a dash when nothing searched."""
    if not rounds:
        return "—"
    ordered = sorted(rounds)
    return " / ".join(str(ordered[min(len(ordered) - 1, int(q * len(ordered)))]) for q in (0.1, 0.5, 0.9))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=77000)
    parser.add_argument("--rules", default="chengdu,xueliu,classic")
    parser.add_argument("--pairs", default=DEFAULT_PAIRS, help="challenger:baseline,...")
    args = parser.parse_args()
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")]
    print(f"seeds {args.first_seed}..{args.first_seed + args.seeds - 1}, 4 games per seed")
    print("| challenger | baseline | preset | chips/game | 95% CI | win % | 花猪 % | decision p95 "
          "| search rounds p10 / p50 / p90 | target |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for preset in args.rules.split(","):
        rules = RuleSet.preset(preset)
        for challenger, baseline in pairs:
            start = time.perf_counter()
            with counting_search_rounds() as rounds:
                r = arena(challenger, baseline, rules, args.seeds, first_seed=args.first_seed)
            sc = r.score
            print(f"| {challenger} | {baseline} | {preset} | {sc.mean:+.2f} | {sc.low:+.2f} .. {sc.high:+.2f} | "
                  f"{r.win_rate:.0%} | {r.flower_pig_rate:.1%} | {r.decision_ms_p95:.0f} ms | {spread(rounds)} | "
                  f"{target_of(challenger, baseline, preset)} |", flush=True)
            print(f"<!-- {time.perf_counter() - start:.0f} s -->", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
