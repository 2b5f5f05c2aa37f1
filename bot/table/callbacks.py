"""Callback data of the table's buttons: short, explicit strings matched by regex.

Telegram allows 64 bytes. A game button names the table, the *prompt sequence* (the number of
actions logged when the seat's current decision began) and a short code; a press whose
sequence is not the seat's current one is stale and changes nothing. A lobby button names the
table and a verb.

>>> game_data(12, 34, "d5p")
'gm:12:34:d5p'
>>> parse_game("gm:12:34:d5p")
GamePress(table_id=12, seq=34, code='d5p')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.actions import Action
from engine.tiles import tile_name

MAX_CALLBACK_BYTES = 64
GAME_PATTERN = re.compile(r"^gm:(\d{1,12}):(\d{1,6}):([a-z0-9]{1,8})$")
LOBBY_PATTERN = re.compile(r"^lb:(\d{1,12}):([a-z]{1,8})$")
LOBBY_VERBS = ("join", "leave", "cpu", "start", "cancel", "go", "drop", "back")  # go/drop confirm start/cancel
AFTER_HAND_PATTERN = re.compile(r"^ah:(\d{1,12}):(\d{1,12}):(next|end)$")
CANCEL_PATTERN = re.compile(r"^cx:(\d{1,12}):(yes|no)$")  # /cancel asks first


@dataclass(frozen=True, slots=True)
class GamePress:
    table_id: int
    seq: int
    code: str


def _checked(data: str) -> str:
    if len(data.encode()) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data over {MAX_CALLBACK_BYTES} bytes: {data!r}")
    return data


def game_data(table_id: int, seq: int, code: str) -> str:
    return _checked(f"gm:{table_id}:{seq}:{code}")


def lobby_data(table_id: int, verb: str) -> str:
    if verb not in LOBBY_VERBS:
        raise ValueError(f"unknown lobby verb {verb!r}")
    return _checked(f"lb:{table_id}:{verb}")


def after_hand_data(table_id: int, hand_id: int, verb: str) -> str:
    """Next hand / End under a settlement card: they name the hand, so an old card's are stale."""
    return _checked(f"ah:{table_id}:{hand_id}:{verb}")


def cancel_data(table_id: int, answer: str) -> str:
    return _checked(f"cx:{table_id}:{answer}")


def parse_cancel(data: str) -> tuple[int, str] | None:
    match = CANCEL_PATTERN.match(data)
    return (int(match[1]), match[2]) if match else None


def parse_after_hand(data: str) -> tuple[int, int, str] | None:
    match = AFTER_HAND_PATTERN.match(data)
    return (int(match[1]), int(match[2]), match[3]) if match else None


def parse_game(data: str) -> GamePress | None:
    match = GAME_PATTERN.match(data)
    if match is None:
        return None
    return GamePress(int(match[1]), int(match[2]), match[3])


def parse_lobby(data: str) -> tuple[int, str] | None:
    match = LOBBY_PATTERN.match(data)
    if match is None or match[2] not in LOBBY_VERBS:
        return None
    return int(match[1]), match[2]


# Codes for decisions. Swap toggles name a position in the sorted hand, since a hand may hold
# the same tile twice and the player picks copies, not kinds.
SWAP_CONFIRM = "sc"
PASS = "x"
BACK = "back"  # leave computer control (托管)
_ACTION_LETTERS = {"discard": "d", "win": "w", "pung": "p", "kong": "k"}


def action_code(action: Action) -> str:
    """The code of a play decision (not swap, which is built from toggles)."""
    kind = action.type.value
    if kind == "pass":
        return PASS
    if kind == "void":
        assert action.suit is not None
        return "v" + action.suit.letter
    assert action.tile is not None, action
    return _ACTION_LETTERS[kind] + tile_name(action.tile)


def toggle_code(position: int) -> str:
    return f"t{position}"


def parse_toggle(code: str) -> int | None:
    return int(code[1:]) if re.fullmatch(r"t\d{1,2}", code) else None


def code_matches(code: str, action: Action) -> bool:
    return action.type.value != "swap" and action_code(action) == code
