"""The most likely reading of a photographed hand that is a winning hand.

A hand photographed for scoring is a winning hand: four sets and a pair (or seven pairs) in at
most two suits (RULES.md §4). On tile designs the classifier has never seen, a hand of 14 is
often read with one or two tiles wrong, and then it is no win at all. The classifier's second
and third choices for those tiles usually hold the right one, so among the readings that change
at most ``MAX_CHANGES`` tiles to one of their alternatives, the most probable one that wins is
the hand on the table more often than not (12 of 19 proposals on the unseen designs' winning
hands, two of them in another order; the other 7 hands had more than two tiles wrong, a tile
missed, or a row read backwards, and were wrong as read too). So the bot proposes it with the
changed tiles marked for the player to check; it never decides alone.

A tile count of 14 + k is read as k kongs (four of a kind) and a winning rest; other counts
cannot be a whole winning hand, and a tile missed or seen twice by the detector cannot be fixed
by renaming tiles, so those readings are left as they are.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.analysis import is_win
from engine.tiles import COPIES, NUM_KINDS, Meld, MeldKind, Tile

# Two: on winning hands of the unseen designs, readings with three or four changes put no more
# hands right, only more wrong (docs/vision.md, "The reading that wins").
MAX_CHANGES = 2
MAX_TRIES = 5_000  # readings tried at most: ~10 ms on one core
MAX_KONGS = 4
HAND_TILES = 14
# An alternative the classifier gives less than this is not a reading, only noise.
MIN_ALTERNATIVE = 0.01


class ReadTile(Protocol):
    """One tile as the classifier read it (``vision.RecognizedTile``): its best class, how sure,
    and the other suited tiles it might be, most probable first."""

    @property
    def tile(self) -> Tile: ...

    @property
    def confidence(self) -> float: ...

    @property
    def alternatives(self) -> tuple[tuple[Tile, float], ...]: ...


@dataclass(frozen=True)
class WinReading:
    """A reading that wins: every tile in the photo's order, which ones were changed, and how much
    less probable it is than the reading as read (the product of the changed tiles' odds)."""

    tiles: tuple[Tile, ...]
    changed: tuple[int, ...]
    odds: float


def wins(tiles: Sequence[Tile]) -> bool:
    """Whether these tiles, all in hand, make a winning hand: 14 tiles, or 14 + k with k of them
    four of a kind (kongs)."""
    kongs = len(tiles) - HAND_TILES
    if not 0 <= kongs <= MAX_KONGS:
        return False
    counts = [0] * NUM_KINDS
    for tile in tiles:
        counts[tile] += 1
    if max(counts) > COPIES:
        return False
    fours = [t for t in range(NUM_KINDS) if counts[t] == COPIES]
    for chosen in itertools.combinations(fours, kongs):
        rest = list(counts)
        for tile in chosen:
            rest[tile] = 0
        if is_win(rest, [Meld(MeldKind.KONG, tile) for tile in chosen]):
            return True
    return False


def winning_reading(tiles: Sequence[ReadTile], max_changes: int = MAX_CHANGES) -> WinReading | None:
    """The most probable reading that wins and differs from ``tiles`` in at most ``max_changes``
    tiles, each changed to one of its alternatives; None when the hand already wins as read or
    no such reading exists within ``MAX_TRIES`` readings.

    Readings are tried from the most probable down (a best-first walk over sets of changes, each
    change costing the log of its odds against the tile as read), so the first that wins is the
    answer and a hand with many unsure tiles stops early.
    """
    read = [t.tile for t in tiles]
    if wins(read):
        return None
    changes = sorted(
        (max(0.0, math.log(max(t.confidence, 1e-9) / p)), i, alt)  # the walk needs costs >= 0
        for i, t in enumerate(tiles)
        for alt, p in t.alternatives
        if p >= MIN_ALTERNATIVE
    )
    if not changes:
        return None
    heap: list[tuple[float, tuple[int, ...]]] = [(changes[0][0], (0,))]
    for _ in range(MAX_TRIES):
        if not heap:
            return None
        cost, chosen = heapq.heappop(heap)
        last = chosen[-1]
        if last + 1 < len(changes):  # the two successors: one more change, or the last one moved on
            heapq.heappush(heap, (cost - changes[last][0] + changes[last + 1][0], (*chosen[:-1], last + 1)))
            if len(chosen) < max_changes:
                heapq.heappush(heap, (cost + changes[last + 1][0], (*chosen, last + 1)))
        where = [changes[k][1] for k in chosen]
        if len(set(where)) < len(where):
            continue  # two changes of one tile
        candidate = list(read)
        for k in chosen:
            candidate[changes[k][1]] = changes[k][2]
        if wins(candidate):
            return WinReading(tuple(candidate), tuple(sorted(where)), math.exp(-cost))
    return None
