"""What scorekeeping keeps in memory: open lobbies and the entry being made on each panel.

A draft is lost on a restart, and that is fine: it is an entry half-way through its taps.
Everything that counts is already in storage as records.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from bot.feature import AnyApplication, Context
from engine.scoring import Pattern
from engine.settlement import FinalHand, KongKind
from engine.tiles import Situation

KEEPER_KEY = "xuezhan.keeper"
FLAG_CODES = {"gp": Situation.AFTER_KONG_DISCARD, "qg": Situation.ROBBING_KONG,
              "gh": Situation.KONG_REPLACEMENT, "hd": Situation.LAST_TILE}
DISCARD_FLAGS = ("gp", "qg", "hd")
SELF_DRAW_FLAGS = ("gh", "hd")


@dataclass
class Lobby:
    chat_id: int
    creator_id: int
    entries: list[tuple[str, int | None]]  # (name, Telegram user id or None for a plain name)
    message_id: int | None = None  # the lobby's message: its buttons are the only ones that count
    topic_id: int | None = None  # the forum topic it was opened in, where the session will post


@dataclass
class Draft:
    """The entry being made on a session's panel, step by step."""

    kind: str  # "discard" | "self" | "kong" | "wall"
    step: str
    discarder: int | None = None
    winners: list[int] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    values: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    pattern: Pattern | None = None
    konger: int | None = None
    kong_kind: KongKind | None = None
    hands: dict[int, FinalHand] = field(default_factory=dict)
    declared: dict[int, str] = field(default_factory=dict)  # seat -> flower_pig / not_ready, no tiles shown
    error: str = ""
    moves: int = 0  # presses and replies it has taken: its panel's buttons name it (``panel.version``)

    @property
    def situations(self) -> frozenset[Situation]:
        out = {FLAG_CODES[c] for c in self.flags}
        if self.kind == "self":
            out.add(Situation.SELF_DRAW)
        return frozenset(out)

    def next_unvalued(self) -> int | None:
        return next((w for w in self.winners if w not in self.values), None)


@dataclass
class Keeper:
    """In-memory parts of scorekeeping: open lobbies, drafts, a lock per session and per group."""

    lobbies: dict[int, Lobby] = field(default_factory=dict)
    drafts: dict[int, Draft] = field(default_factory=dict)
    locks: dict[int, asyncio.Lock] = field(default_factory=dict)
    chat_locks: dict[int, asyncio.Lock] = field(default_factory=dict)
    next_lobby: int = 1

    def lock(self, session_id: int) -> asyncio.Lock:
        return self.locks.setdefault(session_id, asyncio.Lock())

    def chat_lock(self, chat_id: int) -> asyncio.Lock:
        """Held while a session is opened, so that a group never gets two at once."""
        return self.chat_locks.setdefault(chat_id, asyncio.Lock())


def keeper(context: Context | AnyApplication) -> Keeper:
    return context.bot_data.setdefault(KEEPER_KEY, Keeper())
