"""Telegram's text rules for the fake Bot API: HTML parse mode and length in UTF-16 units.

The fake server keeps what a user would *see* (tags removed, entities unescaped) so that tests
read messages the way people do, and rejects what Telegram rejects ("can't parse entities").
"""

from __future__ import annotations

from html.parser import HTMLParser

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
CALLBACK_DATA_LIMIT = 64

# Tags Telegram accepts in parse_mode=HTML (https://core.telegram.org/bots/api#html-style).
_ALLOWED_TAGS = frozenset(
    {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
     "tg-spoiler", "span", "blockquote", "tg-emoji"}
)


class EntityError(ValueError):
    """The text is not valid for its parse mode; the message is Telegram's own wording."""


def _unclosed(tag: str) -> EntityError:
    return EntityError(f'Can\'t parse entities: can\'t find end tag corresponding to start tag "{tag}"')


class _TelegramHTML(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _ALLOWED_TAGS:
            raise EntityError(f'Can\'t parse entities: unsupported start tag "{tag}"')
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            raise _unclosed(tag)
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible_text(text: str, parse_mode: str | None) -> str:
    """The text as a user sees it; raises EntityError for HTML Telegram would refuse.

    >>> visible_text("<b>东风</b> &amp; 西风", "HTML")
    '东风 & 西风'
    >>> visible_text("plain <b>", None)
    'plain <b>'
    """
    if (parse_mode or "").upper() != "HTML":
        return text
    parser = _TelegramHTML()
    parser.feed(text)
    parser.close()
    if parser.open:
        raise _unclosed(parser.open[-1])
    return "".join(parser.parts)


def utf16_length(text: str) -> int:
    """Telegram measures text in UTF-16 code units.

    >>> utf16_length("五筒"), utf16_length("🀄")
    (2, 2)
    """
    return len(text.encode("utf-16-le")) // 2
