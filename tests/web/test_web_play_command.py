"""``xuezhan play`` as a newcomer runs it: no token, prints an address that serves a playable table."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest

LINK = re.compile(r"(http://127\.0\.0\.1:\d+/\?seat=[0-9a-f.]+)")


@dataclass
class Play:
    """A running ``xuezhan play``: what it printed so far, on stdout and on stderr."""

    process: subprocess.Popen[str]
    lines: list[str]
    errors: list[str] = field(default_factory=list)


def _as_from_a_terminal() -> None:
    """Ctrl-C reaches the process as it does from a terminal, even when the suite itself was
    started in the background (a shell's ``cmd &`` ignores SIGINT, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_play(tmp_path: Path, *args: str) -> Play:
    """Start ``xuezhan play`` and read up to its "Ctrl-C" line; after that both pipes are drained
    in threads, so the process never blocks writing to a full pipe the test no longer reads."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "play", "--port", "0", "--db", str(tmp_path / "play.db"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[2]), "PYTHONFAULTHANDLER": "1"},
        preexec_fn=_as_from_a_terminal,
    )
    play = Play(process, [])
    deadline = time.monotonic() + 60
    assert process.stdout is not None and process.stderr is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        play.lines.append(line)
        if "Ctrl-C" in line:
            threading.Thread(target=play.lines.extend, args=(process.stdout,), daemon=True).start()
            threading.Thread(target=play.errors.extend, args=(process.stderr,), daemon=True).start()
            return play
    process.kill()
    raise AssertionError(f"xuezhan play did not start: {''.join(play.lines)} {process.stderr.read()}")


def stop(play: Play, how: signal.Signals = signal.SIGINT) -> int:
    """Ctrl-C, as a person stops it (or ``how``). If it has not ended in 30 s, SIGABRT makes the
    process's fault handler print every thread's stack, and the failure shows where it hung."""
    play.process.send_signal(how)
    try:
        return play.process.wait(30)
    except subprocess.TimeoutExpired:
        play.process.send_signal(signal.SIGABRT)
        play.process.wait(10)
        time.sleep(0.5)  # the drain thread reads the dump
        raise AssertionError(f"xuezhan play did not stop on {how.name}:\n" + "".join(play.errors)[-6000:]) from None
    finally:
        if play.process.poll() is None:
            play.process.kill()


async def test_play_prints_an_address_that_serves_a_table_to_play(tmp_path: Path) -> None:
    play = start_play(tmp_path)
    try:
        links = LINK.findall("".join(play.lines))
        assert len(links) == 1
        base, token = links[0].split("?seat=")
        async with aiohttp.ClientSession() as session:
            async with session.get(links[0]) as page:
                assert page.status == 200 and "main.js" in await page.text()
            async with session.ws_connect(base + "ws") as ws:
                await ws.send_json({"hello": {"token": token}})
                frame = {}
                while frame.get("type") != "state":
                    frame = json.loads((await ws.receive(timeout=10)).data)
        assert frame["names"][0] == "你" and frame["computer"] == [False, True, True, True]
        assert frame["actions"], "the person has a decision to make (the swap)"
    finally:
        assert stop(play) == 0


async def test_play_with_seats_prints_one_signed_link_per_person(tmp_path: Path) -> None:
    play = start_play(tmp_path, "--seats", "3")
    try:
        links = LINK.findall("".join(play.lines))
        assert len(links) == 3 and len(set(links)) == 3
    finally:
        assert stop(play) == 0


def test_play_stops_cleanly_when_a_service_manager_stops_it(tmp_path: Path) -> None:
    """SIGTERM (systemd, docker stop) closes the ledger and ends with 0, as Ctrl-C does."""
    play = start_play(tmp_path)
    assert stop(play, signal.SIGTERM) == 0
    assert not any("Traceback" in line for line in play.errors), "".join(play.errors)


def test_play_refuses_a_bad_number_of_seats(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "cli.main", "play", "--seats", "5", "--db", str(tmp_path / "x.db")],
                          capture_output=True, text=True, cwd=Path(__file__).parents[2], check=False)
    assert done.returncode == 2 and "--seats must be 1 to 4" in done.stderr


def _play_refusal(tmp_path: Path, *args: str) -> str:
    """Run ``xuezhan play`` with ``args`` expecting it to refuse: its one line on stderr."""
    done = subprocess.run([sys.executable, "-m", "cli.main", "play", *args], capture_output=True, text=True,
                          cwd=Path(__file__).parents[2], check=False, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def test_play_refuses_a_ledger_it_cannot_use_and_a_port_in_use_in_one_line(tmp_path: Path) -> None:
    assert "is a directory" in _play_refusal(tmp_path, "--db", str(tmp_path))
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"not a database, whatever its name" * 100)
    assert "is not a usable SQLite database" in _play_refusal(tmp_path, "--db", str(notes))
    play = start_play(tmp_path)
    try:
        port = re.search(r":(\d+)/", "".join(play.lines))[1]
        second = _play_refusal(tmp_path, "--port", port, "--db", str(tmp_path / "second.db"))
        assert "address already in use" in second and "--port 0 picks a free port" in second
    finally:
        assert stop(play) == 0


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_play_on_ipv6_loopback_prints_an_address_a_browser_opens(tmp_path: Path) -> None:
    play = start_play(tmp_path, "--host", "::1")
    try:
        watch = next(line for line in play.lines if "To watch" in line)
        assert re.search(r"http://\[::1\]:\d+/\?table=\d+", watch), watch
    finally:
        assert stop(play) == 0
