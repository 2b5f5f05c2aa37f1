"""What happened in a hand (``Event``), and the record of one win (``Win``).

``Game.apply`` returns events in the order things happened; the bot renders them and storage
may log them. Some events carry a secret (a drawn tile, the three tiles chosen to swap, a void
choice before the reveal): they are marked ``private`` and ``visible_to(seat)`` blanks the
secret for every other seat, so one list of events can be fanned out safely.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from engine.actions import ActionType
from engine.rules import SwapDirection
from engine.scoring import Score
from engine.settlement import KongKind, SeatStatus, Transfer
from engine.tiles import DescribedHand, Meld, MeldKind, Situation, Suit, Tile, format_hand, tile_name


class EventType(Enum):
    DEALT = "dealt"  # seat got ``tiles`` (private)
    SWAP_CHOSEN = "swap_chosen"  # seat chose ``tiles`` to pass (private)
    SWAPPED = "swapped"  # seat received ``tiles`` (private) from ``from_seat``; ``direction``
    VOID_CHOSEN = "void_chosen"  # seat chose ``suit`` (private until the reveal)
    VOID_REVEALED = "void_revealed"  # seat's void ``suit``, for all to see
    DREW = "drew"  # seat drew ``tile`` (private); ``replacement`` for a kong replacement
    DISCARDED = "discarded"  # seat discarded ``tile``
    CLAIM_CHOSEN = "claim_chosen"  # seat decided on the offered tile (``choice``, private)
    PASSED = "passed"  # seat let the offered tile go (announced when the window closes)
    PUNGED = "punged"  # seat punged ``tile`` discarded by ``from_seat``
    KONG_DECLARED = "kong_declared"  # seat wants to add ``tile`` to a pung; others may rob it
    KONG = "kong"  # seat made a ``kong`` of ``tile``; ``paid`` False for a late 补杠
    WON = "won"  # ``win`` (hand, score); ``from_seat`` None for a self-draw
    TRANSFER = "transfer"  # ``transfer``
    WALL_CHECK = "wall_check"  # the empty-wall finding for seat (``status``)
    HAND_OVER = "hand_over"  # ``end``: why the hand ended


class EndReason(Enum):
    THREE_WON = "three_won"  # 血战到底: three players have won
    WALL_EMPTY = "wall_empty"  # 流局 / 查叫
    FIRST_WIN = "first_win"  # 普通 mode: the first win ends the hand


@dataclass(frozen=True, slots=True)
class Win:
    """One win: who, on which tile, fed by whom (None = self-drawn), the hand and its score.

    ``group`` numbers the win events of a hand; winners on one discard (一炮多响) share it.
    """

    seat: int
    tile: Tile
    from_seat: int | None
    hand: DescribedHand
    score: Score
    group: int
    as_discard: bool = False  # 点杠花 算点炮: a self-draw the kong's feeder pays once, as a discard win

    @property
    def self_drawn(self) -> bool:
        return self.from_seat is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "tile": tile_name(self.tile),
            "from_seat": self.from_seat,
            "group": self.group,
            "hand": format_hand(self.hand),
            "score": self.score.to_dict(),
            **({"as_discard": True} if self.as_discard else {}),
        }


def hand_to_dict(hand: DescribedHand) -> dict[str, Any]:
    """Lossless JSON form of a described hand (used by the game state)."""
    return {
        "concealed": list(hand.concealed),
        "melds": [[m.kind.value, m.tile] for m in hand.melds],
        "win_tile": hand.win_tile,
        "situations": sorted(s.value for s in hand.situations),
    }


def hand_from_dict(data: dict[str, Any]) -> DescribedHand:
    return DescribedHand(
        tuple(data["concealed"]),
        tuple(Meld(MeldKind(k), t) for k, t in data["melds"]),
        data["win_tile"],
        frozenset(Situation(s) for s in data["situations"]),
    )


@dataclass(frozen=True, slots=True)
class Event:
    type: EventType
    seat: int | None = None
    tile: Tile | None = None
    tiles: tuple[Tile, ...] = ()
    suit: Suit | None = None
    from_seat: int | None = None
    kong: KongKind | None = None
    paid: bool = True
    replacement: bool = False
    direction: SwapDirection | None = None
    choice: ActionType | None = None
    transfer: Transfer | None = None
    win: Win | None = None
    status: SeatStatus | None = None
    end: EndReason | None = None
    private: bool = False

    def visible_to(self, seat: int | None) -> Event:
        """The event as ``seat`` may see it (None = the group table): secrets blanked for others."""
        if not self.private or seat == self.seat:
            return self
        return replace(self, tile=None, tiles=(), suit=None, choice=None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type.value}
        if self.seat is not None:
            out["seat"] = self.seat
        if self.tile is not None:
            out["tile"] = tile_name(self.tile)
        if self.tiles:
            out["tiles"] = [tile_name(t) for t in self.tiles]
        if self.suit is not None:
            out["suit"] = self.suit.letter
        if self.from_seat is not None:
            out["from_seat"] = self.from_seat
        if self.kong is not None:
            out["kong"] = self.kong.value
            out["paid"] = self.paid
        if self.replacement:
            out["replacement"] = True
        if self.direction is not None:
            out["direction"] = self.direction.value
        if self.choice is not None:
            out["choice"] = self.choice.value
        if self.transfer is not None:
            out["transfer"] = self.transfer.to_dict()
        if self.win is not None:
            out["win"] = self.win.to_dict()
        if self.status is not None:
            out["status"] = self.status.to_dict()
        if self.end is not None:
            out["end"] = self.end.value
        if self.private:
            out["private"] = True
        return out
