"""The one error type of the recogniser, with a machine-readable code for the CLI and the bot."""

from __future__ import annotations


class VisionError(ValueError):
    """A photo that cannot be recognised, and why.

    Codes: ``not_an_image`` (bytes Pillow cannot decode), ``too_large`` (over the byte limit),
    ``too_many_pixels`` (decoded size over the pixel limit, e.g. a decompression bomb),
    ``no_tiles`` (a readable photo in which no suited tile was found).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
