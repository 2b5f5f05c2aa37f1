"""The outbox (posts owed to a chat) and moving a chat to its new id when it becomes a supergroup."""

from __future__ import annotations

from storage import days
from storage.interface import InvalidWrite
from storage.models import OwedPost
from storage.sqlite_base import SqliteBase

# Every table with a chat_id column, children before none: chats itself is handled apart.
_CHAT_TABLES = ("players", "balances", "tables", "hands", "score_sessions", "ledger", "outbox")


class OutboxAndMigration(SqliteBase):
    async def owed_posts(self) -> list[OwedPost]:
        async with self._tx() as db:
            rows = await self._all(
                db, "SELECT key, chat_id, created_at FROM outbox WHERE sent_at IS NULL ORDER BY created_at, key")
        return [OwedPost(key, chat_id, days.from_ms(at)) for key, chat_id, at in rows]

    async def mark_posted(self, key: str) -> None:
        async with self._tx() as db:
            await db.execute("UPDATE outbox SET sent_at = ? WHERE key = ? AND sent_at IS NULL", (self._now_ms(), key))

    async def migrate_chat(self, old_id: int, new_id: int) -> bool:
        if old_id == new_id:
            raise InvalidWrite(f"chat {old_id} cannot migrate to itself")
        async with self._tx() as db:
            if await self._one(db, "SELECT 1 FROM chats WHERE id = ?", (old_id,)) is None:
                return False
            if await self._one(db, "SELECT 1 FROM chats WHERE id = ?", (new_id,)) is not None:
                for table in _CHAT_TABLES:
                    if await self._one(db, f"SELECT 1 FROM {table} WHERE chat_id = ? LIMIT 1", (new_id,)):
                        raise InvalidWrite(f"chat {new_id} already has {table}; cannot move chat {old_id} there")
                await db.execute("DELETE FROM chats WHERE id = ?", (new_id,))
            await db.execute(
                "INSERT INTO chats (id, language, timezone, rules, base_stake, summary_time, last_summary_date,"
                " created_at) SELECT ?, language, timezone, rules, base_stake, summary_time, last_summary_date,"
                " created_at FROM chats WHERE id = ?",
                (new_id, old_id),
            )
            for table in _CHAT_TABLES:
                await db.execute(f"UPDATE {table} SET chat_id = ? WHERE chat_id = ?", (new_id, old_id))
            await db.execute("DELETE FROM chats WHERE id = ?", (old_id,))
        return True
