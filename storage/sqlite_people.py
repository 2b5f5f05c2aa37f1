"""Chats (settings), Telegram users and the per-chat players that are ledger parties."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage import days
from storage.interface import InvalidWrite, NotFound
from storage.models import (
    Chat,
    Player,
    PlayerKind,
    User,
)
from storage.sqlite_base import SqliteBase, canonical_json, check_topic

_CHAT_FIELDS = ("language", "timezone", "rules", "base_stake", "summary_time", "summary_topic_id")
_PLAYER_COLUMNS = "id, chat_id, name, kind, user_id"


class ChatsAndPlayers(SqliteBase):
    async def get_chat(self, chat_id: int) -> Chat:
        async with self._tx() as db:
            return await self._chat(db, chat_id)

    async def update_chat(self, chat_id: int, **changes: Any) -> Chat:
        unknown = set(changes) - set(_CHAT_FIELDS)
        if unknown:
            raise InvalidWrite(f"unknown chat setting(s): {', '.join(sorted(unknown))}")
        values = dict(changes)
        if "timezone" in values:
            days.zone(values["timezone"])
        if "summary_time" in values:
            parsed = days.parse_summary_time(values["summary_time"])
            values["summary_time"] = parsed.strftime("%H:%M")
        if "rules" in values:
            values["rules"] = canonical_json(values["rules"])
        if "base_stake" in values and not (isinstance(values["base_stake"], int) and values["base_stake"] > 0):
            raise InvalidWrite(f"base stake must be a positive whole number, not {values['base_stake']!r}")
        if "summary_topic_id" in values:
            check_topic(values["summary_topic_id"])
        if "language" in values and not isinstance(values["language"], str):
            raise InvalidWrite("language must be a language code such as 'zh' or 'en'")
        async with self._tx() as db:
            await self._chat(db, chat_id)
            if values:
                assignments = ", ".join(f"{name} = ?" for name in values)
                await db.execute(f"UPDATE chats SET {assignments} WHERE id = ?", (*values.values(), chat_id))
            return await self._chat(db, chat_id)

    async def save_user(
        self,
        user_id: int,
        display_name: str | None = None,
        *,
        language: str | None = None,
        started_dm: bool | None = None,
    ) -> User:
        async with self._tx() as db:
            return await self._save_user(db, user_id, display_name, language, started_dm)

    async def get_user(self, user_id: int) -> User | None:
        """Read on every press (the presser's language): one hop, not a statement per hop."""
        async def unit(db: Any) -> Any:
            return await self._one(db, "SELECT id, display_name, language, started_dm FROM users WHERE id = ?",
                                   (user_id,))

        row = await self._run(unit)
        return None if row is None else User(row[0], row[1], row[2], bool(row[3]))

    async def player_for_user(self, chat_id: int, user_id: int, display_name: str) -> Player:
        name = _clean_name(display_name)
        async with self._tx() as db:
            await self._chat(db, chat_id)
            await self._save_user(db, user_id, name)
            row = await self._one(db, "SELECT id FROM players WHERE chat_id = ? AND user_id = ?", (chat_id, user_id))
            if row is None:
                cursor = await db.execute(
                    "INSERT INTO players (chat_id, kind, user_id, name) VALUES (?, 'user', ?, ?)",
                    (chat_id, user_id, name),
                )
                player_id = cursor.lastrowid
            else:
                player_id = row[0]
                await db.execute("UPDATE players SET name = ? WHERE id = ?", (name, player_id))
            return Player(player_id, chat_id, name, PlayerKind.USER, user_id)

    async def named_player(self, chat_id: int, name: str, kind: PlayerKind = PlayerKind.GUEST) -> Player:
        kind = PlayerKind(kind)
        if kind is PlayerKind.USER:
            raise InvalidWrite("a Telegram user's player comes from player_for_user(), not from a name")
        name = _clean_name(name)
        async with self._tx() as db:
            await self._chat(db, chat_id)
            row = await self._one(
                db,
                "SELECT id FROM players WHERE chat_id = ? AND kind = ? AND name = ? AND user_id IS NULL",
                (chat_id, kind.value, name),
            )
            if row is None:
                cursor = await db.execute(
                    "INSERT INTO players (chat_id, kind, name) VALUES (?, ?, ?)", (chat_id, kind.value, name)
                )
                return Player(cursor.lastrowid, chat_id, name, kind)  # type: ignore[arg-type]
            return Player(row[0], chat_id, name, kind)

    async def get_player(self, player_id: int) -> Player:
        async with self._tx() as db:
            row = await self._one(db, f"SELECT {_PLAYER_COLUMNS} FROM players WHERE id = ?", (player_id,))
        if row is None:
            raise NotFound(f"no player {player_id}")
        return _player_from_row(row)

    async def players(self, chat_id: int) -> list[Player]:
        async with self._tx() as db:
            rows = await self._all(
                db, f"SELECT {_PLAYER_COLUMNS} FROM players WHERE chat_id = ? ORDER BY id", (chat_id,)
            )
        return [_player_from_row(row) for row in rows]


def _clean_name(name: str) -> str:
    cleaned = " ".join(str(name).split())
    if not cleaned:
        raise InvalidWrite("a player needs a non-empty name")
    return cleaned[:64]


def _player_from_row(row: Sequence[Any]) -> Player:
    return Player(id=row[0], chat_id=row[1], name=row[2], kind=PlayerKind(row[3]), user_id=row[4])
