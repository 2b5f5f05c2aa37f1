"""Scorekeeping sessions (记账) for real-tile games: records, and undo by reversal."""

from __future__ import annotations

import json
from collections.abc import Sequence

import aiosqlite

from storage import days
from storage.interface import InvalidWrite, NotFound
from storage.models import (
    JSON,
    PlayerTotal,
    ScoreRecord,
    ScoreSession,
    SessionStatus,
    TransferLike,
)
from storage.sqlite_base import SEATS, SqliteBase, canonical_json, check_topic, seat_rows


class Scorekeeping(SqliteBase):
    """Sessions seat 2-4 players (users or plain names); records book seat transfers."""

    async def _session(self, db: aiosqlite.Connection, session_id: int) -> ScoreSession:
        row = await self._one(
            db,
            "SELECT id, chat_id, status, creator_id, started_at, ended_at, topic_id FROM score_sessions WHERE id = ?",
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
            topic_id=row[6],
        )

    async def start_session(self, chat_id: int, player_ids: Sequence[int], creator_id: int | None,
                            topic_id: int | None = None) -> ScoreSession:
        check_topic(topic_id)
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
                "INSERT INTO score_sessions (chat_id, status, creator_id, started_at, topic_id)"
                " VALUES (?, 'open', ?, ?, ?)",
                (chat_id, creator_id, self._now_ms(), topic_id),
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
        record_json = canonical_json(record)
        async def unit(db: aiosqlite.Connection) -> ScoreRecord:
            session = await self._open_session(db, session_id)
            rows = seat_rows(transfers, list(session.seats))
            record_id, seq, now = await self._insert_record(db, session, record_json, None)
            await self._book(db, session.chat_id, rows, now, record_id=record_id)
            return ScoreRecord(record_id, session_id, seq, json.loads(record_json), days.from_ms(now))

        return await self._run(unit)

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
            record_id, seq, now = await self._insert_record(db, session, canonical_json(undo), target_id)
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

    async def session_totals(self, session_id: int) -> list[PlayerTotal]:
        async with self._tx() as db:
            session = await self._session(db, session_id)
            rows = await self._all(
                db,
                "SELECT p.id, p.name, COALESCE(SUM(CASE WHEN l.payee = p.id THEN l.amount "
                "WHEN l.payer = p.id THEN -l.amount END), 0), p.user_id "
                "FROM session_seats s JOIN players p ON p.id = s.player_id "
                "LEFT JOIN score_records r ON r.session_id = s.session_id "
                "LEFT JOIN ledger l ON l.record_id = r.id AND (l.payer = p.id OR l.payee = p.id) "
                "WHERE s.session_id = ? GROUP BY p.id ORDER BY 3 DESC, p.name, p.id",
                (session.id,),
            )
        return [PlayerTotal(*row) for row in rows]
