"""Stage one: where are the tiles? A small CenterNet-style network run with onnxruntime.

The network sees the photo squashed to ``INPUT_SIZE`` square (the training photos were
squashed the same way by their exporter, so tile shapes match what it learned) and answers, on
a grid of stride ``STRIDE``, how likely each cell is a tile centre, plus the tile's size and
the centre's sub-cell offset. Peaks of that heat map become boxes; overlapping boxes are
merged by non-maximum suppression.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

INPUT_SIZE = 320
STRIDE = 4
SIZE_UNIT = 16.0  # the network predicts log(size / SIZE_UNIT), size in input pixels
PEAK_THRESHOLD = 0.3
NMS_IOU = 0.45


@dataclass(frozen=True)
class Detections:
    """Boxes (N x 4, x0 y0 x1 y1, in the photo's pixels) and their detector scores, best first."""

    boxes: np.ndarray
    scores: np.ndarray


def prepare(image: np.ndarray) -> np.ndarray:
    """The network input for an H x W x 3 uint8 photo: 1 x 3 x S x S float32 in [0, 1]."""
    resized = Image.fromarray(image).resize((INPUT_SIZE, INPUT_SIZE), Image.BILINEAR, reducing_gap=3.0)
    return (np.asarray(resized, dtype=np.float32) / 255.0).transpose(2, 0, 1)[None]


def decode(output: np.ndarray, threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Boxes in input pixels and scores from the raw 5 x G x G output (heat, log w, log h, dx, dy)."""
    threshold = PEAK_THRESHOLD if threshold is None else threshold
    heat = output[0]
    padded = np.pad(heat, 1, constant_values=-1.0)
    neighbourhood = np.lib.stride_tricks.sliding_window_view(padded, (3, 3)).max(axis=(2, 3))
    ys, xs = np.nonzero((heat >= neighbourhood) & (heat >= threshold))
    scores = heat[ys, xs]
    width = np.exp(output[1, ys, xs]) * SIZE_UNIT
    height = np.exp(output[2, ys, xs]) * SIZE_UNIT
    cx = (xs + output[3, ys, xs]) * STRIDE
    cy = (ys + output[4, ys, xs]) * STRIDE
    boxes = np.stack([cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2], axis=1)
    keep = non_maximum_suppression(boxes, scores, NMS_IOU)
    return boxes[keep].astype(np.float32), scores[keep].astype(np.float32)


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


def detect(session, image: np.ndarray, threshold: float | None = None) -> Detections:
    """Run the detector session on a photo and return boxes in the photo's own pixels."""
    output = session.run(None, {session.get_inputs()[0].name: prepare(image)})[0][0]
    boxes, scores = decode(output, threshold)
    height, width = image.shape[:2]
    scale = np.asarray([width, height, width, height], dtype=np.float32) / INPUT_SIZE
    boxes = boxes * scale
    boxes[:, [0, 2]] = np.clip(boxes[:, [0, 2]], 0, width)
    boxes[:, [1, 3]] = np.clip(boxes[:, [1, 3]], 0, height)
    return Detections(boxes, scores)
