"""``xuezhan run`` as an operator meets it: a real process against the fake Telegram."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from pathlib import Path

import pytest
from fake_telegram import DEFAULT_TOKEN, FakeTelegram
from harness import clean_environment


def environment(**settings: str) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if k not in clean_environment()}
    return {**inherited, **settings}


async def xuezhan_run(cwd: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cli.main", "run", cwd=cwd, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


async def stopped(process: asyncio.subprocess.Process) -> tuple[int, str]:
    """SIGTERM (as systemd and docker stop send) unless the process already ended, then its end."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    return await finished(process)


async def finished(process: asyncio.subprocess.Process, timeout: float = 30) -> tuple[int, str]:
    _, stderr = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, stderr.decode()


@pytest.mark.parametrize(
    ("settings", "sentence"),
    [
        ({}, "xuezhan run: TELEGRAM_BOT_TOKEN is not set"),
        ({"TELEGRAM_BOT_TOKEN": "not-a-token"}, "xuezhan run: TELEGRAM_BOT_TOKEN is invalid"),
        ({"TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN, "XUEZHAN_TZ": "Mars/Olympus"},
         "xuezhan run: XUEZHAN_TZ is invalid: 'Mars/Olympus' is not an IANA time zone"),
    ],
)
async def test_bad_settings_give_one_sentence_and_exit_code_2(tmp_path: Path, settings, sentence) -> None:
    code, stderr = await finished(await xuezhan_run(tmp_path, environment(**settings)))
    assert code == 2
    assert stderr.startswith(sentence) and stderr.count("\n") == 1 and "Traceback" not in stderr


async def test_settings_are_read_from_the_env_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"TELEGRAM_BOT_TOKEN={DEFAULT_TOKEN}\nXUEZHAN_LANG=fr\n")
    code, stderr = await finished(await xuezhan_run(tmp_path, environment()))
    assert (code, stderr) == (2, "xuezhan run: XUEZHAN_LANG is invalid: Input should be 'zh' or 'en'.\n")


async def test_a_token_telegram_rejects_is_one_sentence(telegram: FakeTelegram, tmp_path: Path) -> None:
    env = environment(TELEGRAM_BOT_TOKEN="1111111111:AAHwrongwrongwrongwrongwrongwrongwro",
                      XUEZHAN_API_URL=telegram.base_url, XUEZHAN_DB=str(tmp_path / "x.db"))
    code, stderr = await finished(await xuezhan_run(tmp_path, env))
    assert code == 2
    assert stderr.splitlines()[-1] == ("xuezhan run: Telegram rejected TELEGRAM_BOT_TOKEN; copy the current "
                                       "token from BotFather (/token).")
    assert "Traceback" not in stderr


async def test_the_bot_serves_by_long_polling_and_stops_cleanly_on_sigterm(
    telegram: FakeTelegram, tmp_path: Path
) -> None:
    env = environment(TELEGRAM_BOT_TOKEN=telegram.token, XUEZHAN_API_URL=telegram.base_url,
                      XUEZHAN_DB=str(tmp_path / "bot.db"), XUEZHAN_LANG="en")
    process = await xuezhan_run(tmp_path, env)
    try:
        alice = telegram.user("Alice")
        await alice.start()  # waits in the fake's queue until the bot polls
        welcome = await telegram.wait_for_bot_message(alice, timeout=20)
        assert welcome.text.startswith("Welcome to Xuezhan, Alice!")
    finally:
        code, stderr = await stopped(process)
    assert code == 0 and "Traceback" not in stderr
    assert (tmp_path / "bot.db").exists()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_with_a_webhook_url_the_bot_serves_by_webhook(telegram: FakeTelegram, tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/xuezhan-hook"
    env = environment(TELEGRAM_BOT_TOKEN=telegram.token, XUEZHAN_API_URL=telegram.base_url,
                      XUEZHAN_DB=str(tmp_path / "bot.db"), XUEZHAN_WEBHOOK_URL=url,
                      XUEZHAN_WEBHOOK_PORT=str(port), XUEZHAN_WEBHOOK_LISTEN="127.0.0.1")
    process = await xuezhan_run(tmp_path, env)
    try:
        await telegram.wait_for(lambda: telegram.webhook_url == url, timeout=20, what="setWebhook")
        assert telegram.webhook_secret  # Telegram will prove itself with the secret token
        alice = telegram.user("Alice")
        await alice.start()
        welcome = await telegram.wait_for_bot_message(alice, timeout=10)
        assert welcome.text.startswith("欢迎来到血战")
        assert telegram.calls_of("getUpdates") == []
    finally:
        code, stderr = await stopped(process)
    assert code == 0 and "Traceback" not in stderr
