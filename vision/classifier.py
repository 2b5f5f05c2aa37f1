"""Stage two: which tile is in each box? A small CNN over fixed-size crops, run with onnxruntime.

A box wider than tall holds a tile lying sideways (a photo taken from the side of the row),
so it is turned upright before classifying; the classifier was trained with tiles both ways up.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

CROP_WIDTH = 48
CROP_HEIGHT = 64
SIDEWAYS_RATIO = 1.15


def crop_tile(photo: Image.Image, box: np.ndarray) -> np.ndarray:
    """The classifier input for one box: CROP_HEIGHT x CROP_WIDTH x 3 uint8, tile upright."""
    x0, y0, x1, y1 = (float(v) for v in box)
    crop = photo.crop((round(x0), round(y0), max(round(x1), round(x0) + 1), max(round(y1), round(y0) + 1)))
    if (x1 - x0) > SIDEWAYS_RATIO * (y1 - y0):
        crop = crop.transpose(Image.Transpose.ROTATE_90)
    return np.asarray(crop.resize((CROP_WIDTH, CROP_HEIGHT), Image.BILINEAR, reducing_gap=3.0))


def classify(session, crops: np.ndarray) -> np.ndarray:
    """Class probabilities (N x NUM_CLASSES) for N x H x W x 3 uint8 crops.

    Each crop is also classified upside down and the two answers averaged: a tile reads the
    same both ways up, and the average is steadier than either view alone.
    """
    batch = crops.astype(np.float32).transpose(0, 3, 1, 2) / 255.0
    both = np.concatenate([batch, batch[:, :, ::-1, ::-1]])
    logits = session.run(None, {session.get_inputs()[0].name: np.ascontiguousarray(both)})[0]
    logits = logits - logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    return (probabilities[: len(crops)] + probabilities[len(crops) :]) / 2
