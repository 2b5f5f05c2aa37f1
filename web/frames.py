"""What one seat's socket is sent: its ``SeatView``, the public events, and its legal actions.

A frame is the whole picture a seat may see (so a page that missed frames is right again with
the next one) plus the events since the previous frame, each as ``Event.visible_to(seat)``
shows it. Legal actions travel as the same short codes the DM buttons carry
(``bot.table.callbacks``), with the decision's sequence: the page offers exactly these and
sends one back, and the runner checks it like a button press.

Concealed tiles of other seats are never in a frame while the hand is being played; when it is
over, every hand is shown with the settlement. A win is shown as the group sees it
(``bot.table.views.public_win``): in 血流成河 a winner plays on, so only the winning tile and the
melds of that hand are open until the winner leaves or the hand ends.

Someone who is not seated watches (``watch_frame``): the open table only, as the group picture
shows it, with every seat's tiles face down.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from bot.table import callbacks
from bot.table.runner import TableRunner
from bot.table.views import public_win
from engine.actions import Action, ActionType
from engine.events import Event
from engine.game import Game, Phase
from engine.rules import RuleSet
from engine.tiles import tile_name

MAX_CATCH_UP_EVENTS = 60
# What a watcher's view keeps of a seat's SeatView: the fields every seat sees alike.
OPEN_VIEW_KEYS = ("phase", "dealer", "current", "melds", "rivers", "won_tiles", "revealed", "in_play", "wall_count",
                  "offered", "offered_by", "swap_direction", "transfers", "chips", "pending")


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


def event_entries(events: Iterable[Event], seat: int | None, game: Game) -> list[dict[str, Any]]:
    """The events as ``seat`` may see them (None: a watcher, who sees what the group sees)."""
    out = []
    for event in events:
        shown = event.visible_to(seat)
        if shown.win is not None:
            shown = dataclasses.replace(shown, win=public_win(shown.win, game))
        out.append(shown.to_dict())
    return out


def win_entries(game: Game) -> list[dict[str, Any]]:
    return [public_win(w, game).to_dict() for w in game.wins]


@lru_cache(maxsize=64)
def preset_of(rules: RuleSet) -> str | None:
    """The preset a table's rules are (for the page's header), or None for rules of its own."""
    return rules.preset_name()


def _header(runner: TableRunner, seat: int | None, can_next: bool) -> dict[str, Any]:
    game = runner.game
    frame: dict[str, Any] = {
        "type": "state",
        "v": runner.logged,
        "table": runner.table_id,
        "hand_id": runner.hand.id,
        "hand_number": runner.hand.number,
        "rules": preset_of(game.rules),
        "seat": seat,
        "names": [p.name for p in runner.seats],
        "computer": [p.computer for p in runner.seats],
        "auto": [s.auto for s in runner.state],
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


def seat_frame(runner: TableRunner, seat: int, events: Sequence[Event], *, remaining: float | None,
               can_next: bool) -> dict[str, Any]:
    """The frame for ``seat`` now; ``events`` are what happened since its previous frame."""
    game = runner.game
    view = game.view(seat).to_dict()
    view.pop("legal")  # sent as codes with the sequence, below
    view["wins"] = win_entries(game)
    state = runner.state[seat]
    frame = _header(runner, seat, can_next)
    frame.update({
        "view": view,
        "seq": state.prompt_seq if not runner.controlled(seat) else None,
        "actions": legal_entries(runner, seat),
        "swap_pick": sorted(state.swap_pick),
        "remaining": remaining,
        "events": event_entries(events, seat, game),
    })
    return frame


def watch_frame(runner: TableRunner, events: Sequence[Event]) -> dict[str, Any]:
    """The frame for someone who is not seated: the table as the group sees it, no hand, no
    decision (``seat`` is None). Voids are hidden while they are being chosen."""
    game = runner.game
    seen = game.view(game.dealer).to_dict()
    view: dict[str, Any] = {key: seen[key] for key in OPEN_VIEW_KEYS}
    choosing = game.phase in (Phase.SWAP, Phase.VOID)
    view.update(seat=None, hand=[], drawn=None, swap_given=[], swap_received=[], wins=win_entries(game),
                voids=[None] * len(runner.seats) if choosing else seen["voids"])
    frame = _header(runner, None, can_next=False)
    frame.update({"view": view, "seq": None, "actions": [], "swap_pick": [], "remaining": None,
                  "events": event_entries(events, None, game)})
    return frame


def events_since(runner: TableRunner, seat: int | None, version: int) -> list[Event]:
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
