"""The value of a win, exactly as RULES.md §5 states it, with a ``Score`` that explains itself.

Each base pattern is one entry in ``PATTERNS`` (name, 倍, how many roots it already includes,
and one predicate over a reading), the way MahjongRepository/mahjong registers yaku: adding a
pattern is adding an entry. Every (reading, pattern) pair is a candidate; the most valuable
before the cap wins, ties going to the larger base pattern, then to the one listed later.
That single rule also settles 十八罗汉 against 金钩钓 + four roots and 龙七对 against 七对 + root.

>>> from engine.tiles import parse_hand
>>> s = score(parse_hand("11224444557799m +9m"), RuleSet(cap=None))
>>> s.pattern.zh, s.multiplier
('清龙七对', 32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from engine import analysis
from engine.rules import UNCAPPED_HEAVENLY_VALUE, RuleSet, SelfDrawBonus
from engine.tiles import (
    ALL_TILES,
    COPIES,
    DescribedHand,
    HandError,
    Meld,
    MeldKind,
    Situation,
    Tile,
    check_tiles,
    counts_of,
    rank_of,
    tile_name,
)


@dataclass(frozen=True, slots=True)
class Reading:
    """One way to read a winning hand: its groups (melds included) and what they are."""

    seven_pairs: bool
    pair: Tile | None
    sets: tuple[tuple[str, Tile], ...]  # ("pung" | "run" | "kong", first tile), melds included
    melds: tuple[Meld, ...]
    tiles: tuple[Tile, ...]  # every tile of the hand, kongs with four

    @property
    def one_suit(self) -> bool:
        return len({t // 9 for t in self.tiles}) == 1

    @property
    def all_pungs(self) -> bool:
        return not self.seven_pairs and all(kind != "run" for kind, _ in self.sets)

    @property
    def golden_single_wait(self) -> bool:
        return len(self.melds) == 4

    @property
    def terminals_everywhere(self) -> bool:
        if self.seven_pairs or self.pair is None:
            return False

        def has_terminal(kind: str, first: Tile) -> bool:
            rank = rank_of(first)
            return rank in (1, 7) if kind == "run" else rank in (1, 9)

        return rank_of(self.pair) in (1, 9) and all(has_terminal(k, t) for k, t in self.sets)

    @property
    def only_258(self) -> bool:
        return all(rank_of(t) in (2, 5, 8) for t in self.tiles)

    @property
    def root_count(self) -> int:
        """根: each kind of tile present four times, however it is held."""
        counts = counts_of(self.tiles)
        return sum(1 for t in ALL_TILES if counts[t] == COPIES)


class Pattern(Enum):
    """Base patterns in RULES.md §5 table order (the order breaks ties)."""

    PLAIN = ("平胡", "plain", 1, 0)
    ALL_PUNGS = ("对对胡", "all pungs", 2, 0)
    FULL_FLUSH = ("清一色", "full flush", 4, 0)
    SEVEN_PAIRS = ("七对", "seven pairs", 4, 0)
    TERMINALS = ("带幺九", "terminals in every set", 4, 0)
    GOLDEN_SINGLE_WAIT = ("金钩钓", "golden single wait", 4, 0)
    FLUSH_ALL_PUNGS = ("清对", "flush all pungs", 8, 0)
    ALL_PUNGS_258 = ("将对", "2-5-8 all pungs", 8, 0)
    DRAGON_SEVEN_PAIRS = ("龙七对", "dragon seven pairs", 8, 1)
    FLUSH_SEVEN_PAIRS = ("清七对", "flush seven pairs", 16, 0)
    FLUSH_TERMINALS = ("清带幺", "flush terminals", 16, 0)
    FLUSH_GOLDEN_SINGLE_WAIT = ("清金钩钓", "flush golden single wait", 16, 0)
    GOLDEN_SINGLE_WAIT_258 = ("将金钩钓", "2-5-8 golden single wait", 16, 0)
    FLUSH_DRAGON_SEVEN_PAIRS = ("清龙七对", "flush dragon seven pairs", 32, 1)
    EIGHTEEN_ARHATS = ("十八罗汉", "eighteen arhats", 64, 4)

    def __init__(self, zh: str, en: str, value: int, included_roots: int) -> None:
        self.zh = zh
        self.en = en
        self.multiplier = value
        self.included_roots = included_roots

    def name_in(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


_PREDICATES: dict[Pattern, Callable[[Reading], bool]] = {
    Pattern.PLAIN: lambda r: not r.seven_pairs,
    Pattern.ALL_PUNGS: lambda r: r.all_pungs,
    Pattern.FULL_FLUSH: lambda r: r.one_suit,
    Pattern.SEVEN_PAIRS: lambda r: r.seven_pairs,
    Pattern.TERMINALS: lambda r: r.terminals_everywhere,
    Pattern.GOLDEN_SINGLE_WAIT: lambda r: r.golden_single_wait,
    Pattern.FLUSH_ALL_PUNGS: lambda r: r.one_suit and r.all_pungs,
    Pattern.ALL_PUNGS_258: lambda r: r.all_pungs and r.only_258,
    Pattern.DRAGON_SEVEN_PAIRS: lambda r: r.seven_pairs and r.root_count >= 1,
    Pattern.FLUSH_SEVEN_PAIRS: lambda r: r.seven_pairs and r.one_suit,
    Pattern.FLUSH_TERMINALS: lambda r: r.one_suit and r.terminals_everywhere,
    Pattern.FLUSH_GOLDEN_SINGLE_WAIT: lambda r: r.golden_single_wait and r.one_suit,
    Pattern.GOLDEN_SINGLE_WAIT_258: lambda r: r.golden_single_wait and r.only_258,
    Pattern.FLUSH_DRAGON_SEVEN_PAIRS: lambda r: r.seven_pairs and r.one_suit and r.root_count >= 1,
    Pattern.EIGHTEEN_ARHATS: lambda r: r.golden_single_wait and all(m.is_kong for m in r.melds),
}
_TABLE_ORDER = {p: i for i, p in enumerate(Pattern)}
_GOLDEN_AND_FLUSH_TERMINALS = frozenset(
    {Pattern.GOLDEN_SINGLE_WAIT, Pattern.FLUSH_GOLDEN_SINGLE_WAIT, Pattern.GOLDEN_SINGLE_WAIT_258,
     Pattern.FLUSH_TERMINALS}
)
_2_5_8 = frozenset({Pattern.ALL_PUNGS_258, Pattern.GOLDEN_SINGLE_WAIT_258})


def pattern_value(pattern: Pattern, rules: RuleSet) -> int | None:
    """A base pattern's 倍 under a table's house rules (RULES.md §7), or None when switched off.

    将对 is worth 8, 16 or nothing; with 将对 off its golden-wait form 将金钩钓 goes too (both
    pay for the 2-5-8 shape). With 金钩钓/清带幺 off, 金钩钓 and its flush and 2-5-8 forms and
    清带幺 go; 十八罗汉 stays, being its own pattern. A hand is then valued without them.
    """
    if pattern in _2_5_8 and rules.all_pungs_258 is None:
        return None
    if pattern in _GOLDEN_AND_FLUSH_TERMINALS and not rules.golden_and_flush_terminals:
        return None
    if pattern is Pattern.ALL_PUNGS_258 and rules.all_pungs_258 is not None:
        return rules.all_pungs_258
    return pattern.multiplier


class Bonus(Enum):
    """Doublings and special wins listed beside the pattern (RULES.md §5)."""

    KONG_FLOWER = ("杠上花", "win on a kong replacement")
    KONG_CANNON = ("杠上炮", "win on the discard after a kong")
    ROBBING_KONG = ("抢杠胡", "robbing a kong")
    LAST_TILE = ("海底", "last tile")
    LAST_COPY = ("绝张", "last unseen copy")
    CONCEALED_HAND = ("门清", "concealed hand")
    NO_TERMINALS = ("中张", "no ones or nines")
    SELF_DRAW_DOUBLE = ("自摸加番", "self-draw doubles")
    HEAVENLY = ("天胡", "heavenly win")
    EARTHLY = ("地胡", "earthly win")

    def __init__(self, zh: str, en: str) -> None:
        self.zh = zh
        self.en = en

    @property
    def doubles(self) -> bool:
        """天胡/地胡 set a floor on the value instead of doubling it."""
        return self not in (Bonus.HEAVENLY, Bonus.EARTHLY)

    def name_in(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True, slots=True)
class Score:
    """A win's value. ``roots`` counts the roots that double (not those the pattern includes).

    ``multiplier`` is after the cap and before the 加底 extra; ``payment_per_payer`` is what
    each payer owes in base stakes, the 加底 extra included.
    """

    hand: DescribedHand
    reading: Reading
    pattern: Pattern
    pattern_value: int  # the pattern's 倍 under the table's rules (将对 may be worth 16)
    roots: int
    bonuses: tuple[Bonus, ...]
    uncapped_multiplier: int
    multiplier: int
    self_draw: bool
    payment_per_payer: int
    cap: int | None

    @property
    def capped(self) -> bool:
        return self.multiplier < self.uncapped_multiplier

    def lines(self, lang: str = "zh") -> list[str]:
        """The explanation a result card shows, one doubling per line."""
        zh = lang == "zh"
        out = [f"{self.pattern.name_in(lang)} ×{self.pattern_value}"]
        if self.pattern.included_roots:
            n = self.pattern.included_roots
            out[0] += f"（含{n}根）" if zh else f" ({n} root{'s' if n > 1 else ''} included)"
        if self.roots:
            out.append(f"{'根' if zh else 'roots'} ×{self.roots} → ×{2**self.roots}")
        for bonus in self.bonuses:
            if bonus.doubles:
                out.append(f"{bonus.name_in(lang)} ×2")
            else:
                floor = self.cap if self.cap is not None else UNCAPPED_HEAVENLY_VALUE
                out.append(f"{bonus.name_in(lang)} → {'至少' if zh else 'at least'} {floor}")
        if self.capped:
            out.append(f"{'封顶' if zh else 'cap'} {self.cap}")
        out.append(f"= {self.multiplier} {'倍' if zh else 'x base'}")
        if self.payment_per_payer != self.multiplier:
            out.append(
                f"{'自摸加底' if zh else 'self-draw adds a base'}: {self.payment_per_payer}"
                + (" / 家" if zh else " per payer")
            )
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "win_tile": tile_name(self.hand.win_tile) if self.hand.win_tile is not None else None,
            "pattern": self.pattern.zh,
            "pattern_en": self.pattern.en,
            "roots": self.roots,
            "bonuses": [b.zh for b in self.bonuses],
            "multiplier": self.multiplier,
            "uncapped_multiplier": self.uncapped_multiplier,
            "self_draw": self.self_draw,
            "payment_per_payer": self.payment_per_payer,
        }


def readings(hand: DescribedHand) -> list[Reading]:
    """Every way the concealed tiles complete the hand (standard sets, and seven pairs)."""
    counts = counts_of(hand.concealed)
    tiles = tuple(sorted(hand.all_tiles()))
    meld_sets = tuple(("pung" if m.kind is MeldKind.PUNG else "kong", m.tile) for m in hand.melds)
    out = [
        Reading(False, d.pair, tuple((s.kind, s.first) for s in d.sets) + meld_sets, hand.melds, tiles)
        for d in analysis.decompositions(counts)
    ]
    if not hand.melds and analysis.is_seven_pairs(counts):
        out.append(Reading(True, None, (), (), tiles))
    return out


def _bonuses(hand: DescribedHand, rules: RuleSet) -> list[Bonus]:
    situations = hand.situations
    bonuses: list[Bonus] = []
    if Situation.KONG_REPLACEMENT in situations:
        bonuses.append(Bonus.KONG_FLOWER)
    if Situation.AFTER_KONG_DISCARD in situations:
        bonuses.append(Bonus.KONG_CANNON)
    if Situation.ROBBING_KONG in situations:
        bonuses.append(Bonus.ROBBING_KONG)
    if Situation.LAST_TILE in situations and rules.last_tile_bonus:
        bonuses.append(Bonus.LAST_TILE)
    if Situation.LAST_COPY in situations and rules.last_copy_bonus:
        bonuses.append(Bonus.LAST_COPY)
    if rules.concealed_hand_bonus and not any(m.is_exposed for m in hand.melds):
        bonuses.append(Bonus.CONCEALED_HAND)
    if rules.no_terminals_bonus and all(rank_of(t) not in (1, 9) for t in hand.all_tiles()):
        bonuses.append(Bonus.NO_TERMINALS)
    if rules.self_draw is SelfDrawBonus.DOUBLE and hand.self_drawn:
        bonuses.append(Bonus.SELF_DRAW_DOUBLE)
    if Situation.HEAVENLY in situations:
        bonuses.append(Bonus.HEAVENLY)
    elif Situation.EARTHLY in situations:
        bonuses.append(Bonus.EARTHLY)
    return bonuses


def score(hand: DescribedHand, rules: RuleSet) -> Score:
    """Value a complete hand; a hand that is not a win raises ``HandError`` (RULES.md §8 order)."""
    check_tiles(hand, 14)
    if hand.win_tile is None or hand.win_tile not in hand.concealed:
        raise HandError("parse", "the winning tile is not among the concealed tiles")
    all_readings = readings(hand)
    if not all_readings:
        counts = counts_of(hand.concealed)
        raise HandError(
            "not_a_win",
            "these tiles do not make four sets and a pair, or seven pairs",
            shanten=analysis.shanten(counts, len(hand.melds)),
        )
    best: tuple[int, int, int] | None = None
    chosen: tuple[Reading, Pattern, int] | None = None
    for reading in all_readings:
        for pattern, applies in _PREDICATES.items():
            value = pattern_value(pattern, rules)
            if value is None or not applies(reading):
                continue
            doubling_roots = reading.root_count - pattern.included_roots
            key = (value << doubling_roots, value, _TABLE_ORDER[pattern])
            if best is None or key > best:
                best, chosen = key, (reading, pattern, value)
    assert chosen is not None
    reading, pattern, value = chosen
    roots = reading.root_count - pattern.included_roots
    bonuses = _bonuses(hand, rules)
    doublings = roots + sum(1 for b in bonuses if b.doubles)
    uncapped = value << doublings
    if Bonus.HEAVENLY in bonuses or Bonus.EARTHLY in bonuses:
        # The floor is not doubled, but the hand's own value keeps every doubling (自摸加番
        # included), so marking a win 天胡/地胡 never lowers it (RULES.md §5).
        uncapped = max(uncapped, rules.heavenly_value)
    multiplier = uncapped if rules.cap is None else min(uncapped, rules.cap)
    extra = 1 if hand.self_drawn and rules.self_draw is SelfDrawBonus.ADD_BASE else 0
    return Score(
        hand=hand,
        reading=reading,
        pattern=pattern,
        pattern_value=value,
        roots=roots,
        bonuses=tuple(bonuses),
        uncapped_multiplier=uncapped,
        multiplier=multiplier,
        self_draw=hand.self_drawn,
        payment_per_payer=multiplier + extra,
        cap=rules.cap,
    )


def wait_scores(
    concealed: Sequence[Tile], melds: Sequence[Meld], rules: RuleSet
) -> dict[Tile, Score]:
    """Each winning tile of a hand one tile short, valued as a plain win on a discard."""
    counts = counts_of(concealed)
    out: dict[Tile, Score] = {}
    for tile in analysis.waits(counts, melds):
        hand = DescribedHand(tuple(sorted([*concealed, tile])), tuple(melds), tile, frozenset())
        out[tile] = score(hand, rules)
    return out


def best_wait_value(
    concealed: Sequence[Tile],
    melds: Sequence[Meld],
    rules: RuleSet,
    lowest: bool = False,
    exclude: Sequence[Tile] = (),
) -> int:
    """查大叫 (or 查小叫 with ``lowest``): the capped value of the best (worst) wait; 0 if none.

    ``exclude`` drops waits the caller rules out, e.g. dead waits (死叫) when they do not count.
    """
    values = [s.multiplier for t, s in wait_scores(concealed, melds, rules).items() if t not in exclude]
    if not values:
        return 0
    return min(values) if lowest else max(values)
