"""The second look at unsure tiles: their boxes a little larger and smaller, the readings averaged.

The boxes are worked out by hand; the averaging is checked with the shipped classifier on a
drawn picture, against readings of the scaled boxes made one by one.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from vision.classes import NUM_CLASSES
from vision.classifier import classify_with_orientation, crop_tile
from vision.pipeline import SECOND_LOOK_BELOW, _sessions, scaled_box, second_look

BOUNDS = np.asarray([100, 100, 100, 100], dtype=np.float32)


def test_a_box_grows_and_shrinks_about_its_centre() -> None:
    box = np.asarray([10, 20, 30, 60], dtype=np.float32)  # centre (20, 40), 20 x 40
    assert np.allclose(scaled_box(box, 1.1, BOUNDS), [9, 18, 31, 62])  # 22 x 44
    assert np.allclose(scaled_box(box, 0.9, BOUNDS), [11, 22, 29, 58])  # 18 x 36


def test_a_grown_box_stays_inside_the_photo() -> None:
    box = np.asarray([0, 0, 20, 40], dtype=np.float32)
    assert np.allclose(scaled_box(box, 1.5, BOUNDS), [0, 0, 25, 50])
    corner = np.asarray([90, 80, 100, 100], dtype=np.float32)
    assert np.allclose(scaled_box(corner, 1.5, BOUNDS), [87.5, 75, 100, 100])


def picture() -> tuple[Image.Image, np.ndarray]:
    """Two tile-shaped white blocks with marks on a green cloth, and their boxes."""
    photo = Image.new("RGB", (200, 120), (40, 110, 70))
    draw = ImageDraw.Draw(photo)
    boxes = np.asarray([[30, 20, 78, 84], [110, 24, 156, 86]], dtype=np.float32)
    for x0, y0, x1, y1 in boxes:
        draw.rectangle((x0, y0, x1, y1), fill=(240, 236, 225))
        draw.ellipse((x0 + 10, y0 + 16, x1 - 10, y1 - 16), outline=(30, 60, 160), width=4)
    return photo, boxes


def test_only_unsure_tiles_are_read_again_and_averaged() -> None:
    _, classifier = _sessions()
    photo, boxes = picture()
    sure, unsure = np.full(NUM_CLASSES, 0.05 / (NUM_CLASSES - 1)), np.full(NUM_CLASSES, 0.5 / (NUM_CLASSES - 1))
    sure[3], unsure[4] = 0.95, 0.5
    assert sure.max() >= SECOND_LOOK_BELOW > unsure.max()
    given = np.stack([sure, unsure])

    result = second_look(classifier, photo, boxes, given)

    assert np.array_equal(result[0], sure)
    bounds = np.asarray([photo.width, photo.height] * 2, dtype=np.float32)
    larger = classify_with_orientation(classifier, crop_tile(photo, scaled_box(boxes[1], 1.1, bounds))[None])[0][0]
    smaller = classify_with_orientation(classifier, crop_tile(photo, scaled_box(boxes[1], 0.92, bounds))[None])[0][0]
    assert np.allclose(result[1], (unsure + larger + smaller) / 3, atol=1e-5)
    assert np.isclose(result[1].sum(), 1.0, atol=1e-5)
    assert np.array_equal(given[1], unsure), "the readings given are not changed in place"


def test_nothing_is_read_again_when_every_tile_is_sure() -> None:
    _, classifier = _sessions()
    photo, boxes = picture()
    sure = np.zeros((2, NUM_CLASSES))
    sure[:, 7] = 1.0
    assert second_look(classifier, photo, boxes, sure) is sure
