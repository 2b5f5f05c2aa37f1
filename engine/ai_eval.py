"""How good is a hand? The computer player's yardstick, from what one seat can see.

A hand is judged by the chance of completing it before the wall runs out and by what the
completed hand would be worth. Each *route* — the plain standard hand, 清一色 (one suit),
对对胡 (all pungs) and 七对 (seven pairs) — has its own distance to completion (shanten)
and its own live outs (the unseen copies of the tiles that shorten that distance), and its
expected value is ``multiplier × P(complete)``; the hand is worth its best route. A ready
hand is valued exactly: every wait is scored by ``engine.scoring`` and weighted by how many
copies of it are still unseen, so a wait on dead tiles is worth nothing.

Shanten, waits and effective tiles come from ``engine.analysis``; winning values from
``engine.scoring``. Nothing here knows the rules of play — only how far a hand is from a win.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from engine import analysis
from engine.rules import RuleSet
from engine.scoring import wait_scores
from engine.tiles import COPIES, Meld, Tile, tiles_of

SUIT_SLICES = (slice(0, 9), slice(9, 18), slice(18, 27))

# A discard can also complete a hand (win, pung), so each draw is worth a bit more than one
# look at the wall.
CLAIM_FACTOR = 1.4
# Later steps toward a win have fewer outs than the first one.
STEP_DECAY = 0.75


@dataclass(frozen=True, slots=True)
class Outlook:
    """What the seat knows beyond its own hand: unseen copies and how many draws are left."""

    unseen: tuple[int, ...]  # per tile kind: copies not visible to this seat
    draws_left: float  # this seat's expected remaining draws
    rules: RuleSet

    @property
    def unseen_total(self) -> int:
        return max(1, sum(self.unseen))


def suit_totals(counts: Sequence[int]) -> list[int]:
    return [sum(counts[s]) for s in SUIT_SLICES]


def only_suit(counts: Sequence[int], suit: int) -> list[int]:
    """The counts with every other suit removed."""
    out = [0] * len(counts)
    out[SUIT_SLICES[suit]] = counts[SUIT_SLICES[suit]]
    return out


def completion_probability(steps: int, outs: float, outlook: Outlook) -> float:
    """P(at least ``steps`` improvements in the draws left), a Poisson estimate.

    The per-draw rate is ``outs / unseen``; it is damped per extra step because each
    improvement uses up outs.
    """
    if steps <= 0:
        return 1.0
    if outs <= 0:
        return 0.0
    rate = outs / outlook.unseen_total
    lam = outlook.draws_left * CLAIM_FACTOR * rate * STEP_DECAY ** (steps - 1)
    # P(N >= steps) for N ~ Poisson(lam)
    term = math.exp(-lam)
    below = term
    for k in range(1, steps):
        term *= lam / k
        below += term
    return max(0.0, 1.0 - below)


def live_outs(tiles: Sequence[Tile], outlook: Outlook) -> int:
    return sum(outlook.unseen[t] for t in tiles)


def ready_value(concealed: Sequence[Tile], melds: Sequence[Meld], outlook: Outlook) -> tuple[float, int]:
    """A ready hand's (mean multiplier over live waits, live wait count)."""
    scores = wait_scores(concealed, melds, outlook.rules)
    live = 0
    total = 0.0
    for tile, sc in scores.items():
        n = outlook.unseen[tile]
        live += n
        total += n * sc.multiplier
    if live == 0:
        return 0.0, 0
    return total / live, live


def seven_pairs_shanten(counts: Sequence[int]) -> int:
    """Distance to 七对 for a concealed hand of 13 or 14 tiles."""
    pairs = sum(c // 2 for c in counts)
    return 6 - min(pairs, 7)


def all_pungs_shanten(counts: Sequence[int], meld_count: int) -> tuple[int, list[Tile]]:
    """Distance to 对对胡 counting only pungs and pairs, with the tiles that shorten it."""
    pungs = sum(1 for c in counts if c >= 3)
    pairs = [t for t, c in enumerate(counts) if c == 2]
    singles = [t for t, c in enumerate(counts) if c == 1]
    sets = min(4, pungs + meld_count)
    eyes = 1 if pairs else 0
    partial = min(len(pairs) - eyes, 4 - sets)
    distance = 8 - 2 * sets - partial - eyes
    useful = list(pairs)
    if sets + len(pairs) < 5:
        useful += singles
    return distance, useful


def route_values(counts: Sequence[int], melds: Sequence[Meld], outlook: Outlook) -> float:
    """Expected multiplier of a hand waiting to draw (3k+1 concealed tiles), best route."""
    meld_count = len(melds)
    rules = outlook.rules
    root_factor = 2 ** sum(1 for m in melds if m.is_kong)
    best = 0.0

    standard = analysis.shanten(counts, meld_count)
    if standard == 0:
        mean, live = ready_value(tiles_of(counts), melds, outlook)
        best = mean * completion_probability(1, live, outlook)
        if live:
            return best + 0.01 * live
    else:
        outs = live_outs(analysis.effective_tiles(counts, meld_count), outlook)
        best = root_factor * completion_probability(standard + 1, outs, outlook)

    totals = suit_totals(counts)
    meld_suits = {m.tile // 9 for m in melds}
    major = max(range(3), key=lambda s: totals[s])
    minor_tiles = sum(totals) - totals[major]
    if meld_suits <= {major} and minor_tiles <= 5 and minor_tiles:
        flush = only_suit(counts, major)
        dist = analysis.shanten(flush, meld_count)
        outs = live_outs([t for t in analysis.effective_tiles(flush, meld_count) if t // 9 == major], outlook)
        best = max(best, _cap(4 * root_factor, rules) * completion_probability(dist + 1, outs, outlook))

    pung_dist, pung_useful = all_pungs_shanten(counts, meld_count)
    if pung_dist <= standard + 1 and pung_dist > 0:
        outs = live_outs(pung_useful, outlook)
        best = max(best, _cap(2 * root_factor, rules) * completion_probability(pung_dist + 1, outs, outlook))

    if not melds:
        sp = seven_pairs_shanten(counts)
        if 0 < sp <= standard + 1:
            singles = [t for t, c in enumerate(counts) if c % 2 == 1]
            outs = live_outs(singles, outlook)
            value = 4 * (4 if minor_tiles == 0 else 1)
            best = max(best, _cap(value, rules) * completion_probability(sp + 1, outs, outlook))
    return best


def _cap(value: int, rules: RuleSet) -> int:
    return value if rules.cap is None else min(value, rules.cap)


def rank_discards(
    counts: Sequence[int], melds: Sequence[Meld], outlook: Outlook, candidates: Sequence[Tile]
) -> list[tuple[float, Tile]]:
    """Each candidate discard with the value of the hand left, best first."""
    work = list(counts)
    ranked: list[tuple[float, Tile]] = []
    for tile in sorted(set(candidates)):
        work[tile] -= 1
        ranked.append((route_values(work, melds, outlook), tile))
        work[tile] += 1
    ranked.sort(key=lambda vt: (-vt[0], vt[1]))
    return ranked


# --- before play: swap three and the void suit ---------------------------------------------


def suit_strength(counts: Sequence[int], suit: int) -> float:
    """How much a suit is worth keeping: its tiles, plus pairs and neighbours that build sets."""
    c = counts[SUIT_SLICES[suit]]
    value = 0.0
    for r in range(9):
        if not c[r]:
            continue
        value += c[r]
        if c[r] >= 2:
            value += 0.6 + (0.6 if c[r] >= 3 else 0.0)
        if r + 1 < 9 and c[r + 1]:
            value += 0.5
        if r + 2 < 9 and c[r + 2]:
            value += 0.25
    return value


def choose_void(counts: Sequence[int], melds: Sequence[Meld] = ()) -> int:
    """The suit to void (定缺): the weakest, never one already declared in a meld."""
    meld_suits = {m.tile // 9 for m in melds}
    options = [s for s in range(3) if s not in meld_suits] or [0, 1, 2]
    return min(options, key=lambda s: (suit_strength(counts, s), s))


def choose_swap(counts: Sequence[int]) -> list[Tile]:
    """Three tiles of one suit to pass (换三张), costing the hand the least.

    The suit passed is the weakest one holding three tiles (it will usually be voided);
    within it the three tiles whose loss hurts the suit's structure least.
    """
    options = [s for s in range(3) if sum(counts[SUIT_SLICES[s]]) >= COPIES - 1]
    suit = min(options, key=lambda s: (suit_strength(counts, s), s))
    work = list(counts)
    chosen: list[Tile] = []
    for _ in range(3):
        held = [t for t in range(suit * 9, suit * 9 + 9) if work[t]]
        best_tile = max(held, key=lambda t: (_strength_without(work, suit, t), t))
        work[best_tile] -= 1
        chosen.append(best_tile)
    return sorted(chosen)


def _strength_without(counts: list[int], suit: int, tile: Tile) -> float:
    counts[tile] -= 1
    value = suit_strength(counts, suit)
    counts[tile] += 1
    return value
