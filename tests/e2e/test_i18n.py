"""Every text the bot can say exists in Chinese, and the committed .mo files match their .po files."""

from __future__ import annotations

import gettext
import io
import re
import string
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from bot.i18n import DOMAIN, LANGUAGES, LOCALE_DIR

BOT_DIR = LOCALE_DIR.parent
KEYWORDS = {"t": None, "N_": None, "tn": (1, 2)}


def marked_texts() -> dict[str, str]:
    """msgid -> where it is used, for every text marked in bot/ (as ``pybabel extract`` sees them).

    A plural text (``tn``) is keyed by its singular, which is how the catalog stores it.
    """
    found: dict[str, str] = {}
    for filename, line, message, _comments, _context in extract_from_dir(
        str(BOT_DIR), method_map=[("**.py", "python")], keywords=KEYWORDS
    ):
        msgid = message[0] if isinstance(message, tuple) else message
        found.setdefault(msgid, f"bot/{filename}:{line}")
    return found


def catalog_path(language: str, suffix: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.{suffix}"


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_marked_text_has_a_chinese_translation_with_the_same_fields() -> None:
    with catalog_path("zh", "po").open("rb") as handle:
        catalog = read_po(handle)
    problems = []
    for msgid, where in sorted(marked_texts().items()):
        entry = catalog.get(msgid)
        translation = entry.string if entry is not None else ""
        texts = translation if isinstance(translation, tuple) else (translation,)
        expected = fields(msgid) | (fields(entry.id[1]) if entry is not None and entry.pluralizable else set())
        if not all(texts):
            problems.append(f"{where}: no Chinese for {msgid!r}")
        elif any(fields(t) - expected or not fields(t) >= fields(msgid) - {"n"} for t in texts):
            problems.append(f"{where}: Chinese for {msgid!r} has other {{fields}}: {texts!r}")
    assert not problems, "run the pybabel steps in docs/bot.md:\n" + "\n".join(problems)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_committed_mo_is_compiled_from_the_po(language: str) -> None:
    with catalog_path(language, "po").open("rb") as handle:
        catalog = read_po(handle)
    fresh = io.BytesIO()
    write_mo(fresh, catalog)
    fresh.seek(0)
    expected = gettext.GNUTranslations(fresh)._catalog  # type: ignore[attr-defined]
    with catalog_path(language, "mo").open("rb") as handle:
        committed = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
    assert committed == expected, f"run: pybabel compile -d bot/locale -D {DOMAIN}"


def test_message_ids_are_english() -> None:
    han = re.compile(r"[\u4e00-\u9fff]")
    # Names of languages and of the game (血战到底) may appear in English texts; sentences may not.
    chinese_ids = [m for m in marked_texts() if len(han.findall(m)) > 4]
    assert chinese_ids == []
