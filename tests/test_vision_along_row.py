"""Tiles of a slanted row are cut along the row, not from their upright boxes.

The geometry is worked out by hand on drawn pictures; the last test reads a slanted row of a
training design's tiles with the shipped classifier, both ways.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from drawn_photos import turned_row
from PIL import Image, ImageDraw

from vision.classes import NUM_CLASSES
from vision.classifier import classify_with_orientation, crop_along_row, crop_tile
from vision.layout import LEVEL_DEGREES, row_slant
from vision.pipeline import _sessions, along_the_row

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from vision_designs import make_design, sprite


def marked_tile(top: tuple[int, int, int], bottom: tuple[int, int, int]) -> Image.Image:
    tile = Image.new("RGBA", (40, 56), (*top, 255))
    ImageDraw.Draw(tile).rectangle((0, 28, 39, 55), fill=(*bottom, 255))
    return tile


def test_a_level_row_or_too_few_tiles_have_no_slant() -> None:
    level = np.asarray([[0, 0, 10, 14], [10, 1, 20, 15], [20, 2, 30, 16], [30, 2, 40, 16]], dtype=float)
    assert np.degrees(np.arctan2(2, 30)) < LEVEL_DEGREES
    assert row_slant(level, np.ones(4, dtype=bool)) is None
    assert row_slant(level, np.asarray([True, True, False, False])) is None


def test_a_heap_of_tiles_is_not_cut_along_rows() -> None:
    """Six tiles lying about (a heap of discards): the mean direction to their nearest neighbours
    is 42 degrees, but only one of the six has its neighbour within 20 degrees of it."""
    centres = np.asarray([[0, 0], [12, 20], [30, 14], [28, 40], [50, 30], [55, 55]], dtype=float)
    half = np.asarray([5.0, 7.0])  # a tile 10 x 14
    boxes = np.concatenate([centres - half, centres + half], axis=1)
    assert row_slant(boxes, np.ones(6, dtype=bool)) is None


def test_a_slanted_row_gives_its_angle_and_the_tile_width() -> None:
    tiles = [marked_tile((200, 30, 30), (30, 30, 200)) for _ in range(6)]
    _, boxes = turned_row(tiles, 25, 40)
    members = np.ones(6, dtype=bool)
    slant = row_slant(boxes, members)
    assert slant is not None
    # Turned counter-clockwise on the screen, the row climbs to the right: y falls as x grows.
    assert np.isclose(np.degrees(slant.angle), -25, atol=0.5)
    assert np.isclose(slant.pitch, 40, atol=0.5)
    # Each upright box is wider than the tile: 40 cos 25 + 56 sin 25 = 59.9.
    assert np.allclose(boxes[:, 2] - boxes[:, 0], 59.9, atol=0.2)


def test_a_tile_cut_along_its_row_holds_only_itself() -> None:
    colours = [((200, 30, 30), (30, 30, 200)), ((240, 240, 60), (250, 250, 250))]
    tiles = [marked_tile(*colours[index % 2]) for index in range(5)]
    picture, boxes = turned_row(tiles, 30, 40)
    slant = row_slant(boxes, np.ones(5, dtype=bool))
    assert slant is not None

    along = crop_along_row(picture, boxes[2], slant.angle, slant.pitch).astype(float)
    upright = crop_tile(picture, boxes[2]).astype(float)

    top, bottom = along[8:28, 8:-8].mean(axis=(0, 1)), along[36:56, 8:-8].mean(axis=(0, 1))
    assert np.allclose(top, (200, 30, 30), atol=12) and np.allclose(bottom, (30, 30, 200), atol=12)
    # The upright box's corners hold the cloth and the neighbours' yellow and white.
    assert np.abs(upright[:8, :8].mean(axis=(0, 1)) - (200, 30, 30)).max() > 60


def test_only_the_hand_is_read_again_and_only_when_its_row_is_slanted() -> None:
    _, classifier = _sessions()
    tiles = [marked_tile((200, 30, 30), (30, 30, 200)) for _ in range(5)]
    picture, boxes = turned_row(tiles, 20, 40)
    given = np.full((5, NUM_CLASSES), 1 / NUM_CLASSES)
    members = np.asarray([True, True, True, True, False])

    again = along_the_row(classifier, picture, boxes, members, given)

    assert np.array_equal(again[4], given[4]) and not np.allclose(again[:4], given[:4])
    assert np.allclose(again.sum(axis=1), 1.0, atol=1e-5)
    level_picture, level_boxes = turned_row(tiles, 0, 40)
    assert along_the_row(classifier, level_picture, level_boxes, members, given) is given


def test_a_slanted_row_of_a_training_design_reads_right_along_the_row() -> None:
    """Cut from their upright boxes, tiles of a row slanted by 40 degrees are read with parts of
    their neighbours; cut along the row, each is read as itself."""
    _, classifier = _sessions()
    faces = [0, 4, 8, 9, 13, 17, 18, 22, 26, 12]  # 1m 5m 9m 1p 5p 9p 1s 5s 9s 4p
    design = make_design(20)
    picture, boxes = turned_row([sprite(design, face) for face in faces], 40, 64)
    slant = row_slant(boxes, np.ones(len(faces), dtype=bool))
    assert slant is not None

    along = classify_with_orientation(classifier, np.stack(
        [crop_along_row(picture, box, slant.angle, slant.pitch) for box in boxes]))[0]
    upright = classify_with_orientation(classifier, np.stack([crop_tile(picture, box) for box in boxes]))[0]

    assert along.argmax(axis=1).tolist() == faces
    rows = np.arange(len(faces))
    assert along[rows, faces].mean() > upright[rows, faces].mean()
