"""Images to bytes for upload.

Our pictures use a few dozen flat colours plus the anti-aliased edges between them, so
one 256-colour palette, chosen once from a swatch of everything we draw, serves every
image: mapping to a known palette costs about a millisecond where choosing a palette
per image (octree) costs ten on the table, and the PNG comes out about three times
smaller than true colour. Compression level 3 is nearly as small as the default 6 at a
third of the time.
"""

from __future__ import annotations

import io
from functools import cache

from PIL import Image, ImageDraw

from engine.tiles import ALL_TILES
from rendering import theme
from rendering.text import draw_text
from rendering.tiles import TileStyle, render_tile, tile_height

PNG_COMPRESS_LEVEL = 3


def encode_png(img: Image.Image, palette: bool = True) -> bytes:
    """PNG bytes; with ``palette`` (the default) mapped to the shared 256-colour palette."""
    if palette and img.mode != "P":
        img = img.convert("RGB").quantize(palette=shared_palette(), dither=Image.Dither.NONE)
    out = io.BytesIO()
    img.save(out, "PNG", compress_level=PNG_COMPRESS_LEVEL)
    return out.getvalue()


def encode_jpeg(img: Image.Image, quality: int = 90) -> bytes:
    """JPEG bytes without chroma subsampling, so red numerals keep sharp edges."""
    if not 1 <= quality <= 95:
        raise ValueError(f"JPEG quality must be 1..95, got {quality}")
    out = io.BytesIO()
    img.convert("RGB").save(out, "JPEG", quality=quality, subsampling=0)
    return out.getvalue()


# A live table's pictures (the group's table, each player's screen, result cards): Telegram
# re-encodes every photo as JPEG anyway, and at phone size these read as the PNG does. Measured on
# an 800x1271 private screen: palette PNG 6.5 ms (quantize 1.3 + deflate 5.2) and 88 KB; this
# 3.2 ms and 187 KB, whose extra upload costs the bot about 0.4 ms; 4:4:4 chroma 5 ms, 296 KB. A
# result card: PNG 12.8 ms, this 5.3 ms. And the shared palette is never built in the bot (its
# one median cut took over a second of CPU at the first PNG).
PHOTO_QUALITY = 85


def encode_photo(img: Image.Image) -> bytes:
    """JPEG bytes of a live table picture, sent on every move: the cheapest to make that reads well."""
    out = io.BytesIO()
    # convert() copies even an image already in RGB (0.5 ms for a private screen): only when needed.
    (img if img.mode == "RGB" else img.convert("RGB")).save(out, "JPEG", quality=PHOTO_QUALITY, subsampling=2)
    return out.getvalue()


def _theme_colours() -> list[theme.Color]:
    return [v for k, v in vars(theme).items() if k.isupper() and isinstance(v, tuple) and len(v) == 3]


# The text colours each background carries in our layouts.
_ON_FELT = (theme.ON_FELT, theme.ON_FELT_SOFT, theme.GOLD, theme.GAIN_ON_FELT, theme.LOSS_ON_FELT)
_ON_PAPER = (theme.INK, theme.INK_SOFT, theme.RED, theme.GAIN, theme.LOSS, theme.FELT)
_TEXT_ON = (
    (theme.FELT, _ON_FELT),
    (theme.FELT_LIGHT, _ON_FELT),
    (theme.PAPER, _ON_PAPER),
    (theme.PAPER_STRIPE, _ON_PAPER),
    (theme.RED, (theme.ON_FELT,)),
    (theme.BLUE, (theme.ON_FELT,)),
)


@cache
def shared_palette() -> Image.Image:
    """A "P" image whose palette is fitted to a swatch of every sprite, text colour and background.

    Large flat patches of each theme colour make sure the exact colours survive; the
    sprites and text samples supply the edge ramps between them.
    """
    tw, columns = 48, 14
    styles = [TileStyle.NORMAL, TileStyle.HIGHLIGHT, TileStyle.VOID]
    sprites = [render_tile(t, tw, s) for s in styles for t in ALL_TILES] + [render_tile(None, tw)]
    width = columns * (tw + 2)
    tiles_h = -(-len(sprites) // columns) * (tile_height(tw) + 2)
    lines = sum(len(fgs) for _, fgs in _TEXT_ON)
    swatch = Image.new("RGB", (width, 2 * tiles_h + lines * 26 + 40 + 60), theme.FELT)
    draw = ImageDraw.Draw(swatch)
    y = 0
    for bg in (theme.FELT, theme.PAPER):
        draw.rectangle((0, y, width, y + tiles_h), fill=bg)
        for i, sprite in enumerate(sprites):
            row, col = divmod(i, columns)
            swatch.paste(sprite, (col * (tw + 2), y + row * (tile_height(tw) + 2)), sprite)
        y += tiles_h
    for bg, fgs in _TEXT_ON:
        for fg in fgs:
            draw.rectangle((0, y, width, y + 26), fill=bg)
            draw_text(draw, (4, y + 13), "一二万 Alice +12 -8 查花猪 胡 缺条 0189", 24, fg, bold=True)
            draw_text(draw, (width * 0.62, y + 13), "自摸 → Bob 退税", 22, fg)
            y += 26
    # Names carry emoji: a row of common ones gives their colours a share of the palette.
    draw.rectangle((0, y, width, y + 40), fill=theme.PAPER)
    draw_text(draw, (4, y + 20), "😀😂🥰😎🤔🔥❤️👍🏻👍🏾🎉🌸🍀⭐🐼🐱🀄🇨🇳🌈", 32, theme.INK)
    y += 40
    colours = _theme_colours()
    patch = width / len(colours)
    for i, colour in enumerate(colours):
        draw.rectangle((round(i * patch), y, round((i + 1) * patch), y + 60), fill=colour)
    return swatch.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
