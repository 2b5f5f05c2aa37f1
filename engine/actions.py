"""What a seat can do in a hand (``Action``), its JSON form for the action log, and ``GameError``.

An action is a small value: the seat, a type and the tile(s) or suit it concerns. The action
log stores ``Action.to_dict()``; ``Action.from_dict`` reads it back exactly:

>>> a = Action.discard(1, parse_tile("5p"))
>>> a.to_dict()
{'seat': 1, 'type': 'discard', 'tile': '5p'}
>>> Action.from_dict(a.to_dict()) == a
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from engine.tiles import HandError, Suit, Tile, parse_tile, tile_name

SEATS = 4


class GameError(ValueError):
    """An action the referee refuses, with a stable ``code`` for the bot's translations.

    Codes: ``bad_action`` (unreadable action), ``bad_setup`` (bad seed/dealer/wall),
    ``not_your_turn``, ``illegal_action``, ``hand_over``, ``hand_not_over``, ``bad_state``.
    """

    def __init__(self, code: str, message: str, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = params


_TILES_BY_NAME = {tile_name(t): t for t in range(27)}


def _tile(name: Any) -> Tile:
    """A logged tile name (``"5p"``, the fast path) or any other accepted spelling."""
    tile = _TILES_BY_NAME.get(name) if isinstance(name, str) else None
    return tile if tile is not None else parse_tile(name)


class ActionType(Enum):
    SWAP = "swap"  # 换三张: three tiles of one suit (``tiles``)
    VOID = "void"  # 定缺: the suit to void (``suit``)
    DISCARD = "discard"  # 打牌 (``tile``)
    WIN = "win"  # 胡: self-drawn or on the offered tile (``tile`` = the winning tile)
    PUNG = "pung"  # 碰 the offered discard (``tile``)
    KONG = "kong"  # 杠 (``tile``): 暗杠 / 补杠 on one's turn, 直杠 on a discard
    PASS = "pass"  # 过: decline every claim on the offered tile


@dataclass(frozen=True, slots=True)
class Action:
    """One decision by one seat. Take actions from ``Game.legal_actions``; they compare equal."""

    seat: int
    type: ActionType
    tile: Tile | None = None
    tiles: tuple[Tile, ...] = ()
    suit: Suit | None = None

    @classmethod
    def swap(cls, seat: int, tiles: Iterable[Tile]) -> Action:
        return cls(seat, ActionType.SWAP, tiles=tuple(sorted(tiles)))

    @classmethod
    def void(cls, seat: int, suit: Suit | int) -> Action:
        return cls(seat, ActionType.VOID, suit=Suit(suit))

    @classmethod
    def discard(cls, seat: int, tile: Tile) -> Action:
        return cls(seat, ActionType.DISCARD, tile)

    @classmethod
    def win(cls, seat: int, tile: Tile) -> Action:
        return cls(seat, ActionType.WIN, tile)

    @classmethod
    def pung(cls, seat: int, tile: Tile) -> Action:
        return cls(seat, ActionType.PUNG, tile)

    @classmethod
    def kong(cls, seat: int, tile: Tile) -> Action:
        return cls(seat, ActionType.KONG, tile)

    @classmethod
    def pass_(cls, seat: int) -> Action:
        return cls(seat, ActionType.PASS)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "type": self.type.value}
        if self.tile is not None:
            out["tile"] = tile_name(self.tile)
        if self.tiles:
            out["tiles"] = [tile_name(t) for t in self.tiles]
        if self.suit is not None:
            out["suit"] = self.suit.letter
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Action:
        """Read a logged or typed action; anything malformed raises ``GameError("bad_action")``."""
        try:
            seat = data["seat"]
            if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < SEATS:
                raise GameError("bad_action", f"seat must be 0-3, got {seat!r}", seat=seat)
            kind = ActionType(data["type"])
            tile = _tile(data["tile"]) if data.get("tile") is not None else None
            tiles = tuple(sorted(_tile(t) for t in data.get("tiles", ())))
            suit = Suit.from_letter(data["suit"]) if data.get("suit") is not None else None
        except GameError:
            raise
        except (KeyError, TypeError, ValueError, HandError) as exc:
            raise GameError("bad_action", f"unreadable action {data!r}: {exc}", data=repr(data)) from None
        return cls(seat, kind, tile, tiles, suit)

    def __str__(self) -> str:
        parts = [f"seat {self.seat}", self.type.value]
        if self.tile is not None:
            parts.append(tile_name(self.tile))
        if self.tiles:
            parts.append(" ".join(tile_name(t) for t in self.tiles))
        if self.suit is not None:
            parts.append(self.suit.letter)
        return " ".join(parts)
