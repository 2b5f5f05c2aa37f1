"""`xuezhan gallery OUT_DIR` writes every kind of image, each within Telegram's limits."""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image

from cli import gallery
from rendering import MAX_SIDE


def run_gallery(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    gallery.register(parser.add_subparsers())
    args = parser.parse_args(["gallery", *argv])
    return args.func(args)


def test_gallery_writes_every_kind_of_image(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gallery"
    assert run_gallery(str(out)) == 0
    files = {p.stem: p for p in out.glob("*.png")}
    assert set(files) == set(gallery.gallery_images())
    for prefix in ("tiles", "hand", "table", "score", "result", "tally"):
        assert any(name.startswith(prefix) for name in files), prefix
    for name, path in files.items():
        with Image.open(path) as img:
            assert max(img.size) <= MAX_SIDE, name
        if name.startswith("hand"):
            assert path.stat().st_size < 40_000, name
    assert str(out) in capsys.readouterr().out
    # Beside each picture, a copy as a phone shows it: 400 px wide (never enlarged).
    phone = {p.stem: p for p in (out / gallery.PHONE_DIR).glob("*.png")}
    assert set(phone) == set(files)
    for name, path in phone.items():
        with Image.open(path) as small, Image.open(files[name]) as full:
            assert small.width == min(full.width, gallery.PHONE_WIDTH), name
            assert abs(small.height / small.width - full.height / full.width) < 0.02, name


def test_gallery_writes_jpeg_on_request(tmp_path: Path) -> None:
    assert run_gallery(str(tmp_path), "--jpeg") == 0
    assert len(list(tmp_path.glob("*.jpg"))) == len(gallery.gallery_images())


def test_gallery_reports_an_unusable_folder(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert run_gallery(str(blocker / "sub")) == 2
    assert "cannot create" in capsys.readouterr().err
