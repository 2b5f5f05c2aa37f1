"""Hand analysis: is it a win, every way it is one, how far it is from one, and what it waits on.

Everything is table-driven per suit. Sichuan mahjong has no honours, so a hand is three independent
9-rank count vectors; each vector (a 9-tuple) is looked up in lazily filled tables that hold what
the hand-level answer needs from that suit, and the three entries are combined with a few integer
operations. A computer player calls these functions thousands of times per decision, and after the
first few hands almost every lookup is a hit (docs/analysis.md has the details and the numbers).

Counts are ``Sequence[int]`` of length 27 indexed by tile (see ``engine.tiles``), concealed tiles
only; declared melds are passed separately.

>>> from engine.tiles import counts_of, parse_tiles, tile_name
>>> hand = counts_of(parse_tiles("123m345m789m234p66p"))
>>> is_win(hand)
True
>>> shanten(counts_of(parse_tiles("123m345m789m23p66p")))
0
>>> [tile_name(t) for t in waits(counts_of(parse_tiles("123m345m789m23p66p")))]
['1p', '4p']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Literal

from engine.tiles import COPIES, Meld, Tile

__all__ = [
    "Decomposition",
    "TileSet",
    "best_discards",
    "decompositions",
    "effective_tiles",
    "is_seven_pairs",
    "is_win",
    "is_win_keys",
    "meld_signature",
    "shanten",
    "shanten_keys",
    "suit_keys",
    "waits",
]

SETS_NEEDED = 4  # a winning hand is four sets and a pair
_BAD_COUNTS = "hand counts must be 27 whole numbers from 0 to 4 (one per tile)"


@dataclass(frozen=True, slots=True)
class TileSet:
    """A concealed set in a decomposition: a pung (刻子) of ``first`` or a run (顺子) starting at it."""

    kind: Literal["pung", "run"]
    first: Tile

    @property
    def tiles(self) -> tuple[Tile, Tile, Tile]:
        f = self.first
        return (f, f, f) if self.kind == "pung" else (f, f + 1, f + 2)


@dataclass(frozen=True, slots=True)
class Decomposition:
    """One reading of concealed tiles as sets plus a pair (将); melds are not included."""

    pair: Tile
    sets: tuple[TileSet, ...]


class _LazyTable(dict):  # type: ignore[type-arg]
    """A dict that computes a missing entry once; a hit costs one C-level dict lookup."""

    __slots__ = ("_build",)

    def __init__(self, build: Callable[[object], object]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, key: object) -> object:
        value = self._build(key)
        self[key] = value
        return value


def _suit_vector(key: tuple[int, ...]) -> tuple[int, ...]:
    """Check one suit's 9 counts on a table miss: a wrong length or count is the caller's bad input."""
    if len(key) != 9 or not all(isinstance(c, int) and 0 <= c <= COPIES for c in key):
        raise ValueError(_BAD_COUNTS)
    return key


def _suit_keys(counts: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The three table keys of a hand (slicing then ``tuple`` is the cheapest hashable form)."""
    return tuple(counts[:9]), tuple(counts[9:18]), tuple(counts[18:])


# --- exact decomposition of one suit ---------------------------------------------------------


def _splits(v: tuple[int, ...], with_pair: bool) -> bool:
    """Can ``v`` be split exactly into sets (plus one pair when ``with_pair``)?"""
    c = list(v)
    if with_pair:
        for i in range(9):
            if c[i] >= 2:
                c[i] -= 2
                if _splits(tuple(c), False):
                    return True
                c[i] += 2
        return False
    for i in range(9):
        n = c[i]
        if n == 0:
            continue
        if n >= 3:  # with the lowest tile, three of a kind as a pung is never worse than as runs
            n -= 3
        if n:
            if i > 6 or c[i + 1] < n or c[i + 2] < n:
                return False
            c[i + 1] -= n
            c[i + 2] -= n
        c[i] = 0
    return True


def _all_splits(v: tuple[int, ...], with_pair: bool) -> list[tuple[int | None, tuple[tuple[str, int], ...]]]:
    """Every distinct (pair rank, sorted sets) reading of one suit."""
    found: set[tuple[int | None, tuple[tuple[str, int], ...]]] = set()

    def walk(c: list[int], pair: int | None, sets: list[tuple[str, int]], need_pair: bool) -> None:
        i = next((r for r in range(9) if c[r]), 9)
        if i == 9:
            if not need_pair:
                found.add((pair, tuple(sorted(sets, key=lambda s: (s[1], s[0])))))
            return
        if need_pair and c[i] >= 2:
            c[i] -= 2
            walk(c, i, sets, False)
            c[i] += 2
        if c[i] >= 3:
            c[i] -= 3
            walk(c, pair, [*sets, ("pung", i)], need_pair)
            c[i] += 3
        if i <= 6 and c[i + 1] and c[i + 2]:
            for r in (i, i + 1, i + 2):
                c[r] -= 1
            walk(c, pair, [*sets, ("run", i)], need_pair)
            for r in (i, i + 1, i + 2):
                c[r] += 1

    walk(list(v), None, [], with_pair)
    return sorted(found, key=lambda d: (-1 if d[0] is None else d[0], d[1]))


# --- win check table -------------------------------------------------------------------------
# One int per suit, summed over the three suits; the sum decodes uniquely:
#   tiles * 256 + 64 * (has an odd count) + 16 * (non-empty) + 4 * (cannot split) + (splits with pair)

_ODD, _PRESENT, _BAD, _PAIR = 64, 16, 4, 1
_HOPELESS = _ODD | _BAD  # fits neither sets-and-a-pair nor seven pairs: no win whatever the rest


def _win_code(key: object) -> int:
    v = _suit_vector(key)  # type: ignore[arg-type]
    n = sum(v)
    code = n * 256
    if n:
        code += _PRESENT
    if any(c & 1 for c in v):
        code += _ODD
    if n % 3 == 1 or not _splits(v, n % 3 == 2):
        code += _BAD
    elif n % 3 == 2:
        code += _PAIR
    return code


_WIN_CODE = _LazyTable(_win_code)


def _winning_sums(tiles: int, allow_seven_pairs: bool) -> frozenset[int]:
    sums = set()
    for odd, present, bad, pair in product(range(4), repeat=4):
        if present > 2 or present == 0:
            continue  # Sichuan: at most two suits in the whole hand
        standard = bad == 0 and pair == 1
        seven = allow_seven_pairs and odd == 0
        if standard or seven:
            sums.add(tiles * 256 + odd * _ODD + present * _PRESENT + bad * _BAD + pair * _PAIR)
    return frozenset(sums)


_WIN_NO_MELDS = _winning_sums(14, allow_seven_pairs=True)


def is_win(counts: Sequence[int], melds: Sequence[Meld] = ()) -> bool:
    """Do the concealed tiles with these melds make a winning hand (RULES.md §4)?

    Four sets and a pair, or seven pairs when nothing is declared (a four-of-a-kind is two
    pairs), and at most two suits counting the melds. Concealed tiles must number 14 - 3 × melds.

    >>> from engine.tiles import counts_of, parse_tiles
    >>> is_win(counts_of(parse_tiles("11224444557799m")))
    True
    >>> is_win(counts_of(parse_tiles("123m456p789s11m22m")))  # three suits
    False
    """
    # The last suit first: its slice also catches a wrong length. Most random hands stop here.
    last = _WIN_CODE[tuple(counts[18:])]
    if last & _HOPELESS == _HOPELESS:
        return False
    total = last + _WIN_CODE[tuple(counts[:9])] + _WIN_CODE[tuple(counts[9:18])]
    if not melds:
        return total in _WIN_NO_MELDS
    return _win_with_melds(counts, total, melds)


def _win_with_melds(counts: Sequence[int], total: int, melds: Sequence[Meld]) -> bool:
    k = len(melds)
    if k > SETS_NEEDED:
        raise ValueError(f"a hand has at most {SETS_NEEDED} melds, got {k}")
    low = total & 255
    if total >> 8 != 14 - 3 * k or (low >> 2) & 3 or low & 3 != 1:
        return False
    suits = {m.tile // 9 for m in melds}
    suits.update(s for s in range(3) if any(counts[9 * s : 9 * s + 9]))
    return len(suits) <= 2


def is_seven_pairs(counts: Sequence[int]) -> bool:
    """Are these 14 concealed tiles seven pairs (七对)? A four-of-a-kind counts as two pairs.

    The two-suit rule is ``is_win``'s to check, not this shape test's.

    >>> from engine.tiles import counts_of, parse_tiles
    >>> is_seven_pairs(counts_of(parse_tiles("11112244m558899p")))
    True
    """
    total = sum(_WIN_CODE[key] for key in _suit_keys(counts))
    return total >> 8 == 14 and not total & _ODD * 3


def decompositions(counts: Sequence[int]) -> list[Decomposition]:
    """Every reading of the concealed tiles as sets and a pair (standard form; not seven pairs).

    Empty when there is none. The suit rule is not applied here (``is_win`` does that).

    >>> from engine.tiles import counts_of, parse_tiles
    >>> for d in decompositions(counts_of(parse_tiles("111222333m99m"))):
    ...     print(d.pair, [(s.kind, s.first) for s in d.sets])
    8 [('pung', 0), ('pung', 1), ('pung', 2)]
    8 [('run', 0), ('run', 0), ('run', 0)]
    """
    keys = _suit_keys(counts)
    codes = [_WIN_CODE[key] for key in keys]
    if any(c & _BAD for c in codes) or sum(c & _PAIR for c in codes) != 1:
        return []
    per_suit = [_SPLITS[key] for key in keys]
    out = []
    for combo in product(*per_suit):
        pair = next(9 * s + p for s, (p, _) in enumerate(combo) if p is not None)
        sets = tuple(TileSet(kind, 9 * s + r) for s, (_, sets) in enumerate(combo) for kind, r in sets)  # type: ignore[arg-type]
        out.append(Decomposition(pair, sets))
    return out


def _suit_splits(key: object) -> list[tuple[int | None, tuple[tuple[str, int], ...]]]:
    v = _suit_vector(key)  # type: ignore[arg-type]
    return _all_splits(v, sum(v) % 3 == 2)


_SPLITS = _LazyTable(_suit_splits)


# --- shanten ---------------------------------------------------------------------------------
# Exact definition: the fewest draws that complete the hand, each draw replacing a tile that is
# not kept, never using a fifth copy of a tile, minus one (so -1 = complete, 0 = ready).
# Draws = (3 × sets needed + 2) - (most hand tiles that fit one complete target). Per suit we
# store K[m][p]: the most of that suit's tiles a target of m sets and p pairs (p = 0/1) in that
# suit can keep. Suits combine by max-plus convolution; every (K, pair count, tiles) triple is
# interned as a small int "class" so combining two classes is itself a cached table lookup.


def _kept_table(v: tuple[int, ...]) -> tuple[int, ...]:
    """K[m * 2 + p] for m = 0..4 sets and p = 0..1 pairs: the most tiles of ``v`` kept."""
    return _kept_capped(v) if COPIES in v else _kept_uncapped(v)


def _kept_uncapped(v: tuple[int, ...]) -> tuple[int, ...]:
    """``_kept_table`` for shapes with at most three copies of every tile.

    The lowest tile is either not kept or the lowest kept tile of one group: a whole pung or run,
    a pair (as the pair, or as two thirds of a pung), two thirds of a run (adjacent or with a gap),
    or a lone seed of a set or of the pair. Memoised on the rest of the vector, so a new suit
    shape mostly reuses shapes already seen. The four-copy limit is not modelled: no shape with at
    most three copies of each tile needs a fifth copy to reach its optimum (checked exhaustively
    against ``_kept_capped`` for every such shape of up to 14 tiles; tests repeat it for small ones).
    """
    hit = _KEPT.get(v)
    if hit is not None:
        return hit
    i = 0
    while not v[i]:
        i += 1
    c = list(v)
    c[i] -= 1
    rest = tuple(c)
    best = list(_kept_uncapped(rest) if any(rest) else _NOTHING_KEPT)  # the lowest tile is not kept
    c[i] += 1

    def take(ranks: tuple[int, ...], sets: int, pair: int) -> None:
        for r in ranks:
            c[r] -= 1
        rest = tuple(c)
        sub = _kept_uncapped(rest) if any(rest) else _NOTHING_KEPT
        for r in ranks:
            c[r] += 1
        kept = len(ranks)
        for m in range(5 - sets):
            for p in range(2 - pair):
                value = sub[2 * m + p] + kept
                j = 2 * (m + sets) + p + pair
                if value > best[j]:
                    best[j] = value

    take((i,), 1, 0)
    take((i,), 0, 1)
    if v[i] >= 2:
        take((i, i), 1, 0)
        take((i, i), 0, 1)
        if v[i] >= 3:
            take((i, i, i), 1, 0)
    if i <= 7 and v[i + 1]:
        take((i, i + 1), 1, 0)
    if i <= 6 and v[i + 2]:
        take((i, i + 2), 1, 0)
        if v[i + 1]:
            take((i, i + 1, i + 2), 1, 0)
    table = _KEPT[v] = tuple(best)
    return table


_NOTHING_KEPT = (0,) * 10
_NO = -99  # an unreachable entry of the capped DP
_KEPT: dict[tuple[int, ...], tuple[int, ...]] = {}


def _kept_capped(v: tuple[int, ...]) -> tuple[int, ...]:
    """``_kept_table`` for shapes holding all four copies of a tile, by a DP over ranks.

    State: (runs started two ranks back, runs started one rank back, sets so far, pair so far),
    each with the most hand tiles kept; the target's count at every rank is capped at four copies.
    """
    states: dict[tuple[int, int, int, int], int] = {(0, 0, 0, 0): 0}
    for i in range(9):
        vi = v[i]
        # More runs from rank i than the most tiles held at any of its three ranks keep nothing
        # more: dropping one leaves every rank's target still at or above the hand's count.
        useful_runs = max(v[i : i + 3]) if i <= 6 else 0
        new: dict[tuple[int, int, int, int], int] = {}
        for (x, y, m, p), kept in states.items():
            open_runs = x + y
            max_runs = min(COPIES - open_runs, SETS_NEEDED - m, useful_runs)
            for r in range(max_runs + 1):
                for pung in (0, 1) if vi and m + r < SETS_NEEDED else (0,):
                    for pair in (0, 1) if vi and not p else (0,):
                        target = open_runs + r + 3 * pung + 2 * pair
                        if target > COPIES:
                            continue
                        state = (y, r, m + r + pung, p + pair)
                        value = kept + (vi if vi < target else target)
                        if new.get(state, -1) < value:
                            new[state] = value
        states = new
    table = [_NO] * 10
    for (_, _, m, p), kept in states.items():
        table[2 * m + p] = max(table[2 * m + p], kept)
    # Groups that keep nothing can be placed anywhere (a suit target of at most 14 tiles always
    # leaves room), so K is the best over at most m sets and at most p pairs.
    for m in range(5):
        for p in range(2):
            best = table[2 * m + p]
            if m:
                best = max(best, table[2 * (m - 1) + p])
            if p:
                best = max(best, table[2 * m])
            table[2 * m + p] = best
    return tuple(table)


_CLASS_ID: dict[tuple[tuple[int, ...], int, int], int] = {}
_CLASSES: list[tuple[tuple[int, ...], int, int]] = []


def _intern(cls: tuple[tuple[int, ...], int, int]) -> int:
    cid = _CLASS_ID.get(cls)
    if cid is None:
        cid = _CLASS_ID[cls] = len(_CLASSES)
        _CLASSES.append(cls)
    return cid


def _suit_class(key: object) -> int:
    v = _suit_vector(key)  # type: ignore[arg-type]
    kept = _kept_table(v) if any(v) else _NOTHING_KEPT
    return _intern((kept, sum(c // 2 for c in v), sum(v)))


_SUIT_CLASS = _LazyTable(_suit_class)
_SHIFT = 24  # class ids stay far below 2**24


def _combine(key: object) -> int:
    a, b = _CLASSES[key >> _SHIFT], _CLASSES[key & ((1 << _SHIFT) - 1)]  # type: ignore[operator]
    ka, kb = a[0], b[0]
    table = []
    for m in range(5):
        for p in range(2):
            best = 0
            for ma in range(m + 1):
                for pa in range(p + 1):
                    value = ka[2 * ma + pa] + kb[2 * (m - ma) + p - pa]
                    if value > best:
                        best = value
            table.append(best)
    return _intern((tuple(table), a[1] + b[1], a[2] + b[2]))


_COMBINED = _LazyTable(_combine)


def _shanten_row(cid: object) -> tuple[int | None, ...]:
    """Shanten by meld count 0..4 for a whole-hand class; None where the tile count is wrong."""
    kept, pairs, n = _CLASSES[cid]  # type: ignore[index]
    row: list[int | None] = []
    for k in range(SETS_NEEDED + 1):
        need = SETS_NEEDED - k
        if n > 3 * need + 2:
            row.append(None)
            continue
        draws = 3 * need + 2 - kept[2 * need + 1]
        if k == 0:
            singles = n - 2 * pairs
            draws = min(draws, 7 - pairs + max(0, 7 - pairs - singles))
        row.append(draws - 1)
    return tuple(row)


_SHANTEN_ROW = _LazyTable(_shanten_row)


def shanten(counts: Sequence[int], meld_count: int = 0) -> int:
    """Distance to a win (向听): -1 complete, 0 ready (听牌), n = n more useful draws to be ready.

    The lower of the standard form and, with no melds, seven pairs. Exact, never counting a fifth
    copy of a tile held in the hand. Concealed tiles: at most 14 - 3 × meld_count; fewer than
    13 - 3 × meld_count means the missing tiles are dead weight still to be replaced. The two-suit
    rule is not counted (a caller weighs its void suit itself).

    >>> from engine.tiles import counts_of, parse_tiles
    >>> shanten(counts_of(parse_tiles("1111m234p567p789p")))  # waits on a fifth 1m: not ready
    1
    >>> shanten(counts_of(parse_tiles("1122m")), meld_count=3)
    0
    """
    if not 0 <= meld_count <= SETS_NEEDED:
        raise ValueError(f"meld_count must be 0..{SETS_NEEDED}, got {meld_count}")
    pair = _COMBINED[(_SUIT_CLASS[tuple(counts[:9])] << _SHIFT) | _SUIT_CLASS[tuple(counts[9:18])]]
    value = _SHANTEN_ROW[_COMBINED[(pair << _SHIFT) | _SUIT_CLASS[tuple(counts[18:])]]][meld_count]
    if value is None:
        limit = 14 - 3 * meld_count
        raise ValueError(f"with {meld_count} melds a hand holds at most {limit} concealed tiles")
    return value


def effective_tiles(counts: Sequence[int], meld_count: int = 0) -> list[Tile]:
    """Draws that lower the shanten of a hand waiting to draw (有效牌), excluding tiles held four times.

    >>> from engine.tiles import counts_of, parse_tiles, tile_name
    >>> [tile_name(t) for t in effective_tiles(counts_of(parse_tiles("123m456m789m1p4p55p")))]
    ['1p', '2p', '3p', '4p', '5p', '6p']
    """
    base = shanten(counts, meld_count)
    if sum(counts) > 13 - 3 * meld_count:
        raise ValueError(
            f"effective tiles are for a hand waiting to draw: at most {13 - 3 * meld_count} "
            f"concealed tiles with {meld_count} melds"
        )
    keys = _suit_keys(counts)
    classes = [_SUIT_CLASS[k] for k in keys]
    out = []
    for s in range(3):
        key = keys[s]
        for r in range(9):
            if key[r] >= COPIES:
                continue
            drawn = _SUIT_CLASS[(*key[:r], key[r] + 1, *key[r + 1 :])]
            c = classes.copy()
            c[s] = drawn
            cid = _COMBINED[(_COMBINED[(c[0] << _SHIFT) | c[1]] << _SHIFT) | c[2]]
            if _SHANTEN_ROW[cid][meld_count] < base:  # type: ignore[operator]
                out.append(9 * s + r)
    return out


# --- waits -----------------------------------------------------------------------------------


def _suit_waits(key: object) -> tuple[int, tuple[int, ...], tuple[int, ...], int, tuple[int, ...]]:
    """(win code, ranks that make the suit split into sets, ranks that make it split into sets and
    a pair, pairs held, ranks held an odd number of times) — all ``waits`` needs from one suit."""
    v = list(_suit_vector(key))  # type: ignore[arg-type]
    n = sum(v) + 1
    as_sets, with_pair = [], []
    for r in range(9):
        if v[r] >= COPIES:
            continue
        v[r] += 1
        if n % 3 == 0 and _splits(tuple(v), False):
            as_sets.append(r)
        elif n % 3 == 2 and _splits(tuple(v), True):
            with_pair.append(r)
        v[r] -= 1
    odd = tuple(r for r in range(9) if v[r] & 1)
    return _WIN_CODE[key], tuple(as_sets), tuple(with_pair), sum(c // 2 for c in v), odd


_SUIT_WAITS = _LazyTable(_suit_waits)


def waits(counts: Sequence[int], melds: Sequence[Meld] = ()) -> list[Tile]:
    """Tiles that would complete this hand one tile short (下叫), in tile order.

    A tile of which the hand (concealed and melds) already holds four cannot come and is left out;
    a tile that would bring a third suit is no win.

    >>> from engine.tiles import counts_of, parse_tiles, tile_name
    >>> [tile_name(t) for t in waits(counts_of(parse_tiles("1112345678999m")))]
    ['1m', '2m', '3m', '4m', '5m', '6m', '7m', '8m', '9m']
    """
    k = len(melds)
    if k > SETS_NEEDED:
        raise ValueError(f"a hand has at most {SETS_NEEDED} melds, got {k}")
    suits = [_SUIT_WAITS[key] for key in _suit_keys(counts)]
    codes = [entry[0] for entry in suits]
    if sum(codes) >> 8 != 13 - 3 * k:
        raise ValueError(f"waits are for a hand one tile short: {13 - 3 * k} concealed tiles with {k} melds")
    present = {s for s in range(3) if codes[s] & _PRESENT}
    present.update(m.tile // 9 for m in melds)
    if len(present) == 3:
        return []  # no tile can take a three-suit hand back to two
    found: list[Tile] = []
    for s in range(3):
        others = (codes[(s + 1) % 3], codes[(s + 2) % 3])
        if (others[0] | others[1]) & _BAD:
            continue
        pairs = (others[0] & _PAIR) + (others[1] & _PAIR)
        if pairs <= 1:
            found.extend(9 * s + r for r in suits[s][2 if pairs == 0 else 1])
    if not k and sum(entry[3] for entry in suits) == 6:  # seven pairs: the single completes it
        found.extend(9 * s + r for s in range(3) for r in suits[s][4])
    if len(present) == 2:
        found = [t for t in found if t // 9 in present]
    if k:
        held = list(counts)
        for m in melds:
            held[m.tile] += m.size
        found = [t for t in found if held[t] < COPIES]
    return sorted(set(found))


# --- integer suit keys: the hot path for a search player ----------------------------------------
# A suit's 9 counts as one base-5 int, ``sum(count[r] * 5**r)``. A player keeps the three keys of
# its hand and updates them with one addition per draw, discard or meld (``KEY_STEP[tile]``), so
# a call needs no slicing, no tuple building and no tuple hashing: an int hashes to itself. The
# per-key tables below are filled lazily from the tuple tables above, so both paths share every
# answer and the tuple path (checked against the brute-force enumerator) is the reference.
# The key path does not validate its input: keys come from ``suit_keys`` and ``KEY_STEP``.

KEY_BASE = 5
KEY_STEP: tuple[int, ...] = tuple(KEY_BASE ** (t % 9) for t in range(27))  # add on draw, subtract on discard


def suit_keys(counts: Sequence[int]) -> tuple[int, int, int]:
    """The three base-5 suit keys of a count vector (built once per hand, then updated by steps).

    >>> from engine.tiles import counts_of, parse_tiles
    >>> suit_keys(counts_of(parse_tiles("12m5p")))
    (6, 625, 0)
    """
    if len(counts) != 27 or not all(isinstance(c, int) and 0 <= c <= COPIES for c in counts):
        raise ValueError(_BAD_COUNTS)
    out = []
    for s in range(3):
        key = 0
        for r in range(8, -1, -1):
            key = key * KEY_BASE + counts[9 * s + r]
        out.append(key)
    return out[0], out[1], out[2]


def _key_vector(key: int) -> tuple[int, ...]:
    out = []
    for _ in range(9):
        key, c = divmod(key, KEY_BASE)
        out.append(c)
    return tuple(out)


# Win codes for the key path carry which suit is present (a bit per suit position) instead of a
# count of present suits, so a meld's suit can be merged in: the sum decodes to
#   tiles << 9 | present mask << 6 | odd suits << 4 | unsplittable suits << 2 | suits splitting with a pair

_K_ODD, _K_BAD, _K_PAIR, _K_TILES = 1 << 4, 1 << 2, 1, 1 << 9


def _key_win_code(suit: int) -> Callable[[object], object]:
    def build(key: object) -> int:
        code = _WIN_CODE[_key_vector(key)]  # type: ignore[arg-type]
        out = (code >> 8) * _K_TILES
        if code & _PRESENT:
            out |= 1 << (6 + suit)
        if code & _ODD:
            out += _K_ODD
        if code & _BAD:
            out += _K_BAD
        return out + (code & _PAIR)

    return build


# The key tables are plain dicts (a dict subclass would lose CPython's specialised subscript), so
# a miss is a KeyError that fills every table the call needs and asks again.
_WIN_KEY: tuple[dict[int, int], dict[int, int], dict[int, int]] = ({}, {}, {})
_WIN_KEY_M, _WIN_KEY_P, _WIN_KEY_S = _WIN_KEY
_WIN_KEY_BUILD = tuple(_key_win_code(s) for s in range(3))


def _key_winning_sums(signature: int) -> frozenset[int]:
    melds, meld_mask = signature >> 3, signature & 7
    tiles = 14 - 3 * melds
    sums = set()
    for mask, odd, bad, pair in product(range(1, 8), range(4), range(4), range(4)):
        if bin(mask | meld_mask).count("1") > 2 or bin(mask).count("1") < max(odd, bad, pair):
            continue
        if (bad == 0 and pair == 1) or (melds == 0 and odd == 0):
            sums.add(tiles * _K_TILES + (mask << 6) + odd * _K_ODD + bad * _K_BAD + pair)
    return frozenset(sums)


_CODE_BITS = 13  # every code sum is below 2**13 (14 tiles << 9 plus the low fields)
_SIGNATURES = 8 * (SETS_NEEDED + 1)


def _key_win_table() -> tuple[bool, ...]:
    """One flat tuple, indexed by a meld signature (already shifted) plus the three codes' sum:
    a tuple index is cheaper than picking a set by signature and hashing the sum into it."""
    table = [False] * (_SIGNATURES << _CODE_BITS)
    for signature in range(_SIGNATURES):
        for code in _key_winning_sums(signature):
            table[(signature << _CODE_BITS) + code] = True
    return tuple(table)


# Built by the first ``is_win_keys`` call (an empty tuple until then: its index fails), not at
# import: the build is ~15 ms that every process importing the engine paid, the bot before polling.
_KEY_WIN: tuple[bool, ...] = ()


def meld_signature(melds: Sequence[Meld]) -> int:
    """What ``is_win_keys`` needs to know of the melds: their count and the mask of their suits
    (``(count << 3 | mask) << 13``, an offset into the win table; 0 for none)."""
    mask = 0
    for m in melds:
        mask |= 1 << (m.tile // 9)
    return (len(melds) << 3 | mask) << _CODE_BITS


def is_win_keys(m: int, p: int, s: int, signature: int = 0) -> bool:
    """``is_win`` on suit keys; ``signature`` is ``meld_signature(melds)`` (0 for none).

    The melds cost nothing extra: the signature is an offset into the same flat table the three
    codes' sum indexes, so a call is three int-keyed dict lookups, three additions and one tuple
    index.

    >>> from engine.tiles import Meld, MeldKind, counts_of, parse_tiles
    >>> is_win_keys(*suit_keys(counts_of(parse_tiles("123m345m789m234p66p"))))
    True
    >>> is_win_keys(*suit_keys(counts_of(parse_tiles("66p"))), meld_signature([Meld(MeldKind.PUNG, 0)] * 4))
    True
    """
    try:
        return _KEY_WIN[_WIN_KEY_M[m] + _WIN_KEY_P[p] + _WIN_KEY_S[s] + signature]
    except KeyError:
        for table, build, key in zip(_WIN_KEY, _WIN_KEY_BUILD, (m, p, s), strict=True):
            if key not in table:
                table[key] = build(key)  # type: ignore[assignment]
        return is_win_keys(m, p, s, signature)
    except IndexError:
        if _KEY_WIN:
            raise
        _build_key_win()
        return is_win_keys(m, p, s, signature)


def _build_key_win() -> None:
    global _KEY_WIN
    _KEY_WIN = _key_win_table()


_KEY_CLASS: dict[int, int] = {}  # suit key -> class id
# By meld count: key(m) << 21 | key(p) -> the row of the two suits' class, {key(s): shanten}. Every
# pair of suit keys with the same class shares one row, so a row fills once for all of them.
_KEY_TWO: tuple[dict[int, dict[int, int]], ...] = tuple({} for _ in range(SETS_NEEDED + 1))
_KEY_ROWS: tuple[dict[int, dict[int, int]], ...] = tuple({} for _ in range(SETS_NEEDED + 1))  # class id -> row
_KEY_LIMIT = 300_000  # pairs of suit shapes and rows recur, but a long search could meet many: bounded
_KEY_BITS = 21  # 5**9 < 2**21
_key_entries = 0  # answers held in all rows


def shanten_keys(m: int, p: int, s: int, meld_count: int = 0) -> int:
    """``shanten`` on suit keys: two dict lookups on ints (the two suits m and p together give the
    row of their class, the suit s the answer in it), each class combination computed once.

    The caller keeps the concealed tile count within 14 - 3 × meld_count (not checked here).

    >>> from engine.tiles import counts_of, parse_tiles
    >>> shanten_keys(*suit_keys(counts_of(parse_tiles("123m345m789m23p66p"))))
    0
    """
    try:
        return _KEY_TWO[meld_count][m << _KEY_BITS | p][s]
    except KeyError:
        return _shanten_keys_miss(m, p, s, meld_count)


def _shanten_keys_miss(m: int, p: int, s: int, meld_count: int) -> int:
    global _key_entries
    cls = _KEY_CLASS
    for key in (m, p, s):
        if key not in cls:
            cls[key] = _SUIT_CLASS[_key_vector(key)]  # type: ignore[assignment]
    two = _COMBINED[(cls[m] << _SHIFT) | cls[p]]
    value = _SHANTEN_ROW[_COMBINED[(two << _SHIFT) | cls[s]]][meld_count]  # type: ignore[index, operator]
    if value is None:
        raise ValueError(f"with {meld_count} melds a hand holds at most {14 - 3 * meld_count} concealed tiles")
    pairs, rows = _KEY_TWO[meld_count], _KEY_ROWS[meld_count]
    if len(pairs) > _KEY_LIMIT or _key_entries > _KEY_LIMIT:
        for table in (*_KEY_TWO, *_KEY_ROWS):
            table.clear()
        _key_entries = 0
    row = rows.get(two)  # type: ignore[call-overload]
    if row is None:
        row = rows[two] = {}  # type: ignore[index]
    pairs[m << _KEY_BITS | p] = row
    if s not in row:
        row[s] = value
        _key_entries += 1
    return value


def best_discards(counts: Sequence[int], meld_count: int = 0) -> tuple[int, list[Tile]]:
    """For a hand that must discard (14 - 3 × meld_count concealed tiles): the lowest shanten a
    discard can leave, and every tile whose discard leaves it — the advice for "not a win yet".

    >>> from engine.tiles import counts_of, parse_tiles, tile_name
    >>> left, tiles = best_discards(counts_of(parse_tiles("123m456m789m2p4p55p9p")))
    >>> left, [tile_name(t) for t in tiles]
    (0, ['9p'])
    """
    if sum(counts) != 14 - 3 * meld_count:
        raise ValueError(f"best discards are for a hand that must discard: {14 - 3 * meld_count} "
                         f"concealed tiles with {meld_count} melds")
    held = list(counts)
    after: dict[Tile, int] = {}
    for tile, n in enumerate(counts):
        if n:
            held[tile] -= 1
            after[tile] = shanten(held, meld_count)
            held[tile] += 1
    best = min(after.values())
    return best, [tile for tile, left in after.items() if left == best]
