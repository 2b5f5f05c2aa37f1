"""Pieces of the training script that decide what the classifier learns: the per-epoch restyling
of crops (inverted sets, other stroke weights) and the fast network, which must export and load
back for fine-tuning. Needs the training extras (torch, onnx); skips without them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the training extras: pip install -e '.[train]'")
pytest.importorskip("onnx", reason="needs the training extras: pip install -e '.[train]'")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from train_vision import Calibrated, export, load_onnx_weights, restyle, scratch_stages, shrink  # noqa: E402
from vision_designs import riichi_look  # noqa: E402
from vision_ensemble import write_ensemble  # noqa: E402
from vision_nets import FastTileClassifier  # noqa: E402

from vision.classes import NUM_CLASSES  # noqa: E402
from vision.classifier import CROP_HEIGHT, CROP_WIDTH, _softmax, classify_with_orientation  # noqa: E402


def ivory_crop_with_a_red_bar() -> np.ndarray:
    """An ivory tile face (230, 225, 210) with a red bar one pixel wide down the middle."""
    crop = np.empty((CROP_HEIGHT, CROP_WIDTH, 3), dtype=np.uint8)
    crop[:] = (230, 225, 210)
    crop[8:56, 24] = (200, 30, 30)
    return crop


def test_inverting_gives_a_dark_face_with_light_ink() -> None:
    crops = np.stack([ivory_crop_with_a_red_bar()] * 200)
    out = restyle(crops, np.random.default_rng(0), invert=1.0)
    face, ink = out[:, 0, 0].astype(int), out[:, 30, 24].astype(int)
    assert (face.mean(axis=1) < 60).all()  # every crop's face turned dark
    assert (ink.mean(axis=1) > face.mean(axis=1) + 40).all()  # and its ink lighter than the face
    full = (out[:, 30, 24] == 255 - crops[0, 30, 24]).all(axis=1)
    assert 60 < full.sum() < 140  # about half fully inverted (cyan ink) ...
    assert (out[~full, 30, 24, 0] > out[~full, 30, 24, 1] + 100).all()  # ... the rest keep red ink
    assert (crops == ivory_crop_with_a_red_bar()).all()  # the input is left alone


def test_strokes_get_thicker_or_thinner() -> None:
    crops = np.stack([ivory_crop_with_a_red_bar()] * 200)
    out = restyle(crops, np.random.default_rng(1), strokes=1.0)
    red_columns = (out[:, 30, :, 1] < 100).sum(axis=1)
    assert set(red_columns.tolist()) == {0, 3}  # the bar vanished or grew to three pixels
    assert 60 < (red_columns == 3).sum() < 140


def test_nothing_changes_at_zero_shares() -> None:
    crops = np.random.default_rng(2).integers(0, 256, (20, CROP_HEIGHT, CROP_WIDTH, 3), dtype=np.uint8)
    assert (restyle(crops, np.random.default_rng(3)) == crops).all()
    assert (shrink(crops, np.random.default_rng(3), 0.0) == crops).all()


def test_shrunk_crops_lose_the_detail_of_a_small_tile() -> None:
    """A bar one pixel wide, seen as a tile 12-30 px tall gives it, is smeared over its neighbours."""
    crops = np.stack([ivory_crop_with_a_red_bar()] * 100)
    out = shrink(crops, np.random.default_rng(4), 1.0)
    assert out.shape == crops.shape and out.dtype == np.uint8
    assert (out[:, 30, 24, 1] > crops[0, 30, 24, 1] + 30).all()  # the bar's centre is paler
    assert (out[:, 30, 20:29, 1].min(axis=1) < 215).all()  # but it is still there (the face is 225)
    assert (crops == ivory_crop_with_a_red_bar()).all()  # the input is left alone


def test_the_fast_classifier_exports_and_loads_back_for_fine_tuning(tmp_path: Path) -> None:
    """``--init`` reads an exported model back (batch norms folded): the same outputs both ways."""
    torch.manual_seed(0)
    model = FastTileClassifier()
    with torch.no_grad():  # batch-norm statistics that are not the identity, so folding matters
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.2, 0.2)
                module.running_var.uniform_(0.5, 2.0)
    model.eval()
    export(Calibrated(model, 1.0), torch.zeros(1, 3, CROP_HEIGHT, CROP_WIDTH), tmp_path / "c.onnx", {})
    loaded = FastTileClassifier()
    load_onnx_weights(loaded, tmp_path / "c.onnx")
    loaded.eval()
    pixels = torch.rand(4, 3, CROP_HEIGHT, CROP_WIDTH)
    with torch.no_grad():
        original, again = model(pixels), loaded(pixels)
    assert original.shape == (4, NUM_CLASSES + 1)
    assert torch.allclose(original, again, atol=1e-4)


def test_riichi_scenes_compose_only_the_training_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--riichi`` composes FluffyStuff Regular: Black is the riichi check's and never trained on."""
    import train_vision

    asked: list[str] = []

    def recording(rng, variant: str) -> str:
        asked.append(variant)
        return riichi_look(rng, variant)

    monkeypatch.setattr(train_vision, "riichi_look", recording)
    photos = train_vision.render_scenes(4, seed=7, max_side=240, riichi=1.0)
    assert len(photos) == 4 and asked == ["Regular"] * 4


def test_without_riichi_the_scenes_are_as_before() -> None:
    """The share is drawn only when asked for, so earlier seeds render the very same scenes."""
    import train_vision

    first = train_vision.render_scenes(3, seed=5, max_side=200)
    again = train_vision.render_scenes(3, seed=5, max_side=200, riichi=0.0)
    assert all(np.array_equal(a.image, b.image) for a, b in zip(first, again, strict=True))


def exported_fast_classifier(path: Path, seed: int) -> Path:
    """A small untrained classifier with its own weights, exported as training exports one."""
    torch.manual_seed(seed)
    model = FastTileClassifier().eval()
    dynamic = {"image": {0: "n"}, "output": {0: "n"}}
    export(Calibrated(model, 1.5), torch.zeros(1, 3, CROP_HEIGHT, CROP_WIDTH), path, dynamic)
    return path


def test_the_merged_classifier_gives_its_members_mean(tmp_path: Path) -> None:
    """The shipped classifier is a merge of three: its probabilities are the members' mean
    probabilities and its upright logit their mean logit, and the run time reads it as one."""
    onnxruntime = pytest.importorskip("onnxruntime")
    members = [exported_fast_classifier(tmp_path / f"m{seed}.onnx", seed) for seed in (1, 2, 3)]
    write_ensemble(tmp_path / "classifier.onnx", members)
    pixels = np.random.default_rng(0).random((5, 3, CROP_HEIGHT, CROP_WIDTH), dtype=np.float32)

    def run(path: Path) -> np.ndarray:
        return onnxruntime.InferenceSession(str(path)).run(None, {"image": pixels})[0]

    outputs = [run(path) for path in members]
    merged = run(tmp_path / "classifier.onnx")
    assert merged.shape == (5, NUM_CLASSES + 1)
    mean = np.mean([_softmax(output[:, :NUM_CLASSES]) for output in outputs], axis=0)
    assert np.allclose(_softmax(merged[:, :NUM_CLASSES]), mean, atol=1e-5)
    assert not np.allclose(mean, _softmax(outputs[0][:, :NUM_CLASSES]), atol=1e-3)  # the members differ
    assert np.allclose(merged[:, NUM_CLASSES], np.mean([output[:, NUM_CLASSES] for output in outputs], axis=0))

    session = onnxruntime.InferenceSession(str(tmp_path / "classifier.onnx"))
    crops = np.random.default_rng(1).integers(0, 256, (3, CROP_HEIGHT, CROP_WIDTH, 3), dtype=np.uint8)
    probabilities, upright = classify_with_orientation(session, crops)
    assert probabilities.shape == (3, NUM_CLASSES) and np.allclose(probabilities.sum(axis=1), 1, atol=1e-5)
    assert upright.shape == (3,)


def test_all_trains_the_three_members_of_the_shipped_classifier(tmp_path: Path) -> None:
    """``all --seed 71`` is what made the shipped classifier: members of seeds 72, 74 and 76, the
    last with riichi looks, each in its own folder, none fine-tuned from anything."""
    args = argparse.Namespace(seed=71, out=tmp_path, data=tmp_path / "photos", threads=1, all=False)
    detector, *classifiers = scratch_stages(args)
    assert detector[0] == "detector" and detector[detector.index("--out") + 1] == str(tmp_path)
    seeds = [stage[stage.index("--seed") + 1] for stage in classifiers]
    assert seeds == ["72", "74", "76"]
    folders = {stage[stage.index("--out") + 1] for stage in classifiers}
    assert len(folders) == 3 and str(tmp_path) not in folders
    assert ["--riichi" in stage for stage in classifiers] == [False, False, True]
    assert not any("--init" in stage for stage in [detector, *classifiers])
