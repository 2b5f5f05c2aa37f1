"""The one error type of the recogniser, with a machine-readable code for the CLI and the bot."""

from __future__ import annotations

# The largest photo file accepted (beyond it: ``too_large``). Here, not beside the decoder, so the
# bot can check a photo's announced size without importing the recogniser (numpy) at start-up.
MAX_BYTES = 20 * 1024 * 1024


class VisionError(ValueError):
    """A photo that cannot be recognised, and why.

    Codes: ``not_an_image`` (bytes Pillow cannot decode), ``too_large`` (over the byte limit),
    ``too_many_pixels`` (decoded size over the pixel limit, e.g. a decompression bomb),
    ``no_tiles`` (a readable photo in which no suited tile was found), ``too_small`` (tiles were
    found but none could be read, and they are small in the photo: ``params["px"]`` is their median
    long side, so the person can be told to come closer rather than that there are no tiles).
    ``params`` holds such facts for the person's message, as ``HandError.params`` does.
    """

    def __init__(self, code: str, message: str, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = params
