"""Tables, seats, hands and the append-only action log."""

from __future__ import annotations

import json
from collections.abc import Sequence

import aiosqlite

from storage import days
from storage.interface import HandClosed, InvalidWrite, NotFound, SequenceConflict
from storage.models import (
    JSON,
    AppendOutcome,
    AppendResult,
    Hand,
    HandStatus,
    LoggedAction,
    Table,
    TableStatus,
    TransferLike,
    UnfinishedHand,
)
from storage.sqlite_base import SEATS, SqliteBase, canonical_json, check_topic, seat_rows


class TablesAndHands(SqliteBase):
    async def _table(self, db: aiosqlite.Connection, table_id: int) -> Table:
        row = await self._one(
            db,
            "SELECT id, chat_id, status, creator_id, message_id, created_at, rules, topic_id FROM tables WHERE id = ?",
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
            rules=None if row[6] is None else json.loads(row[6]),
            topic_id=row[7],
        )

    async def create_table(self, chat_id: int, creator_id: int | None, topic_id: int | None = None) -> Table:
        check_topic(topic_id)
        async with self._tx() as db:
            await self._chat(db, chat_id)
            if creator_id is not None:
                await self._ensure_user(db, creator_id)
            cursor = await db.execute(
                "INSERT INTO tables (chat_id, status, creator_id, created_at, topic_id) VALUES (?, 'lobby', ?, ?, ?)",
                (chat_id, creator_id, self._now_ms(), topic_id),
            )
            table_id = cursor.lastrowid
            await db.executemany(
                "INSERT INTO table_seats (table_id, seat) VALUES (?, ?)",
                [(table_id, s) for s in range(SEATS)],
            )
            return await self._table(db, table_id)  # type: ignore[arg-type]

    async def get_table(self, table_id: int) -> Table:
        async def unit(db: aiosqlite.Connection) -> Table:
            return await self._table(db, table_id)

        return await self._run(unit)

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
        async def unit(db: aiosqlite.Connection) -> Table:
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

        return await self._run(unit)

    async def set_table_rules(self, table_id: int, rules: JSON | None) -> Table:
        async with self._tx() as db:
            table = await self._table(db, table_id)
            if table.status is not TableStatus.LOBBY:
                raise InvalidWrite(f"table {table_id} is {table.status.value}; its rules change only in the lobby")
            stored = None if rules is None else canonical_json(rules)
            await db.execute("UPDATE tables SET rules = ? WHERE id = ?", (stored, table_id))
            return await self._table(db, table_id)

    async def open_tables(self, chat_id: int | None = None) -> list[Table]:
        async def unit(db: aiosqlite.Connection) -> list[Table]:
            sql = "SELECT id FROM tables WHERE status IN ('lobby', 'playing')"
            params: tuple[int, ...] = ()
            if chat_id is not None:
                sql, params = sql + " AND chat_id = ?", (chat_id,)
            rows = await self._all(db, sql + " ORDER BY id", params)
            return [await self._table(db, row[0]) for row in rows]

        return await self._run(unit)

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
        rules_json = canonical_json(rules)
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
            # The earlier hands' DM pictures and pings are history now: only a live hand's are kept.
            await db.execute(
                "DELETE FROM seat_messages WHERE hand_id IN (SELECT id FROM hands WHERE table_id = ? AND id <> ?)",
                (table_id, hand_id),
            )
            return await self._hand(db, hand_id)  # type: ignore[arg-type]

    async def append_action(
        self,
        hand_id: int,
        seq: int,
        action: JSON,
        transfers: Sequence[TransferLike] = (),
        *,
        result: JSON | None = None,
        owe: str | None = None,
    ) -> AppendResult:
        action_json = canonical_json(action)
        result_json = None if result is None else canonical_json(result)
        if not isinstance(seq, int) or seq < 0:
            raise InvalidWrite(f"sequence number must be a whole number >= 0, not {seq!r}")
        async def unit(db: aiosqlite.Connection) -> AppendResult:
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
            rows = seat_rows(transfers, seats)
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
                await db.execute("DELETE FROM hand_snapshots WHERE hand_id = ?", (hand_id,))
            if owe is not None:
                await db.execute(
                    "INSERT INTO outbox (key, chat_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                    (owe, chat_id, now),
                )
            return AppendResult(AppendOutcome.WRITTEN, seq)

        return await self._run(unit)

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
                (canonical_json({"voided": reason}), now, hand_id),
            )
            return await self._hand(db, hand_id)

    async def get_hand(self, hand_id: int) -> Hand:
        async def unit(db: aiosqlite.Connection) -> Hand:
            return await self._hand(db, hand_id)

        return await self._run(unit)

    async def table_hands(self, table_id: int) -> list[Hand]:
        async def unit(db: aiosqlite.Connection) -> list[Hand]:
            await self._table(db, table_id)
            rows = await self._all(db, "SELECT id FROM hands WHERE table_id = ? ORDER BY number", (table_id,))
            return [await self._hand(db, row[0]) for row in rows]

        return await self._run(unit)

    async def _actions(self, db: aiosqlite.Connection, hand_id: int) -> list[LoggedAction]:
        rows = await self._all(db, "SELECT seq, action, at FROM actions WHERE hand_id = ? ORDER BY seq", (hand_id,))
        return [LoggedAction(seq, json.loads(action), days.from_ms(at)) for seq, action, at in rows]

    async def hand_actions(self, hand_id: int) -> list[LoggedAction]:
        async def unit(db: aiosqlite.Connection) -> list[LoggedAction]:
            await self._hand(db, hand_id)
            return await self._actions(db, hand_id)

        return await self._run(unit)

    async def unfinished_hands(self) -> list[UnfinishedHand]:
        async def unit(db: aiosqlite.Connection) -> list[UnfinishedHand]:
            ids = await self._all(db, "SELECT id FROM hands WHERE status = 'playing' ORDER BY id")
            found = []
            for (hand_id,) in ids:
                hand = await self._hand(db, hand_id)
                table = await self._table(db, hand.table_id)
                found.append(UnfinishedHand(hand, table, tuple(await self._actions(db, hand_id))))
            return found

        return await self._run(unit)


    async def save_snapshot(self, hand_id: int, seq: int, state: JSON) -> None:
        state_json = canonical_json(state)
        if not isinstance(seq, int) or seq < 0:
            raise InvalidWrite(f"sequence number must be a whole number >= 0, not {seq!r}")

        async def unit(db: aiosqlite.Connection) -> None:
            row = await self._one(db, "SELECT status FROM hands WHERE id = ?", (hand_id,))
            if row is None:
                raise NotFound(f"no hand {hand_id}")
            if row[0] != HandStatus.PLAYING.value:
                raise HandClosed(f"hand {hand_id} is {row[0]}")
            await db.execute(
                "INSERT INTO hand_snapshots (hand_id, seq, state, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (hand_id) DO UPDATE SET seq = excluded.seq, state = excluded.state, at = excluded.at",
                (hand_id, seq, state_json, self._now_ms()),
            )

        await self._run(unit)

    async def hand_snapshots(self) -> dict[int, tuple[int, JSON]]:
        async def unit(db: aiosqlite.Connection) -> dict[int, tuple[int, JSON]]:
            rows = await self._all(
                db,
                "SELECT s.hand_id, s.seq, s.state FROM hand_snapshots s JOIN hands h ON h.id = s.hand_id "
                "WHERE h.status = 'playing'",
            )
            return {hand_id: (seq, json.loads(state)) for hand_id, seq, state in rows}

        return await self._run(unit)


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


def _check_seat(seat: int) -> None:
    if not isinstance(seat, int) or not 0 <= seat < SEATS:
        raise InvalidWrite(f"seat must be 0 to 3, not {seat!r}")
