"""The pure parts of /score: correcting a recognised hand, and keeping toggled situations consistent."""

from __future__ import annotations

from bot.score.answer import toggled
from bot.score.fixing import Entry, Fixing, Step
from engine.tiles import Meld, MeldKind, Situation, Suit, format_hand, parse_tile, parse_tiles, tile_name

S = Situation


def fixing(tiles: str, unsure: str = "", win: str | None = None) -> Fixing:
    doubtful = set(parse_tiles(unsure))
    return Fixing(7, [Entry(t, t in doubtful) for t in parse_tiles(tiles)],
                  win=parse_tile(win) if win else None)


def shown(f: Fixing) -> str:
    return format_hand(f.hand())


def index_of(f: Fixing, tile: str) -> int:
    return next(i for i, e in enumerate(f.entries) if e.tile == parse_tile(tile))


def test_tiles_are_sorted_with_the_winning_tile_last() -> None:
    f = fixing("9p1m5s1m", win="1m")
    assert [e.tile for e in f.entries] == parse_tiles("1m9p5s1m")
    assert f.win_index == 3


def test_replacing_a_tile_takes_suit_then_number_and_clears_its_doubt() -> None:
    f = fixing("123m456m789m234p5p", unsure="5p")
    version = f.version
    assert f.choose_tile(index_of(f, "5p")) is None and f.step is Step.TILE
    assert f.choose_suit(Suit.CHARACTERS) is None and f.step is Step.NUMBER
    assert f.choose_number(9) is None
    assert f.step is Step.MAIN and f.version > version
    assert shown(f) == "1234567899m23p +4p"  # no winning tile marked: the last one counts
    assert not any(e.unsure for e in f.entries)


def test_replacing_the_winning_tile_keeps_the_new_one_winning() -> None:
    f = fixing("123m456m789m234p55p", win="5p")
    f.choose_tile(f.win_index or 0)
    f.choose_suit(Suit.DOTS)
    f.choose_number(6)
    assert f.win == parse_tile("6p") and f.entries[-1].tile == parse_tile("6p")


def test_adding_and_removing_tiles_and_their_refusals() -> None:
    f = fixing("1111m")
    f.start_adding()
    f.choose_suit(Suit.CHARACTERS)
    assert f.choose_number(1) == "too_many_copies"
    f.choose_number(2)
    assert shown(f) == "1111m +2m"
    f.choose_tile(0)
    assert f.remove() is None and len(f.entries) == 4
    lone = fixing("5p")
    lone.choose_tile(0)
    assert lone.remove() == "last_tile"


def test_melds_take_their_tiles_and_give_them_back() -> None:
    f = fixing("2222p555p11s789s", win="1s")
    f.choose_tile(index_of(f, "2p"))
    assert f.mark_meld(MeldKind.CONCEALED_KONG) is None
    assert f.melds == [Meld(MeldKind.CONCEALED_KONG, parse_tile("2p"))]
    assert shown(f) == "555p1789s (2222p) +1s" and f.tile_count == 12
    f.choose_tile(index_of(f, "5p"))
    assert f.mark_meld(MeldKind.KONG) == "not_enough_tiles"
    assert f.mark_meld(MeldKind.PUNG) is None
    assert f.unmark_meld(0) is None
    assert shown(f) == "2222p1789s [555p] +1s"


def test_a_meld_of_the_winning_tile_uses_other_copies_first() -> None:
    f = fixing("555p55p123s", win="5p")
    f.choose_tile(0)
    f.mark_meld(MeldKind.KONG)
    assert f.win == parse_tile("5p") and shown(f) == "123s [5555p] +5p"
    g = fixing("555p123s", win="5p")
    g.choose_tile(0)
    g.mark_meld(MeldKind.PUNG)
    assert g.win is None and shown(g) == "12s [555p] +3s"  # no winning tile left: the last tile counts


def test_moves_out_of_order_are_refused() -> None:
    f = fixing("123m")
    assert f.choose_number(3) == "stale"
    assert f.remove() == "stale"
    assert f.choose_tile(9) == "stale"
    assert f.unmark_meld(0) == "stale"


def test_situations_stay_consistent() -> None:
    none: frozenset[Situation] = frozenset()
    assert toggled(none, S.KONG_REPLACEMENT) == {S.KONG_REPLACEMENT, S.SELF_DRAW}
    assert toggled(frozenset({S.KONG_REPLACEMENT, S.SELF_DRAW}), S.SELF_DRAW) == none
    assert toggled(frozenset({S.SELF_DRAW, S.LAST_TILE}), S.AFTER_KONG_DISCARD) == {S.AFTER_KONG_DISCARD,
                                                                                   S.LAST_TILE}
    assert toggled(frozenset({S.AFTER_KONG_DISCARD}), S.ROBBING_KONG) == {S.ROBBING_KONG}
    assert toggled(frozenset({S.ROBBING_KONG}), S.SELF_DRAW) == {S.SELF_DRAW}
    assert toggled(frozenset({S.LAST_TILE}), S.LAST_TILE) == none


def test_unsure_tiles_are_listed_least_confident_first() -> None:
    f = Fixing(7, [Entry(parse_tile("1m"), True, 0.7), Entry(parse_tile("5p"), False, 0.99),
                   Entry(parse_tile("9s"), True, 0.3), Entry(parse_tile("3m"), True, 0.5)])
    assert [tile_name(f.entries[i].tile) for i in f.unsure_first()] == ["9s", "3m", "1m"]
