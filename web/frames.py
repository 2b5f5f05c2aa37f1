"""What one seat's socket is sent: its ``SeatView``, the public events, and its legal actions.

A frame is the whole picture a seat may see (so a page that missed frames is right again with
the next one) plus the events since the previous frame, each as ``Event.visible_to(seat)``
shows it. Legal actions travel as the same short codes the DM buttons carry
(``bot.table.callbacks``), with the decision's sequence: the page offers exactly these and
sends one back, and the runner checks it like a button press.

Concealed tiles of other seats are never in a frame while the hand is being played; when it is
over, every hand is shown with the settlement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bot.table import callbacks
from bot.table.runner import TableRunner
from engine.actions import Action, ActionType
from engine.events import Event
from engine.game import Game
from engine.tiles import tile_name

MAX_CATCH_UP_EVENTS = 60


def action_entry(action: Action) -> dict[str, Any]:
    """A legal play decision as the page sees it: its code and what it concerns."""
    out: dict[str, Any] = {"code": callbacks.action_code(action), "type": action.type.value}
    if action.tile is not None:
        out["tile"] = tile_name(action.tile)
    if action.suit is not None:
        out["suit"] = action.suit.letter
    return out


def legal_entries(runner: TableRunner, seat: int) -> list[dict[str, Any]]:
    """The seat's open decision (nothing while a computer plays for it). Swaps are built from
    toggles on the page, so the swap phase sends the confirm code instead of each choice."""
    state = runner.state[seat]
    if state.prompt_seq is None or runner.controlled(seat):
        return []
    if any(a.type is ActionType.SWAP for a in state.legal):
        return [{"code": callbacks.SWAP_CONFIRM, "type": "swap"}]
    return [action_entry(a) for a in state.legal]


def event_entries(events: Iterable[Event], seat: int) -> list[dict[str, Any]]:
    return [e.visible_to(seat).to_dict() for e in events]


def seat_frame(runner: TableRunner, seat: int, events: Sequence[Event], *, remaining: float | None,
               can_next: bool) -> dict[str, Any]:
    """The frame for ``seat`` now; ``events`` are what happened since its previous frame."""
    game = runner.game
    view = game.view(seat).to_dict()
    view.pop("legal")  # sent as codes with the sequence, below
    state = runner.state[seat]
    frame: dict[str, Any] = {
        "type": "state",
        "v": runner.logged,
        "table": runner.table_id,
        "hand_id": runner.hand.id,
        "hand_number": runner.hand.number,
        "seat": seat,
        "names": [p.name for p in runner.seats],
        "computer": [p.computer for p in runner.seats],
        "auto": [s.auto for s in runner.state],
        "view": view,
        "seq": state.prompt_seq if not runner.controlled(seat) else None,
        "actions": legal_entries(runner, seat),
        "swap_pick": sorted(state.swap_pick),
        "remaining": remaining,
        "events": event_entries(events, seat),
        "over": game.over,
        "can_next": can_next,
    }
    if game.over:
        frame["final"] = {
            "hands": [[tile_name(t) for t in game.hand(s)] for s in range(len(runner.seats))],
            "end": game.end.value if game.end else None,
            "chips": game.chips(),
        }
    return frame


def events_since(runner: TableRunner, seat: int, version: int) -> list[Event]:
    """Events a page that saw ``version`` actions missed, rebuilt from the hand's action log
    (only the last ``MAX_CATCH_UP_EVENTS``: the frame itself carries the whole picture)."""
    game = runner.game
    if not 0 <= version < runner.logged:
        return []
    replay = Game.replay(game.rules, runner.hand.seed, runner.hand.dealer, game.actions[:version])
    missed: list[Event] = []
    for action in game.actions[version:runner.logged]:
        missed += replay.apply(action)
    return [e.visible_to(seat) for e in missed[-MAX_CATCH_UP_EVENTS:]]
