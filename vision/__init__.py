"""Recognising the tiles of a hand in a photo: ``recognize(image_bytes) -> Recognition``.

Two stages, both small ONNX networks trained by ``scripts/train_vision.py``: a detector finds
tile boxes, a classifier names each crop (27 suited tiles or "not a suited tile"); the suited
ones are returned in reading order. See docs/vision.md.
"""

from vision.errors import VisionError
from vision.pipeline import Recognition, RecognizedTile, recognize, recognize_pixels

__all__ = ["Recognition", "RecognizedTile", "VisionError", "recognize", "recognize_pixels"]
