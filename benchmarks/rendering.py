"""How fast and how small the images are, against the targets of issue 4.

Run: ``python benchmarks/rendering.py``. Prints median times (compose + encode) and
encoded sizes for a hand, the table, a result card and a tally chart, and two ratios
measured in the same run: cached sprites against drawing every tile afresh (what a
naive renderer does), and palette PNG against true-colour PNG.

Targets: hand < 10 ms and < 40 KB, table < 40 ms, every side <= 1280 px.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rendering import (
    MAX_SIDE,
    encode_jpeg,
    encode_png,
    render_hand,
    render_result_card,
    render_table,
    render_tally_chart,
    samples,
)
from rendering.encode import shared_palette
from rendering.tiles import _sprite  # the sprite cache, cleared for the naive baseline


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm caches and imports
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    start = time.perf_counter()
    shared_palette()
    print(f"shared palette, built once per process: {(time.perf_counter() - start) * 1000:.0f} ms")
    hand = samples.hand_samples()["void_with_buttons"].kwargs
    table = samples.table_sample()
    card = samples.hand_end_sample()
    tally = samples.tally_sample()

    def hand_png() -> bytes:
        return encode_png(render_hand(**hand))

    def hand_naive() -> bytes:
        _sprite.cache_clear()
        return encode_png(render_hand(**hand))

    rows = [
        ("hand compose", median_ms(lambda: render_hand(**hand), 300), None, 10.0),
        ("hand compose + PNG", median_ms(hand_png, 300), len(hand_png()), 10.0),
        (
            "hand compose + JPEG",
            median_ms(lambda: encode_jpeg(render_hand(**hand)), 300),
            len(encode_jpeg(render_hand(**hand))),
            10.0,
        ),
        (
            "table compose + PNG",
            median_ms(lambda: encode_png(render_table(table)), 100),
            len(encode_png(render_table(table))),
            40.0,
        ),
        (
            "table compose + JPEG",
            median_ms(lambda: encode_jpeg(render_table(table)), 100),
            len(encode_jpeg(render_table(table))),
            40.0,
        ),
        (
            "result card + PNG",
            median_ms(lambda: encode_png(render_result_card(card)), 50),
            len(encode_png(render_result_card(card))),
            None,
        ),
        (
            "tally chart + PNG",
            median_ms(lambda: encode_png(render_tally_chart(tally)), 50),
            len(encode_png(render_tally_chart(tally))),
            None,
        ),
    ]
    print(f"{'image':24} {'median':>9} {'bytes':>9}  target")
    ok = True
    for name, ms, size, target in rows:
        verdict = "" if target is None else ("ok" if ms < target else "SLOW") + f" (< {target:g} ms)"
        ok &= target is None or ms < target
        print(f"{name:24} {ms:7.2f} ms {'' if size is None else f'{size / 1024:6.1f} KB':>9}  {verdict}")

    hand_size = len(hand_png())
    print(f"hand PNG size: {hand_size / 1024:.1f} KB ({'ok' if hand_size < 40_000 else 'TOO BIG'} < 40 KB)")
    ok &= hand_size < 40_000
    sides = {
        "hand": render_hand(**hand).size,
        "table": render_table(table).size,
        "result card": render_result_card(card).size,
        "tally": render_tally_chart(tally).size,
    }
    print("sizes: " + ", ".join(f"{k} {w}x{h}" for k, (w, h) in sides.items()) + f" (max side {MAX_SIDE})")
    ok &= all(max(s) <= MAX_SIDE for s in sides.values())

    cached = median_ms(hand_png, 100)
    naive = median_ms(hand_naive, 20)
    print(
        f"cached sprites vs drawing every tile afresh: {cached:.2f} ms vs {naive:.2f} ms"
        f" -> {naive / cached:.1f}x faster"
    )
    img = render_table(table)
    palette, truecolour = len(encode_png(img)), len(encode_png(img, palette=False))
    t_pal = median_ms(lambda: encode_png(img), 30)
    t_true = median_ms(lambda: encode_png(img, palette=False), 30)
    print(
        f"table PNG palette vs true colour: {palette / 1024:.1f} KB in {t_pal:.1f} ms vs "
        f"{truecolour / 1024:.1f} KB in {t_true:.1f} ms -> {truecolour / palette:.1f}x smaller"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
