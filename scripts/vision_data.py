"""Training data for the tile recogniser: labelled photos, the hold-out split, augmentation.

Only ``cmd/valid`` of the shared photo set is ever read here (the test half is for
``benchmarks/vision.py`` alone). The hold-out split is a fixed hash of the file name so that
model selection is repeatable and never sees the photos it is judged on.
Training-only: this module needs Pillow and numpy, never torch, and nothing at run time imports it.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter

from vision.classes import class_of_notation

HOLDOUT_PERCENT = 15


@dataclass(frozen=True)
class Photo:
    """One labelled photo: RGB pixels and boxes in pixels (x0, y0, x1, y1) with class ids."""

    name: str
    image: np.ndarray  # H x W x 3 uint8
    boxes: np.ndarray  # N x 4 float32, pixels
    classes: np.ndarray  # N int64, 0..26 suited tile, NOT_SUITED otherwise
    ups: np.ndarray | None = None  # N float32: the angle (atan2) of each tile's top, None = all upright
    hand: np.ndarray | None = None  # N bool: part of the hand (not a discard); None = all


def is_holdout(name: str) -> bool:
    """Whether a photo belongs to the hold-out part of the training set (stable across runs)."""
    return int(hashlib.sha1(name.encode()).hexdigest(), 16) % 100 < HOLDOUT_PERCENT


def load_split(split_dir: Path) -> list[Photo]:
    """Read a YOLO-format folder (images/, labels/ and ../classes.json) into memory."""
    mapping = json.loads((split_dir.parent / "classes.json").read_text())["tile_by_class_id"]
    photos = []
    for image_path in sorted((split_dir / "images").glob("*.jpg")):
        image = np.asarray(Image.open(image_path).convert("RGB"))
        height, width = image.shape[:2]
        boxes, classes = [], []
        label_path = split_dir / "labels" / (image_path.stem + ".txt")
        for line in label_path.read_text().splitlines():
            parts = line.split()
            if len(parts) != 5:
                continue
            cx, cy, w, h = (float(v) for v in parts[1:])
            boxes.append([(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height])
            classes.append(class_of_notation(mapping[parts[0]]))
        photos.append(
            Photo(
                image_path.stem,
                image,
                np.asarray(boxes, dtype=np.float32).reshape(-1, 4),
                np.asarray(classes, dtype=np.int64),
            )
        )
    return photos


def jitter_colour(image: Image.Image, rng: random.Random) -> Image.Image:
    """Room light, white balance and camera differences: brightness, contrast, saturation, blur."""
    image = ImageEnhance.Brightness(image).enhance(rng.uniform(0.6, 1.4))
    image = ImageEnhance.Contrast(image).enhance(rng.uniform(0.7, 1.3))
    image = ImageEnhance.Color(image).enhance(rng.uniform(0.5, 1.5))
    if rng.random() < 0.3:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2)))
    pixels = np.asarray(image, dtype=np.float32)
    pixels = pixels * np.asarray([rng.uniform(0.85, 1.15) for _ in range(3)], dtype=np.float32)
    if rng.random() < 0.3:
        pixels = pixels + np.random.default_rng(rng.randrange(1 << 30)).normal(0, rng.uniform(2, 8), pixels.shape)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def rotate_quarter(image: np.ndarray, boxes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rotate pixels and boxes by k quarter turns counter-clockwise (a photo held sideways)."""
    for _ in range(k % 4):
        width = image.shape[1]
        image = np.rot90(image)
        x0, y0, x1, y1 = boxes.T
        boxes = np.stack([y0, width - x1, y1, width - x0], axis=1)
    return np.ascontiguousarray(image), boxes


def shift_hue(image: np.ndarray, rng: random.Random) -> np.ndarray:
    """Any table colour: rotate the hue of the whole photo (tiles are mostly white, so they survive)."""
    hsv = np.asarray(Image.fromarray(image).convert("HSV")).copy()
    hsv[..., 0] = (hsv[..., 0].astype(np.int32) + rng.randrange(256)) % 256
    return np.asarray(Image.fromarray(hsv, "HSV").convert("RGB"))
