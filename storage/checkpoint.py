"""WAL checkpoints off the commit path: a thread of its own copies the log into the database file.

SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past its limit, on the
connection's only thread. That commit, and every unit of work queued behind it in the group
commit (:mod:`storage.group_commit`), then waits while pages are copied and the database file
is fsynced: tens of milliseconds, which was the tail of a live table's action-to-views latency.

So the writer's automatic checkpoint is only a backstop (``BACKSTOP_PAGES``, four times SQLite's
default), and this thread, with a connection of its own at the same ``synchronous`` level, runs
a PASSIVE checkpoint every ``every`` seconds: it copies what no reader still needs, and never
waits for a writer nor makes one wait. When it has copied the whole log, the next commit starts
the WAL from the beginning again, as after an automatic checkpoint. Should a long burst of writes
outrun it, the backstop fires, and by then almost every page is already copied, so it is cheap.

Durability is unchanged: a commit is durable once its WAL frames are synced (``synchronous=FULL``
syncs them at every commit), before any checkpoint. A checkpoint only moves committed pages into
the main file, and syncs that file before the log may be reused.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

BACKSTOP_PAGES = 4000  # the writer's own automatic checkpoint (SQLite's default is 1000 pages)
EVERY_SECONDS = 1.0


class BackgroundCheckpointer:
    """PASSIVE checkpoints of the database at ``path`` in a daemon thread, until ``stop``."""

    def __init__(self, path: str | Path, synchronous: str, every: float = EVERY_SECONDS) -> None:
        self.path = str(path)
        self.synchronous = synchronous
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop after the pass in progress (call it before closing the writer's connection)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            log.exception("cannot open %s for background checkpoints; the writer's backstop remains", self.path)
            return
        try:
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            failing = False
            while not self._stop.wait(self.every):
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as error:
                    if not failing:  # once per spell of trouble, not every second
                        log.warning("background checkpoint of %s failed: %s", self.path, error)
                    failing = True
                    continue
                failing = False
        finally:
            conn.close()
