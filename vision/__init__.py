"""Recognising the tiles of a hand in a photo: ``recognize(image_bytes) -> Recognition``.

Two stages, both small ONNX networks trained by ``scripts/train_vision.py``: a detector finds
tile boxes, a classifier names each crop (27 suited tiles or "not a suited tile"); the suited
ones are returned in reading order. See docs/vision.md.

The recogniser (numpy, Pillow, onnxruntime) is imported on first use of one of its names, so
that importing ``vision`` or ``vision.errors`` costs a program that has not seen a photo yet
nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vision.errors import VisionError

if TYPE_CHECKING:
    from vision.pipeline import Recognition, RecognizedTile, recognize, recognize_pixels

__all__ = ["Recognition", "RecognizedTile", "VisionError", "recognize", "recognize_pixels"]
_LAZY = {"Recognition", "RecognizedTile", "recognize", "recognize_pixels"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from vision import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'vision' has no attribute {name!r}")
