"""Photo bytes in, the suited tiles of the hand out, in reading order with a confidence each.

The two ONNX models ship in ``vision/models`` and are loaded once per process, on first use.
They run on one thread: a photo takes well under a second, and the bot serves many chats on a
small machine where parallelism across requests matters more than within one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

from engine.tiles import Tile, tile_name
from vision.classes import NOT_SUITED
from vision.classifier import classify_with_orientation, crop_along_row, crop_tile, is_sideways
from vision.detector import Detections, detect, squashed_look, stretch
from vision.errors import VisionError
from vision.image import decode_image
from vision.layout import (
    hand_members,
    long_sides,
    longest_run,
    one_box_per_tile,
    reading_order,
    row_slant,
    steps_within_suits,
    turn_boxes,
    upright_turns,
)

MODELS = Path(__file__).resolve().parent / "models"
LOW_CONFIDENCE = 0.8
ALTERNATIVES = 3  # other suited tiles kept per tile, for the reading that wins
# A tile read less surely than this is read again from its box a little larger and a little
# smaller, and the three readings averaged: a box cut tight or loose on a tile of an unfamiliar
# design is where the classifier wavers. Only those tiles: averaging every tile tripled the
# classifier's time for the same gain.
SECOND_LOOK_BELOW = 0.9
SECOND_LOOK_SCALES = (1.1, 0.92)
# The tiles vote on which way up the picture is (``upright_turns``); when their mean top is
# shorter than SURE_TURN, a reading that falls within its suits by SORTED_STEPS or more, where the
# picture half turned rises by as much, was read from the wrong side: people sort the tiles they
# hold from 1 up to 9. Chosen on the tuning check and the hold-out photos (docs/vision-history.md).
SURE_TURN = 0.7
SORTED_STEPS = 4
# On scenes of designs training never saw, hands whose tiles are at least this long (in pixels)
# were read whole 84% of the time, shorter ones 35% (the tuning check, where the break was
# chosen; the unseen set then: 82% and 44%): a closer photo helps.
SMALL_TILE_LENGTH = 50
SMALL_ROW = 5  # boxes in a row, at least, for an unreadable photo to be taken for a hand of small tiles
ROW_SHARE = 0.35  # ... and the share of all boxes found that the row holds, at least (noise: under 0.2)
# A photo of something else (a cat, a page, a receipt) may show a few blobs the classifier half
# takes for tiles; a hand photo shows tiles, most of them read surely. Suited tiles that are every
# one of them below LOW_CONFIDENCE are taken for no tiles at all.


@dataclass(frozen=True)
class RecognizedTile:
    """One suited tile found: what it is, how sure the classifier is, where it is, which row."""

    tile: Tile
    confidence: float
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in the photo's pixels (after EXIF turn)
    row: int
    # The next suited tiles the classifier saw in it, most probable first (``vision.win_reading``).
    alternatives: tuple[tuple[Tile, float], ...] = ()

    @property
    def name(self) -> str:
        return tile_name(self.tile)

    @property
    def low_confidence(self) -> bool:
        return self.confidence < LOW_CONFIDENCE


@dataclass(frozen=True)
class Recognition:
    """The suited tiles of a photo in reading order; ``ignored`` counts other tiles seen (winds...)."""

    tiles: tuple[RecognizedTile, ...]
    ignored: int
    width: int
    height: int

    @property
    def tile_list(self) -> list[Tile]:
        return [t.tile for t in self.tiles]

    @property
    def names(self) -> list[str]:
        return [tile_name(t.tile) for t in self.tiles]

    @property
    def confidences(self) -> list[float]:
        return [t.confidence for t in self.tiles]

    @property
    def tile_length(self) -> float:
        """The median tile's long side in the photo's pixels (0 with no tiles): tiles much under
        SMALL_TILE_LENGTH are read markedly worse, whatever the design (docs/vision.md)."""
        if not self.tiles:
            return 0.0
        return float(np.median(long_sides(np.asarray([t.box for t in self.tiles]))))

    @property
    def small_tiles(self) -> bool:
        """Whether the tiles are short enough in the photo that a closer photo would read better."""
        return 0 < self.tile_length < SMALL_TILE_LENGTH

    def to_dict(self) -> dict:
        return {
            "tiles": self.names,
            "confidence": [round(c, 3) for c in self.confidences],
            "boxes": [[round(v, 1) for v in t.box] for t in self.tiles],
            "rows": [t.row for t in self.tiles],
            "ignored": self.ignored,
        }


@lru_cache(maxsize=1)
def _sessions() -> tuple[object, object]:
    """The detector and classifier sessions (onnxruntime is imported here, on first use only)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    providers = ["CPUExecutionProvider"]
    detector = onnxruntime.InferenceSession(str(MODELS / "detector.onnx"), options, providers=providers)
    classifier = onnxruntime.InferenceSession(str(MODELS / "classifier.onnx"), options, providers=providers)
    return detector, classifier


def recognize_pixels(image: np.ndarray) -> Recognition:
    """Recognise the tiles in an H x W x 3 uint8 RGB array (see ``recognize``).

    A photo squashed to a square after it was taken is looked at again stretched back
    (``squashed_look``), where its tiles have their true shape. That reading replaces the first only
    when the two agree on which way up the row is: the upright/upside-down output is weak, and on
    squashed tiles even weaker, so a second look that would turn the row round is not trusted
    (it read a held-out photo backwards).
    """
    detector, classifier = _sessions()
    height, width = image.shape[:2]
    found = detect(detector, image)
    try:
        reading, problem = _read(classifier, image, found), None
    except VisionError as error:
        reading, problem = None, error
    second = squashed_look(detector, image, found)
    if second is not None:
        try:
            again = _read(classifier, image, second)
        except VisionError:
            again = None
        if again is not None and again.turns == (reading.turns if reading is not None else 0):
            reading = again
    if reading is None:
        raise problem
    return Recognition(reading.tiles, ignored=reading.ignored, width=width, height=height)


@dataclass(frozen=True)
class _Reading:
    """One look's suited tiles in reading order, the other tiles it saw, and its quarter turns."""

    tiles: tuple[RecognizedTile, ...]
    ignored: int
    turns: int


def _read(classifier, image: np.ndarray, found: Detections) -> _Reading:
    """Classify the boxes of one look and put the suited tiles of the hand in reading order.

    Tiles are cut out and laid out in the photo as that look saw it (stretched back for a squashed
    photo); the boxes returned are in the photo's own pixels.
    """
    if len(found.boxes) == 0:
        raise VisionError("no_tiles", "no mahjong tiles were found in the photo")
    widen = np.asarray([found.widen, 1.0] * 2, dtype=np.float32)
    work = image if found.widen == 1.0 else stretch(image, found.widen)
    all_boxes = found.boxes * widen
    photo = Image.fromarray(work)
    crops = np.stack([crop_tile(photo, box) for box in all_boxes])
    probabilities, upright = classify_with_orientation(classifier, crops)
    members = hand_members(all_boxes)
    probabilities = along_the_row(classifier, photo, all_boxes, members, probabilities)
    probabilities = second_look(classifier, photo, all_boxes, probabilities)
    classes = probabilities.argmax(axis=1)
    suited = np.nonzero((classes != NOT_SUITED) & one_box_per_tile(all_boxes, members))[0]
    if len(suited) == 0:
        raise _unread(all_boxes, f"{len(found.boxes)} tiles were found but none is a suited tile (万, 筒 or 条)")
    if probabilities[suited, classes[suited]].max() < LOW_CONFIDENCE:
        raise _unread(all_boxes, f"only {len(suited)} unsure tile(s) were found: this does not look like a hand")
    boxes = all_boxes[suited]
    tops = np.stack([tile_top(box, p) for box, p in zip(boxes, upright[suited], strict=True)])
    turns, order = _turn_and_order(tops, boxes, classes[suited], work.shape[1], work.shape[0])
    tiles = tuple(
        RecognizedTile(
            tile=int(classes[suited[i]]),
            confidence=float(probabilities[suited[i], classes[suited[i]]]),
            box=tuple(float(v) for v in boxes[i] / widen),
            row=row,
            alternatives=_alternatives(probabilities[suited[i]], int(classes[suited[i]])),
        )
        for i, row in order
    )
    return _Reading(tiles, ignored=len(found.boxes) - len(suited), turns=turns)


def _turn_and_order(tops: np.ndarray, boxes: np.ndarray, classes: np.ndarray, width: int,
                    height: int) -> tuple[int, list[tuple[int, int]]]:
    """The quarter turns that stand the tiles upright, and the reading order after them; half a
    turn more when the tiles' vote is unsure and the hand reads sorted downwards (see SURE_TURN)."""
    turns = upright_turns(tops)
    order = reading_order(turn_boxes(boxes, turns, width, height))
    if float(np.hypot(*tops.mean(axis=0))) >= SURE_TURN:
        return turns, order
    other = reading_order(turn_boxes(boxes, (turns + 2) % 4, width, height))
    if (steps_within_suits([int(classes[i]) for i, _ in order]) <= -SORTED_STEPS
            and steps_within_suits([int(classes[i]) for i, _ in other]) >= SORTED_STEPS):
        return (turns + 2) % 4, other
    return turns, order


def along_the_row(classifier, photo: Image.Image, boxes: np.ndarray, members: np.ndarray,
                  probabilities: np.ndarray) -> np.ndarray:
    """``probabilities`` with the hand's tiles read again from crops cut along their row, when
    the row runs at a slant (``vision.layout.row_slant``); otherwise ``probabilities`` itself.

    The new reading replaces the first: on scenes of designs kept out of training and on the
    held-out training photos it read more hands right than the boxes' crops did, alone or
    averaged with them (docs/vision-history.md, eleventh session). Which way up each tile stands is
    still judged from the first crops, in the picture's own frame.
    """
    slant = row_slant(boxes, members)
    if slant is None:
        return probabilities
    chosen = np.nonzero(members)[0]
    crops = np.stack([crop_along_row(photo, boxes[i], slant.angle, slant.pitch) for i in chosen])
    again = probabilities.copy()
    again[chosen] = classify_with_orientation(classifier, crops)[0]
    return again


def second_look(classifier, photo: Image.Image, boxes: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """``probabilities`` with each unsure tile's replaced by the mean of its readings at its box
    and at its box scaled by each of ``SECOND_LOOK_SCALES`` (see ``SECOND_LOOK_BELOW``)."""
    unsure = np.nonzero(probabilities.max(axis=1) < SECOND_LOOK_BELOW)[0]
    if len(unsure) == 0:
        return probabilities
    bounds = np.asarray([photo.width, photo.height] * 2, dtype=np.float32)
    crops = np.stack([crop_tile(photo, scaled_box(boxes[i], scale, bounds))
                      for scale in SECOND_LOOK_SCALES for i in unsure])
    again = classify_with_orientation(classifier, crops)[0].reshape(len(SECOND_LOOK_SCALES), len(unsure), -1)
    averaged = probabilities.copy()
    averaged[unsure] = (probabilities[unsure] + again.sum(axis=0)) / (1 + len(SECOND_LOOK_SCALES))
    return averaged


def scaled_box(box: np.ndarray, scale: float, bounds: np.ndarray) -> np.ndarray:
    """``box`` grown (or shrunk) by ``scale`` about its centre, kept inside the photo (``bounds``:
    width, height, width, height)."""
    centre = np.asarray([box[0] + box[2], box[1] + box[3]] * 2, dtype=np.float32) / 2
    return np.clip(centre + (np.asarray(box, dtype=np.float32) - centre) * scale, 0, bounds)


def _alternatives(probabilities: np.ndarray, chosen: int) -> tuple[tuple[Tile, float], ...]:
    """The ``ALTERNATIVES`` most probable suited tiles after ``chosen``, with their probabilities."""
    order = np.argsort(probabilities[:NOT_SUITED])[::-1]
    return tuple((int(t), float(probabilities[t])) for t in order if t != chosen)[:ALTERNATIVES]


def tile_top(box: np.ndarray, upright: float) -> np.ndarray:
    """Which way the top of a tile points in the photo, scaled by how sure the classifier is.

    An upright crop of a box standing up has its top up; a sideways box was turned a quarter
    counter-clockwise for the classifier, so an upright crop there means the top points right.
    """
    sureness = 2 * upright - 1  # +1 upright, -1 upside down, 0 unknown
    return np.asarray([sureness, 0.0]) if is_sideways(box) else np.asarray([0.0, -sureness])


def _unread(boxes: np.ndarray, why: str) -> VisionError:
    """The error for boxes found but none read as a hand. When their longest run of tiles side by
    side (``longest_run``) holds at least SMALL_ROW boxes and at least ROW_SHARE of all of them,
    and its tiles are small, small tiles are the likely cause: on the tuning check every hand photo
    that failed so had tiles 14-39 px long, in runs of 5 to 18 holding 56% or more of the boxes. A
    person told "no tiles" would not think of taking the photo closer, so then the code is
    ``too_small``. A photo of something else shows blobs, not rows: drawn cats have 3 or 4 boxes in
    their longest run, and in noise, gravel or a patterned cloth the detector finds boxes all over
    the picture, at most a fifth of them in the longest run."""
    run = longest_run(boxes)
    length = float(np.median(long_sides(boxes[run]))) if len(run) else 0.0
    if len(run) >= max(SMALL_ROW, ROW_SHARE * len(boxes)) and length < SMALL_TILE_LENGTH:
        return VisionError("too_small", f"{why}; they are about {length:.0f} px long, too small to read",
                           px=round(length))
    return VisionError("no_tiles", why)


def recognize(image_bytes: bytes) -> Recognition:
    """Recognise the suited tiles in a photo (JPEG, PNG, WebP... as bytes).

    Raises VisionError with code ``not_an_image``, ``too_large``, ``too_many_pixels``, ``no_tiles``
    or ``too_small``. Nothing of the photo is kept after the call returns.
    """
    return recognize_pixels(decode_image(image_bytes))
