"""Colours shared by every image, in one place so the look stays consistent.

Backgrounds are opaque on purpose: Telegram shows transparent PNGs on the chat's own
background, which would make dark text vanish in the dark theme.
"""

from __future__ import annotations

Color = tuple[int, int, int]

FELT: Color = (24, 77, 52)  # table and hand background
FELT_LIGHT: Color = (35, 98, 68)  # panels on the felt
FELT_LINE: Color = (58, 125, 92)
PAPER: Color = (251, 247, 236)  # result cards and charts
PAPER_LINE: Color = (222, 212, 190)
PAPER_STRIPE: Color = (243, 236, 219)  # every other row of a list
INK: Color = (33, 33, 40)
INK_SOFT: Color = (100, 98, 92)
ON_FELT: Color = (243, 238, 222)  # text on the felt
ON_FELT_SOFT: Color = (178, 205, 186)

IVORY: Color = (250, 244, 226)
IVORY_EDGE: Color = (214, 203, 176)
JADE: Color = (38, 150, 96)
JADE_DARK: Color = (16, 92, 58)
OUTLINE: Color = (12, 40, 27)
HIGHLIGHT_FACE: Color = (255, 240, 178)
GOLD: Color = (236, 176, 32)
VOID_FACE: Color = (238, 214, 210)

RED: Color = (200, 40, 40)
RED_DARK: Color = (140, 20, 20)
BLUE: Color = (30, 80, 160)
GREEN: Color = (28, 135, 76)
BLACK: Color = (28, 28, 44)

GAIN: Color = (32, 140, 80)
LOSS: Color = (200, 52, 52)
GAIN_ON_FELT: Color = (120, 220, 150)
LOSS_ON_FELT: Color = (255, 140, 130)
