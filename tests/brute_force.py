"""A deliberately simple, independent enumerator of winning hands, used only to check engine.analysis.

It works on sorted tile lists (not count vectors or tables) and tries every grouping the slow way,
so a shared mistake with the table-driven code is unlikely.
"""

from __future__ import annotations

from collections import Counter

TILES = range(27)
PUNGS = [(t, t, t) for t in TILES]
RUNS = [(t, t + 1, t + 2) for t in TILES if t % 9 <= 6]
SET_SHAPES = PUNGS + RUNS


def _remove(tiles: list[int], group: tuple[int, ...]) -> list[int] | None:
    rest = list(tiles)
    for t in group:
        if t not in rest:
            return None
        rest.remove(t)
    return rest


def all_groupings(tiles: list[int]) -> set[tuple[int, tuple[tuple[str, int], ...]]]:
    """Every (pair, sorted sets) reading of the tiles as sets plus one pair."""
    out: set[tuple[int, tuple[tuple[str, int], ...]]] = set()
    for pair in sorted(set(tiles)):
        rest = _remove(tiles, (pair, pair))
        if rest is None:
            continue
        for sets in _set_groupings(rest):
            out.add((pair, tuple(sorted(sets, key=lambda s: (s[1], s[0])))))
    return out


def _set_groupings(tiles: list[int]) -> list[list[tuple[str, int]]]:
    if not tiles:
        return [[]]
    found = []
    for shape in SET_SHAPES:
        if shape[0] != min(tiles):  # the smallest tile must start some set
            continue
        rest = _remove(tiles, shape)
        if rest is None:
            continue
        kind = "pung" if shape[0] == shape[1] else "run"
        for more in _set_groupings(rest):
            found.append([(kind, shape[0]), *more])
    return found


def is_seven_pairs(tiles: list[int]) -> bool:
    return len(tiles) == 14 and all(n % 2 == 0 for n in Counter(tiles).values())


def is_win(tiles: list[int], meld_tiles: list[int] = ()) -> bool:  # type: ignore[assignment]
    """``meld_tiles``: one tile per declared meld (its size does not matter to the shape)."""
    if len(tiles) != 14 - 3 * len(meld_tiles):
        return False
    if len({t // 9 for t in [*tiles, *meld_tiles]}) > 2:
        return False
    return bool(all_groupings(sorted(tiles))) or (not meld_tiles and is_seven_pairs(tiles))


def waits(tiles: list[int], meld_tiles: list[int] = (), meld_sizes: list[int] = ()) -> list[int]:  # type: ignore[assignment]
    held = Counter(tiles)
    for t, size in zip(meld_tiles, meld_sizes, strict=True):
        held[t] += size
    return [t for t in TILES if held[t] < 4 and is_win([*tiles, t], meld_tiles)]


def shanten(tiles: list[int], meld_count: int = 0) -> int:
    """Fewest draws to some complete hand (four copies at most of a tile), minus one.

    Tries budgets 0, 1, 2, ... and searches every target hand of (4 - meld_count) sets and a
    pair (and seven pairs when nothing is melded) that costs no more draws than the budget.
    """
    have = Counter(tiles)
    need = 4 - meld_count
    for budget in range(20):
        if _standard_within(have, need, budget) or (meld_count == 0 and _pairs_within(have, budget)):
            return budget - 1
    raise AssertionError("unreachable")


def _standard_within(have: Counter[int], need: int, budget: int) -> bool:
    target: Counter[int] = Counter()

    def cost_of(group: tuple[int, ...]) -> int | None:
        extra = 0
        for t in set(group):
            k = group.count(t)
            if target[t] + k > 4:
                return None
            extra += max(0, target[t] + k - have[t]) - max(0, target[t] - have[t])
        return extra

    def search(start: int, sets_left: int, spent: int) -> bool:
        if sets_left == 0:
            for t in TILES:
                c = cost_of((t, t))
                if c is not None and spent + c <= budget:
                    return True
            return False
        for i in range(start, len(SET_SHAPES)):
            shape = SET_SHAPES[i]
            c = cost_of(shape)
            if c is None or spent + c > budget:
                continue
            target.update(shape)
            ok = search(i, sets_left - 1, spent + c)
            target.subtract(shape)
            if ok:
                return True
        return False

    return search(0, need, 0)


def _pairs_within(have: Counter[int], budget: int) -> bool:
    """Seven pairs, a four-of-a-kind being two pairs.

    Each tile kind offers two pair slots whose draw costs never decrease (first pair, then the
    second from the other two copies), so the seven cheapest slots over all 27 kinds are optimal.
    """
    slots = []
    for t in TILES:
        first = max(0, 2 - have[t])
        slots += [first, max(0, 4 - have[t]) - first]
    return sum(sorted(slots)[:7]) <= budget
