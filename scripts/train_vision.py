"""Train the tile recogniser's two networks on the shared training photos and export them to ONNX.

Run by hand (CPU only, minutes):

    pip install -e '.[train]'
    python scripts/train_vision.py detector     # -> vision/models/detector.onnx
    python scripts/train_vision.py classifier   # -> vision/models/classifier.onnx

Reads only ``../shared/vision/cmd/valid``; a fixed 15% of it (by file-name hash) is held out
and used for the numbers printed after each epoch and for choosing the epoch to keep. The test
half of the data set is never read here. Pass ``--all`` to train on the hold-out part too once
the settings are chosen.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from vision_data import Photo, is_holdout, jitter_colour, load_split, rotate_quarter, shift_hue  # noqa: E402
from vision_nets import TileClassifier, TileDetector  # noqa: E402
from vision_synth import synthetic_photo  # noqa: E402

from vision.classes import NOT_SUITED  # noqa: E402
from vision.classifier import CROP_HEIGHT, CROP_WIDTH, SIDEWAYS_RATIO  # noqa: E402
from vision.detector import INPUT_SIZE, SIZE_UNIT, STRIDE, decode, iou_matrix, prepare  # noqa: E402

DATA = ROOT.parent / "shared" / "vision" / "cmd" / "valid"
MODELS = ROOT / "vision" / "models"
GRID = INPUT_SIZE // STRIDE


# ---------------------------------------------------------------- detector


def detector_sample(photo: Photo, rng: random.Random) -> tuple[np.ndarray, np.ndarray]:
    """One augmented detector input (S x S x 3 uint8) and its boxes in input pixels."""
    image, boxes = photo.image, photo.boxes.copy()
    if rng.random() < 0.35:
        image, boxes = rotate_quarter(image, boxes, rng.randrange(1, 4))
    if rng.random() < 0.5:
        image = image[:, ::-1]
        width = image.shape[1]
        boxes = np.stack([width - boxes[:, 2], boxes[:, 1], width - boxes[:, 0], boxes[:, 3]], axis=1)
    if rng.random() < 0.3:
        image = shift_hue(np.ascontiguousarray(image), rng)
    height, width = image.shape[:2]
    zoom = math.exp(rng.uniform(math.log(0.5), math.log(1.7)))
    aspect = math.exp(rng.uniform(math.log(0.75), math.log(1.33)))
    win_w, win_h = width / zoom * math.sqrt(aspect), height / zoom / math.sqrt(aspect)
    x0 = rng.uniform(min(0.0, width - win_w), max(0.0, width - win_w))
    y0 = rng.uniform(min(0.0, height - win_h), max(0.0, height - win_h))
    fill = tuple(rng.randrange(256) for _ in range(3))
    canvas = Image.new("RGB", (max(1, round(win_w)), max(1, round(win_h))), fill)
    canvas.paste(Image.fromarray(np.ascontiguousarray(image)), (round(-x0), round(-y0)))
    canvas = canvas.resize((INPUT_SIZE, INPUT_SIZE), Image.BILINEAR, reducing_gap=3.0)
    canvas = jitter_colour(canvas, rng)
    scale = np.asarray([INPUT_SIZE / win_w, INPUT_SIZE / win_h] * 2, dtype=np.float32)
    boxes = (boxes - np.asarray([round(x0), round(y0)] * 2, dtype=np.float32)) * scale
    clipped = np.clip(boxes, 0, INPUT_SIZE)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    visible = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
    keep = visible >= 0.6 * np.maximum(area, 1e-6)
    return np.asarray(canvas), clipped[keep]


def detector_targets(boxes: np.ndarray) -> np.ndarray:
    """Heat map with an elliptic Gaussian per tile, and size/offset targets at the centre cells.

    Channels: heat, log w, log h, dx, dy, mask (1 where the regression targets apply).
    """
    target = np.zeros((6, GRID, GRID), dtype=np.float32)
    ys, xs = np.mgrid[0:GRID, 0:GRID].astype(np.float32)
    for x0, y0, x1, y1 in boxes:
        w, h = x1 - x0, y1 - y0
        if w < 2 or h < 2:
            continue
        cx, cy = (x0 + x1) / 2 / STRIDE, (y0 + y1) / 2 / STRIDE
        ix, iy = min(int(cx), GRID - 1), min(int(cy), GRID - 1)
        sx, sy = max(0.5, w / STRIDE / 6), max(0.5, h / STRIDE / 6)
        gauss = np.exp(-((xs - ix) ** 2) / (2 * sx * sx) - ((ys - iy) ** 2) / (2 * sy * sy))
        target[0] = np.maximum(target[0], gauss)
        target[1:6, iy, ix] = [math.log(w / SIZE_UNIT), math.log(h / SIZE_UNIT), cx - ix, cy - iy, 1.0]
    return target


def detector_loss(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CenterNet focal loss on the heat map plus L1 on size and offset at the centres."""
    heat = output[:, 0].clamp(1e-4, 1 - 1e-4)
    gt = target[:, 0]
    positive = gt.eq(1).float()
    pos_loss = -(torch.log(heat) * (1 - heat) ** 2 * positive).sum()
    neg_loss = -(torch.log(1 - heat) * heat**2 * (1 - gt) ** 4 * (1 - positive)).sum()
    count = positive.sum().clamp(min=1)
    mask = target[:, 5:6]
    regression = (torch.abs(output[:, 1:5] - target[:, 1:5]) * mask).sum() / count
    return (pos_loss + neg_loss) / count + regression


def evaluate_detector(model: torch.nn.Module, photos: list[Photo]) -> tuple[float, float]:
    """Precision and recall (IoU >= 0.5) of the boxes on unaugmented photos."""
    model.eval()
    true_pos = predicted = labelled = 0
    with torch.no_grad():
        for photo in photos:
            output = model(torch.from_numpy(prepare(photo.image)))[0].numpy()
            boxes, _ = decode(output)
            height, width = photo.image.shape[:2]
            gt = photo.boxes * np.asarray([INPUT_SIZE / width, INPUT_SIZE / height] * 2, dtype=np.float32)
            predicted += len(boxes)
            labelled += len(gt)
            true_pos += greedy_matches(boxes, gt)
    model.train()
    return true_pos / max(predicted, 1), true_pos / max(labelled, 1)


def greedy_matches(pred: np.ndarray, gt: np.ndarray, min_iou: float = 0.5) -> int:
    if len(pred) == 0 or len(gt) == 0:
        return 0
    overlaps = iou_matrix(pred, gt)
    matched = 0
    while True:
        i, j = np.unravel_index(np.argmax(overlaps), overlaps.shape)
        if overlaps[i, j] < min_iou:
            return matched
        matched += 1
        overlaps[i, :] = 0
        overlaps[:, j] = 0


def train_detector(train: list[Photo], holdout: list[Photo], epochs: int, seed: int) -> torch.nn.Module:
    rng = random.Random(seed)
    torch.manual_seed(seed)
    model = TileDetector()
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    batch_size = 16
    steps = epochs * math.ceil(len(train) / batch_size)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=2e-3, total_steps=steps, pct_start=0.1)
    best, best_state = -1.0, None
    for epoch in range(epochs):
        start = time.time()
        order = list(range(len(train)))
        rng.shuffle(order)
        total = 0.0
        for first in range(0, len(order), batch_size):
            samples = [detector_sample(train[i], rng) for i in order[first : first + batch_size]]
            images = torch.from_numpy(np.stack([s[0] for s in samples])).permute(0, 3, 1, 2).float() / 255
            targets = torch.from_numpy(np.stack([detector_targets(s[1]) for s in samples]))
            loss = detector_loss(model(images), targets)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        line = f"detector epoch {epoch + 1}/{epochs} loss {total:.2f} ({time.time() - start:.0f}s)"
        if (holdout and (epoch + 1) % 5 == 0) or epoch + 1 == epochs:
            precision, recall = evaluate_detector(model, holdout) if holdout else (0.0, 0.0)
            line += f" hold-out precision {precision:.3f} recall {recall:.3f}"
            score = 2 * precision * recall / max(precision + recall, 1e-9)
            if not holdout or score >= best:
                best, best_state = score, {k: v.clone() for k, v in model.state_dict().items()}
        print(line, flush=True)
    if best_state is not None:
        model.load_state_dict(best_state)
    return model


# ---------------------------------------------------------------- classifier


def tile_crop(image: Image.Image, box: np.ndarray, rng: random.Random, jitter: float) -> np.ndarray:
    """A crop as the run-time classifier would see it, with the box edges moved at random."""
    x0, y0, x1, y1 = (float(v) for v in box)
    w, h = x1 - x0, y1 - y0
    x0 += rng.gauss(0, jitter) * w
    x1 += rng.gauss(0, jitter) * w
    y0 += rng.gauss(0, jitter) * h
    y1 += rng.gauss(0, jitter) * h
    crop = image.crop((round(x0), round(y0), max(round(x1), round(x0) + 2), max(round(y1), round(y0) + 2)))
    if (x1 - x0) > SIDEWAYS_RATIO * (y1 - y0):
        crop = crop.transpose(Image.Transpose.ROTATE_90 if rng.random() < 0.5 else Image.Transpose.ROTATE_270)
    elif rng.random() < 0.5:
        crop = crop.transpose(Image.Transpose.ROTATE_180)
    return np.asarray(crop.resize((CROP_WIDTH, CROP_HEIGHT), Image.BILINEAR, reducing_gap=3.0))


def background_boxes(photo: Photo, rng: random.Random, count: int) -> list[np.ndarray]:
    """Boxes of tile size that overlap no labelled tile much: what a detector's false alarm looks like."""
    height, width = photo.image.shape[:2]
    sizes = photo.boxes[:, 2:] - photo.boxes[:, :2]
    found: list[np.ndarray] = []
    for _ in range(count * 10):
        if len(found) >= count or len(sizes) == 0:
            break
        w, h = sizes[rng.randrange(len(sizes))] * rng.uniform(0.7, 1.4)
        x0, y0 = rng.uniform(0, max(1.0, width - w)), rng.uniform(0, max(1.0, height - h))
        box = np.asarray([[x0, y0, x0 + w, y0 + h]], dtype=np.float32)
        if iou_matrix(box, photo.boxes).max() < 0.25:
            found.append(box[0])
    return found


def classifier_epoch_data(photos: list[Photo], rng: random.Random, augment: bool) -> tuple[np.ndarray, np.ndarray]:
    crops, labels = [], []
    for photo in photos:
        image = Image.fromarray(photo.image)
        if augment:
            image = jitter_colour(image, rng)
        for box, label in zip(photo.boxes, photo.classes, strict=True):
            crops.append(tile_crop(image, box, rng, 0.07 if augment else 0.0))
            labels.append(int(label))
        for box in background_boxes(photo, rng, 4):
            crops.append(tile_crop(image, box, rng, 0.0))
            labels.append(NOT_SUITED)
    return np.stack(crops), np.asarray(labels, dtype=np.int64)


def to_tensor(crops: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(crops).permute(0, 3, 1, 2).float() / 255


def evaluate_classifier(model: torch.nn.Module, crops: np.ndarray, labels: np.ndarray) -> float:
    model.eval()
    with torch.no_grad():
        predicted = torch.cat([model(to_tensor(crops[i : i + 512])).argmax(1) for i in range(0, len(crops), 512)])
    model.train()
    return float((predicted.numpy() == labels).mean())


def train_classifier(train: list[Photo], holdout: list[Photo], epochs: int, seed: int) -> torch.nn.Module:
    rng = random.Random(seed)
    torch.manual_seed(seed)
    model = TileClassifier()
    test_crops, test_labels = (
        classifier_epoch_data(holdout, random.Random(0), augment=False) if holdout else (None, None)
    )
    batch_size = 64
    first_crops, first_labels = classifier_epoch_data(train, rng, augment=True)
    steps = epochs * math.ceil(len(first_crops) / batch_size)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=5e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=3e-3, total_steps=steps + epochs, pct_start=0.15)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    best, best_state = -1.0, None
    for epoch in range(epochs):
        start = time.time()
        crops, labels = (first_crops, first_labels) if epoch == 0 else classifier_epoch_data(train, rng, True)
        order = torch.randperm(len(crops))
        total = 0.0
        for first in range(0, len(order), batch_size):
            index = order[first : first + batch_size].numpy()
            loss = loss_fn(model(to_tensor(crops[index])), torch.from_numpy(labels[index]))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        line = f"classifier epoch {epoch + 1}/{epochs} loss {total:.1f} ({time.time() - start:.0f}s)"
        if test_crops is not None:
            accuracy = evaluate_classifier(model, test_crops, test_labels)
            line += f" hold-out accuracy {accuracy:.4f}"
            if accuracy >= best:
                best, best_state = accuracy, {k: v.clone() for k, v in model.state_dict().items()}
        print(line, flush=True)
    if best_state is not None:
        model.load_state_dict(best_state)
    return model


# ---------------------------------------------------------------- export


def export(model: torch.nn.Module, example: torch.Tensor, path: Path, dynamic_batch: bool) -> None:
    model.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        (example,),
        str(path),
        input_names=["image"],
        output_names=["output"],
        dynamic_axes={"image": {0: "n"}, "output": {0: "n"}} if dynamic_batch else None,
        opset_version=17,
        dynamo=False,
    )
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["detector", "classifier"])
    parser.add_argument("--data", type=Path, default=DATA, help="a YOLO folder of TRAINING photos")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--all", action="store_true", help="train on the hold-out photos too")
    parser.add_argument("--out", type=Path, default=MODELS)
    parser.add_argument("--synthetic", type=int, default=0, help="rendered photos to add to training")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    if args.data.resolve().name == "test" or "test" in args.data.resolve().parts[-2:]:
        parser.error("the test photos are for evaluation only")
    torch.set_num_threads(args.threads)
    photos = load_split(args.data)
    holdout = [] if args.all else [p for p in photos if is_holdout(p.name)]
    train = photos if args.all else [p for p in photos if not is_holdout(p.name)]
    synth_rng = random.Random(args.seed + 1000)
    train += [synthetic_photo(synth_rng, i) for i in range(args.synthetic)]
    print(f"{len(train)} training photos ({args.synthetic} rendered), {len(holdout)} held out", flush=True)
    start = time.time()
    if args.stage == "detector":
        model = train_detector(train, holdout, args.epochs or 60, args.seed)
        export(model, torch.zeros(1, 3, INPUT_SIZE, INPUT_SIZE), args.out / "detector.onnx", False)
    else:
        model = train_classifier(train, holdout, args.epochs or 20, args.seed)
        export(model, torch.zeros(1, 3, CROP_HEIGHT, CROP_WIDTH), args.out / "classifier.onnx", True)
    print(f"trained in {time.time() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
