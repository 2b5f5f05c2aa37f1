"""Sample situations for every kind of image: for the gallery, the benchmark and the tests.

They are written the way the bot will build them — tiles in the shared notation, words
already chosen — so that looking at the gallery shows what players will see.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image

from engine.tiles import Meld, MeldKind, Suit, Tile, parse_hand, parse_tile, parse_tiles
from rendering.models import (
    Payment,
    ResultCard,
    ScoredHand,
    ScoreLine,
    SeatHand,
    SeatView,
    TableLabels,
    TableView,
    TallyEntry,
)
from rendering.screen import render_seat_screen


@dataclass(frozen=True)
class HandSample:
    """The arguments of ``render_hand`` for one situation."""

    concealed: tuple[Tile, ...]
    melds: tuple[Meld, ...] = ()
    drawn: Tile | None = None
    void_suit: Suit | None = None
    labels: tuple[str, ...] | None = None

    @property
    def kwargs(self) -> dict[str, object]:
        return {
            "concealed": self.concealed,
            "melds": self.melds,
            "drawn": self.drawn,
            "void_suit": self.void_suit,
            "labels": self.labels,
        }


def _tiles(text: str) -> tuple[Tile, ...]:
    return tuple(parse_tiles(text))


def hand_samples() -> dict[str, HandSample]:
    """Named hands: a fresh deal, a void suit still held, melds of every kind, four kongs."""
    fresh = _tiles("12558m34677p2399s")
    return {
        "deal": HandSample(fresh[:13], drawn=fresh[13]),
        "void_with_buttons": HandSample(
            _tiles("234m5577899p369s"),
            drawn=parse_tile("6p"),
            void_suit=Suit.BAMBOO,
            labels=tuple(str(i) for i in range(1, 15)),
        ),
        "melds": HandSample(
            _tiles("345m66m7p"),
            melds=(Meld(MeldKind.PUNG, parse_tile("2p")), Meld(MeldKind.CONCEALED_KONG, parse_tile("9m"))),
            drawn=parse_tile("7p"),
            void_suit=Suit.BAMBOO,
        ),
        "four_kongs": HandSample(
            _tiles("5p"),
            melds=(
                Meld(MeldKind.KONG, parse_tile("1m")),
                Meld(MeldKind.CONCEALED_KONG, parse_tile("5m")),
                Meld(MeldKind.KONG, parse_tile("2p")),
                Meld(MeldKind.CONCEALED_KONG, parse_tile("9p")),
            ),
            drawn=parse_tile("5p"),
            void_suit=Suit.BAMBOO,
        ),
    }


def table_sample() -> TableView:
    """A hand in progress: one winner (hand revealed), melds, long and short discard rows."""
    counts = {0: 10, 2: 13, 3: 10}
    seats = (
        SeatView(
            "Alice",
            counts[0],
            melds=(Meld(MeldKind.PUNG, parse_tile("5m")),),
            discards=_tiles("9s1s2s8m3p7s4s"),
            is_dealer=True,
            void_suit=Suit.BAMBOO,
            chips=-3,
        ),
        SeatView(
            "王小明",
            0,
            melds=(Meld(MeldKind.KONG, parse_tile("4p")),),
            discards=_tiles("1m9m7s7s4s2s"),
            void_suit=Suit.CHARACTERS,
            wins=(parse_tile("5p"),),
            revealed=_tiles("123p678p55p99p"),
            chips=12,
            status="自摸",
        ),
        SeatView(
            "Борис (bot)",
            counts[2],
            discards=_tiles("1p2p3p4p6p7p8p9p1s2s3s4s6s8s9s1m2m3m"),
            void_suit=Suit.DOTS,
            chips=-6,
            status="托管",
        ),
        SeatView(
            "Dee 🀄",
            counts[3],
            melds=(Meld(MeldKind.CONCEALED_KONG, parse_tile("5s")),),
            discards=_tiles("5m6m2p"),
            void_suit=Suit.DOTS,
            chips=-3,
        ),
    )
    return TableView(seats, wall_remaining=31, turn=3, last_discard_seat=2, labels=TableLabels())


def table_start_sample() -> TableView:
    """The first turn: nothing discarded, void suits not yet revealed, English labels."""
    seats = tuple(
        SeatView(name, 14 if i == 0 else 13, is_dealer=i == 0) for i, name in enumerate(("Ann", "Ben", "Cat", "Dan"))
    )
    labels = TableLabels(
        title="Bloody battle",
        wall="Wall {n}",
        turn="{name} to play",
        dealer="Dealer",
        void="void {suit}",
        suits=("char", "dots", "bamboo"),
        won="Won",
    )
    return TableView(seats, wall_remaining=55, turn=0, labels=labels)


def scored_sample() -> ScoredHand:
    return ScoredHand(
        parse_hand("123m123m123m789m9m +9m 自摸"),
        "Alice 自摸 · 清带幺",
        (
            ScoreLine("清带幺 flush terminals", "16 倍"),
            ScoreLine("封顶 cap", "8 倍"),
            ScoreLine("自摸加底 self-draw", "+1 底"),
        ),
        "每家付 9",
    )


def win_card_sample() -> ResultCard:
    """One win by discard after a kong: 杠上炮 with 呼叫转移."""
    scored = ScoredHand(
        parse_hand("234m567m345p678p1p +1p 杠上炮"),
        "Carol 胡 · Bob 点炮",
        (ScoreLine("平胡", "×1"), ScoreLine("杠上炮", "×2")),
        "2 倍 · Bob 付 2",
    )
    payments = (Payment("Bob", "Carol", 2, "杠上炮"), Payment("Bob", "Carol", 3, "呼叫转移"))
    return ResultCard(
        "Carol 胡了", (scored,), payments, (("Carol", 5), ("Bob", -5)), caption="Carol 胡 1筒，Bob 点炮：Bob 付 5"
    )


def hand_end_sample() -> ResultCard:
    """The end of a hand with the wall exhausted: wins, kongs and every 查叫 transfer."""
    kong_win = ScoredHand(
        parse_hand("123m456m78m77p (5555p) +9m 杠上花"),
        "王小明 杠上花",
        (
            ScoreLine("平胡", "×1"),
            ScoreLine("根 ×1", "×2"),
            ScoreLine("杠上花", "×2"),
            ScoreLine("自摸加底", "+1 底"),
        ),
        "4 倍 · Alice、Борис (bot)、Dee 🀄 各付 5",
    )
    payments = (
        Payment("Alice", "王小明", 2, "暗杠"),
        Payment("Борис (bot)", "王小明", 2, "暗杠"),
        Payment("Dee 🀄", "王小明", 2, "暗杠"),
        Payment("Alice", "王小明", 5, "杠上花"),
        Payment("Борис (bot)", "王小明", 5, "杠上花"),
        Payment("Dee 🀄", "王小明", 5, "杠上花"),
        Payment("Борис (bot)", "Alice", 16, "查花猪"),
        Payment("Борис (bot)", "Dee 🀄", 16, "查花猪"),
        Payment("Dee 🀄", "Alice", 4, "查大叫"),
        Payment("Alice", "Dee 🀄", 1, "退税"),
    )
    totals = (("王小明", 21), ("Alice", 12), ("Dee 🀄", -1), ("Борис (bot)", -32))
    hands = (
        SeatHand("Alice", _tiles("23m44m567p789p"), (Meld(MeldKind.PUNG, parse_tile("5m")),), net=12),
        SeatHand("王小明", _tiles("123m456m78m77p"), (Meld(MeldKind.CONCEALED_KONG, parse_tile("5p")),),
                 wins=(parse_tile("9m"),), net=21),
        SeatHand("Борис (bot)", _tiles("1m3m5m2p4p6p8p1s3s5s7s9s6m"), net=-32),
        SeatHand("Dee 🀄", _tiles("24m66m789m1p"), (Meld(MeldKind.CONCEALED_KONG, parse_tile("5s")),), net=-1),
    )
    return ResultCard(
        "第 3 局 · 流局查叫",
        (kong_win,),
        payments,
        totals,
        footer="血战到底 · chengdu · 底 1",
        hands=hands,
        caption="第 3 局结算：王小明 +21，Alice +12，Dee 🀄 -1，Борис (bot) -32",
    )


def tally_sample() -> tuple[TallyEntry, ...]:
    return (
        TallyEntry("Alice", 42),
        TallyEntry("王小明", 18),
        TallyEntry("Eve", 0),
        TallyEntry("Борис (bot)", -23),
        TallyEntry("Dee 🀄", -37),
    )


def screen_sample() -> Image.Image:
    """A player's private screen during the middle game: the table above, their hand below."""
    hand = hand_samples()["void_with_buttons"]
    return render_seat_screen(
        table_sample(), hand.concealed, drawn=hand.drawn, void_suit=hand.void_suit, labels=hand.labels
    )
