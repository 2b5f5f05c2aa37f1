"""What the renderer is given: small frozen descriptions, built by the bot from game state.

They carry finished strings (names, pattern names, reasons) because every word in an
image comes from the caller, who knows the chat's language. The table description is
public by construction: a seat still in play has only a *count* of concealed tiles, so no
caller mistake can put a hidden hand into a group image.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.tiles import NUM_KINDS, DescribedHand, Meld, Suit, Tile, suit_of

SEATS = 4
MAX_CONCEALED = 14


def validate_tiles(what: str, tiles: tuple[Tile, ...]) -> None:
    for t in tiles:
        if not isinstance(t, int) or not 0 <= t < NUM_KINDS:
            raise ValueError(f"{what}: {t!r} is not a tile (0..{NUM_KINDS - 1})")


def check_template(label: str, template: str, **fields: object) -> None:
    """A caller's label must format with exactly the fields we supply: say so plainly if not."""
    try:
        template.format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        allowed = ", ".join("{" + f + "}" for f in fields) or "none"
        raise ValueError(f"label {label}={template!r} is not a valid template (fields: {allowed})") from exc


@dataclass(frozen=True, slots=True)
class SeatView:
    """One seat as everybody at the table may see it.

    ``wins`` lists the tiles the seat won on, in order (more than one only in 血流成河).
    ``revealed`` is a winner's concealed tiles (the winning tiles not included), which the
    rules lay open; it is refused for a seat that has not won.
    """

    name: str
    concealed_count: int
    melds: tuple[Meld, ...] = ()
    discards: tuple[Tile, ...] = ()
    is_dealer: bool = False
    void_suit: Suit | None = None
    wins: tuple[Tile, ...] = ()
    revealed: tuple[Tile, ...] | None = None
    chips: int = 0
    status: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.concealed_count <= MAX_CONCEALED:
            raise ValueError(f"seat {self.name!r}: concealed_count must be 0..14, got {self.concealed_count}")
        validate_tiles(f"seat {self.name!r} discards", self.discards)
        validate_tiles(f"seat {self.name!r} wins", self.wins)
        if self.revealed is not None:
            if not self.wins:
                raise ValueError(f"seat {self.name!r}: only a player who has won may have a revealed hand")
            validate_tiles(f"seat {self.name!r} revealed hand", self.revealed)
        if self.void_suit is not None and not isinstance(self.void_suit, Suit):
            raise ValueError(f"seat {self.name!r}: void_suit must be a Suit or None")


@dataclass(frozen=True, slots=True)
class TableLabels:
    """Every word on the table image; format fields are named in each default."""

    title: str = "血战到底"
    wall: str = "牌墙 {n}"
    turn: str = "轮到 {name}"
    dealer: str = "庄"
    void: str = "缺{suit}"
    suits: tuple[str, str, str] = ("万", "筒", "条")
    won: str = "胡"

    def __post_init__(self) -> None:
        check_template("wall", self.wall, n=0)
        check_template("turn", self.turn, name="")
        check_template("void", self.void, suit="")
        if len(self.suits) != 3:
            raise ValueError(f"suits needs three names (characters, dots, bamboo), got {len(self.suits)}")


@dataclass(frozen=True, slots=True)
class TableView:
    """The public state of one hand: four seats, whose turn, the wall, the latest discard.

    ``last_discard_seat`` names the seat whose final discard is the newest tile on the
    table (drawn highlighted); None when the newest discard was claimed or none was made.
    """

    seats: tuple[SeatView, ...]
    wall_remaining: int
    turn: int | None = None
    last_discard_seat: int | None = None
    labels: TableLabels = field(default_factory=TableLabels)

    def __post_init__(self) -> None:
        if len(self.seats) != SEATS:
            raise ValueError(f"a table has {SEATS} seats, got {len(self.seats)}")
        if self.wall_remaining < 0:
            raise ValueError(f"wall_remaining cannot be negative, got {self.wall_remaining}")
        for name, seat in (("turn", self.turn), ("last_discard_seat", self.last_discard_seat)):
            if seat is not None and not 0 <= seat < SEATS:
                raise ValueError(f"{name} must be a seat 0..3 or None, got {seat}")
        if self.last_discard_seat is not None and not self.seats[self.last_discard_seat].discards:
            raise ValueError(f"seat {self.last_discard_seat} has no discards to highlight")


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One row of an explanation: what (``清一色``, ``根``, ``自摸加底``) and its effect (``×4``)."""

    label: str
    value: str


@dataclass(frozen=True, slots=True)
class ScoredHand:
    """A hand with its value explained: the body of a /score card and of each win on a result card."""

    hand: DescribedHand
    title: str
    lines: tuple[ScoreLine, ...] = ()
    total: str = ""

    def __post_init__(self) -> None:
        validate_tiles(f"{self.title!r} hand", self.hand.concealed)


@dataclass(frozen=True, slots=True)
class Payment:
    """Chips moving from one player to another, with the reason in the caller's words."""

    payer: str
    payee: str
    amount: int
    reason: str = ""

    def __post_init__(self) -> None:
        if self.amount < 0:
            raise ValueError(f"a payment amount cannot be negative ({self.payer} -> {self.payee}: {self.amount})")


@dataclass(frozen=True, slots=True)
class SeatHand:
    """A seat's whole hand laid open at the end: concealed tiles, the tiles it won on, melds, net."""

    name: str
    concealed: tuple[Tile, ...]
    melds: tuple[Meld, ...] = ()
    wins: tuple[Tile, ...] = ()
    net: int = 0

    def __post_init__(self) -> None:
        validate_tiles(f"{self.name!r} hand", self.concealed)
        validate_tiles(f"{self.name!r} wins", self.wins)


@dataclass(frozen=True, slots=True)
class ResultCard:
    """The end of a win or of a hand: the wins explained, every payment, each player's net.

    ``hands`` lays every seat's hand open with its net (the end of a hand) and then stands
    in for ``totals``. ``caption`` is not drawn: it is the text sent with the picture, so a
    notification or a chat list says what happened without opening it.
    """

    title: str
    wins: tuple[ScoredHand, ...] = ()
    payments: tuple[Payment, ...] = ()
    totals: tuple[tuple[str, int], ...] = ()
    payments_heading: str = "收支明细"
    totals_heading: str = "本局合计"
    footer: str = ""
    hands: tuple[SeatHand, ...] = ()
    hands_heading: str = "各家手牌"
    caption: str = ""


MAX_TALLY_ENTRIES = 40  # bars in a tally chart: keeps the picture under Telegram's 1280 px side


@dataclass(frozen=True, slots=True)
class TallyEntry:
    """One bar of a tally chart (at most ``MAX_TALLY_ENTRIES``): a player and their net chips
    over the period."""

    name: str
    chips: int


def display_order(concealed: Sequence[Tile], void_suit: Suit | None = None) -> list[Tile]:
    """Concealed tiles sorted by suit and rank, the void suit's tiles last (they go first).

    >>> from engine.tiles import parse_tiles, format_tiles
    >>> format_tiles(display_order(parse_tiles("3s1m2p1s"), Suit.CHARACTERS))
    '2p13s1m'
    """
    return sorted(concealed, key=lambda t: (suit_of(t) == void_suit, t))
