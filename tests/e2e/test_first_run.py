"""The first minutes of an operator and of a new user: a bad database, no network, an empty
token, and an empty chat that explains the bot (issue 11 item 13, issue 13 item 14)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from fake_telegram import DEFAULT_TOKEN, FakeTelegram
from harness import BotFactory, clean_environment

from storage.schema import MIGRATIONS


def environment(**settings: str) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if k not in clean_environment()}
    return {**inherited, **settings}


async def run_once(cwd: Path, **settings: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cli.main", "run", cwd=cwd, env=environment(**settings),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, stderr.decode()


def closed_port() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/bot"


def random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def a_directory(path: Path) -> None:
    path.mkdir()


def half_made(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute(MIGRATIONS[0][0])  # the first table only, but the version says all of it
        db.execute("PRAGMA user_version = 1")
    db.close()


def truncated(path: Path) -> None:
    with sqlite3.connect(path) as db:
        for statement in MIGRATIONS[0]:
            db.execute(statement)
        db.execute("PRAGMA user_version = 1")
    db.close()
    path.write_bytes(path.read_bytes()[:3000])


def read_only(path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only files")
    path.write_bytes(b"")
    path.chmod(0o444)


@pytest.mark.parametrize(("make", "words"), [
    (random_bytes, "not a usable SQLite database"),
    (a_directory, "is a directory"),
    (half_made, "half-made schema"),
    (truncated, "not a usable SQLite database"),
    (read_only, "is read-only"),
])
async def test_a_bad_database_is_one_sentence_naming_the_file(tmp_path: Path, make, words: str) -> None:
    db = tmp_path / "bad.db"
    make(db)
    code, stderr = await run_once(tmp_path, TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN, XUEZHAN_DB=str(db),
                                  XUEZHAN_API_URL=closed_port())
    assert code == 2
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert str(db) in stderr and words in stderr


async def test_no_network_is_one_sentence_and_tracebacks_only_at_debug(tmp_path: Path) -> None:
    url = closed_port()
    code, stderr = await run_once(tmp_path, TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN, XUEZHAN_DB=str(tmp_path / "x.db"),
                                  XUEZHAN_API_URL=url)
    assert code == 2
    assert stderr.startswith("xuezhan run: cannot reach the Bot API") and stderr.count("\n") == 1, stderr


async def test_an_empty_token_says_it_is_empty(tmp_path: Path) -> None:
    code, stderr = await run_once(tmp_path, TELEGRAM_BOT_TOKEN="")
    assert code == 2 and stderr.startswith("xuezhan run: TELEGRAM_BOT_TOKEN is empty")


async def test_the_bot_describes_itself_in_chinese_and_english(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start_bot()
    await telegram.wait_for(lambda: len(telegram.descriptions) == 4 and telegram.commands,
                            what="the profile and menus (published as polling starts)")
    found = telegram.descriptions
    assert set(found) == {(kind, lang) for kind in ("description", "short_description") for lang in ("", "en")}
    assert "/newgame" in found[("description", "")] and "麻将" in found[("description", "")]
    assert "/newgame" in found[("description", "en")] and "mahjong" in found[("description", "en")]
    assert all(len(found[("short_description", lang)]) <= 120 for lang in ("", "en"))
