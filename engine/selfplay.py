"""Self-play: whole hands between computer players, checked, and the arena that compares them.

``play_hand`` runs one hand to the end, asking each pending seat's player for a decision
from that seat's view only, and then checks the referee's invariants: all 108 tiles are
accounted for, the transfers sum to zero, and replaying the action log rebuilds the same
state. ``play_session`` chains hands with the dealer rotation of RULES.md §1; ``arena``
plays one challenger against three copies of a baseline, every seed four times with the
challenger in each seat, so the deal's luck cancels out.

Nothing here prints; the CLI (``xuezhan simulate`` / ``xuezhan arena``) and the benchmark
format the results.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from engine.actions import SEATS, Action
from engine.ai import Player, make_player
from engine.ai_stats import Estimate, clustered_mean, percentile
from engine.events import Event, EventType
from engine.game import Game
from engine.rules import RuleSet
from engine.settlement import TransferReason
from engine.tiles import COPIES, NUM_KINDS, MeldKind, suits_in

PlayerFactory = Callable[[int, int], Player]  # (hand seed, seat) -> a fresh player


@dataclass
class HandResult:
    """One finished hand: the outcome per seat, how long each decision took, any failed check."""

    seed: int
    dealer: int
    next_dealer: int
    chips: list[int]
    won: list[bool]
    dealt_in: list[bool]  # fed a win by discard (or a robbed kong)
    flower_pig: list[bool]  # found holding three suits at the empty wall
    actions: list[Action]
    end: str
    decision_seconds: list[list[float]] = field(default_factory=lambda: [[] for _ in range(SEATS)])
    problems: list[str] = field(default_factory=list)
    tally: Counter[str] = field(default_factory=Counter)  # what came into play: bonuses, patterns, payments


def check_hand(game: Game) -> list[str]:
    """The invariants every finished hand must hold; an empty list means all passed."""
    problems: list[str] = []
    census = _census(game.to_dict())
    if census != [COPIES] * NUM_KINDS:
        missing = {t: c for t, c in enumerate(census) if c != COPIES}
        problems.append(f"tiles not accounted for (tile: copies found): {missing}")
    net = [0] * SEATS
    for t in game.transfers:
        if t.amount <= 0 or t.payer == t.payee:
            problems.append(f"a transfer that moves nothing real: {t.to_dict()}")
        net[t.payer] -= t.amount
        net[t.payee] += t.amount
    if sum(net) != 0 or net != game.chips():
        problems.append(f"transfers do not sum to zero or disagree with the chips: {net} vs {game.chips()}")
    replayed = Game.replay(game.rules, game.seed, game.dealer, [a.to_dict() for a in game.actions])
    if replayed.to_json() != game.to_json():
        problems.append("replaying the action log gives a different state")
    if Game.from_json(game.to_json()).to_json() != game.to_json():
        problems.append("saving and restoring the state changes it")
    return problems + _house_rule_problems(game)


def _house_rule_problems(game: Game) -> list[str]:
    """What the table's settings promise, checked on the finished hand (RULES.md §3-§7)."""
    rules, problems = game.rules, []
    for win in game.wins:
        tiles = win.hand.all_tiles()
        if len(suits_in(tiles)) > 2:
            problems.append(f"seat {win.seat} won holding three suits")
        void = game.voids[win.seat]
        if rules.declare_void and void is not None and any(t // 9 == void for t in tiles):
            problems.append(f"seat {win.seat} won holding a tile of its void suit")
        if not rules.declare_void and void is not None:
            problems.append("a void suit was declared although the table does not declare voids")
    if rules.swap_three and rules.swap_direction is not None and game.direction is not rules.swap_direction:
        problems.append(f"tiles were swapped {game.direction.value}, not {rules.swap_direction.value}")
    reasons = [t.reason for t in game.transfers]
    if not rules.kong_cannon_transfer and TransferReason.CALL_TRANSFER in reasons:
        problems.append("呼叫转移 happened although the table keeps the kong money")
    pig_amounts = {t.amount for t in game.transfers if t.reason is TransferReason.FLOWER_PIG}
    if pig_amounts - {rules.flower_pig_penalty * rules.base}:
        problems.append(f"a 花猪 paid {sorted(pig_amounts)}, not {rules.flower_pig_penalty * rules.base}")
    return problems


def _census(state: dict) -> list[int]:  # type: ignore[type-arg]
    """Copies of each tile in a saved state, counted here rather than by the referee: hands,
    melds (a kong is four), rivers, winning tiles set aside, and the wall."""
    counts = [0] * NUM_KINDS
    for seat in range(SEATS):
        for t in state["hands"][seat] + state["rivers"][seat] + state["won_tiles"][seat]:
            counts[t] += 1
        for kind, t in state["melds"][seat]:
            counts[t] += 3 if kind == MeldKind.PUNG.value else 4
    for t in state["wall"]:
        counts[t] += 1
    return counts


def play_hand(
    rules: RuleSet,
    seed: int,
    dealer: int,
    players: Sequence[Player],
    *,
    check: bool = True,
    clock: Callable[[], float] = time.perf_counter,
) -> HandResult:
    """Play one hand to the end; ``check`` runs ``check_hand`` on it."""
    game = Game(rules, seed, dealer)
    result = HandResult(seed, dealer, dealer, [0] * SEATS, [False] * SEATS, [False] * SEATS, [False] * SEATS, [], "")
    while not game.over:
        for seat in game.pending_seats():
            view = game.view(seat)
            start = clock()
            action = players[seat].choose(view, view.legal)
            result.decision_seconds[seat].append(clock() - start)
            for event in game.apply(action):
                _record(result, event)
            if game.over or seat not in game.pending_seats():
                break
    result.next_dealer = game.next_dealer()
    result.chips = game.chips()
    result.actions = list(game.actions)
    result.end = game.end.value if game.end else ""
    if check:
        result.problems = check_hand(game)
    return result


def _record(result: HandResult, event: Event) -> None:
    if event.type is EventType.WON and event.seat is not None:
        result.won[event.seat] = True
        if event.from_seat is not None:
            result.dealt_in[event.from_seat] = True
        if event.win is not None:
            result.tally[event.win.score.pattern.zh] += 1
            result.tally.update(b.zh for b in event.win.score.bonuses)
            if event.win.as_discard:
                result.tally["算点炮"] += 1
    elif event.type is EventType.TRANSFER and event.transfer is not None:
        result.tally[event.transfer.reason.zh] += 1
    elif event.type is EventType.WALL_CHECK and event.status is not None and event.status.flower_pig:
        result.flower_pig[event.status.seat] = True


def named_players(names: Sequence[str], rules: RuleSet) -> PlayerFactory:
    """A factory for seats played by ``names`` (``ai``, ``greedy``, ``random``), seeded per hand."""
    if len(names) != SEATS:
        raise ValueError(f"need {SEATS} players, got {len(names)}")

    def factory(seed: int, seat: int) -> Player:
        return make_player(names[seat], rules, seed=seed * SEATS + seat)

    for name in names:
        make_player(name, rules)  # unknown names fail here, before any hand is played
    return factory


def play_session(
    rules: RuleSet, seed: int, hands: int, players: PlayerFactory, *, check: bool = True
) -> Iterator[HandResult]:
    """``hands`` hands in a row; hand ``i`` uses seed ``seed + i`` and the previous hand's next dealer."""
    dealer = random.Random(seed).randrange(SEATS)
    for i in range(hands):
        hand_seed = seed + i
        seats = [players(hand_seed, s) for s in range(SEATS)]
        result = play_hand(rules, hand_seed, dealer, seats, check=check)
        dealer = result.next_dealer
        yield result


@dataclass
class ArenaReport:
    challenger: str
    baseline: str
    seeds: int
    games: int
    score: Estimate  # the challenger's chips per game, interval clustered by seed
    win_rate: float
    deal_in_rate: float
    flower_pig_rate: float
    baseline_win_rate: float
    decision_ms_p50: float
    decision_ms_p95: float
    problems: list[str]

    def to_dict(self) -> dict[str, object]:
        return {
            "challenger": self.challenger,
            "baseline": self.baseline,
            "seeds": self.seeds,
            "games": self.games,
            "score_per_game": self.score.to_dict(),
            "win_rate": self.win_rate,
            "deal_in_rate": self.deal_in_rate,
            "flower_pig_rate": self.flower_pig_rate,
            "baseline_win_rate": self.baseline_win_rate,
            "decision_ms_p50": self.decision_ms_p50,
            "decision_ms_p95": self.decision_ms_p95,
            "problems": self.problems,
        }


def arena(
    challenger: str,
    baseline: str,
    rules: RuleSet,
    seeds: int,
    *,
    first_seed: int = 0,
    check: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ArenaReport:
    """One ``challenger`` against three ``baseline`` copies; each seed played with the challenger
    in every seat (dealer fixed per seed), so each seat's luck is shared out evenly."""
    scores: dict[int, list[float]] = {}
    wins = deal_ins = pigs = baseline_wins = baseline_seats = games = 0
    times: list[float] = []
    problems: list[str] = []
    for seed in range(first_seed, first_seed + seeds):
        dealer = seed % SEATS
        for seat in range(SEATS):
            names = [baseline] * SEATS
            names[seat] = challenger
            factory = named_players(names, rules)
            players = [factory(seed, s) for s in range(SEATS)]
            result = play_hand(rules, seed, dealer, players, check=check)
            games += 1
            scores.setdefault(seed, []).append(result.chips[seat])
            wins += result.won[seat]
            deal_ins += result.dealt_in[seat]
            pigs += result.flower_pig[seat]
            baseline_wins += sum(result.won[s] for s in range(SEATS) if s != seat)
            baseline_seats += SEATS - 1
            times += result.decision_seconds[seat]
            problems += [f"seed {seed} seat {seat}: {p}" for p in result.problems]
        if progress:
            progress(seed - first_seed + 1)
    return ArenaReport(
        challenger=challenger,
        baseline=baseline,
        seeds=seeds,
        games=games,
        score=clustered_mean(scores),
        win_rate=wins / max(1, games),
        deal_in_rate=deal_ins / max(1, games),
        flower_pig_rate=pigs / max(1, games),
        baseline_win_rate=baseline_wins / max(1, baseline_seats),
        decision_ms_p50=percentile(times, 50) * 1000,
        decision_ms_p95=percentile(times, 95) * 1000,
        problems=problems,
    )
