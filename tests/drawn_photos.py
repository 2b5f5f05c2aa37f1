"""Photos drawn for tests from the training scripts' tile designs (``scripts/vision_designs``):
a row turned by any angle, and a hand photographed from too far away."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from vision_designs import make_design, sprite

CLOTH = (40, 110, 70)


def turned_row(tiles: list[Image.Image], degrees: float, pitch: int) -> tuple[Image.Image, np.ndarray]:
    """``tiles`` side by side, touching, each ``pitch`` wide, on a green cloth, the whole row
    turned ``degrees`` counter-clockwise; and each tile's upright bounding box in the picture."""
    width, height = pitch * len(tiles), round(pitch * tiles[0].height / tiles[0].width)
    row = Image.new("RGBA", (width, height))
    for index, tile in enumerate(tiles):
        row.paste(tile.resize((pitch, height), Image.LANCZOS), (index * pitch, 0))
    turned = row.rotate(degrees, expand=True, resample=Image.BICUBIC)
    picture = Image.new("RGB", (turned.width + 40, turned.height + 40), CLOTH)
    picture.paste(turned, (20, 20), turned)
    angle = np.radians(degrees)
    # Where each tile's corners go: PIL turns counter-clockwise on the screen (y down).
    centre = np.asarray([width / 2, height / 2])
    new_centre = np.asarray([turned.width / 2 + 20, turned.height / 2 + 20])
    turn = np.asarray([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])
    boxes = []
    for index in range(len(tiles)):
        corners = np.asarray([[index * pitch, 0], [(index + 1) * pitch, 0], [index * pitch, height],
                              [(index + 1) * pitch, height]], dtype=float)
        placed = (corners - centre) @ turn.T + new_centre
        boxes.append([*placed.min(axis=0), *placed.max(axis=0)])
    return picture, np.asarray(boxes, dtype=np.float32)


def far_away_hand() -> bytes:
    """A JPEG of 13 tiles about 13 px long in a 900 x 600 photo, a little out of focus, as a hand
    shot from across the room: the detector finds the row, the classifier reads none of it surely."""
    design = make_design(20)
    row, _ = turned_row([sprite(design, face) for face in (0, 1, 2, 4, 5, 6, 9, 10, 11, 13, 14, 15, 18)], 0, 10)
    photo = Image.new("RGB", (900, 600), CLOTH)
    photo.paste(row, (150, 250))
    buffer = io.BytesIO()
    photo.filter(ImageFilter.GaussianBlur(1.2)).save(buffer, "JPEG", quality=70)
    return buffer.getvalue()
