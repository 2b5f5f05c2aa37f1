"""Text drawing with the bundled font subset and a graceful fallback for other characters.

The bundled fonts cover Latin, the game's vocabulary and (in the regular weight) the
3755 common hanzi. A player name can hold anything else — rare hanzi, Cyrillic, emoji —
so each character is drawn with the first font that covers it: the requested weight,
then the regular subset, then a system CJK or DejaVu font if one is installed. Without
one, the subset's own "missing glyph" box is drawn: never an exception.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache
from pathlib import Path

from PIL import ImageDraw, ImageFont

from rendering.theme import Color

FONT_DIR = Path(__file__).resolve().parent / "fonts"
_SUBSETS = {False: "XuezhanSansCJK-Regular", True: "XuezhanSansCJK-Bold"}
# Tried in order for characters the subsets lack; the first one present is used.
FALLBACK_FONTS: tuple[tuple[str, int], ...] = (
    ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2),
    ("/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc", 2),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 0),
)
ELLIPSIS = "…"
# Where the optical middle of a line sits above the baseline, as a share of the size.
_MIDDLE = 0.36


@cache
def _coverage(bold: bool) -> frozenset[str]:
    path = FONT_DIR / f"{_SUBSETS[bold]}.chars.txt"
    return frozenset(path.read_text(encoding="utf-8").rstrip("\n"))


@lru_cache(maxsize=256)
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The bundled font at ``size`` px; cached because loading costs ~1 ms."""
    return ImageFont.truetype(str(FONT_DIR / f"{_SUBSETS[bold]}.otf"), size)


@lru_cache(maxsize=64)
def _fallback(size: int) -> ImageFont.FreeTypeFont | None:
    for path, index in FALLBACK_FONTS:
        if Path(path).is_file():
            return ImageFont.truetype(path, size, index=index)
    return None


def clean(text: str) -> str:
    """Drop control characters a caller may pass through from user input (names, captions)."""
    return "".join(" " if ch in "\n\r\t" else ch for ch in text if unicodedata.category(ch) != "Cc")


def _runs(text: str, size: int, bold: bool) -> list[tuple[str, ImageFont.FreeTypeFont]]:
    """Split ``text`` into pieces that one font each can draw."""
    runs: list[tuple[str, ImageFont.FreeTypeFont]] = []
    for ch in clean(text):
        if ch in _coverage(bold):
            f = font(size, bold)
        elif ch in _coverage(False):
            f = font(size, False)
        else:
            f = _fallback(size) or font(size, bold)
        if runs and runs[-1][1] is f:
            runs[-1] = (runs[-1][0] + ch, f)
        else:
            runs.append((ch, f))
    return runs


def text_width(text: str, size: int, bold: bool = False) -> float:
    return sum(f.getlength(run) for run, f in _runs(text, size, bold))


def fit(text: str, size: int, max_width: float, bold: bool = False) -> str:
    """``text`` shortened with an ellipsis so that it fits ``max_width`` px."""
    text = clean(text)
    if text_width(text, size, bold) <= max_width:
        return text
    while text and text_width(text + ELLIPSIS, size, bold) > max_width:
        text = text[:-1]
    return text + ELLIPSIS if text else ""


def draw_text(
    draw: ImageDraw.ImageDraw,
    xy: tuple[float, float],
    text: str,
    size: int,
    fill: Color,
    bold: bool = False,
    align: str = "left",
    max_width: float | None = None,
) -> float:
    """Draw one line whose optical middle is at ``xy[1]``; ``align`` says what ``xy[0]`` is.

    Returns the drawn width, so callers can place the next item after it.
    """
    if max_width is not None:
        text = fit(text, size, max_width, bold)
    runs = _runs(text, size, bold)
    width = sum(f.getlength(run) for run, f in runs)
    x = xy[0] - {"left": 0.0, "center": width / 2, "right": width}[align]
    baseline = xy[1] + size * _MIDDLE
    for run, f in runs:
        draw.text((x, baseline), run, font=f, fill=fill, anchor="ls")
        x += f.getlength(run)
    return width
