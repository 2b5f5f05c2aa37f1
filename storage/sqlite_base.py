"""What every part of the SQLite implementation shares: the connection, units of work,
the ledger booking and the row conversions."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, date, datetime
from typing import Any, TypeVar

import aiosqlite

from storage import days
from storage.group_commit import GroupCommitter
from storage.interface import InvalidWrite, NotFound
from storage.models import (
    JSON,
    Chat,
    TransferLike,
    User,
)
from storage.onehop import Body, thread_hop

Clock = Callable[[], datetime]
T = TypeVar("T")
SEATS = 4


def now_utc() -> datetime:
    return datetime.now(UTC)


def canonical_json(value: JSON) -> str:
    """Canonical JSON, so that a retried action compares equal to the logged one."""
    if not isinstance(value, dict):
        raise InvalidWrite(f"expected a JSON object (dict), got {type(value).__name__}")
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidWrite(f"not JSON-serialisable: {exc}") from None


class SqliteBase:
    """The connection and the helpers the feature mixins of ``SqliteStorage`` build on."""

    def __init__(self, db: aiosqlite.Connection, clock: Clock = now_utc, max_batch: int = 256,
                 chat_defaults: tuple[str, str] = ("zh", "Asia/Shanghai")) -> None:
        self._db = db
        self._clock = clock
        self._chat_defaults = chat_defaults  # (language, time zone) of a chat seen for the first time
        self._committer = GroupCommitter(db, max_batch, hop=thread_hop(db))

    # -- plumbing -------------------------------------------------------------------------
    def _tx(self) -> AbstractAsyncContextManager[aiosqlite.Connection]:
        """One all-or-nothing unit of work, returning once committed (see group_commit.py).

        Reads are units too: the connection is shared, and a read between another unit's
        statements would see its uncommitted rows."""
        return self._committer.unit()

    async def _run(self, body: Body[T]) -> T:
        """``body(connection)`` as one unit of work, like ``_tx``; on SQLite it runs whole on the
        database thread, in one hop with its transaction (see storage/onehop.py). The body
        awaits only the connection's calls."""
        return await self._committer.run(body)

    def _now_ms(self) -> int:
        return days.to_ms(self._clock())

    async def close(self) -> None:
        await self._committer.close()
        await self._db.close()

    @staticmethod
    async def _one(db: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
        async with db.execute(sql, params) as cursor:
            return await cursor.fetchone()

    @staticmethod
    async def _all(db: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(await db.execute_fetchall(sql, params))

    async def _chat(self, db: aiosqlite.Connection, chat_id: int) -> Chat:
        row = await self._one(
            db,
            "SELECT id, language, timezone, rules, base_stake, summary_time, last_summary_date, summary_topic_id "
            "FROM chats WHERE id = ?",
            (chat_id,),
        )
        if row is None:
            await db.execute(
                "INSERT INTO chats (id, language, timezone, created_at) VALUES (?, ?, ?, ?)",
                (chat_id, *self._chat_defaults, self._now_ms()),
            )
            language, timezone = self._chat_defaults
            return Chat(id=chat_id, language=language, timezone=timezone)
        return chat_from_row(row)

    async def _save_user(
        self,
        db: aiosqlite.Connection,
        user_id: int,
        display_name: str | None,
        language: str | None = None,
        started_dm: bool | None = None,
    ) -> User:
        row = await self._one(db, "SELECT display_name, language, started_dm FROM users WHERE id = ?", (user_id,))
        if row is None:
            user = User(user_id, display_name or str(user_id), language, bool(started_dm))
        else:
            user = User(
                user_id,
                display_name if display_name is not None else row[0],
                language if language is not None else row[1],
                started_dm if started_dm is not None else bool(row[2]),
            )
        await db.execute(
            "INSERT INTO users (id, display_name, language, started_dm, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name, "
            "language = excluded.language, "
            "started_dm = excluded.started_dm, updated_at = excluded.updated_at",
            (user_id, user.display_name, user.language, int(user.started_dm), self._now_ms()),
        )
        return user

    async def _book(
        self,
        db: aiosqlite.Connection,
        chat_id: int,
        rows: Sequence[tuple[int, int, int, str]],
        at_ms: int,
        *,
        hand_id: int | None = None,
        hand_seq: int | None = None,
        record_id: int | None = None,
    ) -> None:
        """Append ledger rows (payer, payee, amount, reason) and move the cached balances with them."""
        if not rows:
            return
        await db.executemany(
            "INSERT INTO ledger (chat_id, hand_id, hand_seq, record_id, payer, payee, amount, reason, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (chat_id, hand_id, hand_seq, record_id, payer, payee, amount, why, at_ms)
                for payer, payee, amount, why in rows
            ],
        )
        deltas: dict[int, int] = defaultdict(int)
        for payer, payee, amount, _ in rows:
            deltas[payer] -= amount
            deltas[payee] += amount
        await db.executemany(
            "INSERT INTO balances (chat_id, player_id, balance) VALUES (?, ?, ?) "
            "ON CONFLICT (chat_id, player_id) DO UPDATE SET balance = balances.balance + excluded.balance",
            # in player order, so that concurrent transactions (PostgreSQL) lock rows in one order
            [(chat_id, player, delta) for player, delta in sorted(deltas.items())],
        )

    async def _ensure_user(self, db: aiosqlite.Connection, user_id: int) -> None:
        if await self._one(db, "SELECT 1 FROM users WHERE id = ?", (user_id,)) is None:
            await self._save_user(db, user_id, None)

    async def _player_in_chat(self, db: aiosqlite.Connection, player_id: int, chat_id: int) -> None:
        row = await self._one(db, "SELECT chat_id FROM players WHERE id = ?", (player_id,))
        if row is None:
            raise NotFound(f"no player {player_id}")
        if row[0] != chat_id:
            raise InvalidWrite(f"player {player_id} belongs to another chat")

    async def _seat_players(self, db: aiosqlite.Connection, table: str, key: str, owner: int) -> list[int]:
        rows = await self._all(db, f"SELECT player_id FROM {table} WHERE {key} = ? ORDER BY seat", (owner,))
        return [row[0] for row in rows]


def seat_rows(transfers: Iterable[TransferLike], seats: Sequence[int]) -> list[tuple[int, int, int, str]]:
    """Seat transfers -> ledger rows between players, refusing anything that is not a clean transfer."""
    rows = []
    for transfer in transfers:
        payer, payee, amount = transfer.payer, transfer.payee, transfer.amount
        for seat in (payer, payee):
            if not isinstance(seat, int) or not 0 <= seat < len(seats):
                raise InvalidWrite(f"transfer names seat {seat!r}; this game has seats 0 to {len(seats) - 1}")
        if payer == payee:
            raise InvalidWrite(f"seat {payer} cannot pay itself")
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise InvalidWrite(f"a transfer amount must be a whole number of chips >= 0, not {amount!r}")
        if amount:  # a zero transfer (e.g. a capped payment) moves nothing and books nothing
            reason = transfer.reason
            rows.append((seats[payer], seats[payee], amount, str(getattr(reason, "value", reason))))
    return rows


def check_topic(value: Any) -> None:
    """A forum topic is stored as None (the group's main chat) or Telegram's positive thread id."""
    if not (value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0)):
        raise InvalidWrite(f"a forum topic is a positive whole number or None, not {value!r}")


def chat_from_row(row: Sequence[Any]) -> Chat:
    return Chat(
        id=row[0],
        language=row[1],
        timezone=row[2],
        rules=json.loads(row[3]),
        base_stake=row[4],
        summary_time=row[5],
        last_summary_date=None if row[6] is None else date.fromisoformat(row[6]),
        summary_topic_id=row[7],
    )
