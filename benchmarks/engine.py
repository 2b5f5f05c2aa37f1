"""Speed of engine.analysis beside riichienv and shanten-tools (both Rust, PyPI) and PyPI ``mahjong``.

Run: ``pip install -e '.[bench]'`` then ``python benchmarks/engine.py [--hands N] [--seed S]``.
Every library gets the same seeded suit-only hands, in its own natural input form prepared
before timing (ours: three base-5 suit keys, or 27 counts; riichienv: 136-ids; shanten-tools: a
uint8 array of 34 counts; mahjong: 34 counts), and is timed in the same run, best of three
passes of each chunk of 250 calls; ours (keys), riichienv and shanten-tools take turns chunk by
chunk, so a burst of load on the shared machine hits them alike. The win check of riichienv and
shanten-tools is their shanten call (a win is -1 / 0): neither has a cheaper one for a plain
14-tile hand. "2 melds" hands hold 8 concealed tiles.

Our tables fill lazily, so a first pass over fresh hands ("cold", table misses included) is
printed separately; the comparison is on warm tables, the state of a long-running player. The
target (issue 17): ours (keys) at or below riichienv per call.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import riichienv
import shanten_tools
from mahjong.agari import Agari
from mahjong.shanten import Shanten

from engine import analysis
from engine.tiles import Meld, MeldKind

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


def complete_hands(rng: random.Random, count: int, sets: int = 4) -> list[list[int]]:
    """Random winning shapes (``sets`` sets and a pair in two suits): the win check's positive case."""
    hands = []
    while len(hands) < count:
        suits = rng.sample(range(3), 2)
        c = [0] * 27
        for _ in range(sets):
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


def per_call(fn: Callable[..., object], args: Sequence[tuple], repeat: int = 3, chunk: int = 250) -> float:
    """Microseconds per call of ``fn(*a)`` over all argument tuples: each chunk of ``chunk`` calls
    is timed ``repeat`` times and its best time kept, so a time slice lost to another process on
    the shared machine (a few ms) does not land on one library's score."""
    total = 0.0
    for i in range(0, len(args), chunk):
        part = args[i : i + chunk]
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            for a in part:
                fn(*a)
            best = min(best, time.perf_counter() - start)
        total += best
    return total / len(args) * 1e6


def side_by_side(calls: Sequence[tuple[Callable[..., object], Sequence[tuple]]], repeat: int = 3,
                 chunk: int = 250) -> list[float]:
    """Microseconds per call of each ``(fn, args)``, timed chunk by chunk in turn: chunk i of every
    library, best of ``repeat`` each, before chunk i + 1 of any, so a burst of load from another
    process lands on all of them alike rather than on whichever ran during it."""
    totals = [0.0] * len(calls)
    size = len(calls[0][1])
    for i in range(0, size, chunk):
        best = [float("inf")] * len(calls)
        for _ in range(repeat):
            for j, (fn, args) in enumerate(calls):
                part = args[i : i + chunk]
                start = time.perf_counter()
                for a in part:
                    fn(*a)
                best[j] = min(best[j], time.perf_counter() - start)
        for j in range(len(calls)):
            totals[j] += best[j]
    return [t / size * 1e6 for t in totals]


def forms(hands: Sequence[list[int]], meld_count: int = 0) -> dict[str, list[tuple]]:
    """The same hands in each library's input form (built before timing)."""
    sig = analysis.meld_signature([Meld(MeldKind.PUNG, 26)] * meld_count)
    out: dict[str, list[tuple]] = {"keys": [], "keys_win": [], "counts": [], "r136": [], "st": [], "m34": []}
    for c in hands:
        keys = analysis.suit_keys(c)
        out["keys"].append((*keys, meld_count))
        out["keys_win"].append((*keys, sig))
        out["counts"].append((c, meld_count))
        c34 = [*c, 0, 0, 0, 0, 0, 0, 0]
        out["r136"].append(([4 * t + k for t, n in enumerate(c) for k in range(n)],))
        out["st"].append((np.array(c34, dtype=np.uint8),))
        out["m34"].append((c34,))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    n = args.hands

    sets = {
        "shanten, random 13": forms(random_hands(rng, n, 13)),
        "win check, complete 14": forms(complete_hands(rng, n)),
        "win check, random 14": forms(random_hands(rng, n, 14)),
        "win check, 2 melds": forms(complete_hands(rng, n, sets=2), meld_count=2),
    }
    melds2 = (Meld(MeldKind.PUNG, 26), Meld(MeldKind.PUNG, 26))
    print(f"{n} hands per set, seed {args.seed}; riichienv {_v('riichienv')}, shanten-tools "
          f"{_v('shanten-tools')}, mahjong {_v('mahjong')}")

    for name, f in sets.items():  # cold: the first pass fills our tables
        fn = analysis.shanten_keys if name.startswith("shanten") else analysis.is_win_keys
        cold = per_call(fn, f["keys" if fn is analysis.shanten_keys else "keys_win"], repeat=1)
        print(f"cold first pass   {name:<24}{cold:8.2f} us/call (tables filling)")

    print("\nwarm tables, us per call (best of 3 per chunk of 250 calls; keys, riichienv and shanten-tools "
          "timed chunk by chunk in turn):")
    head = f"{'':24}{'keys':>8}{'counts':>8}{'riichienv':>11}{'shanten-t':>11}{'mahjong':>9}   keys <= riichienv?"
    print(head)
    ok = True
    for name, f in sets.items():
        if name.startswith("shanten"):
            ours_fn, ours_args = analysis.shanten_keys, f["keys"]
            counts = per_call(analysis.shanten, f["counts"])
            theirs_m = per_call(Shanten.calculate_shanten, f["m34"])
        else:
            ours_fn, ours_args = analysis.is_win_keys, f["keys_win"]
            with_melds = [(c, melds2 if k else ()) for c, k in f["counts"]]
            counts = per_call(analysis.is_win, with_melds)
            theirs_m = per_call(Agari.is_agari, f["m34"])
        ours, theirs_r, theirs_s = side_by_side(
            [(ours_fn, ours_args), (riichienv.calculate_shanten, f["r136"]), (shanten_tools.shanten, f["st"])]
        )
        met = ours <= theirs_r
        ok &= met
        print(f"{name:<24}{ours:8.2f}{counts:8.2f}{theirs_r:11.2f}{theirs_s:11.2f}{theirs_m:9.2f}   "
              f"{'met' if met else 'NOT met'} ({theirs_r / ours:.1f}x)")
    print(f"table sizes: {len(analysis._KEY_CLASS)} suit keys, {len(analysis._COMBINED)} combinations")
    return 0 if ok else 1


def _v(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    raise SystemExit(main())
