"""Where the bot's CPU goes: shares of py-spy's samples from ``bot_load.py --profile``.

    python benchmarks/bot_load_profile.py /tmp/bot-4.txt [/tmp/bot-50.txt ...]

Reads py-spy's raw (collapsed) stacks and prints, for each file, the share of all busy samples
whose stack passes through each part of the bot. A stack is counted once per line it matches,
so the indented lines (parts of the one above) overlap it. The event loop's own share is printed
apart: callback answers wait for it, not for the drawing threads.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

# Innermost frames of threads that wait rather than work: py-spy's --nonblocking sampling counts
# a thread blocked in a system call as busy. The event loop in epoll, aiosqlite's thread waiting
# for its next statement, threads waiting on a condition or event, idle drawing threads waiting
# for work (13 % of the 4-table samples were those).
WAITS = ("(selectors.py", "_connection_worker_thread (aiosqlite/core.py", "Condition.wait (threading.py",
         "Event.wait (threading.py", "_worker (concurrent/futures/thread.py")
# A COMMIT with synchronous=FULL waits for fsync: counted, but shown on a line of its own.
COMMIT = "GroupCommitter._hop_batch.<locals>.work (storage/group_commit.py:156)"


# (label, indent, markers): a sample belongs to the line if any marker is in its stack.
PARTS: list[tuple[str, int, tuple[str, ...]]] = [
    ("drawing threads (presenter: draw + encode)", 0, ("_png.<locals>", "_photo.<locals>")),
    ("encode (quantize + zlib / JPEG)", 1, ("encode_png", "encode_jpeg", "encode_photo")),
    ("the table (the group's, and the DM's drawn in place)", 1, ("draw_table",)),
    ("render_seat_screen (DM table + hand + compose)", 1, ("render_seat_screen",)),
    ("render_hand", 1, ("render_hand",)),
    ("result cards", 1, ("render_result_card",)),
    ("LANCZOS shrink (shrink_to_limit resize)", 1, ("shrink_to_limit",)),
    ("PTB's request layer (building and sending calls)", 0, ("telegram/request", "telegram/_bot.py")),
    ("HTTP client (aiohttp; httpx / httpcore before it)", 1, ("aiohttp/", "bot/http.py", "httpx/", "httpcore/")),
    ("storage (our code and the aiosqlite thread)", 0, ("storage/", "aiosqlite/")),
    ("of which a group commit's COMMIT (mostly waiting for fsync)", 1, (COMMIT,)),
    ("engine and computer players", 0, ("engine/",)),
    ("presenter on the event loop (views, captions, keyboards)", 0, ("bot/table/views.py",)),
]
# What the event loop's own samples are doing, first match wins.
LOOP_PARTS: list[tuple[str, tuple[str, ...]]] = [
    ("HTTP client (aiohttp; httpx / httpcore before it)", ("aiohttp/", "bot/http.py", "httpx/", "httpcore/")),
    ("PTB building requests and parsing answers", ("telegram/_bot.py", "telegram/request", "telegram/_")),
    ("rate limiter", ("bot/ratelimit.py",)),
    ("presenter", ("bot/table/presenter.py",)),
    ("runner and the press handler", ("bot/table/runner.py", "bot/table/feature.py")),
    ("storage", ("storage/",)),
    ("PTB dispatching, job queue", ("telegram/ext/", "apscheduler/")),
]


def read_samples(path: Path) -> list[tuple[str, int]]:
    """(stack, count) of each line of a py-spy raw file, without the samples of waiting threads."""
    out: list[tuple[str, int]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        leaf = stack.rsplit(";", 1)[-1]
        if stack and count.isdigit() and not any(leaf.startswith(w) or w in leaf for w in WAITS):
            out.append((stack, int(count)))
    return out


def shares(samples: list[tuple[str, int]]) -> tuple[int, Counter[str], int]:
    total = sum(n for _, n in samples)
    found: Counter[str] = Counter()
    for stack, n in samples:
        for label, _, markers in PARTS:
            if any(m in stack for m in markers):
                found[label] += n
    loop = 0
    for stack, n in samples:
        if "MainThread" not in stack:
            continue
        loop += n
        label = next((label for label, markers in LOOP_PARTS if any(m in stack for m in markers)), "other")
        found[f"loop: {label}"] += n
    return total, found, loop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", type=Path, nargs="+", help="py-spy raw outputs of bot_load.py --profile")
    args = parser.parse_args(argv)
    results = [(path, *shares(read_samples(path))) for path in args.files]
    print(f"{'':58}" + "".join(f"{p.name[-14:]:>16}" for p, *_ in results))
    print(f"{'busy samples':58}" + "".join(f"{t:>16}" for _, t, _, _ in results))
    for label, indent, _ in PARTS:
        cells = "".join(f"{100 * found[label] / t if t else 0:>15.0f}%" for _, t, found, _ in results)
        print(f"{'  ' * indent + label:58}{cells}")
    print(f"{'event loop thread (all it does)':58}"
          + "".join(f"{100 * loop / t if t else 0:>15.0f}%" for _, t, _, loop in results))
    for label in [label for label, _ in LOOP_PARTS] + ["other"]:
        cells = "".join(f"{100 * found[f'loop: {label}'] / t if t else 0:>15.0f}%" for _, t, found, _ in results)
        print(f"{'  ' + label:58}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
