"""Correcting a recognised hand with taps: the state of one photo's correction and its moves.

Pure logic, no Telegram: ``bot.score.photo`` turns presses into these moves and the state into
a picture and buttons. Tiles are kept in display order — sorted, the winning tile last, as
``rendering.render_hand`` draws them — so button *i* is the *i*-th tile in the picture.
A move that cannot be made returns a refusal code and changes nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from engine.tiles import COPIES, DescribedHand, Meld, MeldKind, Situation, Suit, Tile, make_tile

MAX_TILES = 18  # four kongs and a pair
MAX_MELDS = 4


class Step(Enum):
    MAIN = "main"  # the hand with its tiles as buttons
    TILE = "tile"  # one tile chosen: replace (pick a suit), remove, win, meld
    ADD = "add"  # adding a tile: pick its suit
    NUMBER = "number"  # a suit picked: pick the number


@dataclass
class Entry:
    tile: Tile
    unsure: bool = False  # the recogniser was not confident; cleared once the player sets it
    confidence: float = 1.0  # the recogniser's confidence, to show the least sure tiles first


@dataclass(frozen=True)
class Finish:
    """What the last button does when the correction answers another feature's question (a
    /keep panel asking for a winner's tiles) instead of scoring the hand: its label, the caption
    once the hand is taken (texts to translate; ``{hand}`` is its notation), and the call that
    takes it. ``take(context, hand, user_id)`` returns None once the hand is taken, or the reason
    it is not, shown on the correction. ``winning`` is False when the tiles asked for are not a
    win (a player's 13 at an empty wall): no winning tile is shown or offered then."""

    label: str
    done: str
    take: Callable[[Any, DescribedHand, int], Awaitable[str | None]]
    winning: bool = True


@dataclass
class Fixing:
    """One photo's correction. ``version`` goes up with every change so old buttons are refused."""

    owner: int
    entries: list[Entry]
    melds: list[Meld] = field(default_factory=list)
    win: Tile | None = None
    version: int = 0
    step: Step = Step.MAIN
    selected: int | None = None
    suit: Suit | None = None
    notice: str | None = None  # the last refused Score, shown until the next change
    finish: Finish | None = None  # None: the last button scores the hand
    situations: frozenset[Situation] = frozenset()  # written with the photo (/score 自摸)
    drawn: tuple[object, ...] | None = None  # the picture_key of what the message shows

    def __post_init__(self) -> None:
        self._arrange()

    # --- views ---------------------------------------------------------------------------------

    @property
    def win_index(self) -> int | None:
        return len(self.entries) - 1 if self.win is not None and self.entries else None

    @property
    def tile_count(self) -> int:
        return len(self.entries) + sum(m.size for m in self.melds)

    def unsure_first(self) -> list[int]:
        """Indices of the unsure tiles, least confident first: the order to ask the player to check them."""
        return sorted((i for i, e in enumerate(self.entries) if e.unsure), key=lambda i: self.entries[i].confidence)

    def picture_key(self) -> tuple[object, ...]:
        """What the picture depends on; when it is unchanged only the caption needs editing."""
        return (tuple((e.tile, e.unsure) for e in self.entries), tuple(self.melds), self.win, self.selected)

    @property
    def winning(self) -> bool:
        """Whether the hand being corrected is a win, with a winning tile."""
        return self.finish is None or self.finish.winning

    def hand(self) -> DescribedHand:
        """The hand as written so far; without a marked winning tile the last one counts."""
        tiles = tuple(sorted(e.tile for e in self.entries))
        win = self.win if self.win is not None else (self.entries[-1].tile if self.entries else None)
        return DescribedHand(tiles, tuple(self.melds), win, self.situations)

    # --- moves ---------------------------------------------------------------------------------

    def choose_tile(self, index: int) -> str | None:
        if not 0 <= index < len(self.entries):
            return "stale"
        self._go(Step.TILE, selected=index)
        return None

    def start_adding(self) -> str | None:
        if self.tile_count >= MAX_TILES:
            return "too_many_tiles"
        self._go(Step.ADD)
        return None

    def choose_suit(self, suit: Suit) -> str | None:
        if self.step not in (Step.TILE, Step.ADD):
            return "stale"
        self._go(Step.NUMBER, selected=self.selected, suit=suit)
        return None

    def choose_number(self, rank: int) -> str | None:
        if self.step is not Step.NUMBER or self.suit is None or not 1 <= rank <= 9:
            return "stale"
        tile = make_tile(rank, self.suit)
        held = sum(1 for e in self.entries if e.tile == tile) + sum(m.size for m in self.melds if m.tile == tile)
        if self.selected is None:
            if held >= COPIES:
                return "too_many_copies"
            self.entries.append(Entry(tile))
        else:
            entry = self.entries[self.selected]
            if entry.tile != tile and held >= COPIES:
                return "too_many_copies"
            if self.selected == self.win_index:
                self.win = tile
            entry.tile, entry.unsure = tile, False
        self._changed()
        return None

    def remove(self) -> str | None:
        if self.step is not Step.TILE or self.selected is None:
            return "stale"
        if self.tile_count <= 1:
            return "last_tile"
        if self.selected == self.win_index:
            self.win = None
        del self.entries[self.selected]
        self._changed()
        return None

    def mark_win(self) -> str | None:
        if self.step is not Step.TILE or self.selected is None:
            return "stale"
        entry = self.entries.pop(self.selected)
        self.entries.append(entry)  # the winning tile goes last; _arrange keeps it there
        self.win = entry.tile
        self._changed()
        return None

    def mark_meld(self, kind: MeldKind) -> str | None:
        if self.step is not Step.TILE or self.selected is None:
            return "stale"
        if len(self.melds) >= MAX_MELDS:
            return "too_many_melds"
        tile = self.entries[self.selected].tile
        size = 3 if kind is MeldKind.PUNG else 4
        same = [i for i, e in enumerate(self.entries) if e.tile == tile]
        if len(same) < size:
            return "not_enough_tiles"
        if len(self.entries) == size:
            return "last_tile"
        win_index = self.win_index
        taken = [i for i in same if i != win_index][:size]
        if len(taken) < size:  # the winning tile itself goes into the meld: no winning tile left
            taken, self.win = same[:size], None
        self.entries = [e for i, e in enumerate(self.entries) if i not in taken]
        self.melds.append(Meld(kind, tile))
        self._changed()
        return None

    def unmark_meld(self, index: int) -> str | None:
        if not 0 <= index < len(self.melds):
            return "stale"
        meld = self.melds.pop(index)
        self.entries.extend(Entry(meld.tile) for _ in range(meld.size))
        self._changed()
        return None

    def back(self) -> str | None:
        self._go(Step.MAIN)
        return None

    def refuse_score(self, notice: str) -> None:
        """Score was pressed on a hand that cannot be valued: show why, keep correcting."""
        self.notice = notice
        self._go(Step.MAIN)

    # --- bookkeeping ---------------------------------------------------------------------------

    def _go(self, step: Step, selected: int | None = None, suit: Suit | None = None) -> None:
        self.step, self.selected, self.suit = step, selected, suit
        self.version += 1

    def _changed(self) -> None:
        self.notice = None
        self._arrange()
        self._go(Step.MAIN)

    def _arrange(self) -> None:
        """Sort the tiles and put one copy of the winning tile last (forget it if none is left)."""
        winning = None
        if self.win is not None:
            copies = [i for i, e in enumerate(self.entries) if e.tile == self.win]
            if copies:
                winning = self.entries.pop(copies[-1])  # the copy already last stays last
            else:
                self.win = None
        self.entries.sort(key=lambda e: e.tile)
        if winning is not None:
            self.entries.append(winning)
