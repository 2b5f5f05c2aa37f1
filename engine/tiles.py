"""Tiles, melds, described hands and the one notation every part of Xuezhan speaks.

A tile is a plain ``int`` from 0 to 26 (``suit * 9 + rank - 1``) so that hot loops in
analysis and the AI index count arrays directly; the functions here give it names.
The notation (``123m456p55p``, ``[555p]`` exposed pung, ``(5555p)`` concealed kong,
``+9m`` winning tile, situation words) is shared by the CLI, ``/score``, tests and logs,
and every ``format_*`` is the exact inverse of its ``parse_*``. Parsing also takes what people
type in a chat: Chinese numerals (``一二三万``, as the tiles are named), a Chinese input method's
full-width characters (``１２３ｍ``) and the Unicode tile characters (``🀇🀈🀉``):

>>> format_tiles(parse_tiles("123万456筒55p"))
'123m45655p'
>>> format_hand(parse_hand("[555p] 123m 456m 78m 99m +9m zimo"))
'1234567899m [555p] +9m 自摸'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum

Tile = int
NUM_KINDS = 27
COPIES = 4
ALL_TILES: tuple[Tile, ...] = tuple(range(NUM_KINDS))


class Suit(IntEnum):
    """The three suits; the value is the tile-index block (tile // 9)."""

    CHARACTERS = 0  # 万
    DOTS = 1  # 筒
    BAMBOO = 2  # 条

    @property
    def letter(self) -> str:
        return "mps"[self]

    @property
    def zh(self) -> str:
        return "万筒条"[self]

    @property
    def en(self) -> str:
        return ("characters", "dots", "bamboo")[self]

    @classmethod
    def from_letter(cls, letter: str) -> Suit:
        try:
            return cls(_SUIT_ALIASES[letter.lower()])
        except KeyError:
            raise ValueError(f"not a suit: {letter!r}") from None


_SUIT_ALIASES = {
    "m": 0, "w": 0, "万": 0, "萬": 0,
    "p": 1, "t": 1, "筒": 1, "饼": 1, "餅": 1,
    "s": 2, "b": 2, "条": 2, "索": 2, "條": 2,
}
_ZH_NUMERALS = "一二三四五六七八九"
# A rank is an ASCII digit or a numeral as the tiles are named (一万, and 幺 as in 幺鸡 = 1s).
_RANKS: dict[str, int] = {str(rank): rank for rank in range(1, 10)}
_RANKS.update({numeral: rank for rank, numeral in enumerate(_ZH_NUMERALS, start=1)})
_RANKS["幺"] = 1
# Unicode's mahjong tiles: 🀇-🀏 one to nine of characters, 🀐-🀘 of bamboo, 🀙-🀡 of dots. The
# rest of the block (winds, dragons, flowers, seasons, joker, back) is not in a Sichuan set.
_TILE_CHARACTERS: dict[str, int] = {
    chr(first + rank): suit * 9 + rank
    for first, suit in ((0x1F007, 0), (0x1F010, 2), (0x1F019, 1))
    for rank in range(9)
}
_MAHJONG_BLOCK = range(0x1F000, 0x1F030)
_EMOJI_STYLE = "\ufe0f"  # a phone's emoji keyboard may send it after a tile character
# A Chinese input method types full-width forms (１２３ｍ, ＋, （）); each is read as its ASCII
# character, one for one, so the positions in error messages still count what was typed.
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: ord(" ")}


def is_rank(ch: str) -> bool:
    """Whether ``ch`` is written as a tile's number (``0`` too, so that it can be refused as one)."""
    return ch.isdigit() or ch in _RANKS


def make_tile(rank: int, suit: Suit | int) -> Tile:
    if not 1 <= rank <= 9:
        raise ValueError(f"rank must be 1-9, got {rank}")
    return int(suit) * 9 + rank - 1


def suit_of(tile: Tile) -> Suit:
    return Suit(tile // 9)


def rank_of(tile: Tile) -> int:
    return tile % 9 + 1


def tile_name(tile: Tile) -> str:
    """``"5p"`` — the name used in logs, JSON, callback data and tests."""
    return f"{tile % 9 + 1}{'mps'[tile // 9]}"


def tile_zh(tile: Tile) -> str:
    """``"五筒"`` — the name players say at the table."""
    return _ZH_NUMERALS[tile % 9] + "万筒条"[tile // 9]


def parse_tile(text: str) -> Tile:
    """One tile such as ``5p`` or ``5筒``."""
    tiles = parse_tiles(text)
    if len(tiles) != 1:
        raise HandError("parse", f"expected one tile, got {text!r}", text=text)
    return tiles[0]


def counts_of(tiles: Iterable[Tile]) -> list[int]:
    counts = [0] * NUM_KINDS
    for t in tiles:
        counts[t] += 1
    return counts


def tiles_of(counts: Sequence[int]) -> list[Tile]:
    return [t for t in ALL_TILES for _ in range(counts[t])]


def suits_in(tiles: Iterable[Tile]) -> set[Suit]:
    return {Suit(t // 9) for t in tiles}


class HandError(ValueError):
    """Bad input, with a stable ``code`` (for JSON and translations) and plain-words message.

    ``params`` carries the specifics (position, character, count) so the bot can say the
    same thing in Chinese without parsing English.
    """

    def __init__(self, code: str, message: str, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = params


class MeldKind(Enum):
    PUNG = "pung"  # 碰
    KONG = "kong"  # exposed kong: 直杠 or 补杠 (明杠)
    CONCEALED_KONG = "concealed_kong"  # 暗杠


@dataclass(frozen=True, slots=True)
class Meld:
    """A declared set: its kind and its tile (all tiles of a meld are the same)."""

    kind: MeldKind
    tile: Tile

    @property
    def size(self) -> int:
        return 3 if self.kind is MeldKind.PUNG else 4

    @property
    def is_kong(self) -> bool:
        return self.kind is not MeldKind.PUNG

    @property
    def is_exposed(self) -> bool:
        """Counts against 门清: a pung or an exposed kong."""
        return self.kind is not MeldKind.CONCEALED_KONG

    def notation(self) -> str:
        body = str(rank_of(self.tile)) * self.size + suit_of(self.tile).letter
        return f"({body})" if self.kind is MeldKind.CONCEALED_KONG else f"[{body}]"


class Situation(Enum):
    """Circumstances of a win that change its value (RULES.md §5) — written as words."""

    SELF_DRAW = "zimo"  # 自摸
    KONG_REPLACEMENT = "gangshanghua"  # 杠上花 (implies self-draw)
    AFTER_KONG_DISCARD = "gangshangpao"  # 杠上炮
    ROBBING_KONG = "qianggang"  # 抢杠胡
    LAST_TILE = "haidi"  # 海底
    HEAVENLY = "tianhu"  # 天胡 (dealer's self-draw on the deal)
    EARTHLY = "dihu"  # 地胡
    LAST_COPY = "juezhang"  # 绝张: the other three copies are visible in rivers or melds

    @property
    def zh(self) -> str:
        return _SITUATION_ZH[self]


_SITUATION_ZH = {
    Situation.SELF_DRAW: "自摸",
    Situation.KONG_REPLACEMENT: "杠上花",
    Situation.AFTER_KONG_DISCARD: "杠上炮",
    Situation.ROBBING_KONG: "抢杠",
    Situation.LAST_TILE: "海底",
    Situation.HEAVENLY: "天胡",
    Situation.EARTHLY: "地胡",
    Situation.LAST_COPY: "绝张",
}
_SITUATION_WORDS: dict[str, Situation] = {s.value: s for s in Situation}
_SITUATION_WORDS.update({zh: s for s, zh in _SITUATION_ZH.items()})
_SITUATION_WORDS.update(
    {
        "抢杠胡": Situation.ROBBING_KONG,
        "槓上花": Situation.KONG_REPLACEMENT,
        "槓上炮": Situation.AFTER_KONG_DISCARD,
        "搶槓": Situation.ROBBING_KONG,
        "海底捞月": Situation.LAST_TILE,
        "絕張": Situation.LAST_COPY,
        "selfdraw": Situation.SELF_DRAW,
        "tsumo": Situation.SELF_DRAW,
    }
)
# Words that imply other words: a kong-replacement win and 天胡 are self-draws by definition.
_IMPLIED = {
    Situation.KONG_REPLACEMENT: Situation.SELF_DRAW,
    Situation.HEAVENLY: Situation.SELF_DRAW,
}


@dataclass(frozen=True, slots=True)
class DescribedHand:
    """A hand as a player writes it: concealed tiles (winning tile included), melds, situation.

    ``concealed`` is kept sorted so that two spellings of one hand compare equal.
    ``win_tile`` is None only when no concealed tile was written.
    """

    concealed: tuple[Tile, ...]
    melds: tuple[Meld, ...] = ()
    win_tile: Tile | None = None
    situations: frozenset[Situation] = field(default_factory=frozenset)

    @property
    def self_drawn(self) -> bool:
        return Situation.SELF_DRAW in self.situations

    @property
    def tile_count(self) -> int:
        """Tiles as the rules count them: a kong counts as three."""
        return len(self.concealed) + 3 * len(self.melds)

    def all_tiles(self) -> list[Tile]:
        tiles = list(self.concealed)
        for meld in self.melds:
            tiles.extend([meld.tile] * meld.size)
        return tiles


# --- parsing ----------------------------------------------------------------------------

_OPENERS = {"[": "]", "【": "】", "(": ")"}  # and （ ）, read as ( ) like every full-width form
_WIN_MARKS = ("+", "胡")  # 胡五万: "won on 5m", as a player says it
_SEPARATORS = set(" \t\n,，、;；") | {_EMOJI_STYLE}


class _Reader:
    """A cursor over the text that reports positions 1-based, as a person counts."""

    def __init__(self, text: str) -> None:
        self.text = text.translate(_FULL_WIDTH)
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def error(self, message: str, at: int | None = None, **params: object) -> HandError:
        where = (self.pos if at is None else at) + 1
        return HandError("parse", f"{message} at position {where}", position=where, **params)

    def at_tiles(self) -> bool:
        ch = self.peek()
        return is_rank(ch) or (len(ch) == 1 and ord(ch) in _MAHJONG_BLOCK)

    def tiles(self) -> list[Tile]:
        """The tiles written from here: numbers and their suit, or one tile character."""
        ch = self.peek()
        if ch not in _RANKS and ord(ch) in _MAHJONG_BLOCK:
            if ch not in _TILE_CHARACTERS:
                raise self.error(f"{ch!r} is not a tile of Sichuan mahjong (no winds, dragons or flowers)",
                                 char=ch, not_sichuan=True)
            self.pos += 1
            return [_TILE_CHARACTERS[ch]]
        return self.tile_group()

    def tile_group(self) -> list[Tile]:
        """Numbers followed by a suit: ``123m``, ``一二三万``."""
        start = self.pos
        ranks: list[int] = []
        while is_rank(self.peek()):
            ch = self.peek()
            if ch not in _RANKS:
                raise self.error(f"{ch!r} is not a tile number (1-9)", char=ch)
            ranks.append(_RANKS[ch])
            self.pos += 1
        ch = self.peek()
        if ch.lower() not in _SUIT_ALIASES:
            if not ch:
                raise self.error("the numbers have no suit (add m, p or s)", at=start)
            raise self.error(f"{ch!r} is not a suit (use m, p or s)", char=ch)
        self.pos += 1
        suit = _SUIT_ALIASES[ch.lower()]
        return [suit * 9 + r - 1 for r in ranks]


def starts_like_tiles(text: str) -> bool:
    """Whether ``text`` begins as a hand is written (tiles or a meld's bracket), so that a chat
    can take it for one without a command. A Chinese numeral counts only with its suit after it
    (一万, 一二三万): a sentence starts with one as often (一起, 三缺一)."""
    reader = _Reader(text.lstrip())
    ch = reader.peek()
    if ch in _ZH_NUMERALS or ch == "幺":
        try:
            reader.tile_group()
        except HandError:
            return False
        return True
    return reader.at_tiles() or ch in _OPENERS


def parse_tiles(text: str) -> list[Tile]:
    """Plain tiles in the order written, e.g. ``"123m 55p"``; no melds or words."""
    reader = _Reader(text)
    tiles: list[Tile] = []
    while reader.pos < len(text):
        ch = reader.peek()
        if ch in _SEPARATORS:
            reader.pos += 1
        elif reader.at_tiles():
            tiles.extend(reader.tiles())
        else:
            raise reader.error(f"unknown character {ch!r}", char=ch)
    return tiles


def format_tiles(tiles: Iterable[Tile]) -> str:
    """Tiles in the given order; neighbours of one suit share the suit letter."""
    out: list[str] = []
    run_suit = -1
    for t in tiles:
        suit = t // 9
        if run_suit not in (-1, suit):
            out.append("mps"[run_suit])
        out.append(str(t % 9 + 1))
        run_suit = suit
    if run_suit != -1:
        out.append("mps"[run_suit])
    return "".join(out)


def sort_tiles(tiles: Iterable[Tile]) -> list[Tile]:
    return sorted(tiles)


def parse_hand(text: str) -> DescribedHand:
    """Parse the full notation: tiles, ``[melds]``, ``(concealed kongs)``, ``+win``, words."""
    return _parse_hand(text)[0]


def parse_typed_hand(text: str, expected_count: int = 14) -> tuple[DescribedHand, bool]:
    """``parse_hand`` for people: a ``+tile`` also written among the tiles marks that tile.

    Players often write all 14 tiles and then mark the winning one ("…22p +2p"), which reads
    as 15. When the count is exactly one too many and the marked tile is also among the
    concealed tiles, the extra copy is dropped; the second value says so, so the answer can
    tell the player how their hand was read.
    """
    hand, marked = _parse_hand(text)
    win = hand.win_tile
    if not marked or win is None or hand.tile_count != expected_count + 1 or hand.concealed.count(win) < 2:
        return hand, False
    concealed = list(hand.concealed)
    concealed.remove(win)
    return DescribedHand(tuple(concealed), hand.melds, win, hand.situations), True


def _parse_hand(text: str) -> tuple[DescribedHand, bool]:
    """The hand, and whether its winning tile was marked with ``+`` (else it is the last tile)."""
    if not text or not text.strip():
        raise HandError("parse", "the hand is empty", position=1)
    reader = _Reader(text)
    concealed: list[Tile] = []
    melds: list[Meld] = []
    win_tile: Tile | None = None
    situations: set[Situation] = set()
    while reader.pos < len(text):
        ch = reader.peek()
        if ch in _SEPARATORS:
            reader.pos += 1
        elif reader.at_tiles():
            concealed.extend(reader.tiles())
        elif ch in _OPENERS:
            melds.append(_parse_meld(reader))
        elif ch in _WIN_MARKS:
            at = reader.pos
            reader.pos += 1
            if win_tile is not None:
                raise reader.error("only one winning tile may be marked with +", at=at)
            if not reader.at_tiles():
                raise reader.error("+ must be followed by one tile, like +9m", at=at)
            group = reader.tiles()
            if len(group) != 1:
                raise reader.error("+ must be followed by exactly one tile", at=at)
            win_tile = group[0]
        else:
            situations.add(_parse_word(reader))
    marked = win_tile is not None
    if win_tile is not None:
        concealed.append(win_tile)
    elif concealed:
        win_tile = concealed[-1]
    for s in list(situations):
        if s in _IMPLIED:
            situations.add(_IMPLIED[s])
    return DescribedHand(tuple(sorted(concealed)), tuple(melds), win_tile, frozenset(situations)), marked


def _parse_meld(reader: _Reader) -> Meld:
    start = reader.pos
    opener = reader.peek()
    closer = _OPENERS[opener]
    reader.pos += 1
    tiles: list[Tile] = []
    while reader.peek() != closer:
        ch = reader.peek()
        if not ch:
            raise reader.error(f"{opener!r} is never closed with {closer!r}", at=start)
        if ch in _SEPARATORS:
            reader.pos += 1
        elif reader.at_tiles():
            tiles.extend(reader.tiles())
        else:
            raise reader.error(f"unknown character {ch!r} inside a meld", char=ch)
    reader.pos += 1
    written = reader.text[start : reader.pos]
    concealed = opener == "("
    if not tiles or len(set(tiles)) != 1 or len(tiles) not in (3, 4):
        raise reader.error(
            f"{written} is not a pung or kong (three or four identical tiles)",
            at=start,
            meld=written,
        )
    if concealed and len(tiles) != 4:
        raise reader.error(f"{written}: a concealed kong in ( ) needs four tiles", at=start, meld=written)
    if concealed:
        kind = MeldKind.CONCEALED_KONG
    else:
        kind = MeldKind.PUNG if len(tiles) == 3 else MeldKind.KONG
    return Meld(kind, tiles[0])


def _parse_word(reader: _Reader) -> Situation:
    start = reader.pos
    ch = reader.peek()
    if ch.isascii() and ch.isalpha():
        while reader.peek().isascii() and reader.peek().isalpha():
            reader.pos += 1
        word = reader.text[start : reader.pos].lower()
        if word in _SITUATION_WORDS:
            return _SITUATION_WORDS[word]
        if len(word) == 1:
            raise reader.error(f"unknown character {ch!r}", at=start, char=ch)
        raise reader.error(f"unknown word {word!r}", at=start, word=word)
    for word in sorted(_SITUATION_WORDS, key=len, reverse=True):
        if reader.text.startswith(word, start):
            reader.pos += len(word)
            return _SITUATION_WORDS[word]
    raise reader.error(f"unknown character {ch!r}", at=start, char=ch)


_WORD_ORDER = tuple(Situation)


def format_hand(hand: DescribedHand) -> str:
    """The normalised spelling: concealed tiles less the winning tile, melds, ``+win``, words.

    Words implied by others (自摸 under 杠上花) are still written so the text reads fully.
    """
    rest = list(hand.concealed)
    if hand.win_tile is not None:
        rest.remove(hand.win_tile)
    parts = [format_tiles(rest)] if rest else []
    parts.extend(m.notation() for m in hand.melds)
    if hand.win_tile is not None:
        parts.append("+" + tile_name(hand.win_tile))
    parts.extend(s.zh for s in _WORD_ORDER if s in hand.situations)
    return " ".join(parts)


def check_tiles(hand: DescribedHand, expected_count: int = 14) -> None:
    """The counting checks of RULES.md §8, in its order: tile count, copies, suits.

    Unreadable notation is caught by the parser; "not a win" is the analyser's to say.
    """
    if hand.tile_count != expected_count:
        raise HandError(
            "tile_count",
            f"a hand needs {expected_count} tiles (a kong counts as three); "
            f"this one has {hand.tile_count}",
            expected=expected_count,
            found=hand.tile_count,
        )
    counts = counts_of(hand.all_tiles())
    for t in ALL_TILES:
        if counts[t] > COPIES:
            raise HandError(
                "too_many_copies",
                f"{tile_name(t)} appears {counts[t]} times; there are only four of each tile",
                tile=tile_name(t),
                count=counts[t],
            )
    if len(suits_in(hand.all_tiles())) == 3:
        raise HandError(
            "three_suits",
            "the hand holds all three suits; a Sichuan hand may hold at most two",
        )
