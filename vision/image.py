"""Turning untrusted bytes into RGB pixels, with limits checked before any large allocation.

Phone photos carry their orientation in EXIF; it is applied here so that "left to right" means
what the player saw when taking the picture.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from vision.errors import MAX_BYTES, VisionError

# Telegram delivers photos at most 2560 px on a side (6.5 MP); 16 MP leaves room for an image
# sent as a file while bounding what one decode may cost (about 50 MB of RGB, not 400 MB).
MAX_PIXELS = 16_000_000
DRAFT_SIDE = 2560  # a bigger JPEG is decoded at 1/2, 1/4 or 1/8 scale: what Telegram would send


def decode_image(data: bytes) -> np.ndarray:
    """Decode photo bytes to an H x W x 3 uint8 array, or raise VisionError."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise VisionError("not_an_image", f"expected the bytes of a photo, got {type(data).__name__}")
    if len(data) > MAX_BYTES:
        raise VisionError("too_large", f"the file has {len(data)} bytes; the limit is {MAX_BYTES}")
    if len(data) == 0:
        raise VisionError("not_an_image", "the file is empty")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(bytes(data)))
            if image.format == "JPEG":
                image.draft("RGB", (DRAFT_SIDE, DRAFT_SIDE))
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise VisionError("too_many_pixels", f"the photo is {width}x{height}; the limit is {MAX_PIXELS} pixels")
            image = ImageOps.exif_transpose(image).convert("RGB")
            return np.asarray(image)
    except VisionError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise VisionError("too_many_pixels", f"the photo is too large to decode safely: {exc}") from None
    except UnidentifiedImageError:
        raise VisionError("not_an_image", "the file is not an image Pillow can read (JPEG, PNG, WebP...)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise VisionError("not_an_image", f"the image is damaged or truncated: {exc}") from None
