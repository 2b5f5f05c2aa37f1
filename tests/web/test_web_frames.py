"""What each seat's socket is sent, read frame by frame over a whole hand of four people on
WebSocket clients (under the chengdu rules, and 血流成河 where winners play on): its own tiles
and public facts only, never another seat's concealed tile or the wall; a watcher's socket, the
open table only. Actions with a stale or repeated sequence change nothing, and a watcher's change
nothing either. A page opened before the hand is dealt sees the lobby, then the hand."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from web_person import decide

from engine.ai import player_for_level
from engine.game import Game
from engine.rules import RuleSet
from engine.tiles import tile_name
from storage.models import PlayerKind, TableStatus
from web.auth import seat_token
from web.frames import OPEN_VIEW_KEYS, event_entries, own_view, win_entries
from web.local import LOCAL_CHAT_ID

TILE = re.compile(r"^[1-9][mps]$")
CONCEALED_GROUP = re.compile(r"^(\d+[mps])+$")  # "123m45p" in a win's hand: concealed tiles
FRAME_KEYS = {"type", "v", "table", "hand_id", "hand_number", "rules", "seat", "names", "computer", "auto", "view",
              "seq", "actions", "swap_pick", "remaining", "events", "over", "can_next", "final"}
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
                "voids": [v.letter if v is not None else None for v in replay.voids],
                "choosing": replay.phase.value in ("swap", "void"),
            })
            if action is not None:
                replay.apply(action)


def check_wins(frame: dict[str, Any], state: dict[str, Any]) -> None:
    """A winner who plays on (血流成河) keeps their concealed tiles hidden from the others until
    they leave the hand or it ends: a win shows its winning tile and melds only."""
    wins = list(frame["view"]["wins"]) + [e["win"] for e in frame["events"] if "win" in e]
    for win in wins:
        if win["seat"] == frame["seat"] or not state["in_play"][win["seat"]] or state["over"]:
            continue
        concealed = [part for part in win["hand"].split() if CONCEALED_GROUP.match(part)]
        assert not concealed, f"seat {frame['seat']} sees a playing winner's tiles: {win['hand']}"


def check_frame(frame: dict[str, Any], truth: Truth) -> None:
    seat, state = frame["seat"], truth.states[frame["v"]]
    view = frame["view"]
    assert set(frame) <= FRAME_KEYS and set(view) <= VIEW_KEYS, "a new field: decide whether a seat may see it"
    assert view["hand"] == (state["hands"][seat] if seat is not None else [])
    assert view["rivers"] == state["rivers"] and view["melds"] == state["melds"]
    for other in range(4):
        if other != seat:
            assert view["revealed"][other] == ([] if state["in_play"][other] else state["hands"][other])
    check_wins(frame, state)
    if not state["choosing"]:  # once chosen, every void is open to all
        assert view["voids"] == state["voids"]
    else:  # while they are being chosen, each seat knows only its own
        assert all(v is None for s, v in enumerate(view["voids"]) if s != seat)
    if seat is None:
        assert frame["actions"] == [] and view["drawn"] is None and view["swap_given"] == view["swap_received"] == []
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
    """Play a seat, every discard sent twice; once the hand is over, read on until each repeat has
    had its answer (a socket's messages are answered in order), so none is missed on a slow machine."""
    acted: set[tuple[int, int]] = set()
    repeated = answered = 0
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "ws") as ws:
        await ws.send_json({"hello": {"token": token}})
        over = False
        while not over or answered < repeated:
            try:
                message = await ws.receive(timeout=30)
            except TimeoutError:
                return
            data = json.loads(message.data)
            if data["type"] == "refused":
                refusals.append(data["key"])
                answered += 1
            if data["type"] != "state":
                continue
            frames.append(data)
            over = data["over"]
            if data["actions"] and (data["hand_id"], data["seq"]) not in acted:
                acted.add((data["hand_id"], data["seq"]))
                sent = decide(data, repeat_discard=True)
                repeated += len(sent) - len({json.dumps(act, sort_keys=True) for act in sent})
                for act in sent:
                    await ws.send_json({"act": act})


async def watch(url: str, table_id: int, frames: list[dict[str, Any]], replies: list[dict[str, Any]]) -> None:
    """A page without a seat: it reads the table until the hand is over, and tries to discard."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "ws") as ws:
        await ws.send_json({"hello": {"watch": table_id}})
        while True:
            data = json.loads((await ws.receive(timeout=60)).data)
            if data["type"] != "state":
                replies.append(data)
                continue
            frames.append(data)
            if data["over"]:
                return
            if len(frames) == 3:  # what a page without a seat sends changes nothing
                await ws.send_json({"act": {"seq": data["v"], "code": "d1m"}})


@pytest.mark.parametrize("preset", ["chengdu", "xueliu"])
async def test_every_frame_shows_a_seat_only_its_own_tiles_and_the_open_table(local, preset) -> None:
    table, runner = await local.open_table(4, rules=RuleSet.preset(preset))
    assert runner.game.rules == RuleSet.preset(preset).with_changes(base=runner.game.rules.base)
    tokens = [seat_token(local.secret, table.id, p.user_id) for p in runner.seats]
    frames: list[list[dict[str, Any]]] = [[] for _ in range(5)]
    refusals: list[str] = []
    replies: list[dict[str, Any]] = []
    await asyncio.wait_for(asyncio.gather(*(play_seat(local.server.url, tokens[s], frames[s], refusals)
                                            for s in range(4)),
                                          watch(local.server.url, table.id, frames[4], replies)), 180)
    assert runner.game.over
    truth = Truth(runner.game)
    for seat in range(4):
        assert len(frames[seat]) > 20
        for frame in frames[seat]:
            assert frame["seat"] == seat and frame["rules"] == preset
            check_frame(frame, truth)
    assert len(frames[4]) > 20 and frames[4][-1]["over"]
    for frame in frames[4]:
        assert frame["seat"] is None
        check_frame(frame, truth)
    assert [r["type"] for r in replies] == ["welcome", "refused"] and replies[1]["key"] == "not_your_seat"

    # Every discard was sent twice: the second, stale, changed nothing.
    discards = sum(1 for a in runner.game.actions if a.type.value == "discard")
    assert refusals.count("stale") + refusals.count("hand_over") == discards == len(refusals)
    logged = await local.storage.hand_actions(runner.hand.id)
    assert len(logged) == len(runner.game.actions) == runner.logged


def test_a_winner_who_plays_on_shows_the_others_only_the_winning_tile_and_melds() -> None:
    """血流成河, played by computer players until someone wins and plays on (the first such seed):
    the wins and the WON events a frame carries hide that winner's concealed tiles from the other
    seats and from watchers, until the hand is over."""
    rules = RuleSet.preset("xueliu")
    for seed in range(50):
        game, players = Game(rules, seed, 0), [player_for_level("normal", rules, seed + s) for s in range(4)]
        while not game.over:
            seat = game.pending_seats()[0]
            events = game.apply(players[seat].choose(game.view(seat), game.legal_actions(seat)))
            won = [e for e in events if e.win is not None and game.in_play[e.win.seat]]
            if won:
                break
        if won and not game.over:
            break
    else:
        raise AssertionError("no winner played on in 50 seeded hands")
    winner = won[0].win.seat
    hidden = sorted(tile_name(t) for t in game.hand(winner))
    for seat in [None, *(s for s in range(4) if s != winner)]:
        for win in [*win_entries(game), *(e["win"] for e in event_entries(events, seat, game) if "win" in e)]:
            if win["seat"] == winner:
                concealed = [p for p in win["hand"].split() if CONCEALED_GROUP.match(p)]
                assert not concealed, f"{seat} sees {win['hand']} of {hidden}"


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


async def test_a_page_opened_before_the_deal_shows_the_lobby_then_the_hand(local) -> None:
    storage = local.storage
    await storage.get_chat(LOCAL_CHAT_ID)
    table = await storage.create_table(LOCAL_CHAT_ID, 1)
    await storage.set_table_rules(table.id, RuleSet.preset("classic").to_dict())
    await storage.save_user(1, "Ann", started_dm=False)
    ann = await storage.player_for_user(LOCAL_CHAT_ID, 1, "Ann")
    table = await storage.set_seat(table.id, 0, ann.id)
    async with aiohttp.ClientSession() as session, session.ws_connect(local.server.url + "ws") as ws:
        await ws.send_json({"hello": {"token": seat_token(local.secret, table.id, 1)}})
        welcome, lobby = await ws.receive_json(timeout=5), await ws.receive_json(timeout=5)
        assert welcome["type"] == "welcome"
        assert lobby == {"type": "lobby", "table": table.id, "status": "lobby", "names": ["Ann", None, None, None],
                         "computer": [False] * 4, "rules": "classic", "you": 0}
        bot = await storage.named_player(LOCAL_CHAT_ID, "AI-1", PlayerKind.COMPUTER)
        await storage.set_seat(table.id, 1, bot.id)
        refreshed = await ws.receive_json(timeout=10)  # who sits where is refreshed while it waits
        assert refreshed["names"] == ["Ann", "AI-1", None, None] and refreshed["computer"][1]
        for seat in (2, 3):
            other = await storage.named_player(LOCAL_CHAT_ID, f"AI-{seat}", PlayerKind.COMPUTER)
            table = await storage.set_seat(table.id, seat, other.id)
        table = await storage.set_table_status(table.id, TableStatus.PLAYING)
        runner = await local.start_hand(table, dealer=0)
        dealt = await ws.receive_json(timeout=5)
        while dealt["type"] != "state":  # a lobby refresh may have been on its way
            dealt = await ws.receive_json(timeout=5)
        assert dealt["seat"] == 0 and dealt["rules"] == "classic" and dealt["hand_id"] == runner.hand.id
        assert dealt["view"]["hand"] == [tile_name(t) for t in runner.game.hand(0)]


async def test_a_page_for_a_table_that_does_not_exist_is_told_so(local) -> None:
    async with aiohttp.ClientSession() as session, session.ws_connect(local.server.url + "ws") as ws:
        await ws.send_json({"hello": {"watch": 999}})
        replies = [await ws.receive_json(timeout=5) for _ in range(2)]
    assert replies[1] == {"type": "error", "key": "no_table"}


def test_a_frames_shared_and_own_parts_make_up_exactly_the_seats_view() -> None:
    """Frames join the part every seat sees alike (encoded once) with each seat's own part: over
    whole hands of computer players, the two parts are exactly the engine's view of each seat."""
    for preset, seed in (("chengdu", 1), ("xueliu", 2), ("classic", 3)):
        rules = RuleSet.preset(preset)
        game, players = Game(rules, seed, seed % 4), [player_for_level("normal", rules, seed + s) for s in range(4)]
        while True:
            for seat in range(4):
                full = game.view(seat).to_dict()
                del full["legal"], full["wins"]
                shared = {key: game.view((seat + 1) % 4).to_dict()[key] for key in OPEN_VIEW_KEYS}
                assert {**shared, **own_view(game.view(seat), game)} == full
            if game.over:
                break
            seat = game.pending_seats()[0]
            game.apply(players[seat].choose(game.view(seat), game.legal_actions(seat)))
