"""The size limit every image keeps: Telegram scales photos to 1280 px on the long side.

Scaling ourselves, with a good filter, beats letting Telegram scale and then recompress,
and keeps uploads small. Layouts aim to stay under the limit; this is the backstop for
unusually long content (many wins and payments on one card).
"""

from __future__ import annotations

from PIL import Image

MAX_SIDE = 1280


def shrink_to_limit(img: Image.Image) -> Image.Image:
    """``img`` unchanged if it fits in MAX_SIDE, else scaled down to fit, keeping its shape."""
    longest = max(img.size)
    if longest <= MAX_SIDE:
        return img
    scale = MAX_SIDE / longest
    size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
    return img.resize(size, Image.Resampling.LANCZOS)
