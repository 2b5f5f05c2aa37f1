"""``xuezhan run --workers N`` as an operator meets it: real processes against the fake Telegram."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys
from pathlib import Path

import aiohttp
from fake_telegram import FakeTelegram
from harness import clean_environment


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(telegram: FakeTelegram, db: str, port: int, **settings: str) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if k not in clean_environment()}
    return {**inherited, "TELEGRAM_BOT_TOKEN": telegram.token, "XUEZHAN_API_URL": telegram.base_url,
            "XUEZHAN_DB": db, "XUEZHAN_WEBHOOK_URL": f"http://127.0.0.1:{port}/hook",
            "XUEZHAN_WEBHOOK_PORT": str(port), "XUEZHAN_WEBHOOK_LISTEN": "127.0.0.1", "XUEZHAN_LANG": "en",
            **settings}


async def run_workers(cwd: Path, env: dict[str, str], workers: int) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cli.main", "run", "--workers", str(workers), cwd=cwd, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                fields = stat.rsplit(")", 1)[1].split()
                if int(fields[1]) == pid and fields[0] != "Z":
                    found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def stop(process: asyncio.subprocess.Process, timeout: float = 60) -> tuple[int, str]:
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    _, stderr = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, stderr.decode()


async def test_more_than_one_worker_on_sqlite_is_refused_in_one_sentence(telegram: FakeTelegram,
                                                                         tmp_path: Path) -> None:
    env = environment(telegram, str(tmp_path / "bot.db"), free_port())
    process = await run_workers(tmp_path, env, 2)
    _, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 2
    assert stderr.decode().startswith("xuezhan run: --workers 2 needs PostgreSQL: the SQLite database "
                                      f"XUEZHAN_DB={tmp_path / 'bot.db'} is one file for one process.")
    assert not (tmp_path / "bot.db").exists() and telegram.calls == []


async def test_workers_need_a_webhook_url(telegram: FakeTelegram, tmp_path: Path) -> None:
    env = environment(telegram, str(tmp_path / "bot.db"), free_port(), XUEZHAN_WEBHOOK_URL="")
    process = await run_workers(tmp_path, env, 1)
    _, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 2
    assert stderr.decode() == ("xuezhan run: --workers runs webhook workers: set XUEZHAN_WEBHOOK_URL to the "
                               "public HTTPS address Telegram should post to (docs/setup.md).\n")


async def test_one_sqlite_worker_behind_the_front_serves_and_checks_the_secret(
    telegram: FakeTelegram, tmp_path: Path
) -> None:
    port = free_port()
    process = await run_workers(tmp_path, environment(telegram, str(tmp_path / "bot.db"), port), 1)
    try:
        await telegram.wait_for(lambda: telegram.webhook_url.endswith(f":{port}/hook"), timeout=60,
                                what="setWebhook")
        alice = telegram.user("Alice")
        await alice.start()
        welcome = await telegram.wait_for_bot_message(alice, timeout=30)
        assert welcome.text.startswith("Welcome to Xuezhan, Alice!")
        async with aiohttp.ClientSession() as session:
            for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "guess"}):
                async with session.post(f"http://127.0.0.1:{port}/hook", json={"update_id": 1},
                                        headers=headers) as answer:
                    assert answer.status == 403
    finally:
        code, stderr = await stop(process)
    assert code == 0 and "Traceback" not in stderr


async def test_two_workers_on_postgresql_share_updates_survive_a_killed_worker_and_stop_together(
    telegram: FakeTelegram, tmp_path: Path, postgres_server
) -> None:
    url = await postgres_server.create_database()
    port = free_port()
    process = await run_workers(tmp_path, environment(telegram, url, port), 2)
    workers: list[int] = []
    try:
        # Each worker registers the webhook once it listens: then both can take their chats' updates.
        await telegram.wait_for(lambda: len(telegram.calls_of("setWebhook")) >= 2, timeout=60, what="two workers")
        workers = children(process.pid)
        people = [telegram.user(f"P{i}") for i in range(6)]
        for person in people:
            await person.start()
        for person in people:
            welcome = await telegram.wait_for_bot_message(person, timeout=60)
            assert welcome.text.startswith(f"Welcome to Xuezhan, {person.first_name}!")
        os.kill(workers[0], signal.SIGKILL)  # the other worker takes every update meanwhile
        late = [telegram.user(f"Q{i}") for i in range(4)]
        for person in late:
            await person.start()
        for person in late:
            await telegram.wait_for_bot_message(person, timeout=60)
        # The killed worker is started again.
        await telegram.wait_for(lambda: len(children(process.pid)) == 2 and workers[0] not in children(process.pid),
                                timeout=30, what="the worker started again")
        workers = children(process.pid)
    finally:
        code, stderr = await stop(process)
        await postgres_server.drop_database(url)
    assert code == 0, stderr[-3000:]
    taken = re.search(r"updates taken by worker: 0: (\d+), 1: (\d+)", stderr)
    assert taken is not None and all(int(n) > 0 for n in taken.groups())  # both served
    assert "exited with -9; starting it again" in stderr
    assert not any(alive(pid) for pid in workers)
    assert "Traceback" not in stderr


async def test_a_taken_front_port_is_one_sentence_and_no_worker_is_left(telegram: FakeTelegram,
                                                                        tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await run_workers(tmp_path, environment(telegram, str(tmp_path / "bot.db"), port), 1)
        await telegram.wait_for(lambda: len(children(process.pid)) == 1, timeout=30, what="the worker")
        worker = children(process.pid)[0]
        _, stderr = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode == 2
    assert f"xuezhan run: cannot listen on 127.0.0.1:{port}" in stderr.decode()
    assert "check XUEZHAN_WEBHOOK_LISTEN and XUEZHAN_WEBHOOK_PORT." in stderr.decode()
    assert not alive(worker)
