"""``xuezhan recognize PHOTO [--json]``: the suited tiles in a photo of a hand.

Prints the tiles in our notation with a confidence each; ``--json`` prints one object,
``{"ok": true, "tiles": [...], "confidence": [...], ...}`` or
``{"ok": false, "error": code, "message": ...}``. A photo that cannot be read or shows no
tiles exits with status 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.tiles import format_tiles


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("recognize", help="recognise the tiles in a photo of a hand")
    parser.add_argument("photo", type=Path, help="a photo (JPEG, PNG, ...) of the tiles")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _photo_bytes(photo: Path, limit: int) -> bytes:
    """The file's bytes, or the ``VisionError`` that says why there are none to read."""
    from vision import VisionError

    try:
        if photo.stat().st_size > limit:
            raise VisionError("too_large", f"the file has {photo.stat().st_size} bytes; the limit is {limit}")
        return photo.read_bytes()
    except FileNotFoundError:
        raise VisionError("not_found", f"no such file: {photo}") from None
    except OSError as error:  # a folder, no permission
        raise VisionError("not_found", f"cannot read {photo}: {error.strerror or error}") from None


def run(args: argparse.Namespace) -> int:
    from vision import VisionError, recognize
    from vision.image import MAX_BYTES

    try:
        result = recognize(_photo_bytes(args.photo, MAX_BYTES))
    except VisionError as error:
        if args.json:
            print(
                json.dumps({"ok": False, "error": error.code, "message": error.message}, ensure_ascii=False)
            )
        else:
            print(f"error ({error.code}): {error.message}")
        return 2
    if args.json:
        print(json.dumps({"ok": True, **result.to_dict()}, ensure_ascii=False))
        return 0
    print(format_tiles(result.tile_list))
    for tile in result.tiles:
        mark = "  <- check" if tile.low_confidence else ""
        print(f"  row {tile.row + 1}  {tile.name:>2}  {tile.confidence:.2f}{mark}")
    if result.ignored:
        print(f"({result.ignored} other tiles ignored: winds, dragons or flowers)")
    return 0
