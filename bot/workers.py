"""``xuezhan run --workers N``: N webhook workers on loopback ports behind one front, on one machine.

Each worker is an ordinary ``xuezhan run`` process in webhook mode, told to listen on a free
loopback port (``XUEZHAN_WEBHOOK_LISTEN``/``PORT``) and how many workers there are
(``XUEZHAN_WORKERS``: with PostgreSQL and more than one, they share Telegram's rate limits in the
database). Every worker registers the same webhook URL and secret, so it does not matter which
one does it first. This process runs the front (``bot.front``) on the configured address and
port, which hands each update to a worker.

A worker that dies is started again after a pause that grows with repeated deaths; a worker
that exits with code 2 met a setting to fix, so everything stops with code 2 (the worker has
printed the sentence). SIGTERM or SIGINT stops the front first (Telegram keeps undelivered
updates), then sends SIGTERM to every worker and waits for each to finish its updates in hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.front import Front
from bot.settings import Settings

log = logging.getLogger(__name__)

EXIT_CONFIG = 2
READY_TIMEOUT = 120.0  # a worker's start-up: imports, migrations, setWebhook
STOP_TIMEOUT = 60.0  # a worker finishing its updates in hand after SIGTERM
RESTART_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)
STEADY = 60.0  # a worker that ran this long before dying starts again after the shortest pause


@dataclass
class Child:
    """One worker process and how often it has had to be started again."""

    index: int
    port: int
    process: asyncio.subprocess.Process | None = None
    deaths: int = 0


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports nothing listens on right now."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def worker_environment(base: Mapping[str, str], port: int, workers: int) -> dict[str, str]:
    """A worker's environment: ``base`` with its loopback port and the number of workers."""
    return {**base, "XUEZHAN_WEBHOOK_LISTEN": "127.0.0.1", "XUEZHAN_WEBHOOK_PORT": str(port),
            "XUEZHAN_WORKERS": str(workers)}


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies, so no worker outlives a killed front."""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Supervisor:
    """Starts the workers and the front, keeps the workers running, stops everything on a signal."""

    def __init__(self, settings: Settings, workers: int, command: Callable[[int], Sequence[str]],
                 environment: Mapping[str, str]) -> None:
        self.settings = settings
        self.command = command  # the worker's command line, given its index
        self.environment = environment
        self.workers = max(workers, settings.workers)
        self.children = [Child(i, port) for i, port in enumerate(free_ports(workers))]
        self.front = Front(settings.webhook_path, settings.webhook_secret, [c.port for c in self.children])
        self._stopping = asyncio.Event()
        self._code = 0

    def stop(self, code: int = 0) -> None:
        self._code = max(self._code, code)
        self._stopping.set()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stop)
        keepers = [asyncio.create_task(self._keep(child)) for child in self.children]
        try:
            if await self._first_ready():
                await self.front.start(str(self.settings.webhook_listen), self.settings.webhook_port)
                log.info("front on %s:%d/%s, %d workers on ports %s", self.settings.webhook_listen,
                         self.front.port, self.settings.webhook_path, len(self.children),
                         ", ".join(str(c.port) for c in self.children))
            await self._stopping.wait()
        except OSError as error:  # the front's port is taken or not ours to listen on
            print(f"xuezhan run: cannot listen on {self.settings.webhook_listen}:{self.settings.webhook_port} "
                  f"({error.strerror or error}); check XUEZHAN_WEBHOOK_LISTEN and XUEZHAN_WEBHOOK_PORT.",
                  file=sys.stderr)
            self._code = EXIT_CONFIG
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
            self._stopping.set()
            await self.front.stop()
            taken = zip(self.children, self.front.backends, strict=True)
            log.info("updates taken by worker: %s", ", ".join(f"{c.index}: {b.taken}" for c, b in taken))
            await asyncio.gather(*(self._end(child) for child in self.children))
            for keeper in keepers:
                keeper.cancel()
            await asyncio.gather(*keepers, return_exceptions=True)
        return self._code

    async def _first_ready(self) -> bool:
        """Until one worker listens (True), or the run is stopping (False)."""
        deadline = time.monotonic() + READY_TIMEOUT
        while not self._stopping.is_set():
            for child in self.children:
                if child.process is not None and child.process.returncode is None and await _listening(child.port):
                    return True
            if time.monotonic() > deadline:
                log.warning("no worker listens after %.0f s; starting the front anyway", READY_TIMEOUT)
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), 0.2)
        return False

    async def _keep(self, child: Child) -> None:
        """Run ``child`` until the run stops, starting it again whenever it dies."""
        while not self._stopping.is_set():
            began = time.monotonic()
            child.process = await asyncio.create_subprocess_exec(
                *self.command(child.index), env=worker_environment(self.environment, child.port, self.workers),
                preexec_fn=_die_with_parent,
            )
            code = await child.process.wait()
            if self._stopping.is_set():
                return
            if code == EXIT_CONFIG:
                log.error("worker %d stopped with a setting to fix; stopping every worker", child.index)
                self.stop(EXIT_CONFIG)
                return
            child.deaths = 0 if time.monotonic() - began > STEADY else child.deaths + 1
            delay = RESTART_DELAYS[min(child.deaths, len(RESTART_DELAYS) - 1)]
            log.warning("worker %d (port %d) exited with %s; starting it again in %.0f s", child.index,
                        child.port, code, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)

    async def _end(self, child: Child) -> None:
        """SIGTERM, then SIGKILL if the worker has not finished within ``STOP_TIMEOUT``."""
        process = child.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
        except TimeoutError:
            log.warning("worker %d did not stop within %.0f s; killing it", child.index, STOP_TIMEOUT)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


async def _listening(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


def run_workers(settings: Settings, workers: int, command: Callable[[int], Sequence[str]]) -> int:
    """Run the front and ``workers`` workers until SIGTERM/SIGINT; the exit code."""
    return asyncio.run(Supervisor(settings, workers, command, dict(os.environ)).run())
