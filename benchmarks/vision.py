"""How well ``vision.recognize`` reads photos it never saw: the evaluation half of the data set.

    python benchmarks/vision.py                 # ../shared/vision/cmd/test (evaluation only)
    python benchmarks/vision.py --data DIR      # any YOLO folder with ../classes.json

For two sets of photos — "hand-row" photos and all photos — it prints:
- per-tile precision and recall: a recognised suited tile counts as right when its box overlaps
  a labelled suited tile of the same kind with IoU >= 0.5 (each label used once, best overlap first);
- the same for finding tiles regardless of kind (diagnoses which stage misses);
- whole-hand exact: the recognised suited tiles in reading order equal the labelled suited tiles
  put in reading order by the same rule (vision/layout.py);
- seconds per photo (bytes in, tiles out, one thread), mean and worst.

A hand-row photo is one whose labels hold 11 to 18 tiles (a Sichuan hand is 13 or 14 tiles,
up to 18 with kongs) that the reading-order rule puts in one or two rows. The rule looks at the
labels only, never at what the recogniser found.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vision.detector  # noqa: E402
import vision.pipeline  # noqa: E402
from vision import VisionError, recognize  # noqa: E402
from vision.classes import NOT_SUITED, class_of_notation  # noqa: E402
from vision.detector import iou_matrix  # noqa: E402
from vision.layout import reading_order  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "vision" / "cmd" / "test"
MIN_IOU = 0.5


@dataclass
class Tally:
    photos: int = 0
    predicted: int = 0
    labelled: int = 0
    right: int = 0
    found: int = 0
    labelled_any: int = 0
    exact_hands: int = 0
    seconds: list[float] = field(default_factory=list)

    def line(self, name: str) -> str:
        precision = self.right / max(self.predicted, 1)
        recall = self.right / max(self.labelled, 1)
        exact = self.exact_hands / max(self.photos, 1)
        return (
            f"{name:<10} photos {self.photos:4d}  tiles: precision {precision:.3f} recall {recall:.3f}"
            f"  | suited tiles located {self.found / max(self.labelled_any, 1):.3f}"
            f"  | whole hand exact {self.exact_hands}/{self.photos} = {exact:.3f}"
            f"  | s/photo mean {np.mean(self.seconds):.3f} max {np.max(self.seconds):.3f}"
        )


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


def matches(pred_boxes: np.ndarray, pred_classes: np.ndarray, boxes: np.ndarray, classes: np.ndarray) -> int:
    """Greedy one-to-one matching, best IoU first, of boxes that overlap enough and agree on the class."""
    if len(pred_boxes) == 0 or len(boxes) == 0:
        return 0
    overlaps = iou_matrix(pred_boxes, boxes) * (pred_classes[:, None] == classes[None, :])
    count = 0
    while True:
        i, j = np.unravel_index(np.argmax(overlaps), overlaps.shape)
        if overlaps[i, j] < MIN_IOU:
            return count
        count += 1
        overlaps[i, :] = 0
        overlaps[:, j] = 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", type=Path, default=None, help="a file listing image names to use")
    parser.add_argument("--models", type=Path, default=None, help="a folder of candidate ONNX models")
    parser.add_argument("--threshold", type=float, default=None, help="detector peak threshold to try")
    parser.add_argument("--verbose", action="store_true", help="one line per photo")
    args = parser.parse_args()
    from PIL import Image

    if args.models is not None:
        vision.pipeline.MODELS = args.models
    if args.threshold is not None:
        vision.detector.PEAK_THRESHOLD = args.threshold

    mapping = json.loads((args.data.parent / "classes.json").read_text())["tile_by_class_id"]
    wanted = set(args.only.read_text().split()) if args.only else None
    tallies = {"hand-row": Tally(), "all": Tally()}
    recognize(next((args.data / "images").glob("*.jpg")).read_bytes())  # load the models untimed
    for image_path in sorted((args.data / "images").glob("*.jpg")):
        if wanted is not None and image_path.stem not in wanted:
            continue
        data = image_path.read_bytes()
        with Image.open(image_path) as image:
            width, height = image.size
        boxes, classes = read_labels(args.data / "labels" / f"{image_path.stem}.txt", mapping, width, height)
        start = time.perf_counter()
        try:
            result = recognize(data)
            pred_boxes = np.asarray([t.box for t in result.tiles], dtype=np.float32).reshape(-1, 4)
            pred_classes = np.asarray(result.tile_list, dtype=np.int64)
        except VisionError:
            pred_boxes, pred_classes = np.zeros((0, 4), np.float32), np.zeros(0, np.int64)
        seconds = time.perf_counter() - start
        suited = classes != NOT_SUITED
        expected = [int(classes[suited][i]) for i, _ in reading_order(boxes[suited])]
        right = matches(pred_boxes, pred_classes, boxes[suited], classes[suited])
        found = matches(
            pred_boxes, np.zeros(len(pred_boxes), np.int64), boxes[suited], np.zeros(suited.sum(), np.int64)
        )
        exact = pred_classes.tolist() == expected
        names = ["all", "hand-row"] if is_hand_row(boxes) else ["all"]
        for name in names:
            tally = tallies[name]
            tally.photos += 1
            tally.predicted += len(pred_boxes)
            tally.labelled += int(suited.sum())
            tally.labelled_any += int(suited.sum())
            tally.right += right
            tally.found += found
            tally.exact_hands += exact
            tally.seconds.append(seconds)
        if args.verbose:
            print(
                f"{'H' if len(names) == 2 else ' '} {'=' if exact else 'x'} {right:2d}/{suited.sum():2d} "
                f"pred {len(pred_boxes):2d} {image_path.stem[:40]}"
            )
    for name, tally in tallies.items():
        if tally.photos:
            print(tally.line(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
