"""Train the tile recogniser's two networks and export them to ONNX (CPU only; see docs/vision.md).

    pip install -e '.[train]'
    OMP_NUM_THREADS=1 python scripts/train_vision.py all --seed 71 --out /tmp/scratch   # from scratch

``all`` trains both networks from nothing by a fixed recipe (``SCRATCH_DETECTOR``,
``SCRATCH_CLASSIFIER``, ``ENSEMBLE_MEMBERS``) in about 110 CPU-minutes (one thread): a detector
and three classifiers, which ``scripts/vision_ensemble.py`` merges into one. The shipped
classifier is what ``all --seed 71`` makes (members of seeds 72, 74 and 76); the shipped detector
is still the end of a chain of fine-tunes from the models of commit 4e4e656 (``--init``; the
chain is in docs/vision-history.md), because ``all``'s detector reads the real hold-out photos
worse. Without ``--init`` a network starts from scratch; ``--init`` takes one member, not the
merged classifier.

Data: the training half of the shared photo set, ``../shared/vision/cmd/valid`` (the test half is
never read here), and photo-like scenes rendered from the *training* tile designs of
``scripts/vision_designs.py`` (``scripts/vision_scenes.py``; nothing is written to disk). A fixed 15%
of the real photos (by file-name hash) is held out unless ``--all`` is given; its numbers are
printed while training. The unseen designs are never rendered here.
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
from vision_designs import riichi_look, training_designs  # noqa: E402
from vision_nets import Calibrated, FastTileClassifier, TileClassifier, TileDetector  # noqa: E402
from vision_scenes import distractor_photo, scene_photo  # noqa: E402

from vision.classes import NOT_SUITED, NUM_CLASSES  # noqa: E402
from vision.classifier import CROP_HEIGHT, CROP_WIDTH, is_sideways  # noqa: E402
from vision.detector import INPUT_SIZE, PAD_VALUE, SIZE_UNIT, STRIDE, decode, iou_matrix, letterbox  # noqa: E402

DATA = ROOT.parent / "shared" / "vision" / "cmd" / "valid"
MODELS = ROOT / "vision" / "models"
GRID = INPUT_SIZE // STRIDE


# ---------------------------------------------------------------- scenes


def render_scenes(
    count: int,
    seed: int,
    max_side: int | None = None,
    distractors: int = 0,
    receipts: bool = False,
    extra_designs: bool = False,
    more_designs: bool = False,
    riichi: float = 0.0,
) -> list[Photo]:
    """``count`` scenes of the training designs, the same for the same seed (at most ``max_side`` px).

    With ``distractors`` = n, every n-th scene is a photo of something else (text, objects; no
    tiles; with ``receipts`` also till receipts and tables of numbers). ``extra_designs`` adds the
    ``EXTRA_DESIGNS`` seeds to the designs the scenes cycle through, ``more_designs`` the
    ``MORE_DESIGNS`` seeds. A share ``riichi`` of the tile scenes shows FluffyStuff Regular
    composed as a real riichi set may be (``riichi_look``: the art's size, the side, the back,
    red fives) instead of the next design.
    """
    designs = training_designs(extra_designs, more_designs)
    rng = random.Random(seed)
    photos = []
    start = time.time()
    for index in range(count):
        name = f"scene_{seed}_{index}"
        if distractors and index % distractors == distractors - 1:
            photos.append(distractor_photo(rng, name, max_side, receipts))
        else:
            design = designs[index % len(designs)]
            if riichi and rng.random() < riichi:  # no draw without it: the scenes stay as they were
                design = riichi_look(rng, "Regular")
            photos.append(scene_photo(rng, design, name, max_side=max_side))
    print(f"rendered {count} scenes in {time.time() - start:.0f}s", flush=True)
    return photos


# ---------------------------------------------------------------- detector


def detector_sample(photo: Photo, rng: random.Random) -> tuple[np.ndarray, np.ndarray]:
    """One augmented detector input (S x S x 3 uint8, the photo letterboxed) and its boxes in input pixels.

    A window of the photo (zoomed in or out, any aspect near the photo's) is scaled to fit the
    square keeping its shape, and placed anywhere in it on a plain border, as at run time.
    """
    image, boxes = photo.image, photo.boxes.copy()
    if photo.ups is None and rng.random() < 0.35:
        image, boxes = rotate_quarter(image, boxes, rng.randrange(1, 4))
    if rng.random() < 0.5:
        image = image[:, ::-1]
        width = image.shape[1]
        boxes = np.stack([width - boxes[:, 2], boxes[:, 1], width - boxes[:, 0], boxes[:, 3]], axis=1)
    if rng.random() < 0.3:
        image = shift_hue(np.ascontiguousarray(image), rng)
    height, width = image.shape[:2]
    zoom = math.exp(rng.uniform(math.log(0.6), math.log(1.7))) if rng.random() < 0.6 else 1.0
    aspect = math.exp(rng.uniform(math.log(0.8), math.log(1.25)))
    win_w, win_h = width / zoom * math.sqrt(aspect), height / zoom / math.sqrt(aspect)
    x0 = rng.uniform(min(0.0, width - win_w), max(0.0, width - win_w))
    y0 = rng.uniform(min(0.0, height - win_h), max(0.0, height - win_h))
    scale = INPUT_SIZE / max(win_w, win_h) * (rng.uniform(0.75, 1.0) if rng.random() < 0.2 else 1.0)
    source = Image.fromarray(np.ascontiguousarray(image))
    crop_box = (round(x0), round(y0), round(x0 + win_w), round(y0 + win_h))
    out_w, out_h = max(1, round(win_w * scale)), max(1, round(win_h * scale))
    fill = (PAD_VALUE,) * 3 if rng.random() < 0.5 else tuple(rng.randrange(256) for _ in range(3))
    window = source.crop(crop_box) if zoom >= 1.0 else _padded_window(source, crop_box, fill)
    window = window.resize((out_w, out_h), Image.BILINEAR, reducing_gap=3.0)
    canvas = Image.new("RGB", (INPUT_SIZE, INPUT_SIZE), fill)
    px, py = rng.randrange(INPUT_SIZE - out_w + 1), rng.randrange(INPUT_SIZE - out_h + 1)
    if rng.random() < 0.5:
        px, py = (INPUT_SIZE - out_w) // 2, (INPUT_SIZE - out_h) // 2
    canvas.paste(window, (px, py))
    canvas = jitter_colour(canvas, rng)
    boxes = (boxes - np.asarray([crop_box[0], crop_box[1]] * 2, dtype=np.float32)) * np.float32(
        out_w / max(crop_box[2] - crop_box[0], 1)
    ) + np.asarray([px, py] * 2, dtype=np.float32)
    limits = np.asarray([px, py, px + out_w, py + out_h], dtype=np.float32)
    clipped = np.clip(boxes, limits[[0, 1, 0, 1]], limits[[2, 3, 2, 3]])
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    visible = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
    keep = visible >= 0.6 * np.maximum(area, 1e-6)
    return np.asarray(canvas), clipped[keep]


def _padded_window(source: Image.Image, box: tuple[int, int, int, int], fill: tuple) -> Image.Image:
    """The part of ``source`` under ``box``, which may reach past its edges (filled with ``fill``)."""
    window = Image.new("RGB", (max(1, box[2] - box[0]), max(1, box[3] - box[1])), fill)
    window.paste(source, (-box[0], -box[1]))
    return window


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


def evaluate_detector(model: torch.nn.Module, photos: list[Photo], frozen: bool = False) -> tuple[float, float]:
    """Precision and recall (IoU >= 0.5) of the boxes on unaugmented photos."""
    model.eval()
    true_pos = predicted = labelled = 0
    with torch.no_grad():
        for photo in photos:
            pixels, place = letterbox(photo.image, INPUT_SIZE)
            boxes, _ = decode(model(torch.from_numpy(pixels))[0].numpy())
            gt = photo.boxes * place.scale + np.asarray([place.dx, place.dy] * 2, dtype=np.float32)
            predicted += len(boxes)
            labelled += len(gt)
            true_pos += greedy_matches(boxes, gt)
    model.train()
    if frozen:
        freeze_batch_norm(model)
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


def load_onnx_detector(path: Path) -> TileDetector:
    """A TileDetector holding the weights of an exported detector, to fine-tune it."""
    model = TileDetector()
    load_onnx_weights(model, path)
    return model


def load_onnx_weights(model: torch.nn.Module, path: Path) -> None:
    """Put the weights of an exported network into ``model`` (the same architecture), to fine-tune it.

    The exporter folded each batch norm into its convolution; the folded weights go into the
    convolution and the batch norm becomes a plain bias (scale 1, statistics 0 and 1), which
    ``freeze_batch_norm`` keeps that way while training. A final layer with fewer outputs than
    ``model``'s (the classifier before it learnt which way up a tile is) fills the first rows; the
    temperature of a calibrated classifier is dropped (it is fitted again).
    """
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in graph.initializer}
    state = model.state_dict()
    with torch.no_grad():
        for name, value in weights.items():
            name = name.removeprefix("model.")  # an exported Calibrated classifier wraps the network
            if name in state:
                state[name][: value.shape[0]].copy_(value)
    folded = [node.input[1:] for node in graph.node if node.op_type == "Conv" and node.input[1].startswith("onnx::")]
    blocks = [
        m
        for m in model.modules()
        if isinstance(m, torch.nn.Sequential) and len(m) == 3 and isinstance(m[1], torch.nn.BatchNorm2d)
    ]
    if len(folded) != len(blocks):
        raise SystemExit(f"{path}: {len(folded)} folded convolutions, the network has {len(blocks)}")
    with torch.no_grad():
        for (weight, bias), block in zip(folded, blocks, strict=True):
            block[0].weight.copy_(weights[weight])
            norm = block[1]
            norm.weight.fill_(1.0)
            norm.bias.copy_(weights[bias])
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)


def freeze_batch_norm(model: torch.nn.Module) -> None:
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.eval()


def train_detector(
    train: list[Photo],
    holdout: list[Photo],
    checks: list[Photo],
    epochs: int,
    seed: int,
    init: Path | None,
    lr: float | None = None,
) -> torch.nn.Module:
    """Train on photos and scenes; print precision/recall on held-out photos and check scenes.

    With ``init`` (an exported detector) the network starts from those weights, batch norms fixed.
    """
    rng = random.Random(seed)
    torch.manual_seed(seed)
    model = load_onnx_detector(init) if init is not None else TileDetector()
    lr = lr if lr is not None else (2e-3 if init is None else 1e-3)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    batch_size = 16
    steps = epochs * math.ceil(len(train) / batch_size)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps, pct_start=0.1)
    model.train()
    if init is not None:
        freeze_batch_norm(model)
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
        if (epoch + 1) % 4 == 0 or epoch + 1 == epochs:
            precision, recall = evaluate_detector(model, checks, init is not None)
            line += f" check scenes precision {precision:.3f} recall {recall:.3f}"
            if holdout:
                precision, recall = evaluate_detector(model, holdout, init is not None)
                line += f" hold-out photos precision {precision:.3f} recall {recall:.3f}"
        print(line, flush=True)
    return model


# ---------------------------------------------------------------- classifier

UNKNOWN = -1.0  # orientation label of a crop whose tile's top is not known (or that holds no tile)


def tile_crop(
    image: Image.Image, box: np.ndarray, rng: random.Random, jitter: float, up: float | None
) -> tuple[np.ndarray, float]:
    """A crop as the run-time classifier would see it (box edges moved at random, any way up),
    and its orientation label: 1 upright, 0 upside down, UNKNOWN.

    ``up`` is the angle of the tile's top in the photo; None means "standing upright", which is
    what the real photos show, but only for boxes that stand up.
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    w, h = x1 - x0, y1 - y0
    x0 += rng.gauss(0, jitter) * w
    x1 += rng.gauss(0, jitter) * w
    y0 += rng.gauss(0, jitter) * h
    y1 += rng.gauss(0, jitter) * h
    moved = np.asarray([x0, y0, max(x1, x0 + 2), max(y1, y0 + 2)])
    crop = image.crop(tuple(round(v) for v in moved))
    top = np.asarray([math.cos(up), math.sin(up)]) if up is not None else np.asarray([0.0, -1.0])
    known = up is not None or not is_sideways(moved)
    if is_sideways(moved):
        crop = crop.transpose(Image.Transpose.ROTATE_90)
        top = np.asarray([top[1], -top[0]])
    if rng.random() < 0.5:
        crop = crop.transpose(Image.Transpose.ROTATE_180)
        top = -top
    pixels = crop.resize((CROP_WIDTH, CROP_HEIGHT), Image.BILINEAR, reducing_gap=3.0)
    return np.asarray(pixels), (float(top[1] < 0) if known else UNKNOWN)


def background_boxes(photo: Photo, rng: random.Random, count: int) -> list[np.ndarray]:
    """Boxes of tile size that overlap no labelled tile much: what a detector's false alarm looks like.

    A photo without tiles (a distractor) gets boxes of the sizes tiles have in scenes.
    """
    height, width = photo.image.shape[:2]
    sizes = photo.boxes[:, 2:] - photo.boxes[:, :2]
    if len(sizes) == 0:
        tall = np.asarray([rng.uniform(0.05, 0.35) * min(height, width) for _ in range(count)], dtype=np.float32)
        sizes = np.stack([tall * np.asarray([rng.uniform(0.6, 0.85) for _ in range(count)]), tall], axis=1)
    found: list[np.ndarray] = []
    for _ in range(count * 10):
        if len(found) >= count or len(sizes) == 0:
            break
        w, h = sizes[rng.randrange(len(sizes))] * rng.uniform(0.7, 1.4)
        x0, y0 = rng.uniform(0, max(1.0, width - w)), rng.uniform(0, max(1.0, height - h))
        box = np.asarray([[x0, y0, x0 + w, y0 + h]], dtype=np.float32)
        if len(photo.boxes) == 0 or iou_matrix(box, photo.boxes).max() < 0.25:
            found.append(box[0])
    return found


def crops_of(
    photos: list[Photo], rng: random.Random, jitter: float, copies: int, colour: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crops, class labels and orientation labels of every labelled tile, and some background."""
    crops, labels, upright = [], [], []
    for photo in photos:
        image = Image.fromarray(photo.image)
        if colour:
            image = jitter_colour(image, rng)
        ups = photo.ups if photo.ups is not None else [None] * len(photo.boxes)
        for box, label, up in zip(photo.boxes, photo.classes, ups, strict=True):
            for _ in range(copies):
                crop, orientation = tile_crop(image, box, rng, jitter, None if up is None else float(up))
                if rng.random() < 0.25:  # a tile only 16-30 pixels tall
                    small = rng.randrange(16, 31)
                    crop = np.asarray(
                        Image.fromarray(crop)
                        .resize((max(6, small * 3 // 4), small), Image.BILINEAR)
                        .resize((CROP_WIDTH, CROP_HEIGHT), Image.BILINEAR)
                    )
                crops.append(crop)
                labels.append(int(label))
                upright.append(orientation if label != NOT_SUITED else UNKNOWN)
        for box in background_boxes(photo, rng, 3 if len(photo.boxes) else 12):
            crops.append(tile_crop(image, box, rng, 0.0, None)[0])
            labels.append(NOT_SUITED)
            upright.append(UNKNOWN)
    return np.stack(crops), np.asarray(labels, dtype=np.int64), np.asarray(upright, dtype=np.float32)


def light(crops: np.ndarray, rng: np.random.Generator, recolour: float = 0.0) -> np.ndarray:
    """Cheap per-crop light changes for each epoch: gain per channel, contrast, offset.

    A share ``recolour`` of the crops also gets its colour channels permuted: sets differ in
    which colour each suit's symbols are, and the suit is in the shapes.
    """
    count = len(crops)
    if recolour:
        crops = crops.copy()
        for index in np.nonzero(rng.random(count) < recolour)[0]:
            crops[index] = crops[index][..., rng.permutation(3)]
    gain = rng.uniform(0.75, 1.25, (count, 1, 1, 3)) * rng.uniform(0.7, 1.3, (count, 1, 1, 1))
    mean = crops.mean(axis=(1, 2, 3), keepdims=True)
    contrast = rng.uniform(0.7, 1.3, (count, 1, 1, 1))
    out = (crops.astype(np.float32) - mean) * contrast + mean
    return np.clip(out * gain + rng.normal(0, 8, (count, 1, 1, 1)), 0, 255).astype(np.uint8)


def restyle(crops: np.ndarray, rng: np.random.Generator, invert: float = 0.0, strokes: float = 0.0) -> np.ndarray:
    """Tile sets drawn differently from any training design, made from the crops each epoch.

    A share ``invert`` of the crops is inverted, half of them fully (light ink on a dark face in
    the opposite colours) and half in lightness only (each pixel moved by 255 - 2 x its grey
    level, so the face turns dark and the ink light but keeps its hue): sets with dark faces
    exist. A share ``strokes`` gets thicker or thinner ink (the darkest or lightest pixel of each
    3 x 3 neighbourhood): sets differ in stroke weight. Returns a new array.
    """
    crops = crops.copy()
    count = len(crops)
    chosen = np.nonzero(rng.random(count) < invert)[0]
    full = rng.random(len(chosen)) < 0.5
    crops[chosen[full]] = 255 - crops[chosen[full]]
    keep_hue = crops[chosen[~full]].astype(np.int16)
    grey = keep_hue.mean(axis=3, keepdims=True).astype(np.int16)
    crops[chosen[~full]] = np.clip(keep_hue + 255 - 2 * grey, 0, 255).astype(np.uint8)
    chosen = np.nonzero(rng.random(count) < strokes)[0]
    if len(chosen):
        height, width = crops.shape[1:3]
        padded = np.pad(crops[chosen], ((0, 0), (1, 1), (1, 1), (0, 0)), mode="edge")
        shifted = np.stack([padded[:, dy : dy + height, dx : dx + width] for dy in range(3) for dx in range(3)])
        thicker = rng.random(len(chosen)) < 0.5
        crops[chosen] = np.where(thicker[:, None, None, None], shifted.min(axis=0), shifted.max(axis=0))
    return crops


def shrink(crops: np.ndarray, rng: np.random.Generator, share: float, low: int = 12, high: int = 30) -> np.ndarray:
    """A share of the crops as tiles only ``low``..``high`` pixels tall would give them, each epoch.

    The crop is scaled down to that height (width three quarters of it) and back up, as the
    run-time crop of so small a tile is: a wide shot or a small photo leaves few pixels per tile,
    and those tiles are the ones read worst. Returns a new array.
    """
    crops = crops.copy()
    for index in np.nonzero(rng.random(len(crops)) < share)[0]:
        tall = int(rng.integers(low, high + 1))
        small = Image.fromarray(crops[index]).resize((max(6, tall * 3 // 4), tall), Image.BILINEAR)
        crops[index] = np.asarray(small.resize((CROP_WIDTH, CROP_HEIGHT), Image.BILINEAR))
    return crops


def to_tensor(crops: np.ndarray) -> torch.Tensor:
    return (torch.from_numpy(crops).permute(0, 3, 1, 2).float() / 255).contiguous(memory_format=torch.channels_last)


def predict_logits(model: torch.nn.Module, crops: np.ndarray) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        out = torch.cat([model(to_tensor(crops[i : i + 512])) for i in range(0, len(crops), 512)])
    model.train()
    return out


def accuracy(logits: torch.Tensor, labels: np.ndarray) -> float:
    return float((logits[:, :NUM_CLASSES].argmax(1).numpy() == labels).mean())


def classifier_loss(output: torch.Tensor, labels: torch.Tensor, upright: torch.Tensor) -> torch.Tensor:
    """Cross-entropy on the class, plus the upright/upside-down logit where the label is known."""
    loss = torch.nn.functional.cross_entropy(output[:, :NUM_CLASSES], labels, label_smoothing=0.05)
    known = upright >= 0
    if known.any():
        loss = loss + 0.5 * torch.nn.functional.binary_cross_entropy_with_logits(
            output[known, NUM_CLASSES], upright[known]
        )
    return loss


def fit_temperature(logits: torch.Tensor, labels: np.ndarray) -> float:
    """The temperature that makes the class probabilities honest on held-out crops (least NLL)."""
    target = torch.from_numpy(labels)
    scores = logits[:, :NUM_CLASSES]
    best = min((torch.nn.functional.cross_entropy(scores / t, target).item(), t) for t in np.arange(0.5, 4.01, 0.05))
    return float(best[1])


def train_classifier(
    real: list[Photo],
    holdout: list[Photo],
    scenes: list[Photo] | None,
    checks: list[Photo] | None,
    epochs: int,
    seed: int,
    copies: int,
    init: Path | None,
    lr: float | None = None,
    real_share: float | None = None,
    recolour: float = 0.0,
    fast: bool = False,
    crops_file: Path | None = None,
    invert: float = 0.0,
    strokes: float = 0.0,
    small: float = 0.0,
) -> tuple[torch.nn.Module, float]:
    """Train on real photos and rendered scenes; return the model and its fitted temperature.

    ``checks`` are scenes of the training designs rendered with another seed: printed each epoch
    and, with the real hold-out (if any), used to fit the temperature. ``real_share`` is the share
    of the real photos shown each epoch (default: all from scratch, half when fine-tuning).
    ``fast`` trains a ``FastTileClassifier``. ``crops_file``: the scenes' and checks' crops are
    read from it when ``scenes`` is None, else cut from them and saved to it (rendering is a
    large part of a round; several candidates can share one set of crops). ``small``: the share of
    crops made as small tiles give them each epoch (``shrink``), on top of the quarter of the scene
    and photo crops already cut that way.
    """
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    model = FastTileClassifier() if fast else TileClassifier()
    if init is not None:
        load_onnx_weights(model, init)
    model = model.to(memory_format=torch.channels_last)
    lr = lr if lr is not None else (3e-3 if init is None else 1e-3)
    real_share = real_share if real_share is not None else (1.0 if init is None else 0.5)
    if scenes is None or checks is None:
        if crops_file is None:
            raise ValueError("no scenes and no crops file")
        saved = np.load(crops_file)
        scene_crops, scene_labels, scene_up = saved["crops"], saved["labels"], saved["upright"]
        check_crops, check_labels = saved["check_crops"], saved["check_labels"]
    else:
        scene_crops, scene_labels, scene_up = crops_of(scenes, rng, 0.06, copies, colour=False)
        check_crops, check_labels, _ = crops_of(checks, random.Random(0), 0.0, 1, colour=False)
        if crops_file is not None:
            np.savez(
                crops_file,
                crops=scene_crops,
                labels=scene_labels,
                upright=scene_up,
                check_crops=check_crops,
                check_labels=check_labels,
            )
    print(f"{len(scene_crops)} scene crops", flush=True)
    real_checks = crops_of(holdout, random.Random(0), 0.0, 1, colour=False) if holdout else None
    batch_size = 64
    shown_real = round(len(real) * real_share)
    per_epoch = len(scene_crops) + len(crops_of(real[:20], random.Random(0), 0.0, 1, False)[0]) * shown_real // 20
    steps = epochs * math.ceil(per_epoch * 1.1 / batch_size)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps, pct_start=0.15)
    for epoch in range(epochs):
        start = time.time()
        model.train()
        if init is not None:
            freeze_batch_norm(model)
        shown = real if shown_real >= len(real) else rng.sample(real, shown_real)
        real_crops, real_labels, real_up = crops_of(shown, rng, 0.07, 1, colour=True)
        crops = restyle(np.concatenate([real_crops, light(scene_crops, np_rng, recolour)]), np_rng, invert, strokes)
        crops = shrink(crops, np_rng, small)
        labels = np.concatenate([real_labels, scene_labels])
        upright = np.concatenate([real_up, scene_up])
        flip = np_rng.random(len(crops)) < 0.5  # upside down: the orientation label flips too
        crops[flip] = crops[flip][:, ::-1, ::-1]
        upright[flip & (upright >= 0)] = 1 - upright[flip & (upright >= 0)]
        order = torch.randperm(len(crops))
        total = 0.0
        for first in range(0, len(order), batch_size):
            if schedule.last_epoch + 1 >= steps:
                break
            index = order[first : first + batch_size].numpy()
            loss = classifier_loss(
                model(to_tensor(crops[index])), torch.from_numpy(labels[index]), torch.from_numpy(upright[index])
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        line = f"classifier epoch {epoch + 1}/{epochs} loss {total:.1f} ({time.time() - start:.0f}s)"
        line += f" check scenes {accuracy(predict_logits(model, check_crops), check_labels):.4f}"
        if real_checks is not None:
            line += f" hold-out photos {accuracy(predict_logits(model, real_checks[0]), real_checks[1]):.4f}"
        print(line, flush=True)
    logits, labels = predict_logits(model, check_crops), check_labels
    if real_checks is not None:
        logits = torch.cat([logits, predict_logits(model, real_checks[0])])
        labels = np.concatenate([labels, real_checks[1]])
    temperature = fit_temperature(logits, labels)
    print(f"temperature {temperature:.2f}", flush=True)
    return model.to(memory_format=torch.contiguous_format), temperature


# ---------------------------------------------------------------- export


def export(model: torch.nn.Module, example: torch.Tensor, path: Path, dynamic: dict) -> None:
    model.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        (example,),
        str(path),
        input_names=["image"],
        output_names=["output"],
        dynamic_axes=dynamic,
        opset_version=17,
        dynamo=False,
    )
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


def scratch_stages(args: argparse.Namespace) -> list[list[str]]:
    """The command lines of the training stages of ``all``: the from-scratch recipe.

    Detector first, then the three fast classifiers of the shipped ensemble (``ENSEMBLE_MEMBERS``),
    each over its own 600 scenes and into its own folder under ``OUT/members``; each network is
    trained once with a one-cycle schedule. About 110 CPU-minutes on one thread when measured
    (docs/vision.md). ``main`` then merges the classifiers into ``OUT/classifier.onnx``.
    """
    shared = ["--data", str(args.data), "--threads", str(args.threads)] + (["--all"] if args.all else [])
    stages = [["detector", "--seed", str(args.seed), *SCRATCH_DETECTOR, "--out", str(args.out), *shared]]
    for offset, extra in ENSEMBLE_MEMBERS:
        seed = args.seed + offset
        out = member_folder(args.out, seed)
        stages.append(["classifier", "--seed", str(seed), *SCRATCH_CLASSIFIER, *extra, "--out", str(out), *shared])
    return stages


def member_folder(out: Path, seed: int) -> Path:
    return out / "members" / f"classifier-{seed}"


# The from-scratch recipe (``all``): every setting but the seed, the output and the data.
SCRATCH_DETECTOR = ["--epochs", "75", "--scenes", "300", "--distractors", "8", "--receipts"]
SCRATCH_CLASSIFIER = [
    *("--net", "fast", "--epochs", "30", "--scenes", "600", "--distractors", "4", "--receipts"),
    *("--real-share", "1", "--extra-designs", "--recolour", "0.2", "--strokes", "0.2", "--invert", "0.25"),
]
# The shipped classifier is the mean of three (scripts/vision_ensemble.py): two seeds of the recipe
# and one that also sees riichi looks of FluffyStuff Regular (seed offsets from ``all``'s --seed).
ENSEMBLE_MEMBERS: list[tuple[int, list[str]]] = [(1, []), (3, []), (5, ["--riichi", "0.1"])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "stage",
        choices=["detector", "classifier", "all"],
        help="all: both networks from scratch by the recipe (only --seed, --out, --data, --threads, --all apply)",
    )
    parser.add_argument("--data", type=Path, default=DATA, help="a YOLO folder of TRAINING photos")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--all", action="store_true", help="train on the hold-out photos too")
    parser.add_argument("--out", type=Path, default=MODELS)
    parser.add_argument("--scenes", type=int, default=None, help="rendered scenes to train on")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--copies", type=int, default=1, help="classifier: crops of each rendered tile")
    parser.add_argument("--init", type=Path, default=None, help="start from this exported model (fine-tune)")
    parser.add_argument("--lr", type=float, default=None, help="peak learning rate (default 1e-3 fine-tuning)")
    parser.add_argument("--distractors", type=int, default=0, help="every n-th scene shows no tiles (0: none)")
    parser.add_argument("--receipts", action="store_true", help="distractors include receipts and number tables")
    parser.add_argument("--real-share", type=float, default=None, help="classifier: share of real photos per epoch")
    parser.add_argument("--extra-designs", action="store_true", help="scenes also use the EXTRA_DESIGNS seeds")
    parser.add_argument("--riichi", type=float, default=0.0,
                        help="share of tile scenes of FluffyStuff Regular composed as real riichi sets (red fives...)")
    parser.add_argument("--real-repeat", type=int, default=1,
                        help="detector: each real photo this many times per epoch (its augmentation differs each time)")
    parser.add_argument("--more-designs", action="store_true", help="scenes also use the MORE_DESIGNS seeds")
    parser.add_argument("--recolour", type=float, default=0.0, help="classifier: share of scene crops recoloured")
    parser.add_argument("--invert", type=float, default=0.0, help="classifier: share of crops inverted")
    parser.add_argument("--strokes", type=float, default=0.0, help="classifier: share of crops, ink thicker or thinner")
    parser.add_argument("--small", type=float, default=0.0, help="classifier: share of crops as 12-30 px tiles")
    parser.add_argument("--net", choices=["standard", "fast"], default="standard", help="classifier network")
    parser.add_argument("--crops", type=Path, default=None, help="classifier: scene crops (.npz), read if it exists")
    args = parser.parse_args(argv)
    if args.stage == "all":
        for stage in scratch_stages(args):
            print("train_vision.py " + " ".join(stage), flush=True)
            main(stage)
        from vision_ensemble import write_ensemble

        members = [member_folder(args.out, args.seed + offset) / "classifier.onnx" for offset, _ in ENSEMBLE_MEMBERS]
        write_ensemble(args.out / "classifier.onnx", members)
        return 0
    if args.data.resolve().name == "test" or "test" in args.data.resolve().parts[-2:]:
        parser.error("the test photos are for evaluation only")
    torch.set_num_threads(args.threads)
    photos = load_split(args.data)
    holdout = [] if args.all else [p for p in photos if is_holdout(p.name)]
    real = photos if args.all else [p for p in photos if not is_holdout(p.name)]
    start = time.time()
    if args.stage == "detector":
        scenes = render_scenes(
            args.scenes if args.scenes is not None else 300,
            args.seed * 1000 + 1,
            480,
            args.distractors,
            args.receipts,
            args.extra_designs,
            args.more_designs,
            args.riichi,
        )
        checks = render_scenes(40, args.seed * 1000 + 2, 480)
        if args.init is not None:
            model = load_onnx_detector(args.init).eval()
            pixels = torch.rand(1, 3, INPUT_SIZE, INPUT_SIZE)
            import onnxruntime

            reference = onnxruntime.InferenceSession(str(args.init)).run(None, {"image": pixels.numpy()})[0]
            with torch.no_grad():
                print(f"loaded {args.init}: largest difference {np.abs(model(pixels).numpy() - reference).max():.2e}")
        print(f"{len(real)} photos and {len(scenes)} scenes, {len(holdout)} photos held out", flush=True)
        train = real * args.real_repeat + scenes
        model = train_detector(train, holdout, checks, args.epochs or 5, args.seed, args.init, args.lr)
        dynamic = {"image": {2: "height", 3: "width"}, "output": {2: "rows", 3: "columns"}}
        export(model, torch.zeros(1, 3, INPUT_SIZE, INPUT_SIZE), args.out / "detector.onnx", dynamic)
    elif args.crops is not None and args.crops.exists():
        print(f"{len(real)} photos and the scene crops of {args.crops}, {len(holdout)} photos held out", flush=True)
        scenes = checks = None
    else:
        scenes = render_scenes(
            args.scenes if args.scenes is not None else 200,
            args.seed * 1000 + 3,
            720,
            args.distractors,
            args.receipts,
            args.extra_designs,
            args.more_designs,
            args.riichi,
        )
        checks = render_scenes(30, args.seed * 1000 + 4, 720)
        print(f"{len(real)} photos and {len(scenes)} scenes, {len(holdout)} photos held out", flush=True)
    if args.stage == "classifier":
        model, temperature = train_classifier(
            real,
            holdout,
            scenes,
            checks,
            args.epochs or 2,
            args.seed,
            args.copies,
            args.init,
            args.lr,
            args.real_share,
            args.recolour,
            args.net == "fast",
            args.crops,
            args.invert,
            args.strokes,
            args.small,
        )
        export(
            Calibrated(model, temperature),
            torch.zeros(1, 3, CROP_HEIGHT, CROP_WIDTH),
            args.out / "classifier.onnx",
            {"image": {0: "n"}, "output": {0: "n"}},
        )
    print(f"trained in {time.time() - start:.0f}s ({time.process_time() / 60:.1f} CPU-minutes in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
