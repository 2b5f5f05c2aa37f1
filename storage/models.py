"""The plain values the storage interface hands in and out.

They are frozen dataclasses with no behaviour so that any implementation of
:class:`storage.interface.Storage` (SQLite today, PostgreSQL later) returns the same
things and callers never see a row or a cursor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any, Protocol

JSON = dict[str, Any]


class PlayerKind(StrEnum):
    """Who stands behind a ledger party: a Telegram user, a plain name, or the computer."""

    USER = "user"
    GUEST = "guest"  # a friend without Telegram, named in a scorekeeping session
    COMPUTER = "computer"


class TableStatus(StrEnum):
    LOBBY = "lobby"
    PLAYING = "playing"
    FINISHED = "finished"
    VOIDED = "voided"


class HandStatus(StrEnum):
    PLAYING = "playing"
    FINISHED = "finished"
    VOIDED = "voided"  # chips restored by compensating ledger rows


class SessionStatus(StrEnum):
    OPEN = "open"
    ENDED = "ended"


class AppendOutcome(StrEnum):
    """What :meth:`Storage.append_action` did; a retried update reports ``DUPLICATE``."""

    WRITTEN = "written"
    DUPLICATE = "duplicate"


class TransferLike(Protocol):
    """Anything with these attributes is a transfer: ``engine.settlement.Transfer`` fits.

    ``payer`` and ``payee`` are *seat numbers* (0-3) of the hand or scorekeeping session
    it belongs to; storage turns them into the players sitting there.
    """

    @property
    def payer(self) -> int: ...
    @property
    def payee(self) -> int: ...
    @property
    def amount(self) -> int: ...
    @property
    def reason(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SeatTransfer:
    """A transfer between seats, for callers that have no engine object at hand."""

    payer: int
    payee: int
    amount: int
    reason: str


@dataclass(frozen=True, slots=True)
class Chat:
    id: int
    language: str = "zh"
    timezone: str = "Asia/Shanghai"
    rules: JSON = field(default_factory=dict)  # opaque RuleSet.to_dict(); {} = default preset
    base_stake: int = 1
    summary_time: str = "23:59"  # HH:MM local time of the daily summary
    last_summary_date: date | None = None
    summary_topic_id: int | None = None  # the forum topic the summary is posted in; None: the main chat


@dataclass(frozen=True, slots=True)
class User:
    id: int  # Telegram user id
    display_name: str
    language: str | None = None
    started_dm: bool = False  # has pressed Start in a private chat with the bot


@dataclass(frozen=True, slots=True)
class Player:
    """A party of the ledger in one chat."""

    id: int
    chat_id: int
    name: str
    kind: PlayerKind
    user_id: int | None = None


@dataclass(frozen=True, slots=True)
class Table:
    id: int
    chat_id: int
    status: TableStatus
    creator_id: int | None
    seats: tuple[int | None, ...]  # player id per seat 0-3, None = empty
    message_id: int | None = None  # the group's table message
    dm_message_ids: tuple[int | None, ...] = (None, None, None, None)
    created_at: datetime | None = None
    rules: JSON | None = None  # the opener's rules for this table only; None: the chat's
    topic_id: int | None = None  # the forum topic it was opened in, where it posts; None: the main chat


@dataclass(frozen=True, slots=True)
class Hand:
    id: int
    table_id: int
    chat_id: int
    number: int
    rules: JSON
    seed: int
    dealer: int
    status: HandStatus
    seats: tuple[int, ...]  # player id per seat, fixed when the hand starts
    result: JSON | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class LoggedAction:
    seq: int
    action: JSON
    at: datetime


@dataclass(frozen=True, slots=True)
class UnfinishedHand:
    """A hand to resume: replaying ``actions`` in order rebuilds its state."""

    hand: Hand
    table: Table
    actions: tuple[LoggedAction, ...]


@dataclass(frozen=True, slots=True)
class AppendResult:
    outcome: AppendOutcome
    seq: int

    @property
    def duplicate(self) -> bool:
        return self.outcome is AppendOutcome.DUPLICATE


@dataclass(frozen=True, slots=True)
class ScoreSession:
    """A scorekeeping session (记账) for a game played with real tiles."""

    id: int
    chat_id: int
    status: SessionStatus
    seats: tuple[int, ...]  # player ids, 2-4 of them
    creator_id: int | None
    started_at: datetime
    ended_at: datetime | None = None
    topic_id: int | None = None  # the forum topic it was opened in, where it posts; None: the main chat


@dataclass(frozen=True, slots=True)
class ScoreRecord:
    """One manual record (a win, a kong, an empty-wall settlement) or the undo of one."""

    id: int
    session_id: int
    seq: int
    record: JSON
    at: datetime
    undoes: int | None = None  # id of the record this one reverses
    undone_by: int | None = None


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    id: int
    chat_id: int
    at: datetime
    payer_id: int
    payer_name: str
    payee_id: int
    payee_name: str
    amount: int
    reason: str
    hand_id: int | None = None
    hand_seq: int | None = None  # the action that caused it; None for a void's reversal
    record_id: int | None = None


@dataclass(frozen=True, slots=True)
class PlayerTotal:
    """A player's net chips over some period (a balance, a tally line, a leaderboard line)."""

    player_id: int
    name: str
    net: int
    user_id: int | None = None


@dataclass(frozen=True, slots=True)
class DayTally:
    """Who is up and who is down on one local calendar day; ``lines`` sorted best first."""

    chat_id: int
    day: date
    lines: tuple[PlayerTotal, ...]
    transfers: int  # ledger rows that day

    @property
    def played(self) -> bool:
        return self.transfers > 0


@dataclass(frozen=True, slots=True)
class HandResult:
    """One line of a player's history: a hosted hand or a manual record, with their net."""

    kind: str  # "hand" or "record"
    id: int
    at: datetime
    net: int
    result: JSON | None


@dataclass(frozen=True, slots=True)
class DueSummary:
    chat: Chat
    day: date  # the local day the summary is about


@dataclass(frozen=True, slots=True)
class OwedPost:
    """A post the bot owes a chat (an outbox row not yet marked sent)."""

    key: str
    chat_id: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A person's own figures from the ledger, over one chat or all of them (/stats).

    A win is one winning action (or one scorekept record) that paid them; a deal-in is one
    in which they paid as the discarder (点炮, 抢杠胡). Voided hands and undone records are
    left out, as if they never happened.
    """

    hands: int  # finished hosted hands they sat in, and scorekept hands of sessions they sat in
    wins: int
    self_draws: int
    deal_ins: int
    biggest_win: int  # the most chips one win brought them
    flower_pigs: int  # hands in which they paid 查花猪
    flower_pig_chips: int
    net: int



@dataclass(frozen=True, slots=True)
class Timer:
    """A due timer claimed by one worker (``claim_timers``); ``finish_timer`` removes it once fired."""

    key: str
    due_at: datetime
    data: JSON
    claimed_by: str
    claimed_at_ms: int  # the claim's own stamp: finish_timer removes this claim only, never a newer one


@dataclass(frozen=True, slots=True)
class SeatMessage:
    """A message a live hand keeps for one seat (``kind``: its DM picture ``dm``, the open decision's
    ``ping``, the ``notice`` of what the computer played, the group's ``mention``), and what it shows."""

    seat: int
    kind: str
    message_id: int
    shows: JSON


SEAT_MESSAGE_KINDS = ("dm", "ping", "notice", "mention")


@dataclass(frozen=True, slots=True)
class HandProgress:
    """What a worker's copy of a live hand is missing: actions logged from ``after`` on, the seats'
    states (``None`` when never saved) with their version (0 when never saved), and the messages
    the hand keeps per seat as stored now."""

    hand: Hand
    actions: tuple[LoggedAction, ...]
    seat_states: JSON | None
    version: int
    messages: tuple[SeatMessage, ...] = ()
