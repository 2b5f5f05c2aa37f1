"""The SQLite implementation of :class:`storage.interface.Storage` on aiosqlite.

One connection per process, in WAL mode, and one writer task that runs every unit of work
in turn (:mod:`storage.group_commit`): all tables of all chats go through the same event
loop, so SQLite never sees two writers from this process and "database is locked" cannot
happen (``busy_timeout`` covers other processes, such as ``xuezhan export`` while the bot
runs). Each unit is all-or-nothing; units that arrive together share one commit. Why this
and not a connection pool: see docs/storage.md.
"""

from __future__ import annotations

import bisect
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import aiosqlite

from storage import days
from storage.group_commit import GroupCommitter
from storage.interface import HandClosed, InvalidWrite, NotFound, SequenceConflict, StorageError
from storage.models import (
    JSON,
    AppendOutcome,
    AppendResult,
    Chat,
    DayTally,
    DueSummary,
    Hand,
    HandResult,
    HandStatus,
    LedgerEntry,
    LoggedAction,
    Player,
    PlayerKind,
    PlayerTotal,
    ScoreRecord,
    ScoreSession,
    SessionStatus,
    Table,
    TableStatus,
    TransferLike,
    UnfinishedHand,
    User,
)
from storage.schema import MIGRATIONS, Migration

Clock = Callable[[], datetime]
SEATS = 4
MAX_TALLY_DAYS = 3700  # ten years of daily lines in one query stays well under SQLite's variable limit
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_CHAT_FIELDS = ("language", "timezone", "rules", "base_stake", "summary_time")


def _now() -> datetime:
    return datetime.now(UTC)


def _dumps(value: JSON) -> str:
    """Canonical JSON, so that a retried action compares equal to the logged one."""
    if not isinstance(value, dict):
        raise InvalidWrite(f"expected a JSON object (dict), got {type(value).__name__}")
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidWrite(f"not JSON-serialisable: {exc}") from None


async def open_storage(
    path: str | Path,
    *,
    clock: Clock = _now,
    synchronous: str = "FULL",
    migrations: Sequence[Migration] = MIGRATIONS,
    max_batch: int = 256,
) -> SqliteStorage:
    """Open (or create) the database file and bring its schema up to date.

    ``synchronous="FULL"`` makes every commit durable across a power cut; ``"NORMAL"`` is
    still safe against a crashed or killed process in WAL mode and is faster.
    ``clock`` gives the time stamped on every row (tests and simulations inject theirs).
    ``max_batch`` caps how many concurrent units share one commit (1 = a commit per unit).
    """
    if synchronous.upper() not in _SYNCHRONOUS:
        raise StorageError(f"synchronous must be one of {', '.join(_SYNCHRONOUS)}, not {synchronous!r}")
    db = await aiosqlite.connect(str(path), isolation_level=None)
    try:
        await db.execute("PRAGMA busy_timeout = 10000")
        (mode,) = await (await db.execute("PRAGMA journal_mode = WAL")).fetchone()  # type: ignore[misc]
        if str(mode).lower() != "wal" and str(path) != ":memory:":
            raise StorageError(f"could not switch {path} to WAL mode (got {mode})")
        await db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        await db.execute("PRAGMA foreign_keys = ON")
        await _migrate(db, migrations)
    except BaseException:
        await db.close()
        raise
    return SqliteStorage(db, clock, max_batch)


async def _migrate(db: aiosqlite.Connection, migrations: Sequence[Migration]) -> None:
    """Apply the missing forward migrations, each with its version bump in one transaction."""
    (version,) = await (await db.execute("PRAGMA user_version")).fetchone()  # type: ignore[misc]
    if version > len(migrations):
        raise StorageError(
            f"database schema version {version} is newer than this program knows ({len(migrations)}); upgrade xuezhan"
        )
    for number in range(version, len(migrations)):
        await db.execute("BEGIN IMMEDIATE")
        try:
            for statement in migrations[number]:
                await db.execute(statement)
            await db.execute(f"PRAGMA user_version = {number + 1}")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        await db.execute("COMMIT")


class SqliteStorage:
    """Chats, players, tables, hands, the action log and the ledger in one SQLite file."""

    def __init__(self, db: aiosqlite.Connection, clock: Clock = _now, max_batch: int = 256) -> None:
        self._db = db
        self._clock = clock
        self._committer = GroupCommitter(db, max_batch)

    # -- plumbing -------------------------------------------------------------------------
    def _tx(self) -> AbstractAsyncContextManager[aiosqlite.Connection]:
        """One all-or-nothing unit of work, returning once committed (see group_commit.py).

        Reads are units too: the connection is shared, and a read between another unit's
        statements would see its uncommitted rows."""
        return self._committer.unit()

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

    # -- chats, users, players ------------------------------------------------------------
    async def _chat(self, db: aiosqlite.Connection, chat_id: int) -> Chat:
        row = await self._one(
            db,
            "SELECT id, language, timezone, rules, base_stake, summary_time, last_summary_date FROM chats WHERE id = ?",
            (chat_id,),
        )
        if row is None:
            await db.execute("INSERT INTO chats (id, created_at) VALUES (?, ?)", (chat_id, self._now_ms()))
            return Chat(id=chat_id)
        return _chat_from_row(row)

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
            values["rules"] = _dumps(values["rules"])
        if "base_stake" in values and not (isinstance(values["base_stake"], int) and values["base_stake"] > 0):
            raise InvalidWrite(f"base stake must be a positive whole number, not {values['base_stake']!r}")
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

    async def get_user(self, user_id: int) -> User | None:
        async with self._tx() as db:
            row = await self._one(
                db, "SELECT id, display_name, language, started_dm FROM users WHERE id = ?", (user_id,)
            )
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

    # -- tables ---------------------------------------------------------------------------
    async def _table(self, db: aiosqlite.Connection, table_id: int) -> Table:
        row = await self._one(
            db,
            "SELECT id, chat_id, status, creator_id, message_id, created_at FROM tables WHERE id = ?",
            (table_id,),
        )
        if row is None:
            raise NotFound(f"no table {table_id}")
        seats: list[int | None] = [None] * SEATS
        dms: list[int | None] = [None] * SEATS
        for seat, player_id, dm in await self._all(
            db, "SELECT seat, player_id, dm_message_id FROM table_seats WHERE table_id = ?", (table_id,)
        ):
            seats[seat], dms[seat] = player_id, dm
        return Table(
            id=row[0],
            chat_id=row[1],
            status=TableStatus(row[2]),
            creator_id=row[3],
            seats=tuple(seats),
            message_id=row[4],
            dm_message_ids=tuple(dms),
            created_at=days.from_ms(row[5]),
        )

    async def create_table(self, chat_id: int, creator_id: int | None) -> Table:
        async with self._tx() as db:
            await self._chat(db, chat_id)
            if creator_id is not None:
                await self._ensure_user(db, creator_id)
            cursor = await db.execute(
                "INSERT INTO tables (chat_id, status, creator_id, created_at) VALUES (?, 'lobby', ?, ?)",
                (chat_id, creator_id, self._now_ms()),
            )
            table_id = cursor.lastrowid
            await db.executemany(
                "INSERT INTO table_seats (table_id, seat) VALUES (?, ?)",
                [(table_id, s) for s in range(SEATS)],
            )
            return await self._table(db, table_id)  # type: ignore[arg-type]

    async def get_table(self, table_id: int) -> Table:
        async with self._tx() as db:
            return await self._table(db, table_id)

    async def set_seat(self, table_id: int, seat: int, player_id: int | None) -> Table:
        _check_seat(seat)
        async with self._tx() as db:
            table = await self._table(db, table_id)
            if table.status is not TableStatus.LOBBY:
                raise InvalidWrite(f"table {table_id} is {table.status.value}; seats change only in the lobby")
            if player_id is not None:
                await self._player_in_chat(db, player_id, table.chat_id)
                if player_id in table.seats and table.seats[seat] != player_id:
                    raise InvalidWrite(f"player {player_id} already sits at table {table_id}")
            await db.execute(
                "UPDATE table_seats SET player_id = ? WHERE table_id = ? AND seat = ?",
                (player_id, table_id, seat),
            )
            return await self._table(db, table_id)

    async def set_table_status(self, table_id: int, status: TableStatus) -> Table:
        status = TableStatus(status)
        async with self._tx() as db:
            await self._table(db, table_id)
            await db.execute("UPDATE tables SET status = ? WHERE id = ?", (status.value, table_id))
            return await self._table(db, table_id)

    async def set_table_message(self, table_id: int, message_id: int | None, seat: int | None = None) -> Table:
        async with self._tx() as db:
            await self._table(db, table_id)
            if seat is None:
                await db.execute("UPDATE tables SET message_id = ? WHERE id = ?", (message_id, table_id))
            else:
                _check_seat(seat)
                await db.execute(
                    "UPDATE table_seats SET dm_message_id = ? WHERE table_id = ? AND seat = ?",
                    (message_id, table_id, seat),
                )
            return await self._table(db, table_id)

    async def open_tables(self, chat_id: int | None = None) -> list[Table]:
        async with self._tx() as db:
            sql = "SELECT id FROM tables WHERE status IN ('lobby', 'playing')"
            params: tuple[int, ...] = ()
            if chat_id is not None:
                sql, params = sql + " AND chat_id = ?", (chat_id,)
            rows = await self._all(db, sql + " ORDER BY id", params)
            return [await self._table(db, row[0]) for row in rows]

    # -- hands and the action log ---------------------------------------------------------
    async def _hand(self, db: aiosqlite.Connection, hand_id: int) -> Hand:
        row = await self._one(
            db,
            "SELECT id, table_id, chat_id, number, rules, seed, dealer, status, result, "
            "started_at, finished_at "
            "FROM hands WHERE id = ?",
            (hand_id,),
        )
        if row is None:
            raise NotFound(f"no hand {hand_id}")
        seats = await self._all(db, "SELECT player_id FROM hand_seats WHERE hand_id = ? ORDER BY seat", (hand_id,))
        return Hand(
            id=row[0],
            table_id=row[1],
            chat_id=row[2],
            number=row[3],
            rules=json.loads(row[4]),
            seed=row[5],
            dealer=row[6],
            status=HandStatus(row[7]),
            seats=tuple(r[0] for r in seats),
            result=None if row[8] is None else json.loads(row[8]),
            started_at=days.from_ms(row[9]),
            finished_at=None if row[10] is None else days.from_ms(row[10]),
        )

    async def start_hand(self, table_id: int, rules: JSON, seed: int, dealer: int) -> Hand:
        _check_seat(dealer)
        rules_json = _dumps(rules)
        async with self._tx() as db:
            table = await self._table(db, table_id)
            if table.status not in (TableStatus.LOBBY, TableStatus.PLAYING):
                raise InvalidWrite(f"table {table_id} is {table.status.value}; no new hand")
            if None in table.seats:
                raise InvalidWrite(f"table {table_id} has an empty seat; fill it before dealing")
            busy = await self._one(db, "SELECT id FROM hands WHERE table_id = ? AND status = 'playing'", (table_id,))
            if busy is not None:
                raise InvalidWrite(f"table {table_id} is still playing hand {busy[0]}")
            (number,) = await self._one(
                db, "SELECT COALESCE(MAX(number), 0) + 1 FROM hands WHERE table_id = ?", (table_id,)
            )
            cursor = await db.execute(
                "INSERT INTO hands (table_id, chat_id, number, rules, seed, dealer, status, started_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 'playing', ?)",
                (table_id, table.chat_id, number, rules_json, int(seed), dealer, self._now_ms()),
            )
            hand_id = cursor.lastrowid
            await db.executemany(
                "INSERT INTO hand_seats (hand_id, seat, player_id) VALUES (?, ?, ?)",
                [(hand_id, seat, player) for seat, player in enumerate(table.seats)],
            )
            await db.execute("UPDATE tables SET status = 'playing' WHERE id = ?", (table_id,))
            return await self._hand(db, hand_id)  # type: ignore[arg-type]

    async def append_action(
        self,
        hand_id: int,
        seq: int,
        action: JSON,
        transfers: Sequence[TransferLike] = (),
        *,
        result: JSON | None = None,
    ) -> AppendResult:
        action_json = _dumps(action)
        result_json = None if result is None else _dumps(result)
        if not isinstance(seq, int) or seq < 0:
            raise InvalidWrite(f"sequence number must be a whole number >= 0, not {seq!r}")
        async with self._tx() as db:
            head = await self._one(db, _APPEND_HEAD, {"hand": hand_id, "seq": seq})
            if head is None:
                raise NotFound(f"no hand {hand_id}")
            chat_id, status, logged, expected, *seats = head
            if logged is not None:
                if logged == action_json:
                    return AppendResult(AppendOutcome.DUPLICATE, seq)
                raise SequenceConflict(f"hand {hand_id} already has a different action number {seq}")
            if status != HandStatus.PLAYING.value:
                raise HandClosed(f"hand {hand_id} is {status}")
            if seq != expected:
                raise SequenceConflict(f"hand {hand_id} expects action number {expected}, not {seq}")
            rows = _seat_rows(transfers, seats)
            now = self._now_ms()
            await db.execute(
                "INSERT INTO actions (hand_id, seq, action, at) VALUES (?, ?, ?, ?)",
                (hand_id, seq, action_json, now),
            )
            await self._book(db, chat_id, rows, now, hand_id=hand_id, hand_seq=seq)
            if result_json is not None:
                await db.execute(
                    "UPDATE hands SET status = 'finished', result = ?, finished_at = ? WHERE id = ?",
                    (result_json, now, hand_id),
                )
            return AppendResult(AppendOutcome.WRITTEN, seq)

    async def void_hand(self, hand_id: int, reason: str) -> Hand:
        async with self._tx() as db:
            hand = await self._hand(db, hand_id)
            if hand.status is not HandStatus.PLAYING:
                raise HandClosed(f"hand {hand_id} is {hand.status.value}")
            booked = await self._all(
                db,
                "SELECT payee, payer, amount, reason FROM ledger WHERE hand_id = ? ORDER BY id",
                (hand_id,),
            )
            now = self._now_ms()
            reversed_rows = [(payee, payer, amount, f"void: {why}") for payee, payer, amount, why in booked]
            await self._book(db, hand.chat_id, reversed_rows, now, hand_id=hand_id, hand_seq=None)
            await db.execute(
                "UPDATE hands SET status = 'voided', result = ?, finished_at = ? WHERE id = ?",
                (_dumps({"voided": reason}), now, hand_id),
            )
            return await self._hand(db, hand_id)

    async def get_hand(self, hand_id: int) -> Hand:
        async with self._tx() as db:
            return await self._hand(db, hand_id)

    async def table_hands(self, table_id: int) -> list[Hand]:
        async with self._tx() as db:
            await self._table(db, table_id)
            rows = await self._all(db, "SELECT id FROM hands WHERE table_id = ? ORDER BY number", (table_id,))
            return [await self._hand(db, row[0]) for row in rows]

    async def _actions(self, db: aiosqlite.Connection, hand_id: int) -> list[LoggedAction]:
        rows = await self._all(db, "SELECT seq, action, at FROM actions WHERE hand_id = ? ORDER BY seq", (hand_id,))
        return [LoggedAction(seq, json.loads(action), days.from_ms(at)) for seq, action, at in rows]

    async def hand_actions(self, hand_id: int) -> list[LoggedAction]:
        async with self._tx() as db:
            await self._hand(db, hand_id)
            return await self._actions(db, hand_id)

    async def unfinished_hands(self) -> list[UnfinishedHand]:
        async with self._tx() as db:
            ids = await self._all(db, "SELECT id FROM hands WHERE status = 'playing' ORDER BY id")
            found = []
            for (hand_id,) in ids:
                hand = await self._hand(db, hand_id)
                table = await self._table(db, hand.table_id)
                found.append(UnfinishedHand(hand, table, tuple(await self._actions(db, hand_id))))
            return found

    # -- scorekeeping -----------------------------------------------------------------------
    async def _session(self, db: aiosqlite.Connection, session_id: int) -> ScoreSession:
        row = await self._one(
            db,
            "SELECT id, chat_id, status, creator_id, started_at, ended_at FROM score_sessions WHERE id = ?",
            (session_id,),
        )
        if row is None:
            raise NotFound(f"no scorekeeping session {session_id}")
        seats = await self._seat_players(db, "session_seats", "session_id", session_id)
        return ScoreSession(
            id=row[0],
            chat_id=row[1],
            status=SessionStatus(row[2]),
            seats=tuple(seats),
            creator_id=row[3],
            started_at=days.from_ms(row[4]),
            ended_at=None if row[5] is None else days.from_ms(row[5]),
        )

    async def start_session(self, chat_id: int, player_ids: Sequence[int], creator_id: int | None) -> ScoreSession:
        players = list(player_ids)
        if not 2 <= len(players) <= SEATS or len(set(players)) != len(players):
            raise InvalidWrite(f"a scorekeeping session needs 2 to 4 different players, got {players}")
        async with self._tx() as db:
            await self._chat(db, chat_id)
            for player_id in players:
                await self._player_in_chat(db, player_id, chat_id)
            if creator_id is not None:
                await self._ensure_user(db, creator_id)
            cursor = await db.execute(
                "INSERT INTO score_sessions (chat_id, status, creator_id, started_at) VALUES (?, 'open', ?, ?)",
                (chat_id, creator_id, self._now_ms()),
            )
            session_id = cursor.lastrowid
            await db.executemany(
                "INSERT INTO session_seats (session_id, seat, player_id) VALUES (?, ?, ?)",
                [(session_id, seat, player) for seat, player in enumerate(players)],
            )
            return await self._session(db, session_id)  # type: ignore[arg-type]

    async def get_session(self, session_id: int) -> ScoreSession:
        async with self._tx() as db:
            return await self._session(db, session_id)

    async def open_sessions(self, chat_id: int) -> list[ScoreSession]:
        async with self._tx() as db:
            rows = await self._all(
                db,
                "SELECT id FROM score_sessions WHERE chat_id = ? AND status = 'open' ORDER BY id",
                (chat_id,),
            )
            return [await self._session(db, row[0]) for row in rows]

    async def _open_session(self, db: aiosqlite.Connection, session_id: int) -> ScoreSession:
        session = await self._session(db, session_id)
        if session.status is not SessionStatus.OPEN:
            raise InvalidWrite(f"scorekeeping session {session_id} has ended")
        return session

    async def _insert_record(
        self, db: aiosqlite.Connection, session: ScoreSession, record: str, undoes: int | None
    ) -> tuple[int, int, int]:
        (seq,) = await self._one(
            db, "SELECT COALESCE(MAX(seq) + 1, 0) FROM score_records WHERE session_id = ?", (session.id,)
        )
        now = self._now_ms()
        cursor = await db.execute(
            "INSERT INTO score_records (session_id, seq, record, at, undoes) VALUES (?, ?, ?, ?, ?)",
            (session.id, seq, record, now, undoes),
        )
        return cursor.lastrowid, seq, now  # type: ignore[return-value]

    async def add_record(self, session_id: int, record: JSON, transfers: Sequence[TransferLike]) -> ScoreRecord:
        record_json = _dumps(record)
        async with self._tx() as db:
            session = await self._open_session(db, session_id)
            rows = _seat_rows(transfers, list(session.seats))
            record_id, seq, now = await self._insert_record(db, session, record_json, None)
            await self._book(db, session.chat_id, rows, now, record_id=record_id)
            return ScoreRecord(record_id, session_id, seq, json.loads(record_json), days.from_ms(now))

    async def undo_last_record(self, session_id: int) -> ScoreRecord | None:
        async with self._tx() as db:
            session = await self._open_session(db, session_id)
            target = await self._one(
                db,
                "SELECT r.id, r.seq FROM score_records r WHERE r.session_id = ? AND r.undoes IS NULL "
                "AND NOT EXISTS (SELECT 1 FROM score_records u WHERE u.undoes = r.id) "
                "ORDER BY r.seq DESC LIMIT 1",
                (session_id,),
            )
            if target is None:
                return None
            target_id, target_seq = target
            undo = {"undo": target_seq}
            record_id, seq, now = await self._insert_record(db, session, _dumps(undo), target_id)
            booked = await self._all(
                db,
                "SELECT payee, payer, amount, reason FROM ledger WHERE record_id = ? ORDER BY id",
                (target_id,),
            )
            rows = [(payee, payer, amount, f"undo: {why}") for payee, payer, amount, why in booked]
            await self._book(db, session.chat_id, rows, now, record_id=record_id)
            return ScoreRecord(record_id, session_id, seq, undo, days.from_ms(now), undoes=target_id)

    async def session_records(self, session_id: int) -> list[ScoreRecord]:
        async with self._tx() as db:
            await self._session(db, session_id)
            rows = await self._all(
                db,
                "SELECT r.id, r.seq, r.record, r.at, r.undoes, u.id FROM score_records r "
                "LEFT JOIN score_records u ON u.undoes = r.id WHERE r.session_id = ? ORDER BY r.seq",
                (session_id,),
            )
        return [
            ScoreRecord(rid, session_id, seq, json.loads(rec), days.from_ms(at), undoes, undone_by)
            for rid, seq, rec, at, undoes, undone_by in rows
        ]

    async def end_session(self, session_id: int) -> ScoreSession:
        async with self._tx() as db:
            await self._open_session(db, session_id)
            await db.execute(
                "UPDATE score_sessions SET status = 'ended', ended_at = ? WHERE id = ?",
                (self._now_ms(), session_id),
            )
            return await self._session(db, session_id)

    # -- the ledger -------------------------------------------------------------------------
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
            "ON CONFLICT (chat_id, player_id) DO UPDATE SET balance = balance + excluded.balance",
            [(chat_id, player, delta) for player, delta in deltas.items()],
        )

    async def balance(self, chat_id: int, player_id: int) -> int:
        async with self._tx() as db:
            row = await self._one(
                db, "SELECT balance FROM balances WHERE chat_id = ? AND player_id = ?", (chat_id, player_id)
            )
        return 0 if row is None else row[0]

    async def balances(self, chat_id: int) -> list[PlayerTotal]:
        async with self._tx() as db:
            rows = await self._all(
                db,
                "SELECT p.id, p.name, b.balance, p.user_id FROM balances b "
                "JOIN players p ON p.id = b.player_id "
                "WHERE b.chat_id = ? ORDER BY b.balance DESC, p.name, p.id",
                (chat_id,),
            )
        return [PlayerTotal(*row) for row in rows]

    async def _totals(
        self, db: aiosqlite.Connection, chat_id: int, start_ms: int, end_ms: int | None
    ) -> tuple[list[PlayerTotal], int]:
        end = end_ms if end_ms is not None else 2**62
        window = (chat_id, start_ms, end)
        rows = await self._all(
            db,
            "SELECT p.id, p.name, t.net, p.user_id FROM ("
            " SELECT party, SUM(delta) AS net FROM ("
            "  SELECT payee AS party, amount AS delta FROM ledger WHERE chat_id = ? AND at >= ? AND at < ?"
            "  UNION ALL"
            "  SELECT payer, -amount FROM ledger WHERE chat_id = ? AND at >= ? AND at < ?"
            " ) GROUP BY party"
            ") t JOIN players p ON p.id = t.party ORDER BY t.net DESC, p.name, p.id",
            window + window,
        )
        (count,) = await self._one(db, "SELECT COUNT(*) FROM ledger WHERE chat_id = ? AND at >= ? AND at < ?", window)
        return [PlayerTotal(*row) for row in rows], count

    async def daily_tally(self, chat_id: int, day: date) -> DayTally:
        return await self.range_tally(chat_id, day, day)

    async def range_tally(self, chat_id: int, first: date, last: date) -> DayTally:
        async with self._tx() as db:
            chat = await self._chat(db, chat_id)
            start, end = days.day_bounds_ms(first, last, days.zone(chat.timezone))
            lines, count = await self._totals(db, chat_id, start, end)
        return DayTally(chat_id, first, tuple(lines), count)

    async def daily_tallies(self, chat_id: int, first: date, last: date) -> list[DayTally]:
        """SQL sums the range in 15-minute UTC buckets in one index scan; Python files each
        bucket under its local day. Every local midnight of a real time zone falls on such a
        bucket edge (the bucket shrinks to a common divisor if one does not), so this stays
        exact on 23- and 25-hour days."""
        span = (last - first).days + 1
        if span < 1 or span > MAX_TALLY_DAYS:
            raise InvalidWrite(f"a date range must cover 1 to {MAX_TALLY_DAYS} days, not {first} .. {last}")
        all_days = [date.fromordinal(first.toordinal() + i) for i in range(span + 1)]
        async with self._tx() as db:
            chat = await self._chat(db, chat_id)
            tz = days.zone(chat.timezone)
            bounds = [days.day_start_ms(d, tz) for d in all_days]
            step = math.gcd(_BUCKET_MS, *bounds)
            window = {"chat": chat_id, "lo": bounds[0], "hi": bounds[-1], "step": step}
            rows = await self._all(db, _BUCKETED_NETS, window)
            names = {
                player_id: (name, user_id)
                for player_id, name, user_id in await self._all(
                    db, "SELECT id, name, user_id FROM players WHERE chat_id = ?", (chat_id,)
                )
            }
        nets: list[dict[int, int]] = [defaultdict(int) for _ in range(span)]
        sides = [0] * span
        for bucket, party, net, count in rows:
            index = bisect.bisect_right(bounds, bucket * step) - 1
            nets[index][party] += net
            sides[index] += count

        def lines(day_nets: dict[int, int]) -> tuple[PlayerTotal, ...]:
            found = (PlayerTotal(party, names[party][0], net, names[party][1]) for party, net in day_nets.items())
            return tuple(sorted(found, key=_best_first))

        return [DayTally(chat_id, all_days[i], lines(nets[i]), sides[i] // 2) for i in range(span)]

    async def leaderboard(self, chat_id: int, *, since: date | None = None, limit: int = 10) -> list[PlayerTotal]:
        if since is None:
            return (await self.balances(chat_id))[:limit]
        async with self._tx() as db:
            chat = await self._chat(db, chat_id)
            start = days.day_start_ms(since, days.zone(chat.timezone))
            lines, _ = await self._totals(db, chat_id, start, None)
        return lines[:limit]

    async def recent_hands(self, chat_id: int, player_id: int, limit: int = 10) -> list[HandResult]:
        net = (
            "COALESCE((SELECT SUM(CASE WHEN l.payee = :p THEN l.amount ELSE -l.amount END) FROM ledger l "
            "WHERE l.{key} = {ref} AND (l.payee = :p OR l.payer = :p)), 0)"
        )
        async with self._tx() as db:
            rows = await self._all(
                db,
                "SELECT 'hand', h.id, h.finished_at, " + net.format(key="hand_id", ref="h.id") + ", h.result "
                "FROM hands h JOIN hand_seats s ON s.hand_id = h.id AND s.player_id = :p "
                "WHERE h.chat_id = :c AND h.status = 'finished' "
                "UNION ALL "
                "SELECT 'record', r.id, r.at, " + net.format(key="record_id", ref="r.id") + ", r.record "
                "FROM score_records r JOIN score_sessions ss ON ss.id = r.session_id "
                "JOIN session_seats st ON st.session_id = r.session_id AND st.player_id = :p "
                "WHERE ss.chat_id = :c AND r.undoes IS NULL "
                "AND NOT EXISTS (SELECT 1 FROM score_records u WHERE u.undoes = r.id) "
                "ORDER BY 3 DESC, 2 DESC LIMIT :n",
                {"p": player_id, "c": chat_id, "n": limit},
            )
        return [
            HandResult(kind, item_id, days.from_ms(at), value, None if result is None else json.loads(result))
            for kind, item_id, at, value, result in rows
        ]

    async def ledger(self, chat_id: int) -> list[LedgerEntry]:
        async with self._tx() as db:
            rows = await self._all(
                db,
                "SELECT l.id, l.chat_id, l.at, l.payer, a.name, l.payee, b.name, l.amount, l.reason, "
                "l.hand_id, l.hand_seq, l.record_id FROM ledger l JOIN players a ON a.id = l.payer "
                "JOIN players b ON b.id = l.payee WHERE l.chat_id = ? ORDER BY l.id",
                (chat_id,),
            )
        return [
            LedgerEntry(row[0], row[1], days.from_ms(row[2]), *row[3:])  # type: ignore[arg-type]
            for row in rows
        ]

    # -- daily summaries --------------------------------------------------------------------
    async def chats_due_summary(self, now: datetime) -> list[DueSummary]:
        async with self._tx() as db:
            rows = await self._all(
                db,
                "SELECT id, language, timezone, rules, base_stake, summary_time, last_summary_date "
                "FROM chats "
                "WHERE EXISTS (SELECT 1 FROM ledger WHERE ledger.chat_id = chats.id) ORDER BY id",
            )
            due = []
            for row in rows:
                chat = _chat_from_row(row)
                tz = days.zone(chat.timezone)
                day = days.summary_day(now, tz, days.parse_summary_time(chat.summary_time))
                if chat.last_summary_date is not None and chat.last_summary_date >= day:
                    continue
                start, end = days.day_bounds_ms(day, day, tz)
                played = await self._one(
                    db,
                    "SELECT 1 FROM ledger WHERE chat_id = ? AND at >= ? AND at < ? LIMIT 1",
                    (chat.id, start, end),
                )
                if played is not None:
                    due.append(DueSummary(chat, day))
            return due

    async def mark_summary_posted(self, chat_id: int, day: date) -> None:
        async with self._tx() as db:
            await self._chat(db, chat_id)
            await db.execute(
                "UPDATE chats SET last_summary_date = ? WHERE id = ? AND "
                "(last_summary_date IS NULL OR last_summary_date < ?)",
                (day.isoformat(), chat_id, day.isoformat()),
            )

    # -- housekeeping -----------------------------------------------------------------------
    async def verify(self) -> list[str]:
        problems: list[str] = []
        async with self._tx() as db:
            ledger_net: dict[tuple[int, int], int] = defaultdict(int)
            for chat_id, party, net in await self._all(
                db,
                "SELECT chat_id, party, SUM(delta) FROM ("
                "SELECT chat_id, payee AS party, amount AS delta FROM ledger "
                "UNION ALL SELECT chat_id, payer, -amount FROM ledger) GROUP BY chat_id, party",
            ):
                ledger_net[(chat_id, party)] = net
            cached = {(c, p): b for c, p, b in await self._all(db, "SELECT chat_id, player_id, balance FROM balances")}
            for key in sorted(set(ledger_net) | set(cached)):
                if ledger_net.get(key, 0) != cached.get(key, 0):
                    problems.append(
                        f"chat {key[0]} player {key[1]}: cached balance {cached.get(key, 0)} "
                        f"but the ledger says {ledger_net.get(key, 0)}"
                    )
            for what, owner, ident, n in await self._all(db, _FOREIGN_PARTIES):
                problems.append(f"{what} {ident}: {n} ledger row(s) name a player not seated at {owner}")
            for hand_id, count, top in await self._all(
                db,
                "SELECT hand_id, COUNT(*), MAX(seq) FROM actions GROUP BY hand_id HAVING COUNT(*) <> MAX(seq) + 1",
            ):
                problems.append(f"hand {hand_id}: action log has gaps ({count} actions, last number {top})")
            for hand_id, party, net in await self._all(
                db,
                "SELECT l.hand_id, x.party, SUM(x.delta) FROM ("
                "SELECT id, payee AS party, amount AS delta FROM ledger "
                "UNION ALL SELECT id, payer, -amount FROM ledger) x JOIN ledger l ON l.id = x.id "
                "JOIN hands h ON h.id = l.hand_id WHERE h.status = 'voided' GROUP BY l.hand_id, x.party "
                "HAVING SUM(x.delta) <> 0",
            ):
                problems.append(f"hand {hand_id} is voided but player {party} is still {net:+d} from it")
            for (hand_id,) in await self._all(
                db,
                "SELECT id FROM hands WHERE (status = 'playing') <> (finished_at IS NULL) "
                "OR (status = 'playing') <> (result IS NULL)",
            ):
                problems.append(f"hand {hand_id}: status disagrees with its result / finish time")
            for (hand_id,) in await self._all(
                db,
                "SELECT DISTINCT l.hand_id FROM ledger l JOIN hands h ON h.id = l.hand_id WHERE l.chat_id <> h.chat_id",
            ):
                problems.append(f"hand {hand_id}: ledger rows booked to another chat")
        return problems

    # -- helpers ----------------------------------------------------------------------------
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


_PLAYER_COLUMNS = "id, chat_id, name, kind, user_id"

_BUCKET_MS = 15 * 60 * 1000
# Net chips per (bucket of :step ms, party) over [:lo, :hi), from the covering index.
_BUCKETED_NETS = """
SELECT at / :step AS bucket, party, SUM(delta), COUNT(*) FROM (
    SELECT at, payee AS party, amount AS delta FROM ledger WHERE chat_id = :chat AND at >= :lo AND at < :hi
    UNION ALL
    SELECT at, payer, -amount FROM ledger WHERE chat_id = :chat AND at >= :lo AND at < :hi
) GROUP BY bucket, party
"""

# Everything append_action must know before writing, in one round trip to the SQLite thread.
_APPEND_HEAD = """
SELECT h.chat_id, h.status,
    (SELECT action FROM actions WHERE hand_id = h.id AND seq = :seq),
    (SELECT COALESCE(MAX(seq) + 1, 0) FROM actions WHERE hand_id = h.id),
    (SELECT player_id FROM hand_seats WHERE hand_id = h.id AND seat = 0),
    (SELECT player_id FROM hand_seats WHERE hand_id = h.id AND seat = 1),
    (SELECT player_id FROM hand_seats WHERE hand_id = h.id AND seat = 2),
    (SELECT player_id FROM hand_seats WHERE hand_id = h.id AND seat = 3)
FROM hands h WHERE h.id = :hand
"""

# Ledger rows of a hand or record whose payer or payee is not seated there.
_FOREIGN_PARTIES = """
SELECT 'hand', 'that hand', l.hand_id, COUNT(*) FROM ledger l WHERE l.hand_id IS NOT NULL AND (
    NOT EXISTS (SELECT 1 FROM hand_seats s WHERE s.hand_id = l.hand_id AND s.player_id = l.payer)
    OR NOT EXISTS (SELECT 1 FROM hand_seats s WHERE s.hand_id = l.hand_id AND s.player_id = l.payee))
GROUP BY l.hand_id
UNION ALL
SELECT 'record', 'its session', l.record_id, COUNT(*) FROM ledger l
JOIN score_records r ON r.id = l.record_id WHERE (
    NOT EXISTS (SELECT 1 FROM session_seats s WHERE s.session_id = r.session_id AND s.player_id = l.payer)
    OR NOT EXISTS (SELECT 1 FROM session_seats s WHERE s.session_id = r.session_id AND s.player_id = l.payee))
GROUP BY l.record_id
"""


def _best_first(line: PlayerTotal) -> tuple[int, str, int]:
    return (-line.net, line.name, line.player_id)


def _check_seat(seat: int) -> None:
    if not isinstance(seat, int) or not 0 <= seat < SEATS:
        raise InvalidWrite(f"seat must be 0 to 3, not {seat!r}")


def _clean_name(name: str) -> str:
    cleaned = " ".join(str(name).split())
    if not cleaned:
        raise InvalidWrite("a player needs a non-empty name")
    return cleaned[:64]


def _seat_rows(transfers: Iterable[TransferLike], seats: Sequence[int]) -> list[tuple[int, int, int, str]]:
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


def _chat_from_row(row: Sequence[Any]) -> Chat:
    return Chat(
        id=row[0],
        language=row[1],
        timezone=row[2],
        rules=json.loads(row[3]),
        base_stake=row[4],
        summary_time=row[5],
        last_summary_date=None if row[6] is None else date.fromisoformat(row[6]),
    )


def _player_from_row(row: Sequence[Any]) -> Player:
    return Player(id=row[0], chat_id=row[1], name=row[2], kind=PlayerKind(row[3]), user_id=row[4])
