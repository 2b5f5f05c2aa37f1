"""The tile recogniser end to end: real photos from the training half of the shared data set,
rendered rows of a tile design training never saw, bad input, and the shipped models loading on
their own. Tests that read ``../shared`` skip when it is absent (a plain clone)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from drawn_photos import far_away_hand
from PIL import Image

from cli.main import main
from vision import VisionError, recognize
from vision.classes import NOT_SUITED, class_of_notation
from vision.image import MAX_BYTES, decode_image

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT.parent / "shared" / "vision" / "cmd" / "valid"
needs_shared = pytest.mark.skipif(
    not VALID.is_dir(), reason=f"needs the shared photo set at {VALID} (absent in a plain clone; present in CI)"
)
HAND_PHOTOS = [
    "hand_005_jpg.rf.7680109833876854a1306dfb939cbb6d",
    "387471954_1282573685761619_5566297790876962704_n_jpg.rf.61df2c6c4333ba21361dc38ef7fbcafe",
]


def labelled_tiles(stem: str) -> list[int]:
    mapping = json.loads((VALID.parent / "classes.json").read_text())["tile_by_class_id"]
    lines = (VALID / "labels" / f"{stem}.txt").read_text().split("\n")
    classes = [class_of_notation(mapping[line.split()[0]]) for line in lines if line.strip()]
    return [c for c in classes if c != NOT_SUITED]


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@needs_shared
@pytest.mark.parametrize("stem", HAND_PHOTOS)
def test_reads_a_hand_row_photo(stem: str) -> None:
    result = recognize((VALID / "images" / f"{stem}.jpg").read_bytes())
    expected = Counter(labelled_tiles(stem))
    recognised = Counter(result.tile_list)
    assert sum((expected & recognised).values()) >= 0.85 * sum(expected.values())
    assert len(result.tiles) <= sum(expected.values()) + 2
    assert all(0.0 <= c <= 1.0 for c in result.confidences)
    assert all(
        0 <= t.box[0] < t.box[2] <= result.width and 0 <= t.box[1] < t.box[3] <= result.height for t in result.tiles
    )
    lefts = [t.box[0] for t in result.tiles if t.row == 0]
    assert lefts == sorted(lefts)


def test_rejects_bytes_that_are_not_an_image() -> None:
    with pytest.raises(VisionError) as error:
        recognize(b"this is not a photo")
    assert error.value.code == "not_an_image"
    with pytest.raises(VisionError) as error:
        recognize(b"")
    assert error.value.code == "not_an_image"


def test_a_truncated_photo_is_not_an_image() -> None:
    buffer = io.BytesIO()
    noise = np.random.default_rng(1).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    Image.fromarray(noise).save(buffer, "JPEG", quality=90)
    with pytest.raises(VisionError) as error:
        recognize(buffer.getvalue()[:3000])
    assert error.value.code == "not_an_image"


def test_a_one_pixel_image_has_no_tiles() -> None:
    with pytest.raises(VisionError) as error:
        recognize(png_bytes(Image.new("L", (1, 1))))
    assert error.value.code == "no_tiles"


def test_rejects_a_huge_file_before_decoding() -> None:
    with pytest.raises(VisionError) as error:
        recognize(b"\xff\xd8" + bytes(MAX_BYTES))
    assert error.value.code == "too_large"


def test_rejects_too_many_pixels_without_decoding_them() -> None:
    data = png_bytes(Image.new("1", (9000, 6000)))
    assert len(data) < MAX_BYTES
    with pytest.raises(VisionError) as error:
        recognize(data)
    assert error.value.code == "too_many_pixels"


def test_a_photo_without_tiles_is_a_clear_error() -> None:
    rng = np.random.default_rng(0)
    table = np.clip(rng.normal((40, 110, 60), 6, (480, 640, 3)), 0, 255).astype(np.uint8)
    with pytest.raises(VisionError) as error:
        recognize(png_bytes(Image.fromarray(table)))
    assert error.value.code == "no_tiles"


def test_exif_orientation_is_applied() -> None:
    buffer = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # the camera was turned: show rotated 90 degrees clockwise
    Image.new("RGB", (40, 20)).save(buffer, "JPEG", exif=exif)
    assert decode_image(buffer.getvalue()).shape == (40, 20, 3)


@needs_shared
def test_cli_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    photo = VALID / "images" / f"{HAND_PHOTOS[0]}.jpg"
    assert main(["recognize", str(photo), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is True
    assert len(printed["tiles"]) == len(printed["confidence"]) > 0


def test_cli_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.jpg"
    bad.write_text("hello")
    assert main(["recognize", str(bad), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "not_an_image"
    assert main(["recognize", str(tmp_path / "missing.jpg"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "not_found"
    assert main(["recognize", str(tmp_path), "--json"]) == 2  # a folder
    assert "cannot read" in json.loads(capsys.readouterr().out)["message"]


def test_models_load_without_the_shared_folder(tmp_path: Path) -> None:
    """The installed package carries its models: run from elsewhere with only the project on the path."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from vision.pipeline import _sessions; "
        "d, c = _sessions(); print(d.get_outputs()[0].shape[1], c.get_outputs()[0].shape[1])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.split() == ["5", str(NOT_SUITED + 2)]  # heat, size, offset | 28 classes, upright


def rendered_row(tiles: list[int], design_seed: int, tile_width: int) -> bytes:
    """A straight-on photo of one row of tiles of a procedural design training never saw."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from vision_designs import UNSEEN_DESIGNS, make_design, sprite

    assert design_seed in UNSEEN_DESIGNS
    design = make_design(design_seed)
    sprites = [sprite(design, t) for t in tiles]
    height = round(tile_width * sprites[0].height / sprites[0].width)
    table = Image.new("RGB", (tile_width * (len(tiles) + 2), height * 3), (46, 110, 70))
    for k, art in enumerate(sprites):
        art = art.resize((tile_width, height), Image.BILINEAR)
        table.paste(art, (tile_width * (k + 1), height), art)
    buffer = io.BytesIO()
    table.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def test_training_never_gets_the_designs_kept_out() -> None:
    """The unseen designs, FluffyStuff Black, the fresh designs and the tuning designs are for
    checking only: however many designs training asks for, none of them is among its designs."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from vision_designs import FRESH_DESIGNS, TUNING_DESIGNS, UNSEEN_DESIGNS, training_designs, tuning_designs

    designs = training_designs(extra=True, more=True)
    seeds = {d.seed for d in designs if not isinstance(d, str)}
    assert len(seeds) == 1300
    assert not seeds & {*UNSEEN_DESIGNS, *FRESH_DESIGNS, *TUNING_DESIGNS}
    assert {d.seed for group in range(3) for d in tuning_designs(group)} <= set(TUNING_DESIGNS)
    assert all(d == "fluffy:Regular" for d in designs if isinstance(d, str))


@pytest.mark.parametrize("design_seed", [900, 903])
def test_reads_a_straight_row_of_characters_of_an_unseen_design(design_seed: int) -> None:
    """Clean rows of 1-9 万 photographed straight on once came back with no tiles at all."""
    result = recognize(rendered_row(list(range(9)), design_seed, 60))
    assert result.names == [f"{rank}m" for rank in range(1, 10)]


def squashed_to_a_square(photo: bytes, side: int) -> bytes:
    """The strip of a row photo that holds the tiles, squashed to a square as some photos are saved."""
    image = Image.open(io.BytesIO(photo))
    width, height = image.size
    strip = image.crop((0, height // 3 - 6, width, 2 * height // 3 + 6)).resize((side, side), Image.BILINEAR)
    buffer = io.BytesIO()
    strip.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


@pytest.mark.parametrize("design_seed", [900, 903])
def test_reads_a_row_squashed_to_a_square(design_seed: int) -> None:
    """A strip 9 tiles long squashed to a square shows tiles 8 times too narrow; looked at only as
    it is, it gave five or six tiles, mostly wrong. Stretched back, it reads in order."""
    photo = squashed_to_a_square(rendered_row(list(range(9)), design_seed, 60), 320)
    assert recognize(photo).names == [f"{rank}m" for rank in range(1, 10)]


def photo_of_a_receipt(seed: int) -> bytes:
    """A till receipt on a grey table, a little turned: printed lines of names and prices."""
    from PIL import ImageDraw, ImageFont

    rng = np.random.default_rng(seed)
    font = ImageFont.truetype(str(ROOT / "rendering" / "fonts" / "XuezhanSans-Regular.ttf"), 26)
    image = Image.new("RGB", (900, 1200), (96, 96, 100))
    draw = ImageDraw.Draw(image)
    draw.rectangle((200, 40, 700, 1160), fill=(246, 244, 236))
    draw.text((320, 70), "CORNER SHOP", fill=(20, 20, 20), font=font)
    for line in range(22):
        item = "".join(rng.choice(list("ABCDEFGHIKLMNOPRSTUW ")) for _ in range(int(rng.integers(6, 16))))
        draw.text((230, 140 + 42 * line), item, fill=(30, 30, 30), font=font)
        draw.text(
            (580, 140 + 42 * line), f"{rng.integers(1, 99)}.{rng.integers(100):02d}", fill=(30, 30, 30), font=font
        )
    draw.text((230, 1090), "TOTAL        123.45", fill=(0, 0, 0), font=font)
    turned = image.rotate(float(rng.uniform(-8, 8)), resample=Image.BICUBIC, fillcolor=(96, 96, 100))
    buffer = io.BytesIO()
    turned.save(buffer, "JPEG", quality=88)
    return buffer.getvalue()


def photo_of_a_cat(seed: int) -> bytes:
    """A striped ginger cat on a floor, drawn in a few shapes, with camera noise and blur."""
    from PIL import ImageDraw, ImageFilter

    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (900, 700), (182, 160, 130))
    draw = ImageDraw.Draw(image)
    fur, stripe = (205, 130, 60), (150, 90, 40)
    draw.rectangle((0, 450, 900, 700), fill=(120, 90, 60))
    draw.ellipse((250, 300, 650, 560), fill=fur)
    draw.ellipse((480, 170, 680, 350), fill=fur)
    draw.polygon([(500, 220), (520, 120), (570, 200)], fill=fur)
    draw.polygon([(600, 200), (650, 120), (670, 230)], fill=fur)
    draw.ellipse((530, 230, 560, 260), fill=(40, 120, 40))
    draw.ellipse((600, 230, 630, 260), fill=(40, 120, 40))
    draw.line([(260, 480), (150, 380), (120, 300)], fill=fur, width=30)
    for x in range(270, 640, 40):
        draw.line([(x, 320), (x + 15, 540)], fill=stripe, width=8)
    pixels = np.asarray(image, np.float32) + rng.normal(0, 10, (700, 900, 3))
    noisy = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(1.5))
    buffer = io.BytesIO()
    noisy.save(buffer, "JPEG", quality=88)
    return buffer.getvalue()


def photo_of_noise(seed: int) -> bytes:
    """Camera noise, grey grain or coarse colour blotches (gravel, a patterned cloth): the detector
    finds boxes all over such a picture, a few of them in short runs."""
    rng = np.random.default_rng(seed)
    kind = seed % 3
    if kind == 0:
        pixels = rng.integers(0, 255, (600, 800, 3), dtype=np.uint8)
    elif kind == 1:
        pixels = np.repeat(rng.integers(0, 255, (600, 800, 1), dtype=np.uint8), 3, axis=2)
    else:
        blotches = Image.fromarray(rng.integers(0, 255, (75, 100, 3), dtype=np.uint8))
        pixels = np.asarray(blotches.resize((800, 600), Image.BILINEAR))
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("photo", "seed"),
    [
        (photo_of_noise, 1),  # these three were told their tiles were too small to read (17th session)
        (photo_of_noise, 5),
        (photo_of_noise, 6),
        (photo_of_a_cat, 0),
        (photo_of_a_cat, 1),
        (photo_of_a_cat, 2),
        (photo_of_a_receipt, 0),  # a few unsure tiles: no_tiles since the fourth session
        (photo_of_a_receipt, 1),  # only unsure tiles, however many: no_tiles since the sixth session
        # Until the thirteenth session's classifier, the prices of seed 2 were read as tiles lying sideways.
        (photo_of_a_receipt, 2),
        (photo_of_a_receipt, 3),
        (photo_of_a_receipt, 4),
    ],
    ids=[
        *(f"noise-{seed}" for seed in (1, 5, 6)),
        *(f"cat-{seed}" for seed in range(3)),
        *(f"receipt-{seed}" for seed in range(5)),
    ],
)
def test_a_photo_of_something_else_has_no_tiles(photo, seed: int) -> None:
    """Drawn here, not by the training scripts' distractor photos (other code, other font for receipts)."""
    with pytest.raises(VisionError) as error:
        recognize(photo(seed))
    assert error.value.code == "no_tiles"


def test_a_hand_too_far_away_to_read_is_told_so_with_its_tile_length() -> None:
    """Tiles found in a row but none read: the person is told the tiles are small, not that there are
    none (a drawn cat's blobs, above, still get ``no_tiles``)."""
    with pytest.raises(VisionError) as error:
        recognize(far_away_hand())
    assert error.value.code == "too_small"
    assert error.value.params == {"px": 13}  # 10 px wide tiles of a 3:4 design, found a little large
