"""``xuezhan gallery OUT_DIR``: every kind of image for sample situations, to look at at once.

A person reviewing the look (or a translation of the labels) opens one folder instead
of playing a hand; the tests run the same command to check sizes and privacy. Telegram
shows a photo about 400 px wide, so ``OUT_DIR/400px/`` holds a copy of each picture at that
width: what a phone really shows.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from PIL import Image


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gallery",
        help="write every kind of image for sample situations into a folder",
        description="Draw tiles, hands, tables, a player's screen, result and score cards and a tally chart "
        "for sample situations, and write them as PNG (or JPEG) files into OUT_DIR, with copies 400 px wide "
        "(as a phone shows them) in OUT_DIR/400px.",
    )
    parser.add_argument(
        "out_dir", metavar="OUT_DIR", type=Path, help="folder to write into (created if missing)"
    )
    parser.add_argument("--jpeg", action="store_true", help="write JPEG instead of palette PNG")
    parser.set_defaults(func=run)


def gallery_images() -> dict[str, Callable[[], Image.Image]]:
    """Name -> a function drawing that image; names become file names."""
    from engine.tiles import ALL_TILES
    from rendering import (
        render_hand,
        render_result_card,
        render_score_card,
        render_table,
        render_tally_chart,
        render_tiles,
        samples,
    )

    images: dict[str, Callable[[], Image.Image]] = {
        "tiles_all": lambda: render_tiles(
            [*ALL_TILES[:9], None, *ALL_TILES[9:18], None, *ALL_TILES[18:]], tile_width=40, highlight={9}
        ),
    }
    for name, hand in samples.hand_samples().items():
        images[f"hand_{name}"] = lambda hand=hand: render_hand(**hand.kwargs)
    images["table_start"] = lambda: render_table(samples.table_start_sample())
    images["table_midgame"] = lambda: render_table(samples.table_sample())
    images["screen_midgame"] = lambda: samples.screen_sample()
    images["score_card"] = lambda: render_score_card(samples.scored_sample(), footer="chengdu · 底 1")
    images["result_win"] = lambda: render_result_card(samples.win_card_sample())
    images["result_hand_end"] = lambda: render_result_card(samples.hand_end_sample())
    images["tally_day"] = lambda: render_tally_chart(samples.tally_sample(), subtitle="2026-11-29")
    return images


PHONE_WIDTH = 400
PHONE_DIR = "400px"


def phone_copy(img: Image.Image) -> Image.Image:
    """``img`` as a phone shows it: scaled to PHONE_WIDTH px wide (never enlarged)."""
    if img.width <= PHONE_WIDTH:
        return img
    height = max(1, round(img.height * PHONE_WIDTH / img.width))
    return img.resize((PHONE_WIDTH, height), Image.Resampling.LANCZOS)


def run(args: argparse.Namespace) -> int:
    from rendering import encode_jpeg, encode_png

    out: Path = args.out_dir
    try:
        (out / PHONE_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"error: cannot create {out}: {exc.strerror}", file=sys.stderr)
        return 2
    suffix, encode = (".jpg", encode_jpeg) if args.jpeg else (".png", encode_png)
    for name, draw in gallery_images().items():
        img = draw()
        data = encode(img)
        path = out / f"{name}{suffix}"
        try:
            path.write_bytes(data)
            (out / PHONE_DIR / f"{name}{suffix}").write_bytes(encode(phone_copy(img)))
        except OSError as exc:
            print(f"error: cannot write {path}: {exc.strerror}", file=sys.stderr)
            return 2
        print(f"{path}  {img.width}x{img.height}  {len(data) // 1024} KB")
    return 0
