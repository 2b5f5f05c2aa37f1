"""What each seat's socket is sent, read frame by frame over a whole hand of four people on
WebSocket clients: its own tiles and public facts only, never another seat's concealed tile or
the wall; actions with a stale or repeated sequence change nothing."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import aiohttp
from web_person import decide

from engine.game import Game
from engine.tiles import tile_name
from web.auth import seat_token

TILE = re.compile(r"^[1-9][mps]$")
FRAME_KEYS = {"type", "v", "table", "hand_id", "hand_number", "seat", "names", "computer", "auto", "view", "seq",
              "actions", "swap_pick", "remaining", "events", "over", "can_next", "final"}
VIEW_KEYS = {"seat", "phase", "dealer", "current", "hand", "drawn", "melds", "rivers", "won_tiles", "revealed",
             "voids", "in_play", "wall_count", "offered", "offered_by", "swap_direction", "swap_given",
             "swap_received", "wins", "transfers", "chips", "pending"}
# Where a tile may appear in a seat's frame: its own tiles, and what lies open on the table.
OWN_OR_PUBLIC = {("view", "hand"), ("view", "drawn"), ("view", "rivers"), ("view", "won_tiles"),
                 ("view", "revealed"), ("view", "offered"), ("view", "swap_given"), ("view", "swap_received"),
                 ("view", "wins"), ("actions",)}


def walk(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from walk(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from walk(inner, (*path, index))
    else:
        yield path, value


def names(tiles) -> list[str]:
    return [tile_name(t) for t in tiles]


class Truth:
    """The real game after each number of logged actions (replayed from the runner's log)."""

    def __init__(self, game: Game) -> None:
        replay = Game(game.rules, game.seed, game.dealer)
        self.states = []
        for action in [*game.actions, None]:
            self.states.append({
                "hands": [names(replay.hand(s)) for s in range(4)],
                "in_play": list(replay.in_play),
                "rivers": [names(r) for r in replay.rivers],
                "melds": [[m.notation() for m in ms] for ms in replay.melds],
                "over": replay.over,
            })
            if action is not None:
                replay.apply(action)


def check_frame(frame: dict[str, Any], truth: Truth) -> None:
    seat, state = frame["seat"], truth.states[frame["v"]]
    view = frame["view"]
    assert set(frame) <= FRAME_KEYS and set(view) <= VIEW_KEYS, "a new field: decide whether a seat may see it"
    assert view["hand"] == state["hands"][seat]
    assert view["rivers"] == state["rivers"] and view["melds"] == state["melds"]
    for other in range(4):
        if other != seat:
            assert view["revealed"][other] == ([] if state["in_play"][other] else state["hands"][other])
    assert ("final" in frame) == frame["over"] == state["over"]
    for path, value in walk(frame):
        if not (isinstance(value, str) and TILE.match(value)):
            continue
        if path[0] == "final":
            continue  # the hand is over: every hand is shown with the settlement
        if path[0] == "events":
            event = frame["events"][path[1]]
            assert not event.get("private") or event.get("seat") == seat, f"another seat's secret: {event}"
            continue
        assert path[:2] in OWN_OR_PUBLIC or path[:1] in OWN_OR_PUBLIC, f"tile {value} at {path}"
    shown = Counter(view["hand"]) + Counter(t for r in view["rivers"] for t in r)
    assert all(n <= 4 for n in shown.values())


async def play_seat(url: str, token: str, frames: list[dict[str, Any]], refusals: list[str]) -> None:
    acted: set[tuple[int, int]] = set()
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "ws") as ws:
        await ws.send_json({"hello": {"token": token}})
        over = False
        while True:
            try:  # once the hand is over, the replies still on their way are read too
                message = await ws.receive(timeout=0.5 if over else 30)
            except TimeoutError:
                return
            data = json.loads(message.data)
            if data["type"] == "refused":
                refusals.append(data["key"])
            if data["type"] != "state":
                continue
            frames.append(data)
            over = data["over"]
            if data["actions"] and (data["hand_id"], data["seq"]) not in acted:
                acted.add((data["hand_id"], data["seq"]))
                for act in decide(data, repeat_discard=True):
                    await ws.send_json({"act": act})


async def test_every_frame_shows_a_seat_only_its_own_tiles_and_the_open_table(local) -> None:
    table, runner = await local.open_table(4)
    tokens = [seat_token(local.secret, table.id, p.user_id) for p in runner.seats]
    frames: list[list[dict[str, Any]]] = [[] for _ in range(4)]
    refusals: list[str] = []
    await asyncio.wait_for(asyncio.gather(*(play_seat(local.server.url, tokens[s], frames[s], refusals)
                                            for s in range(4))), 120)
    assert runner.game.over
    truth = Truth(runner.game)
    for seat in range(4):
        assert len(frames[seat]) > 20
        for frame in frames[seat]:
            assert frame["seat"] == seat
            check_frame(frame, truth)
    # Every discard was sent twice: the second, stale, changed nothing.
    discards = sum(1 for a in runner.game.actions if a.type.value == "discard")
    assert refusals.count("stale") + refusals.count("hand_over") == discards == len(refusals)
    logged = await local.storage.hand_actions(runner.hand.id)
    assert len(logged) == len(runner.game.actions) == runner.logged


async def test_an_action_with_an_old_sequence_changes_nothing(local) -> None:
    table, runner = await local.open_table(1)
    token = seat_token(local.secret, table.id, runner.seats[0].user_id)
    async with aiohttp.ClientSession() as session, session.ws_connect(local.server.url + "ws") as ws:
        await ws.send_json({"hello": {"token": token}})
        first = await ws.receive_json(timeout=5)
        while first["type"] != "state":
            first = await ws.receive_json(timeout=5)
        await ws.send_json({"act": {"seq": first["seq"] + 1000, "code": "t0"}})
        await ws.send_json({"act": {"seq": "x", "code": "t0"}})
        replies: list[dict[str, Any]] = []
        while len(replies) < 2:  # the computers' swaps arrive as frames meanwhile
            reply = await ws.receive_json(timeout=5)
            if reply["type"] != "state":
                replies.append(reply)
    assert replies == [{"type": "refused", "key": "stale"}] * 2
    assert runner.state[0].swap_pick == [] and all(a.seat != 0 for a in runner.game.actions)
