"""Translations: gettext catalogs compiled by Babel, Chinese (简体) by default, English on request.

Message ids are the English texts; ``bot/locale/<lang>/LC_MESSAGES/xuezhan.po`` holds each
language and the compiled ``.mo`` beside it is committed, so running the bot needs no build
step. After changing texts run the three ``pybabel`` commands in ``docs/bot.md``;
``tests/e2e/test_i18n.py`` fails while a catalog is missing a translation or is not compiled.

>>> translator("en").t("Language: {name}", name="English")
'Language: English'
>>> translator("zh").t("Language: {name}", name="中文")
'语言：中文'
"""

from __future__ import annotations

import gettext
from functools import cache
from pathlib import Path

LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "xuezhan"
LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "zh"
LANGUAGE_NAMES = {"zh": "中文", "en": "English"}


def N_(message: str) -> str:
    """Mark a text for extraction where it is defined; translate it later with ``Translator.t``."""
    return message


def supported(code: str | None) -> str | None:
    """The supported language a Telegram or user language code means, or None.

    >>> supported("zh-hans"), supported("en-US"), supported("fr"), supported(None)
    ('zh', 'en', None, None)
    """
    if not code:
        return None
    base = code.replace("_", "-").split("-")[0].lower()
    return base if base in LANGUAGES else None


# What people write after /lang besides a language code: a language's name in either language.
_LANGUAGE_WORDS = {"中文": "zh", "汉语": "zh", "漢語": "zh", "简体": "zh", "简体中文": "zh", "chinese": "zh",
                   "英文": "en", "英语": "en", "english": "en"}


def language_named(text: str) -> str | None:
    """The supported language ``text`` names, by code (``en``, ``zh-CN``) or by name (``中文``,
    ``English``), or None.

    >>> language_named("English"), language_named("中文"), language_named("zh-TW"), language_named("fr")
    ('en', 'zh', 'zh', None)
    """
    written = text.strip().casefold()
    return _LANGUAGE_WORDS.get(written) or supported(written)


class Translator:
    """Texts of one language; ``t`` and ``tn`` translate and then fill ``{named}`` fields."""

    def __init__(self, language: str, catalog: gettext.NullTranslations) -> None:
        self.language = language
        self._catalog = catalog

    def t(self, message: str, /, **params: object) -> str:
        text = self._catalog.gettext(message)
        return text.format(**params) if params else text

    def tn(self, singular: str, plural: str, n: int, /, **params: object) -> str:
        """A text that depends on a count; ``{n}`` is filled with ``n``."""
        return self._catalog.ngettext(singular, plural, n).format(n=n, **params)

    def __repr__(self) -> str:
        return f"Translator({self.language!r})"


@cache
def translator(language: str) -> Translator:
    """The translator for ``language`` (any code ``supported`` accepts; others get the default)."""
    code = supported(language) or DEFAULT_LANGUAGE
    catalog = gettext.translation(DOMAIN, localedir=LOCALE_DIR, languages=[code])
    return Translator(code, catalog)
