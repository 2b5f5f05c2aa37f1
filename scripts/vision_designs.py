"""Tile designs for training and validation pictures: procedural sets drawn here, and FluffyStuff.

A friend's tile set differs from the data set's in almost everything that is not the suit
and rank: the numeral font, 万 or 萬, how dots and bamboo are drawn, the 1s bird, the colours
of the symbols, the face and the back, corner indices or none. ``Design`` is one such set,
drawn entirely from a seed, so that "design 7" is the same pictures in every run.

Which designs may be trained on is fixed here and nowhere else:

- procedural designs with seeds in ``TRAIN_DESIGNS`` (and, when asked, ``EXTRA_DESIGNS`` and
  ``MORE_DESIGNS``) and FluffyStuff *Regular* are for training;
- procedural designs with seeds in ``UNSEEN_DESIGNS`` and FluffyStuff *Black* are never given to
  training (``training_designs`` cannot return them); they make the unseen-designs validation set
  (``scripts/vision_scenes.py``, ``benchmarks/vision.py``);
- procedural designs with seeds in ``FRESH_DESIGNS`` are never given to training either; they make
  a second check of new designs ("fresh designs", eighth session), so that models are not chosen
  on the unseen set alone.

Training-only, like the other ``scripts/vision_*`` modules: Pillow and numpy, never torch.
"""

from __future__ import annotations

import colorsys
import math
import random
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from engine.tiles import NUM_KINDS

ROOT = Path(__file__).resolve().parent.parent
FLUFFY = ROOT.parent / "shared" / "vision" / "fluffystuff" / "Export"
CJK_FONTS = [ROOT / "rendering" / "fonts" / f"XuezhanSansCJK-{w}.otf" for w in ("Bold", "Regular")]
LATIN_FONTS = [
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed-Bold.ttf"),
]
TRAIN_DESIGNS = range(1, 61)
UNSEEN_DESIGNS = range(900, 908)
# More training designs with more kinds of variety (a serif CJK font when the system has one,
# symbols in fewer colours); drawn after every earlier choice, so designs below 1000 are unchanged.
EXTRA_DESIGNS = range(1000, 1240)
# Many more of those, so that a round of scenes hardly shows a design twice.
MORE_DESIGNS = range(2000, 3000)
FRESH_DESIGNS = range(5000, 5009)
# Designs for choosing run-time settings (eleventh session): neither trained on nor reported,
# so a choice made on them leaves the unseen and fresh figures honest.
TUNING_DESIGNS = range(7000, 7300)
SERIF_CJK = Path("/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc")
DRAW_WIDTH = 96  # sprites are drawn at this width (twice over, then halved) and scaled in scenes
NUMERALS = "一二三四五六七八九"
# Faces that are not suited tiles, as the sets have them: winds, dragons, flowers, blanks, backs.
OTHER_FACES = (
    "wind:北",
    "wind:南",
    "wind:西",
    "dragon:中",
    "dragon:發",
    "dragon:白",
    "flower:春",
    "flower:夏",
    "blank",
    "back",
)

Colour = tuple[int, int, int]


def _hsv(h: float, s: float, v: float) -> Colour:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return round(r * 255), round(g * 255), round(b * 255)


@dataclass(frozen=True)
class Design:
    """One tile set's look, every choice drawn from ``seed``."""

    seed: int
    face: Colour
    dark_face: bool
    back: Colour
    body: Colour
    thickness: float  # the visible side below the face, as a share of the face height
    body_share: float  # the ivory layer's share of that side (the rest is the back colour)
    aspect: float  # face height / width
    radius: float
    red: Colour
    green: Colour
    blue: Colour
    ink: Colour  # numerals of the characters suit
    cjk_font: Path
    wan: str
    numeral_scale: float
    corner_index: str  # "", "tl", "tl+br"
    index_font: Path
    dot_style: str  # coin, ring, flat, dashed
    dot_scale: float
    dot_palette: str  # mixed, mono, two
    bamboo_style: str  # stick, bar, double
    bamboo_palette: str
    bird: str  # bird, peacock, stalk
    inset: float
    border: bool


def make_design(seed: int) -> Design:
    """The procedural design for ``seed`` (same seed, same design)."""
    rng = random.Random(seed * 7919 + 13)
    dark = rng.random() < 0.15
    if dark:
        face = _hsv(rng.random(), rng.uniform(0, 0.5), rng.uniform(0.08, 0.3))
    else:
        face = _hsv(rng.uniform(0.08, 0.17), rng.uniform(0.0, 0.2), rng.uniform(0.88, 1.0))
    back = _hsv(rng.random(), rng.uniform(0.3, 1.0), rng.uniform(0.3, 0.95))
    if rng.random() < 0.15:
        back = _hsv(0, 0, rng.uniform(0.1, 0.95))

    def symbol(hue: float, sat: tuple[float, float], val: tuple[float, float]) -> Colour:
        if dark:
            return _hsv(hue + rng.uniform(-0.04, 0.04), rng.uniform(0.5, 0.9), rng.uniform(0.8, 1.0))
        return _hsv(hue + rng.uniform(-0.04, 0.04), rng.uniform(*sat), rng.uniform(*val))

    ink_choice = rng.random()
    if dark:
        ink = _hsv(rng.random(), rng.uniform(0, 0.3), 0.95)
    elif ink_choice < 0.6:
        ink = _hsv(0, 0, rng.uniform(0.05, 0.25))
    elif ink_choice < 0.8:
        ink = _hsv(0.62, rng.uniform(0.5, 0.9), rng.uniform(0.3, 0.6))
    else:
        ink = _hsv(0.0, rng.uniform(0.6, 0.9), rng.uniform(0.5, 0.8))
    design = Design(
        seed=seed,
        face=face,
        dark_face=dark,
        back=back,
        body=_hsv(rng.uniform(0.08, 0.15), rng.uniform(0, 0.2), rng.uniform(0.85, 1.0)),
        thickness=rng.choice([0.0, rng.uniform(0.04, 0.12), rng.uniform(0.1, 0.3)]),
        body_share=rng.uniform(0.2, 0.7),
        aspect=rng.uniform(1.22, 1.45),
        radius=rng.uniform(0.04, 0.2),
        red=symbol(0.0, (0.6, 0.95), (0.55, 0.9)),
        green=symbol(0.37, (0.5, 0.95), (0.3, 0.7)),
        blue=symbol(0.62, (0.5, 0.95), (0.3, 0.7)),
        ink=ink,
        cjk_font=rng.choice(CJK_FONTS),
        wan=rng.choice("万萬萬"),
        numeral_scale=rng.uniform(0.75, 1.05),
        corner_index=rng.choice(["", "", "tl", "tl", "tl+br"]),
        index_font=rng.choice(LATIN_FONTS),
        dot_style=rng.choice(["coin", "ring", "flat", "dashed"]),
        dot_scale=rng.uniform(0.8, 1.12),
        dot_palette=rng.choice(["mixed", "mixed", "mono", "two"]),
        bamboo_style=rng.choice(["stick", "bar", "double"]),
        bamboo_palette=rng.choice(["mixed", "mono", "two"]),
        bird=rng.choice(["bird", "bird", "peacock", "stalk"]),
        inset=rng.uniform(0.06, 0.13),
        border=rng.random() < 0.3,
    )
    return _more_variety(design, rng) if seed >= EXTRA_DESIGNS.start else design


def _more_variety(d: Design, rng: random.Random) -> Design:
    """The extra designs' further choices: a serif font for the characters, fewer symbol colours."""
    font = SERIF_CJK if SERIF_CJK.is_file() and rng.random() < 0.5 else d.cjk_font
    colours = rng.random()
    if colours < 0.15:  # every symbol in one ink
        one = d.ink if not d.dark_face else d.red
        return replace(d, cjk_font=font, red=one, green=one, blue=one)
    if colours < 0.3:  # 萬 in the numerals' ink, green bamboo and dots in blue and red
        return replace(d, cjk_font=font, red=d.ink if rng.random() < 0.5 else d.red, green=d.blue)
    return replace(d, cjk_font=font, numeral_scale=rng.uniform(0.65, 1.1))


def training_designs(extra: bool = False, more: bool = False) -> list[Design | str]:
    """Every design training may use: the procedural training seeds (with ``extra``, also
    ``EXTRA_DESIGNS``; with ``more``, also ``MORE_DESIGNS``) and FluffyStuff Regular."""
    seeds = [*TRAIN_DESIGNS, *(EXTRA_DESIGNS if extra else ()), *(MORE_DESIGNS if more else ())]
    designs: list[Design | str] = [make_design(seed) for seed in seeds]
    if (FLUFFY / "Regular").is_dir():
        designs.append("fluffy:Regular")
    return designs


def unseen_designs() -> list[Design | str]:
    """The designs kept out of training, for the unseen-designs validation set."""
    designs: list[Design | str] = [make_design(seed) for seed in UNSEEN_DESIGNS]
    if (FLUFFY / "Black").is_dir():
        designs.append("fluffy:Black")
    return designs


def tuning_designs(group: int) -> list[Design]:
    """The twelve procedural designs of tuning group ``group`` (0, 1, 2...): seeds 7000 + 100 x group onwards."""
    start = TUNING_DESIGNS.start + 100 * group
    return [make_design(seed) for seed in range(start, start + 12)]


def fresh_designs() -> list[Design | str]:
    """The designs of the fresh-designs check: procedural, drawn with the extra designs' choices."""
    return [make_design(seed) for seed in FRESH_DESIGNS]


# ---------------------------------------------------------------- drawing


@lru_cache(maxsize=4096)
def sprite(design: Design | str, face: int | str) -> Image.Image:
    """One tile of ``design`` as an RGBA picture DRAW_WIDTH wide: the face, and the side below it.

    ``face`` is a suited tile (0..26) or one of OTHER_FACES. Shared by the cache: don't draw on it.
    """
    if isinstance(design, str):
        return _fluffy(*_fluffy_look(design), face)
    return _procedural(design, face)


# How real riichi sets differ from FluffyStuff as first composed here (face art at 0.86 of the
# blank front, an orange side): the art at its own size on the front (as the set is meant to be
# composed) or a little smaller, a side that is thin, thick or not seen, backs of other colours,
# and red fives (赤ドラ), which most riichi sets have one of in each suit.
RIICHI_INSETS = (0.86, 0.93, 1.0)
RIICHI_SIDES = (0.0, 0.06, 0.12, 0.18)
RIICHI_BACKS: tuple[Colour, ...] = ((230, 120, 40), (226, 190, 60), (40, 130, 80), (40, 90, 170), (40, 40, 40))
_FIVES = (4, 13, 22)


def riichi_look(rng: random.Random, variant: str) -> str:
    """A FluffyStuff design (``variant``: Regular or Black) composed as one real riichi set might be:
    ``fluffy:VARIANT:INSET:SIDE:BACK:RED`` (see ``RIICHI_INSETS`` and the lines above it)."""
    return (f"fluffy:{variant}:{rng.choice(RIICHI_INSETS)}:{rng.choice(RIICHI_SIDES)}:"
            f"{rng.randrange(len(RIICHI_BACKS))}:{int(rng.random() < 0.5)}")


def _fluffy_look(design: str) -> tuple[str, float, float, Colour | None, bool]:
    """``fluffy:VARIANT`` (the first composition) or a ``riichi_look``, as ``_fluffy``'s arguments."""
    parts = design.split(":")
    if len(parts) == 2:
        return parts[1], 0.86, 0.12, None, False
    _, variant, inset, side, back, red = parts
    return variant, float(inset), float(side), RIICHI_BACKS[int(back)], red == "1"


def _procedural(d: Design, face: int | str) -> Image.Image:
    scale = 2
    w = DRAW_WIDTH * scale
    face_h = round(w * d.aspect)
    side = round(face_h * d.thickness)
    h = face_h + side
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    r = w * d.radius
    if side:
        draw.rounded_rectangle((0, 0, w - 1, h - 1), r, fill=d.back)
        draw.rounded_rectangle((0, 0, w - 1, face_h + round(side * d.body_share)), r, fill=d.body)
    if face == "back":
        draw.rounded_rectangle((0, 0, w - 1, face_h), r, fill=d.back, outline=_shade(d.back, 0.7), width=scale * 2)
        return img.resize((DRAW_WIDTH, round(h / scale)), Image.Resampling.LANCZOS)
    draw.rounded_rectangle((0, 0, w - 1, face_h), r, fill=d.face, outline=_shade(d.face, 0.75), width=scale * 2)
    if d.border:
        m = w * 0.05
        draw.rounded_rectangle((m, m, w - 1 - m, face_h - m), r * 0.7, outline=_shade(d.face, 0.6), width=scale)
    rng = random.Random(hash((d.seed, str(face))) & 0xFFFFFFFF)
    margin = w * d.inset
    area = [margin, margin + face_h * 0.02, w - margin, face_h - margin]
    if isinstance(face, int) and d.corner_index:
        rank = face % 9 + 1
        colour = (d.ink, d.blue, d.green)[face // 9] if face // 9 else d.red
        size = round(w * 0.24)
        fnt = ImageFont.truetype(str(d.index_font), size)
        draw.text((w * 0.08, face_h * 0.03), str(rank), font=fnt, fill=colour, anchor="lt")
        if "br" in d.corner_index:
            draw.text((w * 0.92, face_h * 0.97), str(rank), font=fnt, fill=colour, anchor="rb")
        area = [margin + w * 0.1, margin + face_h * 0.14, w - margin - w * 0.04, face_h - margin]
    if isinstance(face, int):
        rank, suit = face % 9 + 1, face // 9
        if suit == 0:
            _characters(draw, d, rank, area)
        elif suit == 1:
            _dots(draw, d, rank, area, rng)
        else:
            _bamboo(draw, d, rank, area, rng)
    else:
        _other(draw, d, face, area)
    return img.resize((DRAW_WIDTH, round(h / scale)), Image.Resampling.LANCZOS)


def _shade(colour: Colour, factor: float) -> Colour:
    return tuple(max(0, min(255, round(c * factor))) for c in colour)  # type: ignore[return-value]


def _cjk(d: Design, size: int, text: str) -> ImageFont.FreeTypeFont:
    font = ImageFont.truetype(str(d.cjk_font), size)
    if font.getmask(text).getbbox() is None:
        font = ImageFont.truetype(str(CJK_FONTS[0]), size)
    return font


def _characters(draw: ImageDraw.ImageDraw, d: Design, rank: int, area: list[float]) -> None:
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    size = round(min(w * 1.0, h * 0.5) * d.numeral_scale)
    draw.text((cx, y0 + h * 0.26), NUMERALS[rank - 1], font=_cjk(d, size, NUMERALS[rank - 1]), fill=d.ink, anchor="mm")
    wan_size = round(min(w * 1.0, h * 0.5) * (0.85 + 0.15 * d.numeral_scale))
    draw.text((cx, y0 + h * 0.74), d.wan, font=_cjk(d, wan_size, d.wan), fill=d.red, anchor="mm")


_DOT_LAYOUT: dict[int, tuple[float, list[tuple[float, float, int]]]] = {
    # rank: (radius as a share of the area width, [(x, y, colour slot)])
    2: (0.24, [(0.5, 0.22, 1), (0.5, 0.78, 2)]),
    3: (0.2, [(0.2, 0.15, 2), (0.5, 0.5, 0), (0.8, 0.85, 1)]),
    4: (0.21, [(0.27, 0.25, 2), (0.73, 0.25, 1), (0.27, 0.75, 1), (0.73, 0.75, 2)]),
    5: (0.18, [(0.23, 0.18, 2), (0.77, 0.18, 1), (0.5, 0.5, 0), (0.23, 0.82, 1), (0.77, 0.82, 2)]),
    6: (0.16, [(x, y, c) for y, c in ((0.13, 1), (0.55, 0), (0.87, 0)) for x in (0.28, 0.72)]),
    7: (
        0.14,
        [(0.2, 0.09, 1), (0.5, 0.21, 1), (0.8, 0.33, 1)] + [(x, y, 0) for y in (0.64, 0.9) for x in (0.28, 0.72)],
    ),
    8: (0.135, [(x, y, 2) for y in (0.11, 0.37, 0.63, 0.89) for x in (0.28, 0.72)]),
    9: (0.14, [(x, y, c) for y, c in ((0.12, 2), (0.5, 0), (0.88, 1)) for x in (0.18, 0.5, 0.82)]),
}


def _palette(d: Design, kind: str) -> list[Colour]:
    if kind == "mono":
        return [d.blue if d.dot_style != "flat" else d.green] * 3
    if kind == "two":
        return [d.red, d.blue, d.blue]
    return [d.red, d.green, d.blue]


def _dot(draw: ImageDraw.ImageDraw, d: Design, cx: float, cy: float, r: float, colour: Colour) -> None:
    def disc(share: float, fill: Colour) -> None:
        draw.ellipse((cx - r * share, cy - r * share, cx + r * share, cy + r * share), fill=fill)

    if d.dot_style == "coin":
        disc(1.0, colour)
        disc(0.62, d.face)
        disc(0.4, colour)
    elif d.dot_style == "ring":
        disc(1.0, colour)
        disc(0.72, d.face)
        disc(0.22, colour)
    elif d.dot_style == "flat":
        disc(1.0, colour)
        disc(0.3, d.face)
    else:
        disc(1.0, _shade(colour, 0.5) if not d.dark_face else colour)
        disc(0.8, colour)
        for k in range(8):
            a = k * math.pi / 4
            px, py = cx + math.cos(a) * r * 0.55, cy + math.sin(a) * r * 0.55
            draw.ellipse((px - r * 0.09, py - r * 0.09, px + r * 0.09, py + r * 0.09), fill=d.face)
        disc(0.2, d.face)


def _dots(draw: ImageDraw.ImageDraw, d: Design, rank: int, area: list[float], rng: random.Random) -> None:
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    colours = _palette(d, d.dot_palette)
    if rank == 1:
        cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, min(w, h) * 0.48 * min(d.dot_scale, 1.05)
        rings = (
            [d.green, d.face, d.red, d.face, d.blue, d.face]
            if d.dot_palette != "mono"
            else [colours[0], d.face, colours[0], d.face, colours[0], d.face]
        )
        for k, colour in enumerate(rings):
            share = 1.0 - k * 0.16
            draw.ellipse((cx - r * share, cy - r * share, cx + r * share, cy + r * share), fill=colour)
        if d.dot_style == "dashed":
            for k in range(12):
                a = k * math.pi / 6
                px, py = cx + math.cos(a) * r * 0.9, cy + math.sin(a) * r * 0.9
                draw.ellipse((px - r * 0.06, py - r * 0.06, px + r * 0.06, py + r * 0.06), fill=d.face)
        return
    share, dots = _DOT_LAYOUT[rank]
    r = share * w * d.dot_scale
    r = min(r, h * 0.2)
    for px, py, slot in dots:
        cx = x0 + r + (w - 2 * r) * px
        cy = y0 + r + (h - 2 * r) * py
        _dot(draw, d, cx, cy, r, colours[slot])


_STICKS: dict[int, list[tuple[float, float, float, int]]] = {
    # rank: [(x, y0, y1, colour slot)] in the area (0..1)
    2: [(0.5, 0.0, 0.45, 1), (0.5, 0.55, 1.0, 2)],
    3: [(0.5, 0.0, 0.45, 1), (0.27, 0.55, 1.0, 2), (0.73, 0.55, 1.0, 2)],
    4: [(x, y0, y1, c) for y0, y1, c in ((0.0, 0.45, 1), (0.55, 1.0, 2)) for x in (0.27, 0.73)],
    5: [(0.2, 0.0, 0.45, 1), (0.8, 0.0, 0.45, 2), (0.5, 0.28, 0.72, 0), (0.2, 0.55, 1.0, 2), (0.8, 0.55, 1.0, 1)],
    6: [(x, y0, y1, c) for y0, y1, c in ((0.0, 0.45, 1), (0.55, 1.0, 2)) for x in (0.18, 0.5, 0.82)],
    7: [(0.5, 0.0, 0.3, 0)]
    + [(x, y0, y1, c) for y0, y1, c in ((0.36, 0.66, 1), (0.72, 1.0, 2)) for x in (0.18, 0.5, 0.82)],
    8: [(x, y0, y1, c) for y0, y1, c in ((0.0, 0.45, 1), (0.55, 1.0, 2)) for x in (0.1, 0.37, 0.63, 0.9)],
    9: [
        (x, y0, y1, 0 if x == 0.5 else c)
        for y0, y1, c in ((0.0, 0.3, 1), (0.35, 0.65, 2), (0.7, 1.0, 1))
        for x in (0.18, 0.5, 0.82)
    ],
}


def _bamboo(draw: ImageDraw.ImageDraw, d: Design, rank: int, area: list[float], rng: random.Random) -> None:
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    colours = _palette(d, d.bamboo_palette)
    if d.bamboo_palette == "mono":
        colours = [d.red, d.green, d.green]
    if rank == 1:
        _one_bamboo(draw, d, area, rng)
        return
    sw = w * (0.19 if rank in (2, 3, 4, 6) else 0.15) * (0.85 if rank == 8 else 1.0)
    for ax, ay0, ay1, slot in _STICKS[rank]:
        cx = x0 + sw / 2 + (w - sw) * ax
        top, bottom = y0 + (h - sw) * ay0 + sw / 2, y0 + (h - sw) * ay1 + sw / 2
        _stalk(draw, d, cx, top, bottom, sw, colours[slot])


def _stalk(
    draw: ImageDraw.ImageDraw, d: Design, cx: float, top: float, bottom: float, sw: float, colour: Colour
) -> None:
    half = sw / 2
    if d.bamboo_style == "stick":
        draw.line(((cx, top), (cx, bottom)), fill=colour, width=max(1, round(sw)))
        for y in (top, bottom):
            draw.ellipse((cx - half, y - half, cx + half, y + half), fill=colour)
        mid = (top + bottom) / 2
        draw.line(((cx - half * 0.8, mid), (cx + half * 0.8, mid)), fill=d.face, width=max(1, round(sw * 0.2)))
    elif d.bamboo_style == "bar":
        draw.rectangle((cx - half, top - half * 0.6, cx + half, bottom + half * 0.6), fill=colour)
        for y in (top + (bottom - top) / 3, top + 2 * (bottom - top) / 3):
            draw.line(((cx - half, y), (cx + half, y)), fill=d.face, width=max(1, round(sw * 0.15)))
    else:
        draw.rectangle(
            (cx - half, top - half * 0.5, cx + half, bottom + half * 0.5),
            outline=colour,
            width=max(1, round(sw * 0.28)),
        )
        draw.line(((cx, top), (cx, bottom)), fill=colour, width=max(1, round(sw * 0.16)))
        for y in (top, (top + bottom) / 2, bottom):
            draw.line(((cx - half, y), (cx + half, y)), fill=colour, width=max(1, round(sw * 0.2)))


def _one_bamboo(draw: ImageDraw.ImageDraw, d: Design, area: list[float], rng: random.Random) -> None:
    """The 1s: a bird (several ways), a peacock over a bird, or a single tall stalk."""
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    if d.bird == "stalk":
        _stalk(draw, d, cx, y0 + w * 0.15, y1 - w * 0.15, w * 0.32, d.green)
        return
    body = d.green
    wing = d.red if d.seed % 2 else d.blue
    if d.bird == "peacock":
        fan_r = w * 0.45
        fy = y0 + fan_r
        draw.pieslice((cx - fan_r, fy - fan_r, cx + fan_r, fy + fan_r), 180, 360, fill=body)
        for k in range(7):
            a = math.pi + (k + 0.5) * math.pi / 7
            px, py = cx + math.cos(a) * fan_r * 0.7, fy + math.sin(a) * fan_r * 0.7
            draw.ellipse((px - w * 0.05, py - w * 0.05, px + w * 0.05, py + w * 0.05), fill=d.face)
        by = y0 + h * 0.68
    else:
        by = y0 + h * 0.55
    # body, head, beak, tail, legs
    bw, bh = w * 0.38, h * 0.2
    draw.ellipse((cx - bw, by - bh, cx + bw, by + bh), fill=body)
    draw.polygon(
        [(cx - bw * 0.2, by - bh * 0.3), (cx + bw * 0.8, by - bh * 0.1), (cx + bw * 0.1, by + bh * 0.7)], fill=wing
    )
    hx, hy, hr = cx - bw * 0.85, by - bh * 1.3, w * 0.13
    draw.ellipse((hx - hr, hy - hr, hx + hr, hy + hr), fill=body)
    draw.polygon([(hx - hr * 0.8, hy), (hx - hr * 2.0, hy + hr * 0.3), (hx - hr * 0.7, hy + hr * 0.5)], fill=d.red)
    draw.ellipse((hx - hr * 0.25, hy - hr * 0.35, hx + hr * 0.15, hy + hr * 0.05), fill=d.face)
    tail = [(cx + bw * 0.8, by - bh * 0.2), (x1, by - bh * 2.2), (x1 - w * 0.05, by + bh * 0.3)]
    draw.polygon(tail, fill=wing)
    for lx in (cx - bw * 0.3, cx + bw * 0.2):
        draw.line(((lx, by + bh * 0.8), (lx, min(y1, by + bh * 2.2))), fill=d.red, width=max(1, round(w * 0.04)))


def _other(draw: ImageDraw.ImageDraw, d: Design, face: str, area: list[float]) -> None:
    x0, y0, x1, y1 = area
    w, h = x1 - x0, y1 - y0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    kind, _, text = face.partition(":")
    if kind == "blank":
        return
    if face == "dragon:白":
        draw.rectangle(
            (x0 + w * 0.1, y0 + h * 0.15, x1 - w * 0.1, y1 - h * 0.15), outline=d.blue, width=max(2, round(w * 0.07))
        )
        return
    if face == "dragon:發":
        for k in range(5):
            a = k * 0.9
            draw.arc(
                (cx - w * 0.4, cy - h * 0.3 + k * h * 0.1, cx + w * 0.4, cy + k * h * 0.08),
                200 + a * 20,
                340 + a * 10,
                fill=d.green,
                width=max(2, round(w * 0.07)),
            )
        draw.line(((cx, y0 + h * 0.1), (cx, y1 - h * 0.1)), fill=d.green, width=max(2, round(w * 0.08)))
        return
    colour = {"wind": d.ink, "dragon": d.red, "flower": d.blue}[kind]
    size = round(min(w, h * 0.7) * 0.95)
    draw.text((cx, cy if kind != "flower" else y0 + h * 0.3), text, font=_cjk(d, size, text), fill=colour, anchor="mm")
    if kind == "flower":
        for k in range(5):
            a = k * 2 * math.pi / 5
            px, py = cx + math.cos(a) * w * 0.18, y0 + h * 0.75 + math.sin(a) * w * 0.18
            draw.ellipse((px - w * 0.1, py - w * 0.1, px + w * 0.1, py + w * 0.1), fill=d.red)


_FLUFFY_NAMES = {0: "Man", 1: "Pin", 2: "Sou"}
_FLUFFY_OTHERS = {
    "wind:北": "Pei",
    "wind:南": "Nan",
    "wind:西": "Shaa",
    "dragon:中": "Chun",
    "dragon:發": "Hatsu",
    "dragon:白": "Haku",
    "flower:春": "Ton",
    "flower:夏": "Ton",
    "blank": "Blank",
    "back": "Back",
}


def _fluffy(variant: str, inset: float, side_share: float, back: Colour | None, red_fives: bool,
            face: int | str) -> Image.Image:
    """A FluffyStuff tile: its face picture over its blank front, at ``inset`` of the front's size,
    with a side ``side_share`` of the face's height in ``back`` (by default the variant's own)."""
    folder = FLUFFY / variant
    front = Image.open(folder / "Front.png").convert("RGBA")
    if face == "back":
        tile = Image.open(folder / "Back.png").convert("RGBA")
    elif face == "blank":
        tile = front
    else:
        name = f"{_FLUFFY_NAMES[face // 9]}{face % 9 + 1}" if isinstance(face, int) else _FLUFFY_OTHERS[face]
        if red_fives and face in _FIVES:
            name += "-Dora"
        overlay = Image.open(folder / f"{name}.png").convert("RGBA")
        tile = front.copy()
        art = overlay.resize((round(front.width * inset), round(front.height * inset)), Image.Resampling.LANCZOS)
        tile.alpha_composite(art, ((front.width - art.width) // 2, (front.height - art.height) // 2))
    box = tile.getbbox() or (0, 0, tile.width, tile.height)
    tile = tile.crop(box)
    height = round(DRAW_WIDTH * tile.height / tile.width)
    side = round(height * side_share)
    out = Image.new("RGBA", (DRAW_WIDTH, height + side), (0, 0, 0, 0))
    back_colour = back or ((230, 120, 40) if variant == "Regular" else (40, 40, 40))
    if side:
        ImageDraw.Draw(out).rounded_rectangle(
            (0, side, DRAW_WIDTH - 1, height + side - 1), DRAW_WIDTH * 0.1, fill=back_colour
        )
    out.alpha_composite(tile.resize((DRAW_WIDTH, height), Image.Resampling.LANCZOS), (0, 0))
    return out


def random_face(rng: random.Random, other_share: float = 0.12) -> int | str:
    """A suited tile, or now and then a face that is not one."""
    if rng.random() < other_share:
        return rng.choice(OTHER_FACES)
    return rng.randrange(NUM_KINDS)
