"""What several bot workers on one database share beyond the log: timers any worker may fire,
each live hand's seat states, and a worker's view of how far a hand has got.

Shared by both backends despite the prefix. Claiming differs in one clause: PostgreSQL lets
several processes claim at once, so its claim locks the rows it takes with ``FOR UPDATE SKIP
LOCKED`` (``_CLAIM_LOCKING``) and two workers never take the same timer; SQLite runs one writer
at a time and needs no clause. The per-table lock itself is a backend's own (``table_lock``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import aiosqlite

from storage import days
from storage.interface import InvalidWrite
from storage.models import JSON, SEAT_MESSAGE_KINDS, HandProgress, LoggedAction, SeatMessage, Timer
from storage.sqlite_base import SqliteBase, canonical_json

TimerChange = tuple[float, JSON] | None  # (seconds from now, data), or None to cancel


class WorkersCoordination(SqliteBase):
    _CLAIM_LOCKING = ""  # SQLite: one writer at a time, a claim cannot race another

    @property
    def shared(self) -> bool:
        """True when other processes may serve the same tables (PostgreSQL): callers then take
        ``table_lock`` and catch up from the log before they act."""
        return False

    @asynccontextmanager
    async def table_lock(self, table_id: int) -> AsyncIterator[None]:
        """Serialise one table's decisions across processes; with one process (SQLite) the table's
        own ``asyncio.Lock`` already does, and this lock is free."""
        yield

    @asynccontextmanager
    async def chat_lock(self, chat_id: int) -> AsyncIterator[None]:
        """Serialise one chat's lobby changes across processes (free with one process, whose own
        lock per chat does it)."""
        yield

    async def join_workers(self) -> int:
        """Mark this process as a live worker; the number of others: none, with one process."""
        return 0

    async def set_timers(self, changes: Mapping[str, TimerChange], *, keep_existing: bool = False) -> None:
        """Set (due ``seconds`` from now, with ``data``) or cancel (``None``) timers by key, in one
        unit. Setting a key again replaces its due time and data and drops any claim on it, unless
        ``keep_existing``: then a key already set stays as it is (several workers starting at once
        each ask for the same one-off job; one row, fired once)."""
        now = self._now_ms()
        rows = []
        for key, change in changes.items():
            if change is not None:
                seconds, data = change
                if seconds < 0:
                    raise InvalidWrite(f"timer {key!r} cannot be due {seconds} s in the past")
                rows.append((key, now + round(seconds * 1000), canonical_json(data)))

        async def unit(db: aiosqlite.Connection) -> None:
            cancelled = [(key,) for key, change in changes.items() if change is None]
            if cancelled:
                await db.executemany("DELETE FROM timers WHERE key = ?", cancelled)
            if rows:
                on_conflict = "DO NOTHING" if keep_existing else (
                    "DO UPDATE SET due_at = excluded.due_at, data = excluded.data, "
                    "claimed_by = NULL, claimed_at = NULL")
                await db.executemany(
                    f"INSERT INTO timers (key, due_at, data) VALUES (?, ?, ?) ON CONFLICT (key) {on_conflict}", rows)

        await self._run(unit)

    async def claim_timers(self, worker: str, lease_seconds: float, limit: int = 50) -> list[Timer]:
        """Claim for ``worker`` the timers that are due and unclaimed, or whose claim is older than
        ``lease_seconds`` (the worker that took it died or hangs), earliest first."""
        now = self._now_ms()
        stale = now - round(lease_seconds * 1000)

        async def unit(db: aiosqlite.Connection) -> list[Timer]:
            rows = await self._all(
                db,
                "UPDATE timers SET claimed_by = ?, claimed_at = ? WHERE key IN ("
                " SELECT key FROM timers WHERE due_at <= ? AND (claimed_at IS NULL OR claimed_at <= ?)"
                f" ORDER BY due_at LIMIT ?{self._CLAIM_LOCKING}) RETURNING key, due_at, data",
                (worker, now, now, stale, limit),
            )
            return [Timer(key, days.from_ms(due), json.loads(data), worker, now) for key, due, data in rows]

        found = await self._run(unit)
        return sorted(found, key=lambda timer: (timer.due_at, timer.key))

    async def finish_timer(self, timer: Timer) -> bool:
        """Remove a fired timer, unless it was set again meanwhile (or claimed by another after the
        lease ran out); True if it was removed."""

        async def unit(db: aiosqlite.Connection) -> bool:
            rows = await self._all(
                db, "DELETE FROM timers WHERE key = ? AND claimed_by = ? AND claimed_at = ? RETURNING key",
                (timer.key, timer.claimed_by, timer.claimed_at_ms),
            )
            return bool(rows)

        return await self._run(unit)

    async def timers(self) -> dict[str, tuple[float, JSON]]:
        """Every timer set, by key: (its due time as a UTC timestamp, its data)."""

        async def unit(db: aiosqlite.Connection) -> dict[str, tuple[float, JSON]]:
            rows = await self._all(db, "SELECT key, due_at, data FROM timers")
            return {key: (due / 1000, json.loads(data)) for key, due, data in rows}

        return await self._run(unit)

    async def save_seat_states(self, hand_id: int, states: JSON) -> int:
        """Keep a live hand's seat states (``{"seats": [...]}``); returns their new version."""
        state_json = canonical_json(states)

        async def unit(db: aiosqlite.Connection) -> int:
            await db.execute(
                "INSERT INTO hand_seat_states (hand_id, state, version, at) VALUES (?, ?, 1, ?) "
                "ON CONFLICT (hand_id) DO UPDATE SET state = excluded.state, "
                "version = hand_seat_states.version + 1, at = excluded.at",
                (hand_id, state_json, self._now_ms()),
            )
            (version,) = await self._one(db, "SELECT version FROM hand_seat_states WHERE hand_id = ?", (hand_id,))
            return int(version)

        return await self._run(unit)

    async def add_vote(self, hand_id: int, verb: str, user_id: int) -> int:
        """Count ``user_id``'s vote for ``verb`` (Next hand / End) under a finished hand, kept with
        the hand's seat states (whose play is over); the number of distinct voters so far."""

        async def unit(db: aiosqlite.Connection) -> int:
            await self._hand(db, hand_id)  # type: ignore[attr-defined]
            row = await self._one(db, "SELECT state FROM hand_seat_states WHERE hand_id = ?", (hand_id,))
            state = {} if row is None else json.loads(row[0])
            voters = sorted({*state.setdefault("votes", {}).get(verb, []), user_id})
            state["votes"][verb] = voters
            await db.execute(
                "INSERT INTO hand_seat_states (hand_id, state, version, at) VALUES (?, ?, 1, ?) "
                "ON CONFLICT (hand_id) DO UPDATE SET state = excluded.state, "
                "version = hand_seat_states.version + 1, at = excluded.at",
                (hand_id, canonical_json(state), self._now_ms()),
            )
            return len(voters)

        return await self._run(unit)

    async def hand_progress(self, hand_id: int, after: int) -> HandProgress:
        """The hand as stored now, its actions from number ``after`` on, and its seat states."""

        async def unit(db: aiosqlite.Connection) -> HandProgress:
            hand = await self._hand(db, hand_id)  # type: ignore[attr-defined]
            rows = await self._all(
                db, "SELECT seq, action, at FROM actions WHERE hand_id = ? AND seq >= ? ORDER BY seq",
                (hand_id, after),
            )
            state = await self._one(db, "SELECT state, version FROM hand_seat_states WHERE hand_id = ?", (hand_id,))
            return HandProgress(
                hand,
                tuple(LoggedAction(seq, json.loads(action), days.from_ms(at)) for seq, action, at in rows),
                None if state is None else json.loads(state[0]),
                0 if state is None else int(state[1]),
                await self._seat_messages(db, hand_id),
            )

        return await self._run(unit)

    async def _seat_messages(self, db: aiosqlite.Connection, hand_id: int) -> tuple[SeatMessage, ...]:
        rows = await self._all(
            db, "SELECT seat, kind, message_id, shows FROM seat_messages WHERE hand_id = ? ORDER BY seat, kind",
            (hand_id,),
        )
        return tuple(SeatMessage(int(seat), kind, int(message_id), json.loads(shows))
                     for seat, kind, message_id, shows in rows)

    async def seat_messages(self, hand_id: int) -> tuple[SeatMessage, ...]:
        """The messages the hand keeps per seat, as stored now."""

        async def unit(db: aiosqlite.Connection) -> tuple[SeatMessage, ...]:
            return await self._seat_messages(db, hand_id)

        return await self._run(unit)

    async def put_seat_message(self, hand_id: int, seat: int, kind: str, message_id: int, shows: JSON, *,
                               replacing: int | None) -> bool:
        """Keep ``message_id`` as the seat's message of ``kind`` if the stored one is still ``replacing``
        (None: none stored); True if written."""
        _check_seat_message(seat, kind)
        shows_json = canonical_json(shows)

        async def unit(db: aiosqlite.Connection) -> bool:
            if replacing is None:
                await self._hand(db, hand_id)  # type: ignore[attr-defined]
                rows = await self._all(
                    db,
                    "INSERT INTO seat_messages (hand_id, seat, kind, message_id, shows, at) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (hand_id, seat, kind) DO NOTHING RETURNING message_id",
                    (hand_id, seat, kind, message_id, shows_json, self._now_ms()),
                )
            else:
                rows = await self._all(
                    db,
                    "UPDATE seat_messages SET message_id = ?, shows = ?, at = ? "
                    "WHERE hand_id = ? AND seat = ? AND kind = ? AND message_id = ? RETURNING message_id",
                    (message_id, shows_json, self._now_ms(), hand_id, seat, kind, replacing),
                )
            return bool(rows)

        return await self._run(unit)

    async def drop_seat_message(self, hand_id: int, seat: int, kind: str, message_id: int) -> bool:
        """Forget the seat's message of ``kind`` if it is still ``message_id``; True if removed here."""
        _check_seat_message(seat, kind)

        async def unit(db: aiosqlite.Connection) -> bool:
            rows = await self._all(
                db, "DELETE FROM seat_messages WHERE hand_id = ? AND seat = ? AND kind = ? AND message_id = ? "
                "RETURNING message_id", (hand_id, seat, kind, message_id),
            )
            return bool(rows)

        return await self._run(unit)

    async def playing_hand(self, table_id: int) -> int | None:
        """The id of the table's hand in play, if any."""

        async def unit(db: aiosqlite.Connection) -> int | None:
            row = await self._one(db, "SELECT id FROM hands WHERE table_id = ? AND status = 'playing'", (table_id,))
            return None if row is None else int(row[0])

        return await self._run(unit)


def _check_seat_message(seat: int, kind: str) -> None:
    if kind not in SEAT_MESSAGE_KINDS:
        raise InvalidWrite(f"no seat message kind {kind!r} (one of {', '.join(SEAT_MESSAGE_KINDS)})")
    if not 0 <= seat <= 3:
        raise InvalidWrite(f"no seat {seat}")
