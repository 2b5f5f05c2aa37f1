"""A throwaway PostgreSQL server for the tests: ``initdb`` and ``pg_ctl`` in a temporary folder.

It listens only on a unix socket inside that folder (no TCP port to collide with anything),
trusts local connections, and runs with ``fsync=off`` (a test database need not survive a
power cut; a killed *client* still loses nothing, which is what the crash test checks). As
root it runs as ``nobody`` through ``runuser``, since PostgreSQL refuses to run as root.

``PgServer.find()`` says why it cannot run (no binaries, no ``runuser``) so the tests that
need it skip with that reason; ``.ci/run`` installs Debian's ``postgresql`` when it is missing.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import pytest

from storage.postgres import migrate

SUPERUSER = "xuezhan"
_PREFIX = "xuezhan-pg-"
_OWNER = "owner.pid"  # the process that started the server; once it is gone, so should the server be
_TEMPLATE = "migrated_template"  # every migration applied; new test databases are copies of it
_RUN_AS = "nobody"


def find_binaries() -> Path | str:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres``, or why there is none."""
    candidates = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)

    def version(folder: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", folder))

    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)]
    for folder in candidates:
        if all((folder / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    return "PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin; apt-get install postgresql)"


def reap_orphans(binaries: Path) -> None:
    """Stop and remove the servers of test runs that died without stopping theirs (kill -9)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        try:
            os.kill(int((folder / _OWNER).read_text()), 0)
            continue  # its owner is still running (another test session)
        except ProcessLookupError:
            pass
        except (OSError, ValueError):
            continue  # not ours to judge (no owner file yet: a server being started right now)
        data = folder / "data"
        if (data / "postmaster.pid").exists():
            owner = data.stat().st_uid
            run_as = [] if owner == os.geteuid() else ["runuser", "-u", pwd.getpwuid(owner).pw_name, "--"]
            subprocess.run([*run_as, str(binaries / "pg_ctl"), "stop", "-m", "immediate", "-w", "-D", str(data)],
                           capture_output=True, timeout=60, check=False)
        shutil.rmtree(folder, ignore_errors=True)


class PgServer:
    """One running server; ``url(name)`` for a database, ``create_database()`` for a fresh one."""

    def __init__(self, binaries: Path, folder: Path, run_as: list[str]) -> None:
        self.binaries = binaries
        self.folder = folder
        self._run_as = run_as
        self._names = itertools.count(1)
        self._template_ready = False

    @classmethod
    def start(cls, binaries: Path, *, durable: bool = False) -> PgServer:
        """A new server; ``durable`` keeps PostgreSQL's fsync on (benchmarks), tests go without."""
        reap_orphans(binaries)
        folder = Path(tempfile.mkdtemp(prefix=_PREFIX))
        (folder / _OWNER).write_text(str(os.getpid()))
        run_as: list[str] = []
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                shutil.rmtree(folder)
                raise RuntimeError("running as root without runuser: cannot start PostgreSQL as another user")
            user = pwd.getpwnam(_RUN_AS)
            os.chown(folder, user.pw_uid, user.pw_gid)
            run_as = [runuser, "-u", _RUN_AS, "--"]
        server = cls(binaries, folder, run_as)
        try:
            server._run("initdb", "-D", str(server.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                        "--no-locale", "--no-sync")
            options = f"-c listen_addresses='' -c unix_socket_directories={folder} -c max_connections=200"
            if not durable:
                options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            server._run("pg_ctl", "start", "-w", "-t", "60", "-D", str(server.data), "-l", str(server.log),
                        "-o", options)
        except BaseException:
            server.stop()
            raise
        return server

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([*self._run_as, str(self.binaries / tool), *args], capture_output=True, text=True,
                              timeout=120, check=False)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()}\n{log}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.folder}"

    async def create_database(self, *, migrated: bool = True) -> str:
        """A new database, copied from one that has the current schema (fast) unless ``migrated``
        is false (empty: opening it runs every migration); returns its URL."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        admin = await asyncpg.connect(self.url())
        try:
            if migrated and not self._template_ready:
                await admin.execute(f'CREATE DATABASE "{_TEMPLATE}"')
                schema = await asyncpg.connect(self.url(_TEMPLATE))
                try:
                    await migrate(schema)
                finally:
                    await schema.close()
                self._template_ready = True
            template = f' TEMPLATE "{_TEMPLATE}"' if migrated else ""
            await admin.execute(f'CREATE DATABASE "{name}"{template} STRATEGY FILE_COPY')
        finally:
            await admin.close()
        return self.url(name)

    async def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1].split("?", 1)[0]
        admin = await asyncpg.connect(self.url())
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()

    def restart(self) -> None:
        """Stop the server (dropping every connection) and start it again."""
        self._run("pg_ctl", "restart", "-w", "-m", "fast", "-D", str(self.data), "-l", str(self.log))

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run([*self._run_as, str(self.binaries / "pg_ctl"), "stop", "-m", "immediate", "-w",
                            "-D", str(self.data)], capture_output=True, timeout=60, check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def running_server() -> Iterator[PgServer]:
    """A fresh server for a fixture, stopped afterwards; the test skips, with why, without the binaries."""
    binaries = find_binaries()
    if isinstance(binaries, str):
        pytest.skip(binaries)
    server = PgServer.start(binaries)
    try:
        yield server
    finally:
        server.stop()
