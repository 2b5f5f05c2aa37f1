"""Questions asked of the ledger: balances, tallies, leaderboards, history, summaries, checks."""

from __future__ import annotations

import bisect
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import date, datetime

import aiosqlite

from storage import days
from storage.interface import InvalidWrite
from storage.models import (
    DayTally,
    DueSummary,
    HandResult,
    LedgerEntry,
    Player,
    PlayerKind,
    PlayerStats,
    PlayerTotal,
)
from storage.sqlite_base import SqliteBase, chat_from_row

MAX_TALLY_DAYS = 3700  # ten years of daily lines: a bound on the work one call may ask for
_BUCKET_MS = 15 * 60 * 1000
# Net chips per (bucket of :step ms, party) over [:lo, :hi), from the covering index.
_BUCKETED_NETS = """
SELECT at / :step AS bucket, party, SUM(delta), COUNT(*) FROM (
    SELECT at, payee AS party, amount AS delta FROM ledger WHERE chat_id = :chat AND at >= :lo AND at < :hi
    UNION ALL
    SELECT at, payer, -amount FROM ledger WHERE chat_id = :chat AND at >= :lo AND at < :hi
) AS sides GROUP BY bucket, party
"""

_WIN_REASONS = "'win_discard', 'self_draw', 'robbing_kong'"
# A ledger row that still stands: not of a voided hand, nor of a record since undone, nor of
# the undoing record itself.
_STANDS = (
    "NOT EXISTS (SELECT 1 FROM hands vh WHERE vh.id = {alias}.hand_id AND vh.status = 'voided') "
    "AND NOT EXISTS (SELECT 1 FROM score_records u WHERE u.undoes = {alias}.record_id) "
    "AND NOT EXISTS (SELECT 1 FROM score_records ur WHERE ur.id = {alias}.record_id AND ur.undoes IS NOT NULL)"
)

# Everything append_action must know before writing, in one round trip to the SQLite thread.

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


class LedgerQueries(SqliteBase):
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
            " ) AS sides GROUP BY party"
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

    # -- a person's own figures -------------------------------------------------------------
    async def user_players(self, user_id: int) -> list[Player]:
        async with self._tx() as db:
            rows = await self._all(
                db, "SELECT id, chat_id, name, kind, user_id FROM players WHERE user_id = ? ORDER BY id", (user_id,)
            )
        return [Player(row[0], row[1], row[2], PlayerKind(row[3]), row[4]) for row in rows]

    async def player_stats(self, player_ids: Sequence[int]) -> PlayerStats:
        if not player_ids:
            return PlayerStats(0, 0, 0, 0, 0, 0, 0, 0)
        ids = ", ".join("?" for _ in player_ids)
        params = tuple(player_ids)
        async with self._tx() as db:
            (hosted,) = await self._one(
                db,
                f"SELECT COUNT(*) FROM hand_seats s JOIN hands h ON h.id = s.hand_id "
                f"WHERE s.player_id IN ({ids}) AND h.status = 'finished'",
                params,
            )
            # A scorekept hand is every standing record of a session with the same "hand" number.
            records = await self._all(
                db,
                f"SELECT DISTINCT r.id, r.session_id, r.record FROM score_records r "
                f"JOIN session_seats st ON st.session_id = r.session_id WHERE st.player_id IN ({ids}) "
                "AND r.undoes IS NULL AND NOT EXISTS (SELECT 1 FROM score_records u WHERE u.undoes = r.id)",
                params,
            )
            recorded = len({(session, json.loads(record).get("hand", f"#{rid}")) for rid, session, record in records})
            wins, self_draws, biggest = await self._one(
                db,
                "SELECT COUNT(*), COALESCE(SUM(self_drawn), 0), COALESCE(MAX(total), 0) FROM ("
                " SELECT SUM(l.amount) AS total, MAX(CASE WHEN l.reason = 'self_draw' THEN 1 ELSE 0 END) AS self_drawn"
                f" FROM ledger l WHERE l.payee IN ({ids}) AND l.reason IN ({_WIN_REASONS})"
                f" AND {_STANDS.format(alias='l')}"
                " GROUP BY l.hand_id, l.hand_seq, l.record_id, l.payee) AS w",
                params,
            )
            (deal_ins,) = await self._one(
                db,
                "SELECT COUNT(*) FROM ("
                f" SELECT 1 AS one FROM ledger l WHERE l.payer IN ({ids})"
                " AND l.reason IN ('win_discard', 'robbing_kong')"
                f" AND {_STANDS.format(alias='l')}"
                " GROUP BY l.hand_id, l.hand_seq, l.record_id) AS d",
                params,
            )
            pigs, pig_chips = await self._one(
                db,
                "SELECT COUNT(*), COALESCE(SUM(paid), 0) FROM ("
                f" SELECT SUM(l.amount) AS paid FROM ledger l WHERE l.payer IN ({ids}) AND l.reason = 'flower_pig'"
                f" AND {_STANDS.format(alias='l')}"
                " GROUP BY l.hand_id, l.record_id) AS f",
                params,
            )
            (net,) = await self._one(
                db,
                f"SELECT COALESCE(SUM(CASE WHEN l.payee IN ({ids}) THEN l.amount ELSE 0 END)"
                f" - SUM(CASE WHEN l.payer IN ({ids}) THEN l.amount ELSE 0 END), 0)"
                f" FROM ledger l WHERE l.payee IN ({ids}) OR l.payer IN ({ids})",
                params * 4,
            )
        return PlayerStats(hosted + recorded, wins, self_draws, deal_ins, biggest, pigs, pig_chips, net)

    # -- daily summaries --------------------------------------------------------------------
    async def chats_due_summary(self, now: datetime) -> list[DueSummary]:
        async with self._tx() as db:
            rows = await self._all(
                db,
                "SELECT id, language, timezone, rules, base_stake, summary_time, last_summary_date, summary_topic_id "
                "FROM chats "
                "WHERE EXISTS (SELECT 1 FROM ledger WHERE ledger.chat_id = chats.id) ORDER BY id",
            )
            due = []
            for row in rows:
                chat = chat_from_row(row)
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
                "UNION ALL SELECT chat_id, payer, -amount FROM ledger) AS sides GROUP BY chat_id, party",
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


def _best_first(line: PlayerTotal) -> tuple[int, str, int]:
    return (-line.net, line.name, line.player_id)
