"""A test-side person at the web table: reads the page's frame and clicks what a person would.

Swap: three tiles of the suit it holds most of, then the confirm button; void: the first suit
offered; on a turn: a win if offered, else select the first discardable tile and tap it again;
on a claim: a win if offered, else pass. Only the page's own buttons are clicked.
"""

from __future__ import annotations

import json
import time
import weakref
from collections import Counter
from typing import Any

from playwright.async_api import TimeoutError as PlaywrightTimeout

CLICK_MS = 10_000
# The script errors of each page watched with ``watch_errors``: a page whose script failed draws no
# buttons, and a click that times out says why.
PAGE_ERRORS: weakref.WeakKeyDictionary[Any, list[str]] = weakref.WeakKeyDictionary()
FRAME = "window.xuezhan && window.xuezhan.frame"
CHANGED = """k => { const f = window.xuezhan.frame;
  return f && JSON.stringify([f.v, f.swap_pick, f.seq, f.over, f.hand_id]) !== k; }"""


def watch_errors(page: Any) -> list[str]:
    """The page's uncaught script errors and the errors in its console, as they happen. The console
    also has the files asked for in vain, the browser's own requests too: without an icon, every
    page logged the 404 of ``/favicon.ico``."""
    errors = PAGE_ERRORS.setdefault(page, [])
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    return errors


async def frame(page: Any) -> dict[str, Any] | None:
    return await page.evaluate(FRAME)


def frame_key(f: dict[str, Any]) -> str:
    return json.dumps([f["v"], f["swap_pick"], f["seq"], f["over"], f["hand_id"]], separators=(",", ":"))


async def waited_on(runner: Any) -> frozenset[int] | None:
    """The seats the table waits for, read between two of its steps, or None while a computer
    player still has a move to make (it makes it at once, so the table is not waiting yet).

    Read under the runner's lock: outside it a move can be half made (the game already at the
    next seat, the prompts and ``logged`` not yet), which a test must never take for the table's
    state. An empty set: the hand is over."""
    async with runner.lock:
        if runner.game.over:
            return frozenset()
        pending = runner.game.pending_seats()
        if any(runner.controlled(seat) for seat in pending):
            return None
        return frozenset(pending)


async def wait_for_frame(page: Any, timeout: float = 15_000) -> dict[str, Any]:
    await page.wait_for_function(f"() => {FRAME}", timeout=timeout)
    found = await frame(page)
    assert found is not None
    return found


async def click_decision(page: Any) -> bool:
    """Make the seat's open decision by clicking; False when the page offers none.

    The frame read here can be overtaken by a newer one before the click lands, and the newer
    frame redraws the buttons. A click whose button went with a frame that moved on counts as
    done; one whose button never came while the frame stood still is a failure, which says what
    the page showed."""
    f = await frame(page)
    if f is None or f["over"] or not f["actions"]:
        return False
    key = frame_key(f)
    try:
        await _click_for(page, f)
    except PlaywrightTimeout as timeout:
        if not await page.evaluate(CHANGED, key):
            shown = await page.locator("#actions").inner_html()
            raise AssertionError(f"no button for {f['actions']} in phase {f['view']['phase']} (auto {f['auto']}); "
                                 f"the bar shows {shown!r}; script errors: {PAGE_ERRORS.get(page)}") from timeout
        return True
    await page.wait_for_function(CHANGED, arg=key, timeout=15_000)
    return True


async def _click_for(page: Any, f: dict[str, Any]) -> None:
    phase, codes = f["view"]["phase"], {a["code"]: a for a in f["actions"]}
    if phase == "swap":
        if len(f["swap_pick"]) == 3:
            await page.click('#actions button[data-code="sc"]', timeout=CLICK_MS)
        else:
            hand = f["view"]["hand"]
            picked_suits = {hand[i][1] for i in f["swap_pick"]}
            suit = picked_suits.pop() if picked_suits else Counter(t[1] for t in hand).most_common(1)[0][0]
            position = next(i for i, t in enumerate(hand) if t[1] == suit and i not in f["swap_pick"])
            await page.locator("#hand button").nth(position).click(timeout=CLICK_MS)
    elif phase == "void":
        await page.locator("#actions button").first.click(timeout=CLICK_MS)
    else:
        wins = [c for c, a in codes.items() if a["type"] == "win"]
        discards = [a["tile"] for a in f["actions"] if a["type"] == "discard"]
        if wins:
            await page.click(f'#actions button[data-code="{wins[0]}"]', timeout=CLICK_MS)
        elif discards:
            tile = page.locator("#hand button:not([disabled])").filter(
                has=page.locator(f'img[data-tile="{discards[0]}"]')).first
            await tile.click(timeout=CLICK_MS)
            await page.wait_for_selector("#hand button.selected", timeout=CLICK_MS)
            await tile.click(timeout=CLICK_MS)
        else:
            await page.click('#actions button[data-code="x"]', timeout=CLICK_MS)


async def play_until_over(pages: list[Any], timeout: float = 120.0, others: Any = None) -> None:
    """Click for every page until each shows the settlement; ``others()`` lets other people act."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        acted = False
        for page in pages:
            acted = await click_decision(page) or acted
        if others is not None:
            acted = await others() or acted
        frames = [await frame(page) for page in pages]
        if all(f is not None and f["over"] for f in frames):
            return
        if not acted:
            await pages[0].wait_for_timeout(30)
    raise AssertionError(f"the hand did not end in {timeout} s")
