"""A test-side person at the web table: reads the page's frame and clicks what a person would.

Swap: three tiles of the suit it holds most of, then the confirm button; void: the first suit
offered; on a turn: a win if offered, else select the first discardable tile and tap it again;
on a claim: a win if offered, else pass. Only the page's own buttons are clicked.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

FRAME = "window.xuezhan && window.xuezhan.frame"
CHANGED = """k => { const f = window.xuezhan.frame;
  return f && JSON.stringify([f.v, f.swap_pick, f.seq, f.over, f.hand_id]) !== k; }"""


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
    """Make the seat's open decision by clicking; False when the page offers none."""
    f = await frame(page)
    if f is None or f["over"] or not f["actions"]:
        return False
    phase, codes = f["view"]["phase"], {a["code"]: a for a in f["actions"]}
    if phase == "swap":
        if len(f["swap_pick"]) == 3:
            await page.click('#actions button[data-code="sc"]')
        else:
            hand = f["view"]["hand"]
            picked_suits = {hand[i][1] for i in f["swap_pick"]}
            suit = picked_suits.pop() if picked_suits else Counter(t[1] for t in hand).most_common(1)[0][0]
            position = next(i for i, t in enumerate(hand) if t[1] == suit and i not in f["swap_pick"])
            await page.locator("#hand button").nth(position).click()
    elif phase == "void":
        await page.locator("#actions button").first.click()
    else:
        wins = [c for c, a in codes.items() if a["type"] == "win"]
        discards = [a["tile"] for a in f["actions"] if a["type"] == "discard"]
        if wins:
            await page.click(f'#actions button[data-code="{wins[0]}"]')
        elif discards:
            tile = page.locator("#hand button:not([disabled])").filter(
                has=page.locator(f'img[data-tile="{discards[0]}"]')).first
            await tile.click()
            await page.wait_for_selector("#hand button.selected")
            await tile.click()
        else:
            await page.click('#actions button[data-code="x"]')
    await page.wait_for_function(CHANGED, arg=frame_key(f), timeout=15_000)
    return True


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
