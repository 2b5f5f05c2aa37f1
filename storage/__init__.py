"""Storage: the single place that speaks SQL.

>>> import asyncio, tempfile, os
>>> async def demo(path):
...     store = await open_storage(path)
...     chat = await store.get_chat(-100)
...     await store.close()
...     return chat.timezone
>>> with tempfile.TemporaryDirectory() as d:
...     asyncio.run(demo(os.path.join(d, "x.db")))
'Asia/Shanghai'
"""

from storage.factory import open_storage
from storage.interface import (
    HandClosed,
    InvalidWrite,
    NotFound,
    SequenceConflict,
    Storage,
    StorageError,
)
from storage.models import (
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
    SeatTransfer,
    SessionStatus,
    Table,
    TableStatus,
    UnfinishedHand,
    User,
)
from storage.sqlite import SqliteStorage

__all__ = [
    "AppendOutcome",
    "AppendResult",
    "Chat",
    "DayTally",
    "DueSummary",
    "Hand",
    "HandClosed",
    "HandResult",
    "HandStatus",
    "InvalidWrite",
    "LedgerEntry",
    "LoggedAction",
    "NotFound",
    "Player",
    "PlayerKind",
    "PlayerTotal",
    "ScoreRecord",
    "ScoreSession",
    "SeatTransfer",
    "SequenceConflict",
    "SessionStatus",
    "SqliteStorage",
    "Storage",
    "StorageError",
    "Table",
    "TableStatus",
    "UnfinishedHand",
    "User",
    "open_storage",
]
