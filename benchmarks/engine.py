"""Speed of engine.analysis against PyPI ``mahjong`` on the same seeded suit-only hands.

Run: ``python benchmarks/engine.py [--hands N] [--seed S]``. Prints microseconds per call and the
ratio (mahjong time / ours) for the win check, shanten and waits. Our tables fill lazily, so the
first pass over fresh hands is reported separately ("cold"); the ratios are measured on a second,
different set of hands after the first has warmed the tables (the state a computer player is in
after a few games), so they still include every table miss those new hands cause.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mahjong.agari import Agari
from mahjong.shanten import Shanten

from engine import analysis

WALL = [t for t in range(27) for _ in range(4)]


def random_hands(rng: random.Random, count: int, size: int) -> list[list[int]]:
    """``count`` hands of ``size`` tiles drawn from a shuffled 108-tile wall, as count vectors."""
    hands = []
    for _ in range(count):
        c = [0] * 27
        for t in rng.sample(WALL, size):
            c[t] += 1
        hands.append(c)
    return hands


def complete_hands(rng: random.Random, count: int) -> list[list[int]]:
    """Random winning shapes (four sets and a pair in two suits): the win check's positive case."""
    hands = []
    while len(hands) < count:
        suits = rng.sample(range(3), 2)
        c = [0] * 27
        for _ in range(4):
            base = rng.choice(suits) * 9
            if rng.random() < 0.4:
                c[base + rng.randrange(9)] += 3
            else:
                r = base + rng.randrange(7)
                for t in (r, r + 1, r + 2):
                    c[t] += 1
        c[rng.choice(suits) * 9 + rng.randrange(9)] += 2
        if max(c) <= 4:
            hands.append(c)
    return hands


def per_call(fn: Callable[[list[int]], object], hands: Sequence[list[int]], repeat: int = 3) -> float:
    """Best-of-``repeat`` microseconds per call over all hands."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for h in hands:
            fn(h)
        best = min(best, time.perf_counter() - start)
    return best / len(hands) * 1e6


def once(fn: Callable[[list[int]], object], hands: Sequence[list[int]]) -> float:
    return per_call(fn, hands, repeat=1)


def mahjong_waits(c34: list[int]) -> list[int]:
    """Waits the way a caller of ``mahjong`` would find them: try each tile with ``is_agari``."""
    out = []
    for t in range(27):
        if c34[t] < 4:
            c34[t] += 1
            if Agari.is_agari(c34):
                out.append(t)
            c34[t] -= 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    n = args.hands

    warmup13, warmup14 = random_hands(rng, n, 13), random_hands(rng, n, 14)
    hands13, hands14 = random_hands(rng, n, 13), random_hands(rng, n, 14)
    wins = complete_hands(rng, n)
    to34 = [[*c, 0, 0, 0, 0, 0, 0, 0] for c in (*hands13, *hands14, *wins)]
    m13, m14, mwins = to34[:n], to34[n : 2 * n], to34[2 * n :]

    print(f"{n} hands per set, seed {args.seed}, mahjong {_mahjong_version()}")
    cold = [
        ("win check", once(analysis.is_win, warmup14)),
        ("shanten 13", once(analysis.shanten, warmup13)),
        ("shanten 14", once(analysis.shanten, warmup14)),
        ("waits", once(analysis.waits, warmup13)),
    ]
    for name, us in cold:
        print(f"cold first pass  {name:<22} {us:8.2f} us/call (tables filling)")

    rows = [
        ("win check, random 14", analysis.is_win, Agari.is_agari, hands14, m14, 10),
        ("win check, complete 14", analysis.is_win, Agari.is_agari, wins, mwins, 10),
        ("shanten, random 13", analysis.shanten, Shanten.calculate_shanten, hands13, m13, 30),
        ("shanten, random 14", analysis.shanten, Shanten.calculate_shanten, hands14, m14, 30),
        ("waits, random 13", analysis.waits, mahjong_waits, hands13, m13, None),
    ]
    print("\nafter the warm-up set: 'new' = first sight of a fresh set (table misses included),")
    print("'warm' = the same set again (all hits); ratio = mahjong / ours")
    print(f"{'':24}{'new us':>8}{'warm us':>9}{'mahjong us':>12}{'ratio new':>11}{'ratio warm':>11}  target")
    for name, ours_fn, theirs_fn, ours_hands, their_hands, target in rows:
        new = once(ours_fn, ours_hands)
        warm = per_call(ours_fn, ours_hands)
        theirs = per_call(theirs_fn, their_hands)
        verdict = ""
        if target is not None:
            verdict = f">= {target}x: warm {_met(theirs / warm, target)}, new {_met(theirs / new, target)}"
        ratios = f"{theirs / new:10.1f}x{theirs / warm:10.1f}x"
        print(f"{name:<24}{new:8.2f}{warm:9.2f}{theirs:12.2f}{ratios}  {verdict}")
    print(f"table sizes: {len(analysis._SUIT_CLASS)} suit shapes, {len(analysis._COMBINED)} combinations")
    return 0


def _met(ratio: float, target: float) -> str:
    return "met" if ratio >= target else "NOT met"


def _mahjong_version() -> str:
    from importlib.metadata import version

    return version("mahjong")


if __name__ == "__main__":
    raise SystemExit(main())
