"""Build the fonts Xuezhan draws with into ``rendering/fonts/``, from Debian's Noto packages.

A player's name may hold any character Telegram allows, so the renderer carries a chain of
fonts and picks, for each character (each emoji sequence), the first font that has it:

1. Xuezhan Sans (from Noto Sans), regular and bold: Latin, Greek and Cyrillic with their
   extensions (Vietnamese, …), digits and punctuation.
2. Xuezhan Sans CJK (from Noto Sans CJK SC): every CJK Unified Ideograph (the main block,
   extension A and the compatibility block, so simplified and traditional alike), kana,
   Hangul, bopomofo and CJK punctuation. One weight only: the full set is ~8 MB per weight,
   so a second full weight would double the package.
3. Xuezhan Sans CJK Bold: the game's vocabulary and the 3755 common hanzi (GB 2312 level 1),
   for headings and the names that fit it; the renderer thickens the regular weight for a
   bold string holding anything else (see ``rendering/text.py``).
4. Xuezhan Sans Arabic and Xuezhan Sans Thai (Noto Sans Arabic / Thai), regular and bold.
5. Xuezhan Emoji (from Noto Color Emoji): every emoji, ZWJ sequences and flags included.
   The colour bitmaps are scaled from 109 px to a 64 px strike with a 64-colour palette:
   the images never draw an emoji larger than ~40 px, and this takes the font from 10.9 MB
   to ~6 MB.

``fonts.json`` lists the chain with each font's coverage as code point ranges, read by the
renderer (so it needs no fontTools at run time) and by the tests.

Usage (needs fontTools, a dev dependency; install Debian's fonts-noto-cjk, fonts-noto-core
and fonts-noto-color-emoji first)::

    python scripts/make_font_subset.py [--only NAME ...]

Building the CJK regular font takes about two minutes.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection, TTFont
from PIL import Image

FONT_DIR = Path(__file__).resolve().parent.parent / "rendering" / "fonts"
MANIFEST = FONT_DIR / "fonts.json"
NOTO_CJK = Path("/usr/share/fonts/opentype/noto")
NOTO = Path("/usr/share/fonts/truetype/noto")
CJK_FEATURES = ("kern", "palt")
SC_INDEX = 2  # inside NotoSansCJK-*.ttc the fonts are JP, KR, SC, TC, HK, then the Mono ones
EMOJI_PPEM = 64
EMOJI_COLOURS = 64

# Words the images and the bot show, so that headings are drawn in the real bold weight.
VOCABULARY = """
一二三四五六七八九十百千万零两 万筒条萬條索饼餅
平胡 对对胡 大对子 清一色 七对 暗七对 带幺九 金钩钓 清对 将对 龙七对 清七对 清带幺 清金钩钓 将金钩钓
清龙七对 十八罗汉 根 杠上花 杠上炮 抢杠胡 海底 海底捞月 门清 中张 天胡 地胡 自摸 加底 加番 点杠花 承包
查花猪 花猪 查大叫 查小叫 死叫 退税 呼叫转移 刮风 下雨 直杠 补杠 弯杠 面下杠 暗杠 明杠 一炮多响 点炮 放炮
流局 查叫 封顶 满格 血战到底 血流成河 普通 换三张 定缺 过水不胡 碰 杠 胡 过 摸牌 打牌 出牌 听牌 下叫 叫牌
庄 庄家 缺 倍 番 底 分 筹码 积分 合计 总计 本局 本手 第局 每家 各家 付给 收到 赢 输 平 和 共计 结算 明细
牌墙 剩余 张 轮到 等待 超时 托管 机器人 电脑 玩家 座位 东南西北 顺时针 逆时针 对家 上家 下家 本家
今日 今天 昨天 本周 本月 本年 全部 排行榜 战绩 日期 时间 开始 结束 加入 离开 设置 规则 帮助 取消 确认 选择
×÷±−–—…·•●○■□▲▼◆★☆←→↑↓⇄↔「」『』【】（）《》〈〉，。、；：？！“”‘’～％＋－＝
"""

Ranges = list[tuple[int, int]]

ASCII: Ranges = [(0x20, 0x7E)]
EUROPEAN: Ranges = [(0xA0, 0x24F), (0x250, 0x2FF), (0x370, 0x3FF), (0x400, 0x52F), (0x1AB0, 0x1AFF),
                    (0x1D00, 0x1DBF), (0x1DC0, 0x1EFF), (0x1F00, 0x1FFF), (0x2000, 0x206F), (0x20A0, 0x20CF),
                    (0x2100, 0x214F), (0x2150, 0x218F), (0x2C60, 0x2C7F), (0x2DE0, 0x2DFF), (0xA640, 0xA69F),
                    (0xA720, 0xA7FF), (0xAB30, 0xAB6F), (0xFB00, 0xFB06), (0x0300, 0x036F), (0x25CC, 0x25CC)]
CJK: Ranges = [
    (0x2E80, 0x2FDF),  # radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3100, 0x312F), (0x31A0, 0x31BF),  # bopomofo
    (0x3130, 0x318F), (0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF),  # Hangul jamo
    (0x31F0, 0x31FF),  # katakana extensions
    (0x3200, 0x33FF),  # enclosed CJK, compatibility
    (0x3400, 0x4DBF),  # extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),  # forms, full and half width
    (0x2000, 0x206F), (0x2190, 0x21FF), (0x2460, 0x24FF), (0x2500, 0x25FF), (0x2600, 0x26FF),
    (0x20, 0x7E), (0xA0, 0x17F), (0x370, 0x3FF), (0x400, 0x45F),
]
ARABIC: Ranges = [(0x600, 0x6FF), (0x750, 0x77F), (0x8A0, 0x8FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF),
                  (0x20, 0x40), (0x200C, 0x200F), (0x25CC, 0x25CC)]
THAI: Ranges = [(0xE00, 0xE7F), (0x20, 0x40), (0x200B, 0x200D), (0x25CC, 0x25CC)]


@dataclass(frozen=True)
class Build:
    """One font file of the chain: where it comes from and what it keeps."""

    name: str  # file stem in rendering/fonts, and the id in fonts.json
    family: str
    weight: str
    source: Path
    keep: Ranges
    ttc_index: int | None = None
    extra: str = ""  # characters kept beyond the ranges
    kind: str = "text"
    # OpenType features kept: the CJK fonts need only kerning (their other features, for
    # vertical text and other locales, are a third of the file); Arabic and Thai need all.
    features: tuple[str, ...] = ("*",)


def _gb2312_level1() -> str:
    """The 3755 most used simplified characters: rows 16-55 of GB 2312."""
    chars = []
    for row in range(0xB0, 0xD8):
        for cell in range(0xA1, 0xFF):
            try:
                chars.append(bytes([row, cell]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return "".join(chars)


BUILDS: tuple[Build, ...] = (
    Build("XuezhanSansCJK-Regular", "Xuezhan Sans CJK", "Regular", NOTO_CJK / "NotoSansCJK-Regular.ttc", CJK,
          ttc_index=SC_INDEX, features=CJK_FEATURES),
    Build("XuezhanSansCJK-Bold", "Xuezhan Sans CJK", "Bold", NOTO_CJK / "NotoSansCJK-Bold.ttc",
          [*ASCII, (0xA0, 0x17F), (0x370, 0x3FF), (0x400, 0x45F)], ttc_index=SC_INDEX,
          extra=VOCABULARY + _gb2312_level1(), features=CJK_FEATURES),
    Build("XuezhanSans-Regular", "Xuezhan Sans", "Regular", NOTO / "NotoSans-Regular.ttf", ASCII + EUROPEAN),
    Build("XuezhanSans-Bold", "Xuezhan Sans", "Bold", NOTO / "NotoSans-Bold.ttf", ASCII + EUROPEAN),
    Build("XuezhanSansArabic-Regular", "Xuezhan Sans Arabic", "Regular", NOTO / "NotoSansArabic-Regular.ttf", ARABIC),
    Build("XuezhanSansArabic-Bold", "Xuezhan Sans Arabic", "Bold", NOTO / "NotoSansArabic-Bold.ttf", ARABIC),
    Build("XuezhanSansThai-Regular", "Xuezhan Sans Thai", "Regular", NOTO / "NotoSansThai-Regular.ttf", THAI),
    Build("XuezhanSansThai-Bold", "Xuezhan Sans Thai", "Bold", NOTO / "NotoSansThai-Bold.ttf", THAI),
    Build("XuezhanEmoji-Regular", "Xuezhan Emoji", "Regular", NOTO / "NotoColorEmoji.ttf", [], kind="emoji"),
)

# The renderer's fallback order: (regular file, bold file or None for "thicken the regular").
# Noto Sans comes first so that a Latin, Greek or Cyrillic word never mixes two designs.
CHAIN: tuple[tuple[str, str | None], ...] = (
    ("XuezhanSans-Regular", "XuezhanSans-Bold"),
    ("XuezhanSansCJK-Regular", "XuezhanSansCJK-Bold"),
    ("XuezhanSansArabic-Regular", "XuezhanSansArabic-Bold"),
    ("XuezhanSansThai-Regular", "XuezhanSansThai-Bold"),
    ("XuezhanEmoji-Regular", None),
)


def _codepoints(ranges: Ranges, extra: str) -> set[int]:
    points = {c for lo, hi in ranges for c in range(lo, hi + 1)}
    points.update(ord(c) for c in extra if not c.isspace())
    return points


def as_ranges(points: Iterable[int]) -> Ranges:
    out: Ranges = []
    for p in sorted(points):
        if out and p == out[-1][1] + 1:
            out[-1] = (out[-1][0], p)
        else:
            out.append((p, p))
    return out


def _open(build: Build) -> TTFont:
    if build.ttc_index is not None:
        return TTCollection(str(build.source)).fonts[build.ttc_index]
    return TTFont(str(build.source))


def _subset_outlines(build: Build) -> TTFont:
    font = _open(build)
    cmap = font.getBestCmap()
    wanted = [p for p in _codepoints(build.keep, build.extra) if p in cmap]
    options = subset.Options()
    options.layout_features = list(build.features)
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]
    options.notdef_outline = True
    options.hinting = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=wanted)
    subsetter.subset(font)
    return font


def _shrink_emoji(build: Build) -> TTFont:
    """Scale every colour bitmap to EMOJI_PPEM and a small palette; metrics scale along."""
    font = TTFont(str(build.source))
    size_table = font["CBLC"].strikes[0].bitmapSizeTable
    scale = EMOJI_PPEM / size_table.ppemX
    for glyph in font["CBDT"].strikeData[0].values():
        metrics = glyph.metrics
        w, h = max(1, round(metrics.width * scale)), max(1, round(metrics.height * scale))
        image = Image.open(io.BytesIO(glyph.imageData)).convert("RGBA").resize((w, h), Image.Resampling.LANCZOS)
        image = image.quantize(EMOJI_COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
        out = io.BytesIO()
        image.save(out, "PNG", optimize=True)
        glyph.imageData = out.getvalue()
        metrics.width, metrics.height = w, h
        metrics.BearingX = round(metrics.BearingX * scale)
        metrics.BearingY = round(metrics.BearingY * scale)
        metrics.Advance = round(metrics.Advance * scale)
    size_table.ppemX = size_table.ppemY = EMOJI_PPEM
    for line in (size_table.hori, size_table.vert):
        for key in ("ascender", "descender", "widthMax", "minOriginSB", "minAdvanceSB", "maxBeforeBL", "minAfterBL"):
            setattr(line, key, round(getattr(line, key) * scale))
    return font


def _rename(font: TTFont, build: Build) -> None:
    """A modified OFL font must not pass itself off as the original: give it our name."""
    postscript = f"{build.family.replace(' ', '')}Subset-{build.weight}"
    for record in font["name"].names:
        if record.nameID == 1:
            record.string = f"{build.family} Subset"
        elif record.nameID == 3:
            record.string = f"{postscript};modified from {build.source.name}"
        elif record.nameID == 4:
            record.string = f"{build.family} Subset {build.weight}"
        elif record.nameID == 6:
            record.string = postscript
    if "CFF " in font:
        font["CFF "].cff.fontNames = [postscript]


def make(build: Build) -> dict[str, object]:
    font = _shrink_emoji(build) if build.kind == "emoji" else _subset_outlines(build)
    _rename(font, build)
    suffix = ".otf" if "CFF " in font else ".ttf"
    out = FONT_DIR / f"{build.name}{suffix}"
    font.recalcTimestamp = False  # keep the source's dates so re-running gives identical bytes
    font.save(str(out))
    covered = set(TTFont(str(out)).getBestCmap())
    print(f"{out.name}: {len(covered)} code points, {out.stat().st_size // 1024} KB")
    entry: dict[str, object] = {"file": out.name, "kind": build.kind, "ppem": EMOJI_PPEM if build.kind == "emoji"
                                else None, "ranges": as_ranges(covered)}
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="rebuild only this font (repeatable)")
    args = parser.parse_args(argv)
    missing = [str(b.source) for b in BUILDS if not b.source.is_file()]
    if missing:
        print(f"error: not found: {', '.join(missing)} (install fonts-noto-cjk, fonts-noto-core, "
              "fonts-noto-color-emoji)", file=sys.stderr)
        return 2
    FONT_DIR.mkdir(parents=True, exist_ok=True)
    old = json.loads(MANIFEST.read_text(encoding="utf-8"))["fonts"] if MANIFEST.exists() else {}
    fonts = {name: entry for name, entry in old.items() if name in {b.name for b in BUILDS}}
    for build in BUILDS:
        if not args.only or build.name in args.only:
            fonts[build.name] = make(build)
    chain = [{"regular": regular, "bold": bold} for regular, bold in CHAIN]
    MANIFEST.write_text(json.dumps({"chain": chain, "fonts": fonts}, separators=(",", ":")) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
