"""Cut Noto Sans CJK SC down to the characters Xuezhan's images use.

The full CJK font is ~20 MB per weight; the images only ever show tile numerals, the
names of patterns, bonuses and payments, a few UI words, and player names. This script
writes two small OpenType subsets into ``rendering/fonts/``, each with a ``.chars.txt``
file listing exactly the characters it covers, which the renderer reads to decide when a
name needs another font instead of a blank box:

- Bold: the vocabulary below plus Latin — tile numerals, headings, pattern names.
- Regular: the same plus the 3755 common hanzi of GB 2312 level 1, so that most Chinese
  player names render.

Characters are only ever added: those already listed in a ``.chars.txt`` are kept, so
re-running the script never silently drops a glyph an image relies on.

Usage (the source fonts come from Debian's ``fonts-noto-cjk`` package)::

    python scripts/make_font_subset.py [--text-file RULES.md ...] [--source-dir DIR]

Needs fontTools (a dev dependency); the renderer itself needs only Pillow.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

FONT_DIR = Path(__file__).resolve().parent.parent / "rendering" / "fonts"
DEFAULT_SOURCE_DIR = Path("/usr/share/fonts/opentype/noto")
# Inside NotoSansCJK-*.ttc the fonts are JP, KR, SC, TC, HK, then the Mono ones.
SC_INDEX = 2
WEIGHTS = {"Regular": "NotoSansCJK-Regular.ttc", "Bold": "NotoSansCJK-Bold.ttc"}
WITH_COMMON_HANZI = {"Regular"}
FAMILY = "Xuezhan Sans CJK Subset"

# Words the images and the bot are expected to show, grouped so a reader can see why a
# character is here. Pattern and payment names come from RULES.md sections 5 and 6.
VOCABULARY = """
一二三四五六七八九十百千万零两 万筒条萬條索饼餅
平胡 对对胡 大对子 清一色 七对 暗七对 带幺九 金钩钓 清对 将对 龙七对 清七对 清带幺 清金钩钓 将金钩钓
清龙七对 十八罗汉 根 杠上花 杠上炮 抢杠胡 海底 海底捞月 门清 中张 天胡 地胡 自摸 加底 加番 点杠花 承包
查花猪 花猪 查大叫 查小叫 死叫 退税 呼叫转移 刮风 下雨 直杠 补杠 弯杠 面下杠 暗杠 明杠 一炮多响 点炮 放炮
流局 查叫 封顶 满格 血战到底 血流成河 普通 换三张 定缺 过水不胡 碰 杠 胡 过 摸牌 打牌 出牌 听牌 下叫 叫牌
庄 庄家 缺 倍 番 底 分 筹码 积分 合计 总计 本局 本手 第局 每家 各家 付给 收到 赢 输 平 和 共计 结算 明细
牌墙 剩余 张 轮到 等待 超时 托管 机器人 电脑 玩家 座位 东南西北 顺时针 逆时针 对家 上家 下家 本家
今日 今天 昨天 本周 本月 本年 全部 排行榜 战绩 日期 时间 开始 结束 加入 离开 设置 规则 帮助 取消 确认 选择
手牌 牌河 副露 弃牌 胡牌 和牌 赢家 输家 点数 倍数 番数 得分 失分 盈亏 汇总 统计 记录 图表 对局 回合 第几
你我他她它们的了是在有没不也都还就要会能可以请已经正在谁什么怎样为因所以但和与或及从向被把让给
上下左右前后中间大小多少高低新旧好坏快慢早晚开关进出来去回到起始终末
成都 四川 麻将 川麻 朋友 群 聊天 私聊 消息 按钮 图片 照片 识别 扫描 计分 计算 错误 无效 成功 失败
王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈
姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤
小老阿明华伟芳娜敏静丽强磊军洋勇艳杰娟涛超秀英霞平刚桂兰云飞鹏辉亮春红
×÷±−–—…·•●○■□▲▼◆★☆←→↑↓⇄↔「」『』【】（）《》〈〉，。、；：？！“”‘’～％＋－＝
"""

ASCII = "".join(chr(c) for c in range(0x20, 0x7F))
# Latin-1, Latin Extended-A, Greek and Cyrillic: player names in European scripts.
EXTRA_RANGES = [(0xA0, 0x17F), (0x391, 0x3C9), (0x400, 0x45F)]


def common_hanzi() -> set[str]:
    """GB 2312 level 1: the 3755 most used simplified characters, rows 16-55 of the code."""
    chars = set()
    for row in range(0xB0, 0xD8):
        for cell in range(0xA1, 0xFF):
            try:
                chars.add(bytes([row, cell]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return chars


def chars_file(weight: str) -> Path:
    return FONT_DIR / f"XuezhanSansCJK-{weight}.chars.txt"


def wanted_characters(text_files: list[Path]) -> set[str]:
    chars = set(ASCII)
    chars.update(c for c in VOCABULARY if not c.isspace())
    for lo, hi in EXTRA_RANGES:
        chars.update(chr(c) for c in range(lo, hi + 1))
    for path in text_files:
        chars.update(c for c in path.read_text(encoding="utf-8") if not c.isspace() and c.isprintable())
    return chars


def previous_characters(weight: str) -> set[str]:
    path = chars_file(weight)
    return set(path.read_text(encoding="utf-8").rstrip("\n")) if path.exists() else set()


def make_subset(source: Path, weight: str, chars: set[str]) -> tuple[Path, set[str]]:
    """Write one weight's subset; return its path and the characters it really covers."""
    font = TTCollection(str(source)).fonts[SC_INDEX]
    cmap = font.getBestCmap()
    covered = {c for c in chars if ord(c) in cmap}
    options = subset.Options()
    options.layout_features = ["kern", "palt"]
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6]
    options.notdef_outline = True
    options.hinting = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in covered])
    subsetter.subset(font)
    _rename(font, weight)
    out = FONT_DIR / f"XuezhanSansCJK-{weight}.otf"
    font.recalcTimestamp = False  # keep the source's dates so re-running gives identical bytes
    font.save(str(out))
    return out, covered


def _rename(font, weight: str) -> None:
    """A modified OFL font should not pass itself off as the original: give it our name."""
    name = font["name"]
    full = f"{FAMILY} {weight}"
    postscript = f"XuezhanSansCJKSubset-{weight}"
    for record in name.names:
        if record.nameID == 1:
            record.string = FAMILY
        elif record.nameID == 3:
            record.string = f"{postscript};subset of Noto Sans CJK SC"
        elif record.nameID == 4:
            record.string = full
        elif record.nameID == 6:
            record.string = postscript
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = [postscript]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--text-file",
        type=Path,
        action="append",
        default=[],
        help="add every character of this UTF-8 file (repeatable)",
    )
    parser.add_argument(
        "--source-dir",
        type=Path,
        default=DEFAULT_SOURCE_DIR,
        help="directory holding NotoSansCJK-Regular.ttc and NotoSansCJK-Bold.ttc",
    )
    args = parser.parse_args(argv)
    for path in [*args.text_file, *(args.source_dir / f for f in WEIGHTS.values())]:
        if not path.is_file():
            print(f"error: {path} not found (install Debian's fonts-noto-cjk?)", file=sys.stderr)
            return 2
    base = wanted_characters(args.text_file)
    FONT_DIR.mkdir(parents=True, exist_ok=True)
    for weight, filename in WEIGHTS.items():
        chars = base | previous_characters(weight)
        if weight in WITH_COMMON_HANZI:
            chars |= common_hanzi()
        out, covered = make_subset(args.source_dir / filename, weight, chars)
        chars_file(weight).write_text("".join(sorted(covered)) + "\n", encoding="utf-8")
        print(
            f"{out.relative_to(FONT_DIR.parent.parent)}: {len(covered)} characters, "
            f"{out.stat().st_size // 1024} KB"
        )
        missing = sorted(chars - covered)
        if missing:
            print(f"  not in the source font (left out): {''.join(missing)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
