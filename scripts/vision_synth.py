"""Synthetic training photos: our own rendered tiles laid out as a hand on a table, photographed.

The real photos show one tile set; renders from ``rendering/`` add a second look (and the
one a player may well photograph off a screen). A hand of one or two rows is pasted on a table
of random colour, then the whole picture gets a random perspective (row at an angle, seen
from the side), uneven light, blur, noise and JPEG compression. Boxes are the bounding boxes of
each tile's corners after the perspective, like the axis-aligned labels of the real photos.
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image, ImageFilter
from vision_data import Photo

from engine.tiles import NUM_KINDS
from rendering.tiles import render_tile, tile_height

SIZE = 640


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3x3 matrix mapping four src points onto four dst points."""
    rows = []
    for (x, y), (u, v) in zip(src, dst, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    solution = np.linalg.solve(np.asarray(rows, float), dst.reshape(-1).astype(float))
    return np.append(solution, 1.0).reshape(3, 3)


def apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    out = np.hstack([points, np.ones((len(points), 1))]) @ matrix.T
    return out[:, :2] / out[:, 2:3]


def table(rng: random.Random) -> Image.Image:
    colour = np.asarray([rng.randrange(256) for _ in range(3)], np.float32)
    ys, xs = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / SIZE
    shade = 1 + rng.uniform(-0.3, 0.3) * xs + rng.uniform(-0.3, 0.3) * ys
    pixels = colour[None, None] * shade[..., None]
    pixels += np.random.default_rng(rng.randrange(1 << 30)).normal(0, rng.uniform(1, 10), pixels.shape)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def synthetic_photo(rng: random.Random, index: int = 0) -> Photo:
    """One rendered hand photo with its boxes and classes."""
    canvas = table(rng)
    width = rng.randrange(28, 60)
    height = tile_height(width)
    rows = 1 if rng.random() < 0.7 else 2
    counts = [rng.randrange(8, 19)] + [rng.randrange(3, 15) for _ in range(rows - 1)]
    gap = rng.choice([0, 0, 1, 2, round(width * 0.3)])
    total_w = max(counts) * (width + gap)
    scale = min(1.0, (SIZE * 0.9) / total_w)
    width = max(12, int(width * scale))
    height = tile_height(width)
    x_start = (SIZE - max(counts) * (width + gap)) / 2
    y_start = SIZE / 2 - rows * height / 2 + rng.uniform(-SIZE * 0.2, SIZE * 0.2)
    corners, classes = [], []
    for row, count in enumerate(counts):
        for k in range(count):
            tile = rng.randrange(NUM_KINDS)
            sprite = render_tile(tile, width)
            x = round(x_start + k * (width + gap))
            y = round(y_start + row * (height + rng.randrange(2, 12)))
            canvas.paste(sprite, (x, y), sprite)
            corners.append([[x, y], [x + width, y], [x, y + height], [x + width, y + height]])
            classes.append(tile)
    angle = np.radians(rng.uniform(-35, 35))
    zoom = rng.uniform(0.8, 1.5)
    tilt = rng.uniform(0, 0.25)
    centre = np.asarray([SIZE / 2, SIZE / 2])
    src = np.asarray([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]], float)
    dst = (src - centre) * zoom
    dst[:2, 0] *= 1 - tilt  # far edge narrower: seen from the player's side of the table
    rotation = np.asarray([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    dst = dst @ rotation.T + centre + np.asarray([rng.uniform(-60, 60), rng.uniform(-60, 60)])
    forward = homography(src, dst)
    backward = np.linalg.inv(forward)
    coefficients = (backward / backward[2, 2]).reshape(-1)[:8]
    fill = tuple(int(v) for v in np.asarray(canvas).reshape(-1, 3).mean(axis=0))
    image = canvas.transform((SIZE, SIZE), Image.PERSPECTIVE, tuple(coefficients), Image.BILINEAR, fillcolor=fill)
    boxes = []
    for quad in corners:
        moved = apply(forward, np.asarray(quad, float))
        boxes.append([*moved.min(axis=0), *moved.max(axis=0)])
    whole = np.asarray(boxes, np.float32)
    boxes_arr = np.clip(whole, 0, SIZE)
    area = (whole[:, 2] - whole[:, 0]) * (whole[:, 3] - whole[:, 1])
    visible = (boxes_arr[:, 2] - boxes_arr[:, 0]) * (boxes_arr[:, 3] - boxes_arr[:, 1])
    keep = visible >= 0.6 * area
    pixels = np.asarray(image, np.float32)
    ys, xs = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / SIZE
    light = 1 + rng.uniform(-0.35, 0.35) * (xs - 0.5) + rng.uniform(-0.35, 0.35) * (ys - 0.5)
    pixels = np.clip(pixels * light[..., None], 0, 255).astype(np.uint8)
    image = Image.fromarray(pixels)
    if rng.random() < 0.5:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.5)))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=rng.randrange(40, 95))
    image = Image.open(buffer).convert("RGB")
    return Photo(f"synthetic_{index}", np.asarray(image), boxes_arr[keep], np.asarray(classes, np.int64)[keep])
