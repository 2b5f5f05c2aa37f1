"""Stage two: which tile is in each box, and which way up? A small CNN over crops, with onnxruntime.

A box wider than tall holds a tile lying sideways (a photo taken from the side of the row),
so it is turned upright before classifying. The network answers the 27 suited tiles and "not a
suited tile", plus one more number: whether the crop shows the tile upright or upside down,
which tells the reading order of a row photographed from the other side of the table.
The confidence is calibrated: the exported network divides its class scores by a temperature
fitted on held-out crops (``scripts/train_vision.py``), so 0.9 means right about 9 times in 10
or better.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from vision.classes import NUM_CLASSES

CROP_WIDTH = 48
CROP_HEIGHT = 64
SIDEWAYS_RATIO = 1.15
# A tile cut along a slanted row is between these many pitches tall: a tile's face with some of
# its side showing, whatever a loose box would say.
TILE_HEIGHT_IN_PITCHES = (1.1, 1.8)


def is_sideways(box: np.ndarray) -> bool:
    """Whether a box holds a tile lying on its side (the crop is turned before classifying)."""
    return float(box[2] - box[0]) > SIDEWAYS_RATIO * float(box[3] - box[1])


def crop_tile(photo: Image.Image, box: np.ndarray) -> np.ndarray:
    """The classifier input for one box: CROP_HEIGHT x CROP_WIDTH x 3 uint8, long side vertical.

    A sideways box is turned a quarter counter-clockwise, so the photo's right becomes the
    crop's top.
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    crop = photo.crop((round(x0), round(y0), max(round(x1), round(x0) + 1), max(round(y1), round(y0) + 1)))
    if is_sideways(box):
        crop = crop.transpose(Image.Transpose.ROTATE_90)
    return np.asarray(crop.resize((CROP_WIDTH, CROP_HEIGHT), Image.BILINEAR, reducing_gap=3.0))


def crop_along_row(photo: Image.Image, box: np.ndarray, angle: float, pitch: float) -> np.ndarray:
    """The classifier input for a tile standing in a row that runs at ``angle`` (radians, picture
    coordinates) across the photo: CROP_HEIGHT x CROP_WIDTH x 3 uint8, like ``crop_tile``'s.

    The photo is turned about the box's centre until the row runs level, and the tile is cut at
    its own size: ``pitch`` wide, and as tall as the box (the turned tile's bounding box) says.
    An upright box around a slanted tile also holds parts of its neighbours, which the
    classifier then reads as part of the tile.
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    cos, sin = abs(np.cos(angle)), abs(np.sin(angle))
    # The box of a pitch x height tile turned by the angle is (pitch cos + height sin) wide and
    # (pitch sin + height cos) tall; of the two, the side that depends more on the height says it.
    height = (y1 - y0 - pitch * sin) / cos if cos >= sin else (x1 - x0 - pitch * cos) / sin
    low, high = TILE_HEIGHT_IN_PITCHES
    height = float(np.clip(height, low * pitch, high * pitch))
    cx, cy = round((x0 + x1) / 2), round((y0 + y1) / 2)
    reach = int(np.ceil(np.hypot(pitch, height) / 2)) + 2
    patch = photo.crop((cx - reach, cy - reach, cx + reach, cy + reach))
    level = patch.rotate(float(np.degrees(angle)), resample=Image.BILINEAR)
    cut = level.crop((round(reach - pitch / 2), round(reach - height / 2),
                      max(round(reach + pitch / 2), round(reach - pitch / 2) + 1),
                      max(round(reach + height / 2), round(reach - height / 2) + 1)))
    return np.asarray(cut.resize((CROP_WIDTH, CROP_HEIGHT), Image.BILINEAR, reducing_gap=3.0))


def _softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits - logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits)
    return probabilities / probabilities.sum(axis=1, keepdims=True)


def classify_with_orientation(session, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class probabilities (N x NUM_CLASSES) and P(upright) (N) for N x H x W x 3 uint8 crops.

    Each crop is also classified upside down and the two answers averaged: a tile is the
    same tile both ways up, and the average is steadier than either view alone.
    """
    batch = crops.astype(np.float32).transpose(0, 3, 1, 2) / 255.0
    both = np.concatenate([batch, batch[:, :, ::-1, ::-1]])
    output = session.run(None, {session.get_inputs()[0].name: np.ascontiguousarray(both)})[0]
    count = len(crops)
    probabilities = _softmax(output[:, :NUM_CLASSES])
    probabilities = (probabilities[:count] + probabilities[count:]) / 2
    if output.shape[1] > NUM_CLASSES:
        upright = 1 / (1 + np.exp(-np.clip(output[:, NUM_CLASSES], -30, 30)))
        return probabilities, (upright[:count] + 1 - upright[count:]) / 2
    return probabilities, np.full(count, 0.5)


def classify(session, crops: np.ndarray) -> np.ndarray:
    """Class probabilities (N x NUM_CLASSES) for N x H x W x 3 uint8 crops."""
    return classify_with_orientation(session, crops)[0]
