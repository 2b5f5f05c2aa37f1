"""Chip tallies as a bar chart: one horizontal bar per player, gains right, losses left.

Horizontal bars leave room for names of any length, and a zero line in the middle makes
winners and losers readable at a glance in a chat thumbnail.
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from rendering import theme
from rendering.limits import shrink_to_limit
from rendering.models import MAX_TALLY_ENTRIES, TallyEntry
from rendering.text import draw_text

WIDTH = 1000
PAD = 36
HEADER = 84
ROW = 58
NAME_WIDTH = 230
MAX_ENTRIES = MAX_TALLY_ENTRIES  # keeps the picture under Telegram's 1280 px side (and readable)


def render_tally_chart(entries: Sequence[TallyEntry], title: str = "今日战绩", subtitle: str = "") -> Image.Image:
    """Bars sorted from the biggest winner down; the scale is the largest absolute tally."""
    if len(entries) > MAX_ENTRIES:
        raise ValueError(f"a tally chart shows at most {MAX_ENTRIES} players, got {len(entries)}")
    rows = sorted(entries, key=lambda e: (-e.chips, e.name))
    sub = 40 if subtitle else 0
    height = HEADER + sub + PAD + max(len(rows), 1) * ROW + PAD
    img = Image.new("RGB", (WIDTH, height), theme.PAPER)
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, WIDTH, HEADER), fill=theme.FELT)
    draw_text(draw, (PAD, HEADER / 2), title, 38, theme.ON_FELT, bold=True, max_width=WIDTH - 2 * PAD)
    y = HEADER + PAD / 2
    if subtitle:
        draw_text(draw, (PAD, y + sub / 2), subtitle, 24, theme.INK_SOFT, max_width=WIDTH - 2 * PAD)
        y += sub
    y += PAD / 2

    bar_left = PAD + NAME_WIDTH + 20
    bar_right = WIDTH - PAD
    axis = (bar_left + bar_right) / 2
    # Half the bar area minus room for the number at the bar's end.
    reach = (bar_right - bar_left) / 2 - 70
    scale = max((abs(e.chips) for e in rows), default=0) or 1
    top = y
    for i, entry in enumerate(rows):
        mid = y + ROW / 2
        if i % 2 == 0:
            draw.rectangle((PAD, y, WIDTH - PAD, y + ROW), fill=theme.PAPER_STRIPE)
        draw_text(draw, (PAD + 10, mid), entry.name, 28, theme.INK, bold=True, max_width=NAME_WIDTH - 10)
        length = reach * abs(entry.chips) / scale
        colour = theme.GAIN if entry.chips > 0 else theme.LOSS
        if entry.chips > 0:
            draw.rounded_rectangle((axis, mid - 16, axis + max(length, 4), mid + 16), radius=6, fill=colour)
            draw_text(draw, (axis + length + 10, mid), f"+{entry.chips}", 26, colour, bold=True)
        elif entry.chips < 0:
            draw.rounded_rectangle((axis - max(length, 4), mid - 16, axis, mid + 16), radius=6, fill=colour)
            draw_text(draw, (axis - length - 10, mid), str(entry.chips), 26, colour, bold=True, align="right")
        else:
            draw_text(draw, (axis + 10, mid), "0", 26, theme.INK_SOFT, bold=True)
        y += ROW
    draw.line((axis, top - 6, axis, max(y, top + ROW) + 6), fill=theme.INK_SOFT, width=2)
    return shrink_to_limit(img)
