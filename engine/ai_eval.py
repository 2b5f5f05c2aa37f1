"""How good is a hand? The computer player's yardstick, from what one seat can see.

A hand is judged by the chance of completing it before the wall runs out and by what the
completed hand would be worth. Each *route* — the plain hand (shanten counts 七对 too),
清一色 (one suit) and 对对胡 (all pungs) — has its own distance to completion (shanten) and
its own live outs (the unseen copies of the tiles that shorten that distance), and its
expected value is ``multiplier × P(complete)``, doubled per root already held; the hand is
worth its best route. A ready hand is valued exactly: every wait is scored by
``engine.scoring`` (七对, roots and all) and weighted by how many copies of it are still
unseen, so a wait on dead tiles is worth nothing.

Shanten, waits and effective tiles come from ``engine.analysis``; winning values from
``engine.scoring``. Nothing here knows the rules of play — only how far a hand is from a win.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from engine import analysis
from engine.rules import RuleSet
from engine.scoring import wait_scores
from engine.tiles import Meld, Tile, tiles_of

SUIT_SLICES = (slice(0, 9), slice(9, 18), slice(18, 27))

# Outs a hand typically has at a later step: ready (the last step) and earlier steps. The
# outs of the first step are known exactly; those of later ones are not, and are rarely more.
# Measured in the arena: pessimistic guesses (and counting one's own draws only, not the
# discards one might claim) choose better than optimistic ones.
LATER_OUTS_READY = 4
LATER_OUTS_EARLIER = 12


# The flush route is considered while at most this many tiles are of the other suit.
FLUSH_MAX_OFF_SUIT = 5


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
    """P(``steps`` improvements within the draws left): each draw advances one step with
    probability ``outs / unseen`` (damped for later steps, whose outs are not known yet)."""
    if steps <= 0:
        return 1.0
    if outs <= 0:
        return 0.0
    return _completion(steps, int(outs), outlook.unseen_total, max(0, round(outlook.draws_left)))


@lru_cache(maxsize=65536)
def _completion(steps: int, outs: int, total: int, draws: int) -> float:
    rates = []
    for i in range(steps):
        remaining_after = steps - i - 1
        step_outs = outs if i == 0 else min(outs, LATER_OUTS_EARLIER if remaining_after else LATER_OUTS_READY)
        rates.append(min(0.95, step_outs / total))
    return _advance(tuple(rates), draws)


@lru_cache(maxsize=65536)
def _advance(rates: tuple[float, ...], draws: int) -> float:
    """P(passing every stage within ``draws`` draws, stage i passed with probability rates[i])."""
    steps = len(rates)
    stage = [1.0] + [0.0] * steps
    for _ in range(draws):
        for i in range(steps - 1, -1, -1):
            moved = stage[i] * rates[i]
            stage[i] -= moved
            stage[i + 1] += moved
    return stage[steps]


# Hands recur (the same shape is judged again each turn and for every candidate discard), so
# the analysis answers are memoised per shape; the memo is dropped when it grows large.
_MEMO_LIMIT = 400_000
_SHANTEN: dict[tuple[bytes, int], int] = {}
_EFFECTIVE: dict[tuple[bytes, int], tuple[Tile, ...]] = {}
_WAIT_VALUES: dict[tuple[bytes, tuple[Meld, ...], RuleSet], tuple[tuple[Tile, int], ...]] = {}


def _memo_room(memo: dict) -> None:  # type: ignore[type-arg]
    if len(memo) > _MEMO_LIMIT:
        memo.clear()


def shanten_of(counts: Sequence[int], meld_count: int) -> int:
    key = (bytes(counts), meld_count)
    hit = _SHANTEN.get(key)
    if hit is None:
        _memo_room(_SHANTEN)
        hit = _SHANTEN[key] = analysis.shanten(counts, meld_count)
    return hit


def effective_of(counts: Sequence[int], meld_count: int) -> tuple[Tile, ...]:
    key = (bytes(counts), meld_count)
    hit = _EFFECTIVE.get(key)
    if hit is None:
        _memo_room(_EFFECTIVE)
        hit = _EFFECTIVE[key] = tuple(analysis.effective_tiles(counts, meld_count))
    return hit


def wait_values(counts: Sequence[int], melds: Sequence[Meld], rules: RuleSet) -> tuple[tuple[Tile, int], ...]:
    """(winning tile, multiplier on a discard) for a ready hand."""
    key = (bytes(counts), tuple(melds), rules)
    hit = _WAIT_VALUES.get(key)
    if hit is None:
        _memo_room(_WAIT_VALUES)
        scores = wait_scores(tiles_of(counts), melds, rules)
        hit = _WAIT_VALUES[key] = tuple((t, sc.multiplier) for t, sc in scores.items())
    return hit


def live_outs(tiles: Sequence[Tile], outlook: Outlook) -> int:
    return sum(outlook.unseen[t] for t in tiles)


def ready_value(counts: Sequence[int], melds: Sequence[Meld], outlook: Outlook) -> tuple[float, int]:
    """A ready hand's (mean multiplier over live waits, live wait count)."""
    live = 0
    total = 0.0
    for tile, multiplier in wait_values(counts, melds, outlook.rules):
        n = outlook.unseen[tile]
        live += n
        total += n * multiplier
    if live == 0:
        return 0.0, 0
    return total / live, live


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


def roots_in_reach(counts: Sequence[int], melds: Sequence[Meld]) -> int:
    """根 the hand already holds: kongs, four concealed copies, a pung with its fourth in hand."""
    kongs = sum(1 for m in melds if m.is_kong)
    pungs_with_fourth = sum(1 for m in melds if not m.is_kong and counts[m.tile])
    return kongs + pungs_with_fourth + sum(1 for c in counts if c == 4)


def route_values(counts: Sequence[int], melds: Sequence[Meld], outlook: Outlook) -> float:
    """Expected multiplier of a hand waiting to draw (3k+1 concealed tiles), best route."""
    meld_count = len(melds)
    rules = outlook.rules
    root_factor = 2 ** roots_in_reach(counts, melds)
    best = 0.0

    standard = shanten_of(counts, meld_count)
    if standard == 0:
        mean, live = ready_value(counts, melds, outlook)
        best = mean * completion_probability(1, live, outlook)
        if live:
            return best + 0.01 * live
    else:
        outs = live_outs(effective_of(counts, meld_count), outlook)
        best = root_factor * completion_probability(standard + 1, outs, outlook)

    totals = suit_totals(counts)
    meld_suits = {m.tile // 9 for m in melds}
    major = max(range(3), key=lambda s: totals[s])
    minor_tiles = sum(totals) - totals[major]
    if meld_suits <= {major} and 0 < minor_tiles <= FLUSH_MAX_OFF_SUIT:
        flush = only_suit(counts, major)
        dist = shanten_of(flush, meld_count)
        outs = live_outs([t for t in effective_of(flush, meld_count) if t // 9 == major], outlook)
        best = max(best, _cap(4 * root_factor, rules) * completion_probability(dist + 1, outs, outlook))

    pung_dist, pung_useful = all_pungs_shanten(counts, meld_count)
    if pung_dist <= standard + 1 and pung_dist > 0:
        outs = live_outs(pung_useful, outlook)
        best = max(best, _cap(2 * root_factor, rules) * completion_probability(pung_dist + 1, outs, outlook))

    return best


def _cap(value: int, rules: RuleSet) -> int:
    return value if rules.cap is None else min(value, rules.cap)


@dataclass(frozen=True, slots=True)
class Assessment:
    """A hand waiting to draw: its shanten and its expected multiplier (best route)."""

    shanten: int
    value: float


def assess(counts: Sequence[int], melds: Sequence[Meld], outlook: Outlook) -> Assessment:
    return Assessment(shanten_of(counts, len(melds)), route_values(counts, melds, outlook))


# A slower hand is only preferred when it is worth this many times more, and early enough.
SLOWER_VALUE_RATIO = 4.0
SLOWER_MIN_DRAWS = 8.0


def best_choice(options: Sequence[Assessment], outlook: Outlook) -> int:
    """Index of the best option: the fastest hand, by value among equally fast ones.

    Speed comes first because a hand that never completes is worth nothing and a win
    takes the seat out of harm's way; a hand one step slower is chosen only for a route
    worth ``SLOWER_VALUE_RATIO`` times more (a flush, seven pairs) with many draws left.
    """
    fastest = min(o.shanten for o in options)
    best = max((i for i, o in enumerate(options) if o.shanten == fastest), key=lambda i: options[i].value)
    if outlook.draws_left >= SLOWER_MIN_DRAWS:
        for i, o in enumerate(options):
            much_better = o.value > SLOWER_VALUE_RATIO * options[best].value
            if o.shanten == fastest + 1 and much_better:
                best = i
    return best


def rank_discards(
    counts: Sequence[int], melds: Sequence[Meld], outlook: Outlook, candidates: Sequence[Tile]
) -> list[tuple[Assessment, Tile]]:
    """Each distinct candidate discard with the assessment of the hand it leaves."""
    work = list(counts)
    out: list[tuple[Assessment, Tile]] = []
    for tile in sorted(set(candidates)):
        work[tile] -= 1
        out.append((assess(work, melds, outlook), tile))
        work[tile] += 1
    return out


def best_discard(
    counts: Sequence[int], melds: Sequence[Meld], outlook: Outlook, candidates: Sequence[Tile]
) -> tuple[Assessment, Tile]:
    ranked = rank_discards(counts, melds, outlook, candidates)
    return ranked[best_choice([a for a, _ in ranked], outlook)]


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


def _without_suit(counts: Sequence[int], suit: int) -> list[int]:
    out = list(counts)
    out[SUIT_SLICES[suit]] = [0] * 9
    return out


def void_cost(counts: Sequence[int], suit: int, meld_count: int = 0) -> tuple[int, float]:
    """How good the hand is with ``suit`` voided: the shanten of what is left (each void tile
    still held costs a turn to throw, which the shorter hand counts as a missing tile), then
    the structure thrown away."""
    return shanten_of(_without_suit(counts, suit), meld_count), suit_strength(counts, suit)


def choose_void(counts: Sequence[int], melds: Sequence[Meld] = ()) -> int:
    """The suit to void (定缺): the one whose loss leaves the fastest hand; never a meld's suit."""
    meld_suits = {m.tile // 9 for m in melds}
    options = [s for s in range(3) if s not in meld_suits] or [0, 1, 2]
    return min(options, key=lambda s: (*void_cost(counts, s, len(melds)), s))


def choose_swap(counts: Sequence[int]) -> list[Tile]:
    """Three tiles of one suit to pass (换三张), costing the hand the least.

    Every way to pass three tiles of one suit is tried; each is judged by the best void the
    hand would then have (``void_cost``). The three tiles coming in are unknown, so they
    are not counted.
    """
    best_key: tuple[int, float] | None = None
    best: tuple[Tile, ...] = ()
    for suit in range(3):
        held = [t for t in range(suit * 9, suit * 9 + 9) for _ in range(counts[t])]
        for combo in sorted(set(combinations(held, 3))):
            rest = list(counts)
            for t in combo:
                rest[t] -= 1
            strength = [suit_strength(rest, s) for s in range(3)]
            # the best void for what is left: fastest, then most structure kept in the other suits
            key = min((void_cost(rest, v)[0], strength[v] - sum(strength)) for v in range(3))
            if best_key is None or key < best_key:
                best_key, best = key, combo
    return sorted(best)
