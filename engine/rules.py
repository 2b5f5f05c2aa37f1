"""Every table setting of RULES.md in one immutable value, with the three presets.

A table's rules are chosen once per hand and stored with it, so a ``RuleSet`` must survive a
JSON round trip unchanged (``RuleSet.from_dict(r.to_dict()) == r``) — the action log replays
under exactly the rules it was played with.

>>> RuleSet.preset("chengdu").cap
8
>>> RuleSet.preset("classic").mode is GameMode.FIRST_WIN
True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from enum import Enum
from typing import Any


class GameMode(Enum):
    BLOODY_BATTLE = "xuezhan"  # 血战到底: winners leave; ends at three winners or an empty wall
    BLOODY_RIVER = "xueliu"  # 血流成河: winners play on and may win again
    FIRST_WIN = "first_win"  # 普通: the first win (or multiple win on one discard) ends the hand


class SelfDrawBonus(Enum):
    ADD_BASE = "jiadi"  # 自摸加底: each payer pays one extra base after the cap
    DOUBLE = "jiafan"  # 自摸加番: ×2 before the cap
    NONE = "none"


class DirectKongPayment(Enum):
    """What a 直杠 (kong on a discard) earns."""

    TWO_FROM_DISCARDER = "two"
    ONE_FROM_DISCARDER = "one"
    TWO_PLUS_ONE_FROM_OTHERS = "two_plus_others"


class KongFlowerPayer(Enum):
    """Who pays a 杠上花 made on the replacement of a 直杠 fed by someone's discard (点杠花)."""

    EVERYONE = "everyone"  # paid as a self-draw
    FEEDER = "feeder"  # 承包: the player who fed the kong pays every share alone
    FEEDER_ONCE = "feeder_once"  # 算点炮: the feeder pays once, as for a win on their discard


class PassWinScope(Enum):
    """过水不胡: which discard wins a seat that declined one may not take until its next draw."""

    ANY = "any"  # every discard win, unless worth strictly more (加番可胡)
    SAME_TILE = "same_tile"  # only the tile declined (相同的牌不能胡，不同的可以)
    OFF = "off"


class LastFour(Enum):
    """Which wins on one of the last four tiles of the wall are compulsory (最后四张)."""

    DRAWS_AND_DISCARDS = "draws_and_discards"
    DISCARDS = "discards"
    SELF_DRAWS = "self_draws"
    OFF = "off"

    @property
    def on_draws(self) -> bool:
        return self in (LastFour.DRAWS_AND_DISCARDS, LastFour.SELF_DRAWS)

    @property
    def on_discards(self) -> bool:
        return self in (LastFour.DRAWS_AND_DISCARDS, LastFour.DISCARDS)


class FlowerPigPenalty(Enum):
    """What a 花猪 pays each payee at an empty wall, in base stakes."""

    SIXTEEN = "16"
    CAP = "cap"  # 满格: the cap, or 16 when uncapped
    NINE = "9"


class NextDealer(Enum):
    """Who deals the next hand (RULES.md §1 and §7)."""

    FIRST_WINNER = "first_winner"  # the discarder after a multiple win; the dealer stays if nobody won
    ROTATE = "rotate"  # always the next seat
    DISCARDER = "discarder"  # the discarder of the first win (the winner if it was self-drawn)


class SwapDirection(Enum):
    CLOCKWISE = "clockwise"
    COUNTER_CLOCKWISE = "counter_clockwise"
    ACROSS = "across"

    @property
    def offset(self) -> int:
        """Seat offset from giver to receiver (seats play 0 → 1 → 2 → 3)."""
        return {"clockwise": 1, "counter_clockwise": 3, "across": 2}[self.value]


CAPS: tuple[int | None, ...] = (8, 16, 32, 64, None)
ALL_PUNGS_258_VALUES: tuple[int | None, ...] = (8, 16, None)  # None: 将对 is not a pattern
UNCAPPED_HEAVENLY_VALUE = 32
UNCAPPED_FLOWER_PIG = 16
AI_LEVELS: tuple[str, ...] = ("normal", "easy", "hard")


@dataclass(frozen=True, slots=True)
class RuleSet:
    """One table's rules. Defaults are the ``chengdu`` preset of RULES.md."""

    mode: GameMode = GameMode.BLOODY_BATTLE
    swap_three: bool = True
    swap_direction: SwapDirection | None = None  # None: drawn at random each hand
    declare_void: bool = True  # 定缺; off = 不定张: only the winning hand must lack a suit
    pass_win_scope: PassWinScope = PassWinScope.ANY  # 过水不胡
    last_four: LastFour = LastFour.DRAWS_AND_DISCARDS  # compulsory wins on the last four tiles
    cap: int | None = 8  # 封顶 in 倍; None = no cap
    self_draw: SelfDrawBonus = SelfDrawBonus.ADD_BASE
    kong_flower_payer: KongFlowerPayer = KongFlowerPayer.EVERYONE
    kong_cannon_transfer: bool = True  # 杠上炮 also hands on the kong's money (呼叫转移)
    last_tile_bonus: bool = True  # 海底
    concealed_hand_bonus: bool = False  # 门清
    no_terminals_bonus: bool = False  # 中张
    last_copy_bonus: bool = False  # 绝张 ×2
    all_pungs_258: int | None = 8  # 将对 worth 8, 16, or None: not a pattern
    golden_and_flush_terminals: bool = True  # 金钩钓 and 清带幺 count as patterns
    direct_kong_payment: DirectKongPayment = DirectKongPayment.TWO_FROM_DISCARDER
    delayed_added_kong_pays: bool = False  # False: a late 补杠 is a root but earns nothing
    flower_pig_pays: FlowerPigPenalty = FlowerPigPenalty.SIXTEEN
    flower_pig_pays_winners: bool = False  # 查花猪 also pays players who already won
    not_ready_pays_lowest: bool = False  # 查小叫 instead of 查大叫
    dead_wait_counts_as_ready: bool = True  # 死叫 counts as ready
    next_dealer: NextDealer = NextDealer.FIRST_WINNER
    ai_level: str = "normal"  # how well the computer players play: easy, normal, hard (not a rule)
    base: int = 1  # chips per base stake

    def __post_init__(self) -> None:
        if self.cap not in CAPS:
            raise ValueError(f"cap must be one of 8, 16, 32, 64 or none, got {self.cap!r}")
        if self.all_pungs_258 not in ALL_PUNGS_258_VALUES:
            raise ValueError(f"将对 must be worth 8, 16 or none, got {self.all_pungs_258!r}")
        if self.ai_level not in AI_LEVELS:
            raise ValueError(f"ai_level must be one of {', '.join(AI_LEVELS)}, got {self.ai_level!r}")
        if not isinstance(self.base, int) or self.base < 1:
            raise ValueError(f"base stake must be a whole number of chips >= 1, got {self.base!r}")

    @classmethod
    def preset(cls, name: str) -> RuleSet:
        try:
            return PRESETS[name.lower()]
        except KeyError:
            raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}") from None

    @property
    def flower_pig_penalty(self) -> int:
        """查花猪 in base stakes: 16, 9, or the cap (16 when uncapped, RULES.md §7 rulings)."""
        if self.flower_pig_pays is FlowerPigPenalty.NINE:
            return 9
        if self.flower_pig_pays is FlowerPigPenalty.CAP and self.cap is not None:
            return self.cap
        return UNCAPPED_FLOWER_PIG

    @property
    def heavenly_value(self) -> int:
        """天胡/地胡 are worth the cap, or 32 when there is no cap."""
        return self.cap if self.cap is not None else UNCAPPED_HEAVENLY_VALUE

    def with_changes(self, **changes: Any) -> RuleSet:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {k: (v.value if isinstance(v, Enum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        """Unknown keys are ignored and missing ones take defaults, so old logs stay readable.

        Settings that were on/off switches before they had more values are read in their old
        form too (``pass_win_rule``, ``forced_last_four``, ``flower_pig_pays_cap``).
        """
        data = {**_from_old_switches(data), **data}
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            enum_type = _ENUM_FIELDS.get(f.name)
            kwargs[f.name] = enum_type(value) if enum_type and value is not None else value
        return cls(**kwargs)

    def changed_fields(self, reference: RuleSet | None = None) -> list[str]:
        """The settings (base stake excluded) that differ from ``reference`` (the defaults), in field order."""
        reference = reference or RuleSet()
        return [f.name for f in fields(self)
                if f.name != "base" and getattr(self, f.name) != getattr(reference, f.name)]

    def preset_name(self) -> str | None:
        """The preset these rules equal, if any (for a one-line summary); the base stake and the
        computer players' level are not rules, so they do not count."""
        for name, rules in PRESETS.items():
            if rules == self.with_changes(base=rules.base, ai_level=rules.ai_level):
                return name
        return None


_ENUM_FIELDS: dict[str, type[Enum]] = {
    "mode": GameMode,
    "swap_direction": SwapDirection,
    "pass_win_scope": PassWinScope,
    "last_four": LastFour,
    "self_draw": SelfDrawBonus,
    "kong_flower_payer": KongFlowerPayer,
    "direct_kong_payment": DirectKongPayment,
    "flower_pig_pays": FlowerPigPenalty,
    "next_dealer": NextDealer,
}


def _from_old_switches(data: dict[str, Any]) -> dict[str, Any]:
    """Settings saved as on/off switches by earlier versions, in their current form."""
    out: dict[str, Any] = {}
    if "pass_win_rule" in data:
        out["pass_win_scope"] = (PassWinScope.ANY if data["pass_win_rule"] else PassWinScope.OFF).value
    if "forced_last_four" in data:
        on = data["forced_last_four"]
        out["last_four"] = (LastFour.DRAWS_AND_DISCARDS if on else LastFour.OFF).value
    if "flower_pig_pays_cap" in data:
        pays = FlowerPigPenalty.CAP if data["flower_pig_pays_cap"] else FlowerPigPenalty.SIXTEEN
        out["flower_pig_pays"] = pays.value
    return out

SETTING_VALUES: dict[str, tuple[Any, ...]] = {
    "mode": tuple(GameMode),
    "swap_three": (True, False),
    "swap_direction": (None, SwapDirection.CLOCKWISE, SwapDirection.ACROSS),
    "declare_void": (True, False),
    "pass_win_scope": tuple(PassWinScope),
    "last_four": tuple(LastFour),
    "cap": CAPS,
    "self_draw": tuple(SelfDrawBonus),
    "kong_flower_payer": tuple(KongFlowerPayer),
    "kong_cannon_transfer": (True, False),
    "last_tile_bonus": (True, False),
    "concealed_hand_bonus": (False, True),
    "no_terminals_bonus": (False, True),
    "last_copy_bonus": (False, True),
    "all_pungs_258": ALL_PUNGS_258_VALUES,
    "golden_and_flush_terminals": (True, False),
    "direct_kong_payment": tuple(DirectKongPayment),
    "delayed_added_kong_pays": (False, True),
    "flower_pig_pays": tuple(FlowerPigPenalty),
    "flower_pig_pays_winners": (False, True),
    "not_ready_pays_lowest": (False, True),
    "dead_wait_counts_as_ready": (True, False),
    "next_dealer": tuple(NextDealer),
    "ai_level": AI_LEVELS,
}
"""Every setting but the base stake, with the values a table may pick, the default first."""


def value_text(value: Any) -> str:
    """A setting's value as written on a command line: ``none``, ``true``, ``16``, ``same_tile``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value.value if isinstance(value, Enum) else value)


def parse_setting(key: str, text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` from a command line as a field and one of its values; ``ValueError`` names
    the choices when either is unknown."""
    choices = SETTING_VALUES.get(key)
    if choices is None:
        raise ValueError(f"unknown setting {key!r}; settings: {', '.join(SETTING_VALUES)}")
    for value in choices:
        if value_text(value) == text.strip().lower():
            return key, value
    raise ValueError(f"{key} must be one of {', '.join(value_text(v) for v in choices)}, got {text!r}")


PRESETS: dict[str, RuleSet] = {
    "chengdu": RuleSet(),
    "xueliu": RuleSet(mode=GameMode.BLOODY_RIVER),
    "classic": RuleSet(mode=GameMode.FIRST_WIN, swap_three=False),
}
