"""A simple person at the web table, for tests and ``benchmarks/live_load.py``: the messages a
page would send for the decision in a frame, chosen only from the frame's legal actions."""

from __future__ import annotations

from collections import Counter
from typing import Any


def decide(frame: dict[str, Any], *, repeat_discard: bool = False) -> list[dict[str, Any]]:
    """Swap the first three tiles of a suit held three times, else win, void or pass, else discard.

    ``repeat_discard`` sends the discard twice, as a double tap would (the second must change nothing).
    """
    actions = {a["code"]: a for a in frame["actions"]}
    seq = frame["seq"]
    if "sc" in actions:
        hand = frame["view"]["hand"]
        suit = next(s for s, n in Counter(t[1] for t in hand).most_common() if n >= 3)
        picks = [i for i, t in enumerate(hand) if t[1] == suit][:3]
        return [{"seq": seq, "code": f"t{i}"} for i in picks] + [{"seq": seq, "code": "sc"}]
    for kind in ("win", "void", "pass"):
        found = next((c for c, a in actions.items() if a["type"] == kind), None)
        if found:
            return [{"seq": seq, "code": found}]
    discard = {"seq": seq, "code": next(c for c, a in actions.items() if a["type"] == "discard")}
    return [discard, dict(discard)] if repeat_discard else [discard]
