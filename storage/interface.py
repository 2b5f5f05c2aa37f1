"""The storage interface: the only way the bot reaches chats, tables, hands and chips.

A small set of async methods that a PostgreSQL implementation could provide as well as
the SQLite one in :mod:`storage.sqlite`. Callers never see SQL, rows or transactions; each
method is one unit of work that either happens completely or not at all.

Errors: every refusal is a :class:`StorageError` subclass with a message meant for logs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import date, datetime
from typing import Any, Protocol, runtime_checkable

from storage.models import (
    JSON,
    AppendResult,
    Chat,
    DayTally,
    DueSummary,
    Hand,
    HandProgress,
    HandResult,
    LedgerEntry,
    LoggedAction,
    OwedPost,
    Player,
    PlayerKind,
    PlayerStats,
    PlayerTotal,
    ScoreRecord,
    ScoreSession,
    SeatMessage,
    Table,
    TableStatus,
    Timer,
    TransferLike,
    UnfinishedHand,
    User,
)


class StorageError(Exception):
    """Base class of everything storage refuses to do."""


class NotFound(StorageError):
    """The chat, player, table, hand or session named does not exist."""


class InvalidWrite(StorageError):
    """The write breaks a rule of the data (bad seat, unknown zone, negative amount...)."""


class SequenceConflict(StorageError):
    """An action at this sequence number differs from the one already logged, or skips ahead.

    A *retried* write of the very same action is not a conflict: it is reported as a
    duplicate and changes nothing.
    """


class HandClosed(StorageError):
    """The hand is finished or voided; its log and its chips are final."""


@runtime_checkable
class Storage(Protocol):
    # -- chats, users, players ------------------------------------------------------------
    async def get_chat(self, chat_id: int) -> Chat:
        """The chat's settings; a chat never seen before gets the defaults (and is saved)."""
        ...

    async def update_chat(self, chat_id: int, **changes: Any) -> Chat:
        """Change any of language, timezone, rules, base_stake, summary_time."""
        ...

    async def save_user(
        self,
        user_id: int,
        display_name: str | None = None,
        *,
        language: str | None = None,
        started_dm: bool | None = None,
    ) -> User:
        """Create or update a Telegram user; ``None`` leaves a field as it was."""
        ...

    async def get_user(self, user_id: int) -> User | None: ...

    async def player_for_user(self, chat_id: int, user_id: int, display_name: str) -> Player:
        """The chat's ledger party for a Telegram user (created on first use, name refreshed)."""
        ...

    async def named_player(self, chat_id: int, name: str, kind: PlayerKind = PlayerKind.GUEST) -> Player:
        """The chat's ledger party for a plain name or a computer player (created on first use)."""
        ...

    async def get_player(self, player_id: int) -> Player: ...

    async def players(self, chat_id: int) -> list[Player]: ...

    # -- tables ---------------------------------------------------------------------------
    async def create_table(self, chat_id: int, creator_id: int | None, topic_id: int | None = None) -> Table:
        """A new table in the lobby; ``topic_id``: the forum topic it was opened in (its posts go there)."""
        ...

    async def get_table(self, table_id: int) -> Table: ...

    async def set_seat(self, table_id: int, seat: int, player_id: int | None) -> Table:
        """Seat a player (or empty the seat with ``None``); a player sits at most once."""
        ...

    async def set_table_status(self, table_id: int, status: TableStatus) -> Table: ...

    async def set_table_message(self, table_id: int, message_id: int | None, seat: int | None = None) -> Table:
        """Remember the group's table message, or with ``seat`` that seat's private message."""
        ...

    async def set_table_rules(self, table_id: int, rules: JSON | None) -> Table:
        """Give a table in the lobby its own rules (None: the chat's again).

        Raises ``InvalidWrite`` once the table has left the lobby: rules change before the start only.
        """
        ...

    async def open_tables(self, chat_id: int | None = None) -> list[Table]:
        """Tables in the lobby or playing, of one chat or of all chats."""
        ...

    # -- hands and the action log ---------------------------------------------------------
    async def start_hand(self, table_id: int, rules: JSON, seed: int, dealer: int) -> Hand:
        """Begin the table's next hand with its four seated players; the table is playing."""
        ...

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
        """Log action number ``seq`` (0 for a hand's first) and its transfers in one transaction.

        Transfers name seats; storage books them between the players of those seats. With
        ``result`` the hand is finished in the same transaction (its final settlement is
        all-or-nothing). With ``owe`` an outbox row of that key (for the hand's chat) is written
        in the same transaction too, so a post the action makes due survives a crash right
        after it. Writing the same action at the same ``seq`` again is a no-op that
        returns ``DUPLICATE``; a different action there, or a gap, is a ``SequenceConflict``.
        """
        ...

    async def owed_posts(self) -> list[OwedPost]:
        """Outbox rows not yet marked sent, oldest first (drained after a restart)."""
        ...

    async def mark_posted(self, key: str) -> None:
        """The post ``key`` reached Telegram; marking an unknown or sent key again is a no-op."""
        ...

    async def migrate_chat(self, old_id: int, new_id: int) -> bool:
        """A group became a supergroup: move everything of ``old_id`` to ``new_id`` atomically.

        Settings, players, balances, tables, hands, sessions, ledger rows and owed posts all
        move in one transaction. A ``new_id`` row that holds nothing yet (created by an update
        from the new chat) is replaced. False if ``old_id`` is unknown (nothing to move).
        """
        ...

    async def void_hand(self, hand_id: int, reason: str) -> Hand:
        """Abandon a playing hand and restore its chips with compensating ledger rows."""
        ...

    async def get_hand(self, hand_id: int) -> Hand: ...

    async def table_hands(self, table_id: int) -> list[Hand]:
        """Every hand dealt at the table, in order (for the end-of-session summary)."""
        ...

    async def hand_actions(self, hand_id: int) -> list[LoggedAction]: ...

    async def unfinished_hands(self) -> list[UnfinishedHand]:
        """Every playing hand with its table and action log, for resuming after a restart."""
        ...

    async def save_snapshot(self, hand_id: int, seq: int, state: JSON) -> None:
        """Keep ``state`` (a hand's saved game after ``seq`` logged actions) as the hand's snapshot,
        replacing an older one. A snapshot is a cache: the log stays the truth. Raises
        ``HandClosed`` for a hand that is no longer playing."""
        ...

    async def hand_snapshots(self) -> dict[int, tuple[int, JSON]]:
        """The snapshot (seq, state) of every playing hand that has one, by hand id."""
        ...

    # -- scorekeeping for real-tile games ---------------------------------------------------
    async def start_session(self, chat_id: int, player_ids: Sequence[int], creator_id: int | None,
                            topic_id: int | None = None) -> ScoreSession:
        """A new scorekeeping session; ``topic_id``: the forum topic it was opened in (its posts go there)."""
        ...

    async def get_session(self, session_id: int) -> ScoreSession: ...

    async def open_sessions(self, chat_id: int) -> list[ScoreSession]: ...

    async def add_record(self, session_id: int, record: JSON, transfers: Sequence[TransferLike]) -> ScoreRecord:
        """Book one manual record and its transfers (seats of the session) in one transaction."""
        ...

    async def undo_last_record(self, session_id: int) -> ScoreRecord | None:
        """Reverse the latest record not yet undone with a compensating record; None if none."""
        ...

    async def session_records(self, session_id: int) -> list[ScoreRecord]: ...

    async def end_session(self, session_id: int) -> ScoreSession: ...

    async def session_totals(self, session_id: int) -> list[PlayerTotal]:
        """Net chips of each seated player over the session (undone records cancel out), best first."""
        ...

    # -- chips ------------------------------------------------------------------------------
    async def balance(self, chat_id: int, player_id: int) -> int: ...

    async def balances(self, chat_id: int) -> list[PlayerTotal]:
        """Every player of the chat who ever moved a chip, best first."""
        ...

    async def daily_tally(self, chat_id: int, day: date) -> DayTally:
        """Net chips per player on one local calendar day in the chat's time zone."""
        ...

    async def daily_tallies(self, chat_id: int, first: date, last: date) -> list[DayTally]:
        """One :class:`DayTally` per local day from ``first`` to ``last`` inclusive."""
        ...

    async def range_tally(self, chat_id: int, first: date, last: date) -> DayTally:
        """Net chips per player over the local days ``first`` .. ``last`` (``day`` = first)."""
        ...

    async def leaderboard(self, chat_id: int, *, since: date | None = None, limit: int = 10) -> list[PlayerTotal]:
        """All time, or from the local day ``since`` (e.g. the 1st of this month)."""
        ...

    async def recent_hands(self, chat_id: int, player_id: int, limit: int = 10) -> list[HandResult]: ...

    async def user_players(self, user_id: int) -> list[Player]:
        """The ledger parties of one Telegram user, one per chat they played in."""
        ...

    async def player_stats(self, player_ids: Sequence[int]) -> PlayerStats:
        """Hands, wins, deal-ins, biggest win, 花猪 and net of these players taken together
        (one chat's player, or every chat's player of one user)."""
        ...

    async def ledger(self, chat_id: int) -> list[LedgerEntry]:
        """The chat's whole ledger in booking order (for export)."""
        ...

    # -- daily summaries --------------------------------------------------------------------
    async def chats_due_summary(self, now: datetime) -> list[DueSummary]:
        """Chats whose latest summary time has passed, not yet posted, and that played that day."""
        ...

    async def mark_summary_posted(self, chat_id: int, day: date) -> None: ...

    # -- several workers sharing the tables (storage/sqlite_workers.py) -------------------------
    @property
    def shared(self) -> bool:
        """True when other processes may serve the same tables (PostgreSQL)."""
        ...

    def table_lock(self, table_id: int) -> AbstractAsyncContextManager[None]:
        """Hold the table against other processes' decisions for the block (free with one process)."""
        ...

    def chat_lock(self, chat_id: int) -> AbstractAsyncContextManager[None]:
        """Hold a chat's lobby against other processes' changes for the block (free with one process)."""
        ...

    async def join_workers(self) -> int:
        """Mark this process as a live worker while it runs; how many other workers are live (0 with
        one process)."""
        ...

    async def set_timers(self, changes: Mapping[str, tuple[float, JSON] | None], *,
                         keep_existing: bool = False) -> None:
        """Set timers by key (due in ``seconds``, with ``data``) or cancel them (``None``), in one unit;
        ``keep_existing`` leaves a key already set as it is."""
        ...

    async def claim_timers(self, worker: str, lease_seconds: float, limit: int = 50) -> list[Timer]:
        """Claim the due timers nobody holds, or whose claim is older than the lease; earliest first."""
        ...

    async def finish_timer(self, timer: Timer) -> bool:
        """Remove a fired timer unless it was set again or taken over meanwhile."""
        ...

    async def timers(self) -> dict[str, tuple[float, JSON]]: ...

    async def save_seat_states(self, hand_id: int, states: JSON) -> int:
        """Keep a live hand's seat states beyond the log; returns their new version."""
        ...

    async def add_vote(self, hand_id: int, verb: str, user_id: int) -> int:
        """Count a vote for Next hand / End under a finished hand; the distinct voters so far."""
        ...

    async def hand_progress(self, hand_id: int, after: int) -> HandProgress:
        """The hand now, its actions from ``after`` on, its seat states and its seat messages: what a
        worker misses."""
        ...

    async def seat_messages(self, hand_id: int) -> tuple[SeatMessage, ...]:
        """The messages the hand keeps per seat (its DM pictures, pings, notices, group mentions)."""
        ...

    async def put_seat_message(self, hand_id: int, seat: int, kind: str, message_id: int, shows: JSON, *,
                               replacing: int | None) -> bool:
        """Keep ``message_id`` as the seat's message of ``kind``, only if the stored one is still
        ``replacing`` (None: there is none yet); True if written. Several workers: a writer that saw
        another message (or none) learns it was replaced meanwhile, and writes nothing."""
        ...

    async def drop_seat_message(self, hand_id: int, seat: int, kind: str, message_id: int) -> bool:
        """Forget the seat's message of ``kind`` only if it is still ``message_id``; True if this call
        removed it, so that of several workers exactly one deletes that message from the chat."""
        ...

    async def playing_hand(self, table_id: int) -> int | None: ...

    # -- housekeeping -----------------------------------------------------------------------
    async def verify(self) -> list[str]:
        """Every inconsistency found (cache vs ledger, zero-sum, logs); empty means sound."""
        ...

    async def close(self) -> None: ...
