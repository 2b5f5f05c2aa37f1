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
    FEEDER = "feeder"  # 承包: the player who fed the kong pays alone


class SwapDirection(Enum):
    CLOCKWISE = "clockwise"
    COUNTER_CLOCKWISE = "counter_clockwise"
    ACROSS = "across"

    @property
    def offset(self) -> int:
        """Seat offset from giver to receiver (seats play 0 → 1 → 2 → 3)."""
        return {"clockwise": 1, "counter_clockwise": 3, "across": 2}[self.value]


CAPS: tuple[int | None, ...] = (8, 16, 32, 64, None)
UNCAPPED_HEAVENLY_VALUE = 32


@dataclass(frozen=True, slots=True)
class RuleSet:
    """One table's rules. Defaults are the ``chengdu`` preset of RULES.md."""

    mode: GameMode = GameMode.BLOODY_BATTLE
    swap_three: bool = True
    pass_win_rule: bool = True  # 过水不胡 (with the 加番可胡 exception)
    forced_last_four: bool = True  # while <= 4 tiles remain, a seat that can win must
    cap: int | None = 8  # 封顶 in 倍; None = no cap
    self_draw: SelfDrawBonus = SelfDrawBonus.ADD_BASE
    kong_flower_payer: KongFlowerPayer = KongFlowerPayer.EVERYONE
    last_tile_bonus: bool = True  # 海底
    concealed_hand_bonus: bool = False  # 门清
    no_terminals_bonus: bool = False  # 中张
    direct_kong_payment: DirectKongPayment = DirectKongPayment.TWO_FROM_DISCARDER
    delayed_added_kong_pays: bool = False  # False: a late 补杠 is a root but earns nothing
    flower_pig_pays_cap: bool = False  # 查花猪 pays the cap instead of 16
    flower_pig_pays_winners: bool = False  # 查花猪 also pays players who already won
    not_ready_pays_lowest: bool = False  # 查小叫 instead of 查大叫
    dead_wait_counts_as_ready: bool = True  # 死叫 counts as ready
    base: int = 1  # chips per base stake

    def __post_init__(self) -> None:
        if self.cap not in CAPS:
            raise ValueError(f"cap must be one of 8, 16, 32, 64 or none, got {self.cap!r}")
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
        """查花猪 in base stakes: 16, or the cap when that setting is on (16 when uncapped)."""
        if self.flower_pig_pays_cap and self.cap is not None:
            return self.cap
        return 16

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
        """Unknown keys are ignored and missing ones take defaults, so old logs stay readable."""
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            enum_type = _ENUM_FIELDS.get(f.name)
            kwargs[f.name] = enum_type(value) if enum_type else value
        return cls(**kwargs)

    def preset_name(self) -> str | None:
        """The preset these rules equal, if any (for a one-line summary)."""
        for name, rules in PRESETS.items():
            if rules == self.with_changes(base=rules.base):
                return name
        return None


_ENUM_FIELDS: dict[str, type[Enum]] = {
    "mode": GameMode,
    "self_draw": SelfDrawBonus,
    "kong_flower_payer": KongFlowerPayer,
    "direct_kong_payment": DirectKongPayment,
}

PRESETS: dict[str, RuleSet] = {
    "chengdu": RuleSet(),
    "xueliu": RuleSet(mode=GameMode.BLOODY_RIVER),
    "classic": RuleSet(mode=GameMode.FIRST_WIN, swap_three=False),
}
