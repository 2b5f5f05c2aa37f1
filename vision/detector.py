"""Stage one: where are the tiles? A small CenterNet-style network run with onnxruntime.

The photo keeps its shape: it is scaled so that its longer side fits the input square and the
rest is padded ("letterbox"), so a 10:1 strip of tiles keeps tiles of a normal shape. The
network answers, on a grid of stride ``STRIDE``, how likely each cell is a tile centre, plus
the tile's size and the centre's sub-cell offset; peaks of that heat map become boxes and
overlapping boxes are merged by non-maximum suppression.

Tiles may fill anything from 2% to all of the picture's height, more than one scale of one
network sees well, so ``detect`` looks again when the first look finds tiles near the edge of
the range it was trained for: at twice the size when they are tiny (or there were none), at
half the size when they are huge. Each look keeps only the boxes of the sizes it reads well.

A photo squashed to a square after it was taken shows tiles of shapes no tile has;
``squashed_look`` looks at it again stretched back (see there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from vision.layout import long_sides

INPUT_SIZE = 320
STRIDE = 4
SIZE_UNIT = 16.0  # the network predicts log(size / SIZE_UNIT), size in input pixels
PEAK_THRESHOLD = 0.3
NMS_IOU = 0.45
PAD_VALUE = 114
NETWORK_STRIDE = 32  # the backbone's: a network input's sides are whole multiples of it
CROP_MARGIN = 32  # padding kept around a photo given to the network at its own shape
# Tile long sides (input pixels) each look keeps; the base look reads 12..170 px well, the look at
# twice the size down to 8 (tiles of 4-6 px in the base look, otherwise dropped though found).
SMALL_TILES = 18.0  # below this median, look again at twice the size
LARGE_TILES = 120.0  # above this median, look again at half the size


@dataclass(frozen=True)
class Detections:
    """Boxes (N x 4, x0 y0 x1 y1, in the photo's pixels) and their detector scores, best first.

    ``widen`` is 1 unless the boxes come from a look at the photo stretched back (``squashed_look``):
    then the tiles have their true shape in the photo widened ``widen`` times (``stretch``), which is
    where they are cut out and laid out.
    """

    boxes: np.ndarray
    scores: np.ndarray
    widen: float = 1.0


def stretch(image: np.ndarray, widen: float) -> np.ndarray:
    """The photo widened ``widen`` times (narrowed if below 1), its height kept."""
    new_w = _widened(image.shape[1], widen)
    return np.asarray(Image.fromarray(image).resize((new_w, image.shape[0]), Image.BILINEAR, reducing_gap=3.0))


def _widened(width: int, widen: float) -> int:
    return max(1, round(width * widen))


@dataclass(frozen=True)
class Letterbox:
    """Where the photo sits in the network input: input = photo * scale + (dx, dy)."""

    scale: float
    dx: int
    dy: int


def letterbox(image: np.ndarray, size: int, fit: float = 1.0, widen: float = 1.0,
              square: bool = True) -> tuple[np.ndarray, Letterbox]:
    """The network input for an H x W x 3 uint8 photo, its longer side ``fit`` x ``size``, centred.

    With ``widen`` the photo is first taken as widened that many times (``stretch``), in the same
    single resize: a squashed photo's looks at 2-11 times its width would otherwise make a picture
    of up to 11 times the pixels, only to shrink it again. Without ``square`` the input is only as
    large as the photo with a margin of ``CROP_MARGIN`` padding, in whole network strides (for a
    network that takes any size): a photo widened 8 times fills an eighth of a square, and the
    network's time goes with the pixels it is given.
    Returns 1 x 3 x H x W float32 in [0, 1] and how to map input pixels back to the photo
    (widened).
    """
    height, width = image.shape[0], _widened(image.shape[1], widen)
    scale = fit * size / max(height, width)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    resized = Image.fromarray(image).resize((new_w, new_h), Image.BILINEAR, reducing_gap=3.0)
    side_w, side_h = (size, size) if square else (_padded(new_w, size), _padded(new_h, size))
    canvas = Image.new("RGB", (side_w, side_h), (PAD_VALUE,) * 3)
    dx, dy = (side_w - new_w) // 2, (side_h - new_h) // 2
    canvas.paste(resized, (dx, dy))
    pixels = (np.asarray(canvas, dtype=np.float32) / 255.0).transpose(2, 0, 1)[None]
    return np.ascontiguousarray(pixels), Letterbox(scale, dx, dy)


def _padded(side: int, size: int) -> int:
    return min(size, -(-(side + 2 * CROP_MARGIN) // NETWORK_STRIDE) * NETWORK_STRIDE)


def prepare(image: np.ndarray) -> np.ndarray:
    """The base look's network input for a photo (see ``letterbox``)."""
    return letterbox(image, INPUT_SIZE)[0]


def decode(output: np.ndarray, threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Boxes in input pixels and scores from the raw 5 x G x G output (heat, log w, log h, dx, dy)."""
    threshold = PEAK_THRESHOLD if threshold is None else threshold
    heat = output[0]
    padded = np.pad(heat, 1, constant_values=-1.0)
    neighbourhood = np.lib.stride_tricks.sliding_window_view(padded, (3, 3)).max(axis=(2, 3))
    ys, xs = np.nonzero((heat >= neighbourhood) & (heat >= threshold))
    scores = heat[ys, xs]
    width = np.exp(np.clip(output[1, ys, xs], -5, 5)) * SIZE_UNIT
    height = np.exp(np.clip(output[2, ys, xs], -5, 5)) * SIZE_UNIT
    cx = (xs + output[3, ys, xs]) * STRIDE
    cy = (ys + output[4, ys, xs]) * STRIDE
    boxes = np.stack([cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2], axis=1)
    keep = non_maximum_suppression(boxes, scores, NMS_IOU)
    return boxes[keep].astype(np.float32).reshape(-1, 4), scores[keep].astype(np.float32)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of every box in ``a`` with every box in ``b`` (x0 y0 x1 y1)."""
    x0 = np.maximum(a[:, None, 0], b[None, :, 0])
    y0 = np.maximum(a[:, None, 1], b[None, :, 1])
    x1 = np.minimum(a[:, None, 2], b[None, :, 2])
    y1 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-9)


def non_maximum_suppression(boxes: np.ndarray, scores: np.ndarray, max_iou: float) -> list[int]:
    """Indices of the boxes kept, best score first, dropping any that overlap a better one."""
    order = list(np.argsort(-scores))
    if not order:
        return []
    overlaps = iou_matrix(boxes, boxes)
    kept: list[int] = []
    for index in order:
        if all(overlaps[index, other] <= max_iou for other in kept):
            kept.append(int(index))
    return kept


def _input_size(session) -> int | None:
    """The fixed input side of the session, or None if it takes any size."""
    side = session.get_inputs()[0].shape[-1]
    return side if isinstance(side, int) else None


def _look(session, image: np.ndarray, size: int, fit: float, threshold: float | None,
          widen: float = 1.0, square: bool = True) -> Detections:
    """One pass at one scale; boxes in the photo's pixels (of the photo widened ``widen`` times)."""
    pixels, place = letterbox(image, size, fit, widen, square)
    output = session.run(None, {session.get_inputs()[0].name: pixels})[0][0]
    boxes, scores = decode(output, threshold)
    boxes = (boxes - np.asarray([place.dx, place.dy] * 2, dtype=np.float32)) / place.scale
    height, width = image.shape[0], _widened(image.shape[1], widen)
    boxes[:, [0, 2]] = np.clip(boxes[:, [0, 2]], 0, width)
    boxes[:, [1, 3]] = np.clip(boxes[:, [1, 3]], 0, height)
    return Detections(boxes, scores)


def detect(session, image: np.ndarray, threshold: float | None = None) -> Detections:
    """Find the tiles of a photo at the scale(s) that suit them; boxes in the photo's own pixels."""
    base = _look(session, image, INPUT_SIZE, 1.0, threshold)
    to_input = INPUT_SIZE / max(image.shape[:2])
    sides = long_sides(base.boxes) * to_input
    median = float(np.median(sides)) if len(sides) else 0.0
    looks = [(base, 1.0)]
    fixed = _input_size(session)
    if (not len(sides) or median < SMALL_TILES) and fixed is None and max(image.shape[:2]) > INPUT_SIZE:
        looks.append((_look(session, image, 2 * INPUT_SIZE, 1.0, threshold), 2.0))
    if not len(sides) or median > LARGE_TILES:
        looks.append((_look(session, image, INPUT_SIZE, 0.5, threshold), 0.5))
    if len(looks) == 1:
        return base
    boxes, scores = [], []
    for found, zoom in looks:
        size = long_sides(found.boxes) * to_input * zoom  # long sides in that look's input pixels
        keep = (size >= (8 if zoom > 1 else 12)) & (size <= 170)
        if zoom == 1.0 and len(looks) > 1:
            keep &= (size >= SMALL_TILES) if any(z > 1 for _, z in looks) else (size <= LARGE_TILES)
        boxes.append(found.boxes[keep])
        scores.append(found.scores[keep])
    all_boxes, all_scores = np.concatenate(boxes), np.concatenate(scores)
    kept = non_maximum_suppression(all_boxes, all_scores, NMS_IOU)
    return Detections(all_boxes[kept].reshape(-1, 4), all_scores[kept])


ODD_SHAPE = 2.0  # boxes wider than this many heights (or taller than this many widths): maybe squashed
UNSURE = 0.55  # squashed photos of the training set: base looks' mean score 0.31-0.42; others 0.74 and up
WIDENS = (2.0, 2.8, 4.0, 5.6, 8.0, 11.0)  # how much a squashed photo may have been squashed


def _aspect(boxes: np.ndarray) -> float:
    """The median width / height of the boxes (a standing tile is about 0.75, a lying one 1.33)."""
    return float(np.median((boxes[:, 2] - boxes[:, 0]) / np.maximum(boxes[:, 3] - boxes[:, 1], 1e-6)))


def _stretched_look(session, image: np.ndarray, widen: float, threshold: float | None) -> Detections:
    """A look at the photo widened ``widen`` times (narrowed if below 1); boxes in the photo's pixels."""
    found = _look(session, image, 2 * INPUT_SIZE, 1.0, threshold, widen, square=False)
    widen = _widened(image.shape[1], widen) / image.shape[1]
    return Detections(found.boxes / np.asarray([widen, 1.0] * 2, dtype=np.float32), found.scores, widen)


def squashed_look(session, image: np.ndarray, base: Detections, threshold: float | None = None) -> Detections | None:
    """A surer look at a photo that was squashed or stretched to a square after it was taken, or None.

    Such a photo (a long strip of tiles made square) shows tiles many times narrower or wider than
    any tile is: ``detect``'s boxes come out at such shapes and the network is unsure of them (mean
    score under ``UNSURE``), or none are found. Then the photo is looked at stretched back by each of
    ``WIDENS`` (the way the boxes' shape says; both ways when nothing was found), and the look whose
    boxes the network is surest of on average is returned, if it is surer than ``base``. The boxes
    found in a squashed photo are less extreme than its tiles, so their shape alone does not tell
    the factor.
    """
    if _input_size(session) is not None or (
        len(base.boxes) and (ODD_SHAPE > _aspect(base.boxes) > 1 / ODD_SHAPE or float(base.scores.mean()) >= UNSURE)
    ):
        return None
    if len(base.boxes):
        widens = [w if _aspect(base.boxes) < 1 else 1 / w for w in WIDENS]
    else:
        widens = [1 / 8, 1 / 4, 4.0, 8.0]
    best, best_score = None, float(base.scores.mean()) if len(base.boxes) >= 3 else 0.0
    for widen in widens:
        found = _stretched_look(session, image, widen, threshold)
        if len(found.boxes) >= 3 and float(found.scores.mean()) > best_score:
            best, best_score = found, float(found.scores.mean())
    return best
