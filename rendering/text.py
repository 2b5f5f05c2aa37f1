"""Text drawing with the bundled fonts: every character a name can hold gets a real glyph.

Pillow draws with one font at a time, so this module does the fallback itself. The text is
cut into clusters (a letter with its marks, an emoji with its modifiers, joiners and flag
pairs), and each cluster goes to the first font of the chain in ``fonts/fonts.json`` that
has all of it: Noto Sans (Latin, Greek, Cyrillic), the CJK font (ideographs simplified and
traditional, kana, Hangul), then Arabic, Thai and colour emoji. Emoji sequences try the
emoji font first. Runs of clusters that share a font are laid out by Raqm, which joins
Arabic, places Thai marks and forms ZWJ emoji and flags. A cluster no font has is drawn
as a dotted circle (◌), the usual sign for "a character goes here", never as a box.

Bold: the CJK bold font holds the game's words and the common hanzi only. A bold string
that needs a character outside it is drawn in the regular weight thickened by a stroke, all
of it, so one name never mixes two weights.

A drawn line is cached as a sprite (keyed by text, size, colour, weight), because the same
names, numbers and labels are drawn on every picture of a table.
"""

from __future__ import annotations

import json
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from rendering.theme import Color

FONT_DIR = Path(__file__).resolve().parent / "fonts"
MANIFEST = FONT_DIR / "fonts.json"
ELLIPSIS = "…"
PLACEHOLDER = "◌"
# Where the optical middle of a line sits above the baseline, as a share of the size.
_MIDDLE = 0.36
# Stroke width of the thickened regular weight, as a share of the size.
_FAUX_BOLD = 0.035
# Emoji are drawn this much taller than the text size, to match the ideographs' ink.
_EMOJI_SCALE = 1.05

_ZWJ = 0x200D
_KEYCAP = 0x20E3


def _is_variation(cp: int) -> bool:
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def _is_modifier(cp: int) -> bool:
    return 0x1F3FB <= cp <= 0x1F3FF


def _is_tag(cp: int) -> bool:
    return 0xE0020 <= cp <= 0xE007F


def _is_regional(cp: int) -> bool:
    return 0x1F1E6 <= cp <= 0x1F1FF


def _extends(ch: str) -> bool:
    """Whether ``ch`` belongs to the cluster before it rather than starting one."""
    cp = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or cp in (_ZWJ, _KEYCAP)
        or _is_variation(cp)
        or _is_modifier(cp)
        or _is_tag(cp)
    )


def clusters(text: str) -> list[str]:
    """``text`` cut where a reader sees a new character: marks, joiners and flag pairs stay."""
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if out:
            last = out[-1]
            joined = ord(last[-1]) == _ZWJ
            flag_half = _is_regional(cp) and len(last) == 1 and _is_regional(ord(last))
            if _extends(ch) or joined or flag_half:
                out[-1] = last + ch
                continue
        out.append(ch)
    return out


def _is_emoji_cluster(cluster: str) -> bool:
    """A cluster meant as a picture: an emoji code point, or one marked by VS16, a joiner, etc."""
    points = [ord(c) for c in cluster]
    if any(p in (0xFE0F, _ZWJ, _KEYCAP) or _is_modifier(p) or _is_regional(p) or _is_tag(p) for p in points):
        return True
    return points[0] >= 0x1F000


def _needed(cluster: str) -> list[int]:
    """The code points a font must map to draw ``cluster`` (selectors and joiners aside)."""
    return [ord(c) for c in cluster if not _is_variation(ord(c)) and ord(c) != _ZWJ]


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which code points a font maps, as sorted ranges (from the manifest)."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def __contains__(self, cp: int) -> bool:
        i = bisect_right(self.starts, cp) - 1
        return i >= 0 and cp <= self.ends[i]


@dataclass(frozen=True, slots=True)
class Face:
    """One link of the fallback chain: a regular file, its bold file (if any), what they cover."""

    regular: str
    bold: str | None
    emoji: bool
    ppem: int | None
    coverage: Coverage
    bold_coverage: Coverage | None

    def covers(self, cluster: str) -> bool:
        return all(cp in self.coverage for cp in _needed(cluster))

    def bold_covers(self, cluster: str) -> bool:
        cover = self.bold_coverage
        return cover is not None and all(cp in cover for cp in _needed(cluster))


def _coverage(entry: dict) -> Coverage:
    ranges = entry["ranges"]
    return Coverage(tuple(lo for lo, _ in ranges), tuple(hi for _, hi in ranges))


@cache
def faces() -> tuple[Face, ...]:
    """The fallback chain, in order, as ``fonts.json`` describes it."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    fonts = manifest["fonts"]
    chain = []
    for link in manifest["chain"]:
        regular = fonts[link["regular"]]
        bold = fonts[link["bold"]] if link["bold"] else None
        chain.append(
            Face(
                regular=regular["file"],
                bold=bold["file"] if bold else None,
                emoji=regular["kind"] == "emoji",
                ppem=regular["ppem"],
                coverage=_coverage(regular),
                bold_coverage=_coverage(bold) if bold else None,
            )
        )
    return tuple(chain)


@lru_cache(maxsize=4096)
def face_for(cluster: str) -> Face | None:
    """The first face of the chain that draws ``cluster`` (emoji sequences: the emoji face first)."""
    chain = faces()
    if _is_emoji_cluster(cluster):
        chain = tuple(f for f in chain if f.emoji) + tuple(f for f in chain if not f.emoji)
    return next((f for f in chain if f.covers(cluster)), None)


@lru_cache(maxsize=256)
def _font(file: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_DIR / file), size, layout_engine=ImageFont.Layout.RAQM)


def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The CJK font at ``size`` px, for the tiles' own numerals (一…九, 万) and rank digits."""
    cjk = next(f for f in faces() if ord("万") in f.coverage)
    return _font(cjk.bold if bold and cjk.bold else cjk.regular, size)


@dataclass(frozen=True, slots=True)
class Run:
    """Consecutive clusters drawn with one font: ``stroke`` > 0 thickens a regular weight."""

    text: str
    file: str
    emoji: bool
    ppem: int | None
    stroke: float = 0.0


def clean(text: str) -> str:
    """Drop control characters a caller may pass through from user input (names, captions)."""
    return "".join(" " if ch in "\n\r\t" else ch for ch in text if unicodedata.category(ch) != "Cc")


@lru_cache(maxsize=8192)
def runs(text: str, size: int, bold: bool = False) -> tuple[Run, ...]:
    """``text`` as runs that one font each can draw; missing clusters become the placeholder."""
    parts: list[tuple[str, Face | None]] = []
    for cluster in clusters(clean(text)):
        face = face_for(cluster)
        # Spaces and punctuation stay with the run they are in, so that an Arabic or Thai
        # phrase is laid out (and ordered right to left) as one piece.
        before = parts[-1][1] if parts else None
        if (
            before is not None
            and not before.emoji  # the emoji font's space is an emoji wide
            and unicodedata.category(cluster[0])[0] in "PZ"
            and before.covers(cluster)
        ):
            face = before
        parts.append((cluster, face))
    # Real bold for a face only when the bold file has every cluster this string gives it (checked
    # once per face: once per cluster made it quadratic, most of a new bold label's time).
    used = {id(f): f for _, f in parts if f is not None}
    real_bold = {
        key: bool(bold and f.bold and all(f.bold_covers(c) for c, g in parts if g is f)) for key, f in used.items()
    }
    out: list[Run] = []
    for cluster, face in parts:
        if face is None:
            cluster, face = PLACEHOLDER, face_for(PLACEHOLDER)
            if face is None:  # a chain without the placeholder: draw nothing rather than fail
                continue
        if face.emoji or not bold:
            run = Run(cluster, face.regular, face.emoji, face.ppem)
        elif real_bold.get(id(face), bool(face.bold and face.bold_covers(cluster))):  # placeholder: its own face
            run = Run(cluster, face.bold or face.regular, False, None)
        else:
            run = Run(cluster, face.regular, False, None, stroke=max(0.6, size * _FAUX_BOLD))
        last = out[-1] if out else None
        if last is not None and (last.file, last.stroke) == (run.file, run.stroke):
            out[-1] = Run(last.text + run.text, last.file, last.emoji, last.ppem, last.stroke)
        else:
            out.append(run)
    return tuple(out)


def _emoji_scale(run: Run, size: int) -> float:
    assert run.ppem is not None
    return size * _EMOJI_SCALE / run.ppem


def _run_width(run: Run, size: int) -> float:
    if run.emoji:
        assert run.ppem is not None
        return _font(run.file, run.ppem).getlength(run.text) * _emoji_scale(run, size)
    return _font(run.file, size).getlength(run.text) + 2 * run.stroke


@lru_cache(maxsize=8192)  # the same names, numbers and labels are measured on every picture
def text_width(text: str, size: int, bold: bool = False) -> float:
    return sum(_run_width(r, size) for r in runs(text, size, bold))


@lru_cache(maxsize=4096)
def fit(text: str, size: int, max_width: float, bold: bool = False) -> str:
    """``text`` shortened with an ellipsis (between clusters) so that it fits ``max_width`` px."""
    text = clean(text)
    if text_width(text, size, bold) <= max_width:
        return text
    parts = clusters(text)
    while parts and text_width("".join(parts) + ELLIPSIS, size, bold) > max_width:
        parts.pop()
    return "".join(parts) + ELLIPSIS if parts else ""


@dataclass(frozen=True, slots=True)
class Label:
    """A drawn line: ``image`` (RGBA) has the line's baseline at ``baseline`` px from its top."""

    image: Image.Image
    width: float
    baseline: int
    left: int  # the sprite's left edge relative to the line's origin (negative: ink before it)


# A label is ~10-40 KB (17 KB on average): 2048 is ~35 MB. One table's group and DM pictures hold
# about 50 (names in two sizes and colours, chips, statuses), so 512 churned at 50 tables.
@lru_cache(maxsize=2048)
def label(text: str, size: int, fill: Color, bold: bool = False) -> Label:
    """One line of text as a cached sprite; paste it, don't draw on it."""
    parts = runs(text, size, bold)
    width = sum(_run_width(r, size) for r in parts)
    pad = max(2, round(size * 0.2))
    ascent, descent = round(size * 1.15), round(size * 0.4)
    img = Image.new("RGBA", (max(1, round(width) + 2 * pad), ascent + descent + 2 * pad), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    baseline = pad + ascent
    x = float(pad)
    for run in parts:
        if run.emoji:
            img.alpha_composite(*_emoji_sprite(run, size, round(x), baseline))
        else:
            draw.text(
                (x + run.stroke, baseline),
                run.text,
                font=_font(run.file, size),
                fill=fill,
                anchor="ls",
                stroke_width=run.stroke,
                stroke_fill=fill,
            )
        x += _run_width(run, size)
    return Label(img, width, baseline, -pad)


def _emoji_sprite(run: Run, size: int, x: int, baseline: int) -> tuple[Image.Image, tuple[int, int]]:
    """The emoji run drawn at the font's own strike and scaled to ``size``, with where it goes."""
    assert run.ppem is not None
    f = _font(run.file, run.ppem)
    left, top, right, bottom = f.getbbox(run.text, anchor="ls")
    w, h = max(1, right - left), max(1, bottom - top)
    strike = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    ImageDraw.Draw(strike).text((-left, -top), run.text, font=f, anchor="ls", embedded_color=True)
    scale = _emoji_scale(run, size)
    small = strike.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.Resampling.LANCZOS)
    # Emoji sit a little above the baseline, like the ideographs beside them.
    return small, (x + round(left * scale), baseline + round(top * scale) + round(size * 0.1))


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
    if not text:
        return 0.0
    line = label(text, size, tuple(fill), bold)  # type: ignore[arg-type]
    x = xy[0] - {"left": 0.0, "center": line.width / 2, "right": line.width}[align]
    baseline = xy[1] + size * _MIDDLE
    canvas: Image.Image = draw._image  # ImageDraw keeps the image it draws on
    canvas.paste(line.image, (round(x) + line.left, round(baseline) - line.baseline), line.image)
    return line.width
