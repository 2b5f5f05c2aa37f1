"""The hard computer player: the normal player's judgement, then a search over its best discards.

``ai-v1`` (``engine.ai.AIPlayer``) values each discard with a one-step model: shanten, the live
outs of the next step, and fixed guesses for the steps after. The hard player keeps every other
decision of ``ai-v1`` (swap, void, claims, kongs, wins, void tiles first, folding late: a fork
audit of ai-v1's own games found those right on average, see docs/ai.md) and re-judges the
discard among ``ai-v1``'s best few candidates by **determinized rollouts**:

1. Deal the hidden tiles (``HiddenDealer``). Everything this seat cannot see
   (``SeatView.unseen``) is shuffled and dealt to the other seats still in and the wall; a seat
   that has been throwing other suits after its void suit is dealt no void tile, and the three
   tiles this seat passed stay with the seat they went to. Only the ``SeatView`` is read.
2. Play each candidate's hand forward against the same sampled wall (common random numbers, so
   candidates differ by their choice and not by luck): draw this seat's tiles, throw a drawn tile
   that does not help, and when one does, throw the tile whose loss costs the least shape; pung a
   thrown tile that brings the hand closer; once ready, win on own draws and others' throws.
3. Score a win by its payment in chips (roots, flush, all pungs, seven pairs, the cap, 加底;
   self-drawn from every seat still in, off a discard from the thrower), discounted per draw for
   the chance the hand ends or an opponent's win costs us first; a hand not ready when the wall
   runs out pays a 查叫 penalty. The candidate's value is the mean over samples, minus
   ``ai-v1``'s danger estimate for throwing that tile.

The search is anytime: it plays one sample for every candidate per round until the thinking
thread's CPU budget or the wall-clock limit runs out, and answers ``ai-v1``'s choice if too few
rounds fit, so a slow machine plays weaker, never later. With ``samples`` set instead of a budget
the player is deterministic (tests and the review use that).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence

from engine import ai_eval
from engine.actions import Action, ActionType
from engine.ai import DANGER_WEIGHT, FOLD_DRAWS, FOLD_READY, FOLD_SHANTEN, AIPlayer, _of_type, _threat, _void_of
from engine.ai_eval import Assessment, Outlook
from engine.analysis import KEY_STEP, is_win_keys, meld_signature, shanten_keys
from engine.game import SeatView
from engine.rules import GameMode, RuleSet, SelfDrawBonus
from engine.tiles import COPIES, Meld, MeldKind, Tile

# Time per searched decision, counted from the moment ``choose`` is called (so ai-v1's own
# judgement is inside it): the thinking thread's CPU seconds, so a bot thread sharing the
# interpreter with the event loop still gets its search; and never more than the wall-clock
# limit, so a loaded machine plays fewer rounds (weaker), never later. The referee benchmark
# checks p95/p99 against the targets (150 / 400 ms).
BUDGET_SECONDS = 0.08
WALL_LIMIT_SECONDS = 0.13
# At most this many of ai-v1's best discards are searched (fewer when the others are much worse).
CANDIDATES = 4
# A candidate more than this many steps slower than the fastest is not searched.
SLOWER_STEPS = 1
# Per draw, the chance the hand stops paying off for us before our next draw (an opponent's
# win in a first-win table, or the wall) and the chips we lose per draw while not yet out.
HAZARD = {GameMode.FIRST_WIN: 0.07, GameMode.BLOODY_BATTLE: 0.03, GameMode.BLOODY_RIVER: 0.02}
STAY_COST = 0.05
# Chips a hand still not ready at the empty wall pays (查叫), per ready opponent, roughly.
NOT_READY_PENALTY = 2.0
# The search leaves ai-v1's choice only for a discard whose estimated edge is this many standard
# errors above zero and at least this many chips: the estimate is noisy, ai-v1 is not bad.
CONFIDENCE = 1.5
MIN_EDGE = 0.05
# Below this many rounds the spread itself is unknown (one round has none), so a machine too slow
# to play them keeps ai-v1's discard: weaker, never worse than the normal level by chance.
MIN_ROUNDS = 8
# With less CPU than this left for a decision (the bot's searches together used their share,
# ``ThinkingShare``) the search is not started: too few rounds to leave ai-v1's choice anyway.
MIN_SHARE = 0.01
# Danger is in multiplier units; this turns it into chips like the rollout values.
CHIPS_PER_DANGER = 1.8


class HiddenDealer:
    """Samples of the tiles this seat cannot see, dealt as it could imagine them. Reads only the
    ``SeatView``; what the view says is worked out once, and each sample is one cheap shuffle.

    - A seat that has been throwing other suits after its void suit holds no void tile any more,
      so it is dealt none.
    - The three tiles this seat passed (换三张) went to a known seat: those it has not thrown or
      melded since are still in its hand, so they are dealt to it and never to the wall.
    - Every other unseen tile is equally likely anywhere: dealing each hand from the front of a
      random order (skipping a clean seat's void suit) leaves the rest in random order too.
    """

    def __init__(self, view: SeatView) -> None:
        unseen = view.unseen()
        held: dict[int, list[Tile]] = {}
        receiver = self._receiver(view)
        if receiver is not None:
            river = list(view.rivers[receiver]) + [m.tile for m in view.melds[receiver] for _ in range(3)]
            for t in view.swap_given:
                if t in river:
                    river.remove(t)
                elif unseen[t]:
                    unseen[t] -= 1
                    held.setdefault(receiver, []).append(t)
        self.pool = [t for t, n in enumerate(unseen) for _ in range(n)]
        self.seats: list[tuple[int, int | None]] = []  # (tiles still to deal, void suit it holds none of)
        for s in range(len(view.in_play)):
            if s == view.seat or not view.in_play[s]:
                continue
            void = view.voids[s]
            clean = void is not None and any(t // 9 != int(void) for t in view.rivers[s])
            need = 13 - 3 * len(view.melds[s]) - len(held.get(s, ()))
            self.seats.append((max(0, need), int(void) if clean else None))  # type: ignore[arg-type]

    @staticmethod
    def _receiver(view: SeatView) -> int | None:
        if view.swap_direction is None or not view.swap_given:
            return None
        receiver = (view.seat + view.swap_direction.offset) % len(view.in_play)
        return receiver if view.in_play[receiver] else None

    def deal(self, rng: random.Random) -> list[Tile]:
        """One sample of the wall, in drawing order."""
        pool = self.pool
        # a sort on random 16-bit keys read in C: far cheaper than random.shuffle's Python loop
        keys = memoryview(rng.randbytes(2 * len(pool))).cast("H")
        pool = [pool[i] for i in sorted(range(len(pool)), key=keys.__getitem__)]
        for need, suit in self.seats:
            if suit is None:
                pool = pool[need:]
                continue
            rest: list[Tile] = []
            for t in pool:
                if need and t // 9 != suit:
                    need -= 1  # dealt to that seat
                else:
                    rest.append(t)
            pool = rest
        return pool


def hidden_deal(view: SeatView, rng: random.Random) -> list[Tile]:
    """One sample of the wall as this seat could imagine it (see ``HiddenDealer``)."""
    return HiddenDealer(view).deal(rng)


def _win_value(counts: list[int], melds: Sequence[Meld], rules: RuleSet, payers: int, self_drawn: bool) -> float:
    """A win's chips, estimated from the shape: roots, flush, all pungs, seven pairs; a self-draw
    is paid by every other seat still in (with 加底 / 加番), a discard by the discarder alone."""
    fours = counts.count(COPIES)
    roots = fours + sum(1 for m in melds if m.is_kong or counts[m.tile])
    suits = {m.tile // 9 for m in melds}
    for s in range(3):
        if any(counts[9 * s : 9 * s + 9]):
            suits.add(s)
    mult = 2**roots
    if len(suits) == 1:
        mult *= 4
    odd = counts.count(1) + counts.count(3)
    if not melds and not odd:
        mult *= 4 if roots == 0 else 2  # 七对; 龙七对 counts its root once
    elif counts.count(1) == 0 and fours == 0 and counts.count(2) == 1:
        mult *= 2  # 对对胡
    if not self_drawn:
        return float(mult if rules.cap is None else min(mult, rules.cap))
    if rules.self_draw is SelfDrawBonus.DOUBLE:
        mult *= 2
    if rules.cap is not None:
        mult = min(mult, rules.cap)
    if rules.self_draw is SelfDrawBonus.ADD_BASE:
        mult += 1
    return float(mult * max(1, payers))


def _shape_loss(counts: list[int], t: Tile) -> int:
    """How much shape throwing ``t`` loses: copies and neighbours of it in the same suit."""
    r = t % 9
    base = t - r
    loss = 3 * (counts[t] - 1)
    for d in (-2, -1, 1, 2):
        if 0 <= r + d < 9 and counts[base + r + d]:
            loss += 3 - abs(d)
    return loss


def _best_throw(c: list[int], keys: list[int], k: int, now: int) -> Tile | None:
    """The tile whose loss keeps the hand below shanten ``now`` and costs the least shape (None:
    every throw leaves the hand at ``now`` or worse)."""
    best = None
    for u in range(27):
        if not c[u]:
            continue
        keys[u // 9] -= KEY_STEP[u]
        s = shanten_keys(keys[0], keys[1], keys[2], k)
        keys[u // 9] += KEY_STEP[u]
        if s < now:
            loss = _shape_loss(c, u)
            if best is None or loss < best[0]:
                best = (loss, u)
    return None if best is None else best[1]


Waits = tuple[dict[Tile, float], dict[Tile, float]]


def _waits(
    c: list[int], keys: list[int], sig: int, melds: Sequence[Meld], rules: RuleSet, payers: int,
    memo: dict[tuple[bytes, tuple[Meld, ...]], Waits],
) -> Waits:
    """A ready hand's winning tiles with what each pays self-drawn and off a discard (``memo``:
    the same hands recur across the rounds of one decision)."""
    key = (bytes(c), tuple(melds))
    hit = memo.get(key)
    if hit is not None:
        return hit
    drawn: dict[Tile, float] = {}
    thrown: dict[Tile, float] = {}
    for u in range(27):
        if c[u] == COPIES:
            continue
        keys[u // 9] += KEY_STEP[u]
        won = is_win_keys(keys[0], keys[1], keys[2], sig)
        keys[u // 9] -= KEY_STEP[u]
        if won:
            c[u] += 1
            drawn[u] = _win_value(c, melds, rules, payers, True)
            thrown[u] = _win_value(c, melds, rules, payers, False)
            c[u] -= 1
    memo[key] = drawn, thrown
    return drawn, thrown


def rollout(
    counts: list[int],
    melds: Sequence[Meld],
    wall: Sequence[Tile],
    rules: RuleSet,
    seats: int,
    memo: dict[tuple[bytes, tuple[Meld, ...]], Waits] | None = None,
) -> float:
    """Chips from playing a hand waiting to draw (3k+1 tiles) through a sampled ``wall``.

    The ``seats`` players still in draw in turn, this seat first; the others are taken to throw
    what they draw, so a ready hand also wins on their tiles (paid by the thrower alone), and a
    hand not yet ready pungs a thrown tile it holds a pair of when that brings it a step closer
    (as ``ai-v1`` does; a pair's worth is mostly that). A hand not ready keeps a draw that brings
    it closer and throws the tile whose loss costs least shape; once ready it keeps its wait, so
    its winning tiles and their payments are worked out once. In 血流成河 a win does not end the
    rollout: the hand stays ready and may win again. ``memo`` keeps worked-out waits between calls
    with the same ``rules`` and ``seats``.
    """
    memo = {} if memo is None else memo
    c = list(counts)
    melds = list(melds)
    k = len(melds)
    sig = meld_signature(melds)
    keys = [0, 0, 0]
    for t in range(27):
        if c[t]:
            keys[t // 9] += c[t] * KEY_STEP[t]
    keep = 1.0 - HAZARD[rules.mode]
    survive = 1.0
    now = shanten_keys(keys[0], keys[1], keys[2], k)
    value = 0.0
    payers = seats - 1
    again = rules.mode is GameMode.BLOODY_RIVER  # a winner plays on and may win again
    drawn: dict[Tile, float] = {}
    thrown: dict[Tile, float] = {}
    if now == 0:
        drawn, thrown = _waits(c, keys, sig, melds, rules, payers, memo)
    for i in range(0, len(wall), seats):
        t = wall[i]
        if now == 0:
            if t in drawn:
                value += survive * drawn[t]
                if not again:
                    return value
        else:
            keys[t // 9] += KEY_STEP[t]
            c[t] += 1
            throw = t
            if shanten_keys(keys[0], keys[1], keys[2], k) < now:
                best = _best_throw(c, keys, k, now)
                if best is not None:
                    throw = best
                    now -= 1
            keys[throw // 9] -= KEY_STEP[throw]
            c[throw] -= 1
            if now == 0:
                drawn, thrown = _waits(c, keys, sig, melds, rules, payers, memo)
        for t in wall[i + 1 : i + seats]:  # the others' throws
            if now == 0:
                if t in thrown:
                    value += survive * thrown[t]
                    if not again:
                        return value
                    break
            elif c[t] == 2:
                keys[t // 9] -= 2 * KEY_STEP[t]
                c[t] -= 2
                best = _best_throw(c, keys, k + 1, now)
                if best is None:
                    keys[t // 9] += 2 * KEY_STEP[t]
                    c[t] += 2
                    continue
                k += 1
                melds.append(Meld(MeldKind.PUNG, t))
                sig = meld_signature(melds)
                keys[best // 9] -= KEY_STEP[best]
                c[best] -= 1
                now -= 1
                if now == 0:
                    drawn, thrown = _waits(c, keys, sig, melds, rules, payers, memo)
                break  # the turn passes on from this seat (the draw order is kept, roughly)
        value -= STAY_COST * survive
        survive *= keep
    if now > 0 and rules.mode is not GameMode.FIRST_WIN:
        value -= NOT_READY_PENALTY * survive
    return value


class ThinkingShare:
    """A cap on the CPU that every search holding it takes together: ``share`` CPU-seconds per
    wall-clock second on average, at most ``burst`` at once.

    A bot seats many hard players in one process whose event loop must keep answering presses;
    each search asks how much is left before it starts and pays what it spent after, so at a few
    tables every search gets its full budget and at many the searches shrink (down to ai-v1's
    answer, no search at all) instead of taking the loop's CPU. Thread-safe.
    """

    def __init__(self, share: float = 0.5, burst: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
        self.share = share
        self.burst = burst
        self.clock = clock
        self._level = burst
        self._at = clock()
        self._lock = threading.Lock()

    def available(self) -> float:
        """CPU-seconds a search may spend now."""
        with self._lock:
            now = self.clock()
            self._level = min(self.burst, self._level + (now - self._at) * self.share)
            self._at = now
            return max(0.0, self._level)

    def spend(self, seconds: float) -> None:
        with self._lock:
            self._level -= seconds


class SearchPlayer(AIPlayer):
    """The hard level (see the module docstring)."""

    name = "hard"

    def __init__(
        self,
        rules: RuleSet | None = None,
        seed: int = 0,
        budget: float | None = BUDGET_SECONDS,
        samples: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        cpu_clock: Callable[[], float] = time.thread_time,
        wall_limit: float = WALL_LIMIT_SECONDS,
        share: ThinkingShare | None = None,
    ) -> None:
        super().__init__(rules)
        self.rng = random.Random(seed)
        self.budget = budget
        self.samples = samples
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.wall_limit = wall_limit
        self.share = share  # shared with the other searches of the process (the bot), if any
        self.last_samples = 0  # rounds the last search played (for the benchmark and the review)
        self.confident: set[Tile] = set()
        self._started: tuple[float, float] | None = None
        self._budget = budget  # this decision's: the budget, or less when the shared CPU runs low

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        self.last_samples = 0
        # the budget covers the whole decision, ai-v1's part included
        self._started = (self.clock(), self.cpu_clock())
        self._budget = self.budget
        if self.share is not None and self.budget is not None:
            self._budget = min(self.budget, self.share.available())
        try:
            return super().choose(view, legal)
        finally:
            if self.share is not None:
                self.share.spend(self.cpu_clock() - self._started[1])

    def _out_of_time(self) -> bool:
        if self.samples is not None or self._budget is None or self._started is None:
            return False
        wall, cpu = self._started
        return self.cpu_clock() - cpu >= self._budget or self.clock() - wall >= self.wall_limit

    def _own_turn(self, view: SeatView, legal: Sequence[Action], counts: list[int], outlook: Outlook) -> Action:
        choice = super()._own_turn(view, legal, counts, outlook)
        if choice.type is not ActionType.DISCARD or not _of_type(legal, ActionType.DISCARD):
            return choice
        void = _void_of(view)
        if void is not None and any(t // 9 == void for t in view.hand):
            return choice  # void tiles first: nothing to search
        if self.samples is None and self._budget is not None and self._budget < MIN_SHARE:
            return choice  # the process's searches have used their share of the CPU: ai-v1's answer
        edges = self.discard_values(view, counts, outlook)
        if not self.confident:
            return choice
        best = max(self.confident, key=lambda t: (edges[t], -t))
        return Action.discard(view.seat, best)

    def discard_values(self, view: SeatView, counts: list[int], outlook: Outlook) -> dict[Tile, float]:
        """Estimated chips of each searched discard over ``ai-v1``'s choice (empty when there is
        nothing to search: one sensible candidate, or a late hand ``ai-v1`` folds). The discards
        whose edge is clearly above zero go in ``self.confident``."""
        self.confident = set()
        melds = view.melds[view.seat]
        tiles = sorted({t for t in range(27) if counts[t]})
        ranked = ai_eval.rank_discards(counts, melds, outlook, tiles)
        danger, most_ready = _threat(view)
        fastest = min(a.shanten for a, _ in ranked)
        late = outlook.draws_left <= FOLD_DRAWS or most_ready >= FOLD_READY
        if fastest >= FOLD_SHANTEN and late:
            return {}
        options = [Assessment(a.shanten, a.value - DANGER_WEIGHT * danger[t]) for a, t in ranked]
        order = sorted(range(len(ranked)), key=lambda i: (options[i].shanten, -options[i].value))
        picked = [ranked[i][1] for i in order if ranked[i][0].shanten <= fastest + SLOWER_STEPS][:CANDIDATES]
        v1 = ranked[ai_eval.best_choice(options, outlook)][1]
        if v1 not in picked:
            picked[-1] = v1
        if len(picked) < 2:
            return {}
        return self._search(view, counts, melds, outlook, picked, danger, v1)

    def _search(
        self,
        view: SeatView,
        counts: list[int],
        melds: tuple[Meld, ...],
        outlook: Outlook,
        candidates: list[Tile],
        danger: list[float],
        baseline: Tile,
    ) -> dict[Tile, float]:
        seats = max(2, sum(view.in_play))
        totals = dict.fromkeys(candidates, 0.0)
        squares = dict.fromkeys(candidates, 0.0)  # of the difference to the baseline, per sample
        rounds = 0
        values: dict[Tile, float] = {}
        dealer = HiddenDealer(view)
        memo: dict[tuple[bytes, tuple[Meld, ...]], Waits] = {}
        while self.samples is None or rounds < self.samples:
            wall = dealer.deal(self.rng)[: view.wall_count]
            for t in candidates:
                counts[t] -= 1
                values[t] = rollout(counts, melds, wall, self.rules, seats, memo)
                counts[t] += 1
            for t in candidates:
                diff = values[t] - values[baseline]
                totals[t] += diff
                squares[t] += diff * diff
            rounds += 1
            if self._out_of_time():
                break
            # In the bot the search runs in a worker thread beside the event loop: giving up the
            # interpreter lock after each round (well under a millisecond) lets a waiting loop
            # answer a press at once instead of after the lock's 5 ms switch interval.
            time.sleep(0)
        self.last_samples = rounds
        out = {}
        for t in candidates:
            mean = totals[t] / rounds
            # the baseline's own danger is counted in both, so only the difference matters
            edge = mean - CHIPS_PER_DANGER * DANGER_WEIGHT * (danger[t] - danger[baseline])
            out[t] = edge
            if t == baseline or rounds < MIN_ROUNDS:
                continue  # too few samples to judge a spread: ai-v1's choice stands
            variance = max(0.0, (squares[t] - rounds * mean * mean) / (rounds - 1))
            if edge > CONFIDENCE * (variance / rounds) ** 0.5 + MIN_EDGE:
                self.confident.add(t)
        return out
