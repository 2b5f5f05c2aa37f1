"""How well ``vision.recognize`` reads photos it never trained on.

    python benchmarks/vision.py                    # CMD test (hand rows, all) and the unseen designs
    python benchmarks/vision.py --set cmd-test     # only ../shared/vision/cmd/test (evaluation only)
    python benchmarks/vision.py --set unseen       # only the unseen-designs validation set
    python benchmarks/vision.py --set fresh        # only the fresh-designs check (eighth session)
    python benchmarks/vision.py --set wins         # only winning hands of the unseen designs
    python benchmarks/vision.py --set riichi       # only the riichi check (tenth session)
    python benchmarks/vision.py --set tuning       # only the tuning check (eleventh session)
    python benchmarks/vision.py --set tuning-wins  # only winning hands of the tuning designs
    python benchmarks/vision.py --data DIR         # any YOLO folder with ../classes.json

Photo sets:
- **CMD test, hand rows** and **CMD test, all**: ``../shared/vision/cmd/test``, never used for
  training or choosing settings. A hand-row photo is one whose labels hold 11 to 18 tiles that the
  reading-order rule puts in one or two rows (the rule reads the labels only).
- **unseen designs**: 120 scenes rendered from a fixed seed (``scripts/vision_scenes.unseen_photos``)
  of tile designs training never sees: FluffyStuff Black and the procedural designs
  ``UNSEEN_DESIGNS`` of ``scripts/vision_designs.py``. Hands only (one or two rows, melds apart,
  tight crops, any angle, upside down), so "the whole hand" is every suited tile in the picture.
- **fresh designs** (only with ``--set fresh``): 90 scenes made the same way from the procedural
  designs ``FRESH_DESIGNS`` (seeds 5000-5008), also never trained on; a second check of new designs
  so that models are not chosen on the unseen set alone.
- **riichi check** (only with ``--set riichi``): 60 hands of FluffyStuff Black, never trained on,
  composed as real riichi sets are (the art at its own size on the tile, sides and backs of
  several kinds, red fives in half of them; ``vision_designs.riichi_look``, seed ``RIICHI_SEED``).
- **tuning check** (only with ``--set tuning``): 360 scenes made the same way from three groups
  of twelve procedural designs ``TUNING_DESIGNS`` (seeds 7000-7011, 7100-7111, 7200-7211), never
  trained on; ``--set tuning-wins``: 360 winning hands of the same designs, composed as the
  winning hands below. Run-time settings are chosen on these and on the hold-out photos, so
  that the unseen and fresh figures stay a measurement, not a target.
- **unseen designs, winning hands**: 120 scenes of the unseen designs (seed ``WINS_SEED``), each a
  winning hand photographed to be scored (14 tiles, 15-16 with kongs, sorted, the winning tile
  last). Scored twice: as read, and with the reading that wins (``vision.win_reading``) that the
  photo-scoring flow proposes when the hand as read is no win.

For each set:
- per-tile precision and recall: a recognised suited tile is right when its box overlaps a
  labelled suited tile of the same kind with IoU >= 0.5 (one-to-one, best overlap first);
- suited tiles located at all (IoU >= 0.5, any kind): which stage misses;
- whole-hand exact: the recognised tiles in reading order equal the labelled suited tiles in
  reading order (rendered scenes: as the player holding them sees them);
- a per-suit confusion table (labelled suit by recognised suit, "missed", "extra");
- calibration: how often tiles reported at each confidence are right, and the share right
  among those at confidence >= 0.9 (the target is at least 0.97);
- seconds per photo (bytes in, tiles out, one thread), mean and worst.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import vision.detector  # noqa: E402
import vision.pipeline  # noqa: E402
from vision import VisionError, recognize  # noqa: E402
from vision.classes import NOT_SUITED, class_of_notation  # noqa: E402
from vision.detector import iou_matrix  # noqa: E402
from vision.layout import reading_order, turn_boxes, upright_turns  # noqa: E402
from vision.win_reading import winning_reading  # noqa: E402

CMD_TEST = ROOT.parent / "shared" / "vision" / "cmd" / "test"
MIN_IOU = 0.5
SUITS = ["m", "p", "s", "other"]
BINS = [0.0, 0.5, 0.8, 0.9, 0.97, 1.0001]


@dataclass
class Sample:
    name: str
    data: bytes
    boxes: np.ndarray
    classes: np.ndarray
    expected: list[int]  # the suited tiles in reading order


@dataclass
class Tally:
    photos: int = 0
    predicted: int = 0
    labelled: int = 0
    right: int = 0
    found: int = 0
    exact_hands: int = 0
    no_tiles: int = 0
    seconds: list[float] = field(default_factory=list)
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((5, 5), dtype=int))
    confidence: list[tuple[float, bool]] = field(default_factory=list)
    changed_hands: int = 0  # readings the reading that wins changed (win sets only)
    changed_right: int = 0  # ... and that are then the whole hand exactly

    def summary(self) -> dict:
        sure = [right for c, right in self.confidence if c >= 0.9]
        return {
            "photos": self.photos,
            "precision": self.right / max(self.predicted, 1),
            "recall": self.right / max(self.labelled, 1),
            "located": self.found / max(self.labelled, 1),
            "exact": self.exact_hands / max(self.photos, 1),
            "exact_count": self.exact_hands,
            "sure_right": sum(sure) / max(len(sure), 1),
            "sure_count": len(sure),
            "sure_share": len(sure) / max(len(self.confidence), 1),
            "no_tiles": self.no_tiles,
            "seconds_mean": float(np.mean(self.seconds)) if self.seconds else math.nan,
            "seconds_max": float(np.max(self.seconds)) if self.seconds else math.nan,
            "changed_hands": self.changed_hands,
            "changed_right": self.changed_right,
        }

    def report(self, name: str) -> str:
        s = self.summary()
        lines = [
            f"## {name}: {s['photos']} photos",
            f"tiles: precision {s['precision']:.3f}  recall {s['recall']:.3f}  | suited tiles located "
            f"{s['located']:.3f}  | whole hand exact {s['exact_count']}/{s['photos']} = {s['exact']:.3f}"
            f"  | no_tiles {s['no_tiles']}  | s/photo mean {s['seconds_mean']:.3f} max {s['seconds_max']:.3f}",
            f"confidence >= 0.9: {s['sure_count']} tiles ({s['sure_share']:.0%} of those reported), "
            f"right {s['sure_right']:.3f}",
            "calibration (confidence bin: tiles, share right): "
            + "; ".join(self._bin(lo, hi) for lo, hi in itertools.pairwise(BINS)),
            "confusion (rows: labelled; columns: recognised m p s | missed):",
        ]
        if self.changed_hands:
            lines.insert(1, f"the reading that wins changed {self.changed_hands} hands: {self.changed_right} of them "
                            f"are then exact, {self.changed_hands - self.changed_right} not (their changed tiles "
                            "count at confidence 0)")
        rows = [*SUITS, "extra"]
        for r, row_name in enumerate(rows):
            cells = self.confusion[r]
            lines.append(f"  {row_name:>6}: " + " ".join(f"{v:5d}" for v in cells[:3]) + f" | {cells[4]:5d}")
        return "\n".join(lines)

    def _bin(self, lo: float, hi: float) -> str:
        inside = [right for c, right in self.confidence if lo <= c < hi]
        return f"[{lo:.2f},{min(hi, 1):.2f}) {len(inside)}, {sum(inside) / max(len(inside), 1):.3f}"


def suit_index(tile: int) -> int:
    return 3 if tile == NOT_SUITED else tile // 9


def pairs(a: np.ndarray, b: np.ndarray, same: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Greedy one-to-one matching of boxes, best IoU first (and agreeing on the class if ``same``)."""
    if len(a) == 0 or len(b) == 0:
        return []
    overlaps = iou_matrix(a, b) * (1.0 if same is None else same)
    found = []
    while True:
        i, j = np.unravel_index(np.argmax(overlaps), overlaps.shape)
        if overlaps[i, j] < MIN_IOU:
            return found
        found.append((int(i), int(j)))
        overlaps[i, :] = 0
        overlaps[:, j] = 0


def read_labels(path: Path, mapping: dict[str, str], width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    boxes, classes = [], []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 5:
            cx, cy, w, h = (float(v) for v in parts[1:])
            boxes.append([(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height])
            classes.append(class_of_notation(mapping[parts[0]]))
    return np.asarray(boxes, dtype=np.float32).reshape(-1, 4), np.asarray(classes, dtype=np.int64)


def is_hand_row(boxes: np.ndarray) -> bool:
    return 11 <= len(boxes) <= 18 and max(row for _, row in reading_order(boxes)) <= 1


def yolo_samples(folder: Path) -> Iterator[tuple[Sample, bool]]:
    """Labelled photos of a YOLO folder, and whether each is a hand-row photo."""
    from PIL import Image

    mapping = json.loads((folder.parent / "classes.json").read_text())["tile_by_class_id"]
    for image_path in sorted((folder / "images").glob("*.jpg")):
        with Image.open(image_path) as image:
            width, height = image.size
        boxes, classes = read_labels(folder / "labels" / f"{image_path.stem}.txt", mapping, width, height)
        suited = classes != NOT_SUITED
        expected = [int(classes[suited][i]) for i, _ in reading_order(boxes[suited])]
        yield Sample(image_path.stem, image_path.read_bytes(), boxes, classes, expected), is_hand_row(boxes)


def unseen_samples(which: str = "unseen") -> Iterator[Sample]:
    """The unseen-designs set (``fresh``: the fresh-designs check; ``wins``: winning hands of the
    unseen designs; ``riichi``: the riichi check; ``tuning``: the tuning check), rendered in
    memory from its fixed seed (never written to disk)."""
    from PIL import Image
    from vision_scenes import (
        fresh_photos,
        riichi_photos,
        tuning_photos,
        tuning_winning_photos,
        unseen_photos,
        winning_photos,
    )

    sets = {"unseen": unseen_photos, "fresh": fresh_photos, "wins": winning_photos, "riichi": riichi_photos,
            "tuning": tuning_photos, "tuning-wins": tuning_winning_photos}
    for photo in sets[which]():
        buffer = io.BytesIO()
        Image.fromarray(photo.image).save(buffer, "JPEG", quality=92)
        suited = photo.classes != NOT_SUITED
        ups = np.stack([np.cos(photo.ups[suited]), np.sin(photo.ups[suited])], axis=1)
        height, width = photo.image.shape[:2]
        upright = turn_boxes(photo.boxes[suited], upright_turns(ups), width, height)
        expected = [int(photo.classes[suited][i]) for i, _ in reading_order(upright)]
        yield Sample(photo.name, buffer.getvalue(), photo.boxes, photo.classes, expected)


def score(sample: Sample, tallies: list[Tally], verbose: bool, win_tallies: list[Tally] | None = None) -> None:
    """Recognise one photo and add it to ``tallies``; with ``win_tallies``, also add the reading
    that wins (``vision.win_reading``) to those, as the photo-scoring flow proposes it."""
    start = time.perf_counter()
    try:
        result = recognize(sample.data)
        pred_boxes = np.asarray([t.box for t in result.tiles], dtype=np.float32).reshape(-1, 4)
        pred_classes = np.asarray(result.tile_list, dtype=np.int64)
        confidences = np.asarray(result.confidences, dtype=np.float64)
    except VisionError:
        result = None
        pred_boxes, pred_classes, confidences = np.zeros((0, 4), np.float32), np.zeros(0, np.int64), np.zeros(0)
    seconds = time.perf_counter() - start
    exact, right = add_reading(sample, tallies, pred_boxes, pred_classes, confidences, seconds, result is None)
    mark = "=" if exact else "x"
    counts = f"{right:2d}/{int((sample.classes != NOT_SUITED).sum()):2d} pred {len(pred_boxes):2d}"
    if win_tallies is not None:
        found = winning_reading(result.tiles) if result is not None else None
        if found is not None:
            pred_classes = np.asarray(found.tiles, dtype=np.int64)
            confidences = confidences.copy()
            confidences[list(found.changed)] = 0.0  # the player is asked to check them
            for tally in win_tallies:
                tally.changed_hands += 1
        exact_after, _ = add_reading(sample, win_tallies, pred_boxes, pred_classes, confidences, seconds,
                                     result is None)
        if found is not None:
            for tally in win_tallies:
                tally.changed_right += exact_after
            mark += "=" if exact_after else "x"
    if verbose:
        print(f"{mark} {counts} {sample.name[:40]}")


def add_reading(sample: Sample, tallies: list[Tally], pred_boxes: np.ndarray, pred_classes: np.ndarray,
                confidences: np.ndarray, seconds: float, no_tiles: bool) -> tuple[bool, int]:
    """Count one reading of a photo in ``tallies``; whether it is the whole hand exactly, and how
    many of its tiles are right."""
    suited = sample.classes != NOT_SUITED
    same = pred_classes[:, None] == sample.classes[suited][None, :]
    right_pairs = pairs(pred_boxes, sample.boxes[suited], same)
    right_preds = {i for i, _ in right_pairs}
    located = pairs(pred_boxes, sample.boxes[suited])
    any_pairs = pairs(pred_boxes, sample.boxes)
    exact = pred_classes.tolist() == sample.expected
    confusion = np.zeros((5, 5), dtype=int)
    matched_preds = {i for i, _ in any_pairs}
    matched_labels = {j for _, j in any_pairs}
    for i, j in any_pairs:
        confusion[suit_index(int(sample.classes[j])), suit_index(int(pred_classes[i]))] += 1
    for j in range(len(sample.classes)):
        if j not in matched_labels and sample.classes[j] != NOT_SUITED:
            confusion[suit_index(int(sample.classes[j])), 4] += 1
    for i in range(len(pred_classes)):
        if i not in matched_preds:
            confusion[4, suit_index(int(pred_classes[i]))] += 1
    for tally in tallies:
        tally.photos += 1
        tally.predicted += len(pred_boxes)
        tally.labelled += int(suited.sum())
        tally.right += len(right_pairs)
        tally.found += len(located)
        tally.exact_hands += exact
        tally.no_tiles += no_tiles
        tally.seconds.append(seconds)
        tally.confusion += confusion
        tally.confidence.extend((float(c), i in right_preds) for i, c in enumerate(confidences))
    return exact, len(right_pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="all",
                        choices=["all", "cmd-test", "unseen", "fresh", "wins", "riichi", "tuning", "tuning-wins"])
    parser.add_argument("--data", type=Path, default=None, help="a YOLO folder to use instead of CMD test")
    parser.add_argument("--models", type=Path, default=None, help="a folder of candidate ONNX models")
    parser.add_argument("--threshold", type=float, default=None, help="detector peak threshold to try")
    parser.add_argument("--json", type=Path, default=None, help="also write the summaries here")
    parser.add_argument("--verbose", action="store_true", help="one line per photo")
    args = parser.parse_args()
    if args.models is not None:
        vision.pipeline.MODELS = args.models
    if args.threshold is not None:
        vision.detector.PEAK_THRESHOLD = args.threshold
    from PIL import Image

    blank = io.BytesIO()
    Image.new("RGB", (64, 64)).save(blank, "PNG")
    with contextlib.suppress(VisionError):
        recognize(blank.getvalue())  # load the models untimed
    results: dict[str, Tally] = {}
    if args.set in ("all", "cmd-test"):
        folder = args.data or CMD_TEST
        if not folder.is_dir():
            print(f"skipping CMD test: {folder} is missing")
        else:
            hand, everything = Tally(), Tally()
            for sample, is_hand in yolo_samples(folder):
                score(sample, [everything, hand] if is_hand else [everything], args.verbose)
            results["CMD test, hand rows"] = hand
            results["CMD test, all"] = everything
    if args.set in ("all", "unseen"):
        unseen = Tally()
        for sample in unseen_samples():
            score(sample, [unseen], args.verbose)
        results["unseen designs"] = unseen
    checks_alone = {"fresh": "fresh designs", "riichi": "riichi looks of an unseen design",
                    "tuning": "tuning designs"}  # only when asked for
    if args.set in checks_alone:
        tally = Tally()
        for sample in unseen_samples(args.set):
            score(sample, [tally], args.verbose)
        results[checks_alone[args.set]] = tally
    winning_sets = {"wins": "unseen designs, winning hands", "tuning-wins": "tuning designs, winning hands"}
    for which, name in winning_sets.items():
        if args.set == which or (args.set == "all" and which == "wins"):
            read, settled = Tally(), Tally()
            for sample in unseen_samples(which):
                score(sample, [read], args.verbose, [settled])
            results[f"{name}, as read"] = read
            results[f"{name}, with the reading that wins"] = settled
    for name, tally in results.items():
        print(tally.report(name))
        print()
    if args.json:
        args.json.write_text(json.dumps({name: t.summary() for name, t in results.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
