"""The SQLite schema as an ordered list of forward migrations.

``MIGRATIONS[i]`` takes a database from ``PRAGMA user_version`` *i* to *i + 1*. A migration
is only ever appended, never edited once released: a database file carries its version and
start-up applies exactly the steps it is missing, all in one transaction.

Times are integer milliseconds since the Unix epoch (UTC) so that range queries on the
ledger are integer comparisons on an index; the chat's time zone is applied when a local
calendar day is turned into such a range.
"""

from __future__ import annotations

Migration = tuple[str, ...]

_V1: Migration = (
    """
    CREATE TABLE chats (
        id                INTEGER PRIMARY KEY,           -- Telegram chat id
        language          TEXT    NOT NULL DEFAULT 'zh',
        timezone          TEXT    NOT NULL DEFAULT 'Asia/Shanghai',
        rules             TEXT    NOT NULL DEFAULT '{}', -- RuleSet.to_dict() as JSON, opaque here
        base_stake        INTEGER NOT NULL DEFAULT 1 CHECK (base_stake > 0),
        summary_time      TEXT    NOT NULL DEFAULT '23:59',
        last_summary_date TEXT,                          -- ISO date of the last daily summary posted
        created_at        INTEGER NOT NULL
    )
    """,
    """
    CREATE TABLE users (
        id           INTEGER PRIMARY KEY,                -- Telegram user id
        display_name TEXT    NOT NULL,
        language     TEXT,
        started_dm   INTEGER NOT NULL DEFAULT 0 CHECK (started_dm IN (0, 1)),
        updated_at   INTEGER NOT NULL
    )
    """,
    """
    CREATE TABLE players (
        id      INTEGER PRIMARY KEY,
        chat_id INTEGER NOT NULL REFERENCES chats (id),
        kind    TEXT    NOT NULL CHECK (kind IN ('user', 'guest', 'computer')),
        user_id INTEGER REFERENCES users (id),
        name    TEXT    NOT NULL,
        CHECK ((kind = 'user') = (user_id IS NOT NULL))
    )
    """,
    "CREATE UNIQUE INDEX players_by_user ON players (chat_id, user_id) WHERE user_id IS NOT NULL",
    "CREATE UNIQUE INDEX players_by_name ON players (chat_id, kind, name) WHERE user_id IS NULL",
    """
    CREATE TABLE balances (                              -- cache of the ledger; verify() proves it
        chat_id   INTEGER NOT NULL REFERENCES chats (id),
        player_id INTEGER NOT NULL REFERENCES players (id),
        balance   INTEGER NOT NULL,
        PRIMARY KEY (chat_id, player_id)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE tables (
        id         INTEGER PRIMARY KEY,
        chat_id    INTEGER NOT NULL REFERENCES chats (id),
        status     TEXT    NOT NULL CHECK (status IN ('lobby', 'playing', 'finished', 'voided')),
        creator_id INTEGER REFERENCES users (id),
        message_id INTEGER,                              -- the group's table message
        created_at INTEGER NOT NULL
    )
    """,
    "CREATE INDEX tables_by_status ON tables (status, chat_id)",
    """
    CREATE TABLE table_seats (
        table_id      INTEGER NOT NULL REFERENCES tables (id),
        seat          INTEGER NOT NULL CHECK (seat BETWEEN 0 AND 3),
        player_id     INTEGER REFERENCES players (id),
        dm_message_id INTEGER,                           -- the seat's private hand message
        PRIMARY KEY (table_id, seat)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE hands (
        id          INTEGER PRIMARY KEY,
        table_id    INTEGER NOT NULL REFERENCES tables (id),
        chat_id     INTEGER NOT NULL REFERENCES chats (id),
        number      INTEGER NOT NULL,
        rules       TEXT    NOT NULL,
        seed        INTEGER NOT NULL,
        dealer      INTEGER NOT NULL CHECK (dealer BETWEEN 0 AND 3),
        status      TEXT    NOT NULL CHECK (status IN ('playing', 'finished', 'voided')),
        result      TEXT,
        started_at  INTEGER NOT NULL,
        finished_at INTEGER,
        UNIQUE (table_id, number)
    )
    """,
    "CREATE INDEX hands_by_status ON hands (status)",
    """
    CREATE TABLE hand_seats (
        hand_id   INTEGER NOT NULL REFERENCES hands (id),
        seat      INTEGER NOT NULL CHECK (seat BETWEEN 0 AND 3),
        player_id INTEGER NOT NULL REFERENCES players (id),
        PRIMARY KEY (hand_id, seat)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX hand_seats_by_player ON hand_seats (player_id)",
    """
    CREATE TABLE actions (                               -- append-only; the truth of every hand
        hand_id INTEGER NOT NULL REFERENCES hands (id),
        seq     INTEGER NOT NULL CHECK (seq >= 0),
        action  TEXT    NOT NULL,
        at      INTEGER NOT NULL,
        PRIMARY KEY (hand_id, seq)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE score_sessions (
        id         INTEGER PRIMARY KEY,
        chat_id    INTEGER NOT NULL REFERENCES chats (id),
        status     TEXT    NOT NULL CHECK (status IN ('open', 'ended')),
        creator_id INTEGER REFERENCES users (id),
        started_at INTEGER NOT NULL,
        ended_at   INTEGER
    )
    """,
    """
    CREATE TABLE session_seats (
        session_id INTEGER NOT NULL REFERENCES score_sessions (id),
        seat       INTEGER NOT NULL CHECK (seat BETWEEN 0 AND 3),
        player_id  INTEGER NOT NULL REFERENCES players (id),
        PRIMARY KEY (session_id, seat),
        UNIQUE (session_id, player_id)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE score_records (
        id         INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES score_sessions (id),
        seq        INTEGER NOT NULL,
        record     TEXT    NOT NULL,
        at         INTEGER NOT NULL,
        undoes     INTEGER UNIQUE REFERENCES score_records (id),
        UNIQUE (session_id, seq)
    )
    """,
    """
    CREATE TABLE ledger (                                -- append-only; every chip that moved
        id        INTEGER PRIMARY KEY,
        chat_id   INTEGER NOT NULL REFERENCES chats (id),
        hand_id   INTEGER REFERENCES hands (id),
        hand_seq  INTEGER,                               -- the action that caused it
        record_id INTEGER REFERENCES score_records (id),
        payer     INTEGER NOT NULL REFERENCES players (id),
        payee     INTEGER NOT NULL REFERENCES players (id),
        amount    INTEGER NOT NULL CHECK (amount > 0),
        reason    TEXT    NOT NULL,
        at        INTEGER NOT NULL,
        CHECK (payer <> payee),
        CHECK ((hand_id IS NULL) <> (record_id IS NULL)),
        FOREIGN KEY (hand_id, hand_seq) REFERENCES actions (hand_id, seq)
    )
    """,
    # covers the tally queries: a day of a chat is one index range, no table lookups
    "CREATE INDEX ledger_by_chat_time ON ledger (chat_id, at, payer, payee, amount)",
    "CREATE INDEX ledger_by_hand ON ledger (hand_id) WHERE hand_id IS NOT NULL",
    "CREATE INDEX ledger_by_record ON ledger (record_id) WHERE record_id IS NOT NULL",
    "CREATE INDEX ledger_by_payer ON ledger (payer)",
    "CREATE INDEX ledger_by_payee ON ledger (payee)",
)

# Posts the bot owes a chat, written in the same transaction as the action that makes them due
# (a hand's final settlement card), and marked sent once Telegram has them: a restart (or a
# Telegram outage longer than the client's retries) finds what is still owed here.
_V2: Migration = (
    """
    CREATE TABLE outbox (
        key        TEXT    PRIMARY KEY,                  -- what is owed, e.g. settlement:<hand id>
        chat_id    INTEGER NOT NULL REFERENCES chats (id),
        created_at INTEGER NOT NULL,
        sent_at    INTEGER
    )
    """,
    "CREATE INDEX outbox_pending ON outbox (created_at) WHERE sent_at IS NULL",
)

# The newest saved state of each playing hand (``Game.to_dict`` after ``seq`` actions), so a
# restart restores it instead of replaying the whole log; it is trusted only where it agrees
# with the log (see bot/table/snapshots.py). A finished hand's row is removed with its last action.
_V3: Migration = (
    """
    CREATE TABLE hand_snapshots (
        hand_id INTEGER PRIMARY KEY REFERENCES hands (id),
        seq     INTEGER NOT NULL,                      -- the number of logged actions it reflects
        state   TEXT    NOT NULL,                      -- JSON
        at      INTEGER NOT NULL
    )
    """,
)

# A table's own rules, chosen by its opener in the lobby (JSON of a RuleSet without the base
# stake, which stays the chat's); NULL means the table deals under the chat's rules.
_V4: Migration = ("ALTER TABLE tables ADD COLUMN rules TEXT",)

# Several bot workers sharing the tables (docs/storage.md, "Several workers").
# Timers any worker may fire (a decision's deadline, a table to wake): the due one is claimed by
# one worker; a claim older than a lease (its worker died) is taken over by another.
# What a live hand's runner keeps beyond the log, per seat (托管, left, run-out timers, swap
# picks), so the worker that serves the next press knows it; ``version`` grows with every write.
_V5: Migration = (
    """
    CREATE TABLE timers (
        key        TEXT    PRIMARY KEY,                  -- what fires, e.g. deadline:<table>:<seat>
        due_at     INTEGER NOT NULL,
        data       TEXT    NOT NULL,                     -- JSON the firing needs (the decision's seq)
        claimed_by TEXT,                                 -- the worker firing it; NULL until claimed
        claimed_at INTEGER
    )
    """,
    "CREATE INDEX timers_by_due ON timers (due_at)",
    """
    CREATE TABLE hand_seat_states (
        hand_id INTEGER PRIMARY KEY REFERENCES hands (id),
        state   TEXT    NOT NULL,                        -- JSON: one object per seat
        version INTEGER NOT NULL,
        at      INTEGER NOT NULL
    )
    """,
)

# Telegram's rate limits shared by every bot process on the database (storage/rate_slots.py):
# one row per bucket ('bot', 'chat:<id>') holding its theoretical arrival time, in microseconds.
_V6: Migration = (
    """
    CREATE TABLE rate_slots (
        key TEXT    PRIMARY KEY,
        tat INTEGER NOT NULL
    )
    """,
)

# Several workers: the messages a live hand has in each person's DM (its picture; the ping of an
# open decision; "the computer played for you") and the group's mention of them, with what each
# shows (JSON), so that whichever worker serves the hand's next step edits, replaces or deletes the
# right ones. Written under the table's lock, replaced and deleted only where the row still holds the
# message the writer saw: exactly one worker deletes a ping. Rows of a table's earlier hands go
# when its next hand is dealt.
_V7: Migration = (
    """
    CREATE TABLE seat_messages (
        hand_id    INTEGER NOT NULL REFERENCES hands (id),
        seat       INTEGER NOT NULL CHECK (seat BETWEEN 0 AND 3),
        kind       TEXT    NOT NULL CHECK (kind IN ('dm', 'ping', 'notice', 'mention')),
        message_id INTEGER NOT NULL,
        shows      TEXT    NOT NULL,                     -- JSON: what the message shows
        at         INTEGER NOT NULL,
        PRIMARY KEY (hand_id, seat, kind)
    )
    """,
)

# Forum groups (topics on): the topic a table or a scorekeeping session was opened in, and the
# one the daily summary was set in, so that their posts go there; NULL is the group's main chat
# (a group without topics, or a forum's General topic).
_V8: Migration = (
    "ALTER TABLE tables ADD COLUMN topic_id INTEGER",
    "ALTER TABLE score_sessions ADD COLUMN topic_id INTEGER",
    "ALTER TABLE chats ADD COLUMN summary_topic_id INTEGER",
)

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8)
