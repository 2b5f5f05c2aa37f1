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

Someone who is not seated watches (``Moment.for_watcher``): the open table only, as the group
picture shows it, with every seat's tiles face down.

Most of a frame is the same for the four seats (rivers, melds, wins, chips, names): ``Moment``
builds and encodes that part once per logged action and joins it with each seat's own part, so
the fan-out costs one view's encoding plus four small ones instead of four whole views.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from bot.table import callbacks
from bot.table.runner import TableRunner
from bot.table.views import public_win
from engine.actions import Action, ActionType
from engine.events import Event
from engine.game import Game, Phase, SeatView
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


def event_entries(events: Iterable[Event], seat: int | None, game: Game,
                  seen: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The events as ``seat`` may see them (None: a watcher, who sees what the group sees).
    ``seen`` keeps the entries of events every seat sees alike, for the next seat's frame."""
    out = []
    for event in events:
        shown = event.visible_to(seat)
        if seen is not None and shown is event and id(event) in seen:
            out.append(seen[id(event)])
            continue
        entry = (dataclasses.replace(shown, win=public_win(shown.win, game)) if shown.win is not None
                 else shown).to_dict()
        if seen is not None and shown is event:  # not made private for this seat: the same for all
            seen[id(event)] = entry
        out.append(entry)
    return out


def win_entries(game: Game) -> list[dict[str, Any]]:
    return [public_win(w, game).to_dict() for w in game.wins]


@lru_cache(maxsize=64)
def preset_of(rules: RuleSet) -> str | None:
    """The preset a table's rules are (for the page's header), or None for rules of its own."""
    return rules.preset_name()


def _inner(value: dict[str, Any]) -> str:
    """A JSON object's members without its braces, to be joined with others' into one object."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)[1:-1]


def own_view(view: SeatView | None, game: Game) -> dict[str, Any]:
    """The members of a view that differ from seat to seat, as ``SeatView.to_dict`` writes them;
    for a watcher (None): no tiles, and the voids only once every seat has chosen."""
    if view is None:
        choosing = game.phase in (Phase.SWAP, Phase.VOID)
        voids = [None if choosing or v is None else v.letter for v in game.voids]
        return {"seat": None, "hand": [], "drawn": None, "voids": voids, "swap_given": [], "swap_received": []}
    return {
        "seat": view.seat,
        "hand": [tile_name(t) for t in view.hand],
        "drawn": tile_name(view.drawn) if view.drawn is not None else None,
        "voids": [v.letter if v is not None else None for v in view.voids],
        "swap_given": [tile_name(t) for t in view.swap_given],
        "swap_received": [tile_name(t) for t in view.swap_received],
    }


class Moment:
    """The table after one logged action, as each page is sent it. What every seat sees alike
    (the header, the open part of the view: rivers, melds, wins, chips...) is built and encoded
    once; each seat's own part (its tiles, its decision, the events as it may see them) apart."""

    def __init__(self, runner: TableRunner, events: Sequence[Event], *, can_next: bool) -> None:
        self.runner = runner
        self.events = events
        self.can_next = can_next
        game = runner.game
        header: dict[str, Any] = {
            "type": "state",
            "v": runner.logged,
            "table": runner.table_id,
            "hand_id": runner.hand.id,
            "hand_number": runner.hand.number,
            "rules": preset_of(game.rules),
            "names": [p.name for p in runner.seats],
            "computer": [p.computer for p in runner.seats],
            "auto": [s.auto for s in runner.state],
            "over": game.over,
        }
        if game.over:
            header["final"] = {
                "hands": [[tile_name(t) for t in game.hand(s)] for s in range(len(runner.seats))],
                "end": game.end.value if game.end else None,
                "chips": game.chips(),
            }
        self._views: dict[int, SeatView] = {}
        self._events: dict[int, dict[str, Any]] = {}  # the entries of public events, built once
        seen = self._view(game.dealer).to_dict()
        opened = {key: seen[key] for key in OPEN_VIEW_KEYS}
        opened["wins"] = win_entries(game)
        self._header = _inner(header)
        self._open = _inner(opened)
        self._watched: str | None = None

    def for_seat(self, seat: int, remaining: float | None) -> str:
        """The frame for ``seat`` (``events`` are what happened since its previous frame)."""
        runner, game = self.runner, self.runner.game
        state = runner.state[seat]
        rest = {
            "seat": seat,
            "can_next": self.can_next,
            "seq": state.prompt_seq if not runner.controlled(seat) else None,
            "actions": legal_entries(runner, seat),
            "swap_pick": sorted(state.swap_pick),
            "remaining": remaining,
            "events": event_entries(self.events, seat, game, self._events),
        }
        return self._join(own_view(self._view(seat), game), rest)

    def _view(self, seat: int) -> SeatView:
        if seat not in self._views:
            self._views[seat] = self.runner.game.view(seat)
        return self._views[seat]

    def for_watcher(self) -> str:
        """The frame for someone who is not seated: the table as the group sees it, every hand face
        down, no decision (``seat`` is None). The same for every watcher, so encoded once."""
        if self._watched is None:
            game = self.runner.game
            rest = {"seat": None, "can_next": False, "seq": None, "actions": [], "swap_pick": [], "remaining": None,
                    "events": event_entries(self.events, None, game, self._events)}
            self._watched = self._join(own_view(None, game), rest)
        return self._watched

    def _join(self, own: dict[str, Any], rest: dict[str, Any]) -> str:
        return f'{{{self._header},"view":{{{self._open},{_inner(own)}}},{_inner(rest)}}}'


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
