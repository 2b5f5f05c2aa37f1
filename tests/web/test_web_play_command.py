"""``xuezhan play`` as a newcomer runs it: no token, prints an address that serves a playable table."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

LINK = re.compile(r"(http://127\.0\.0\.1:\d+/\?seat=[0-9a-f.]+)")


def start_play(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "play", "--port", "0", "--db", str(tmp_path / "play.db"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    lines: list[str] = []
    deadline = time.monotonic() + 60
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "Ctrl-C" in line:
            return process, lines
    process.kill()
    errors = process.stderr.read() if process.stderr else ""
    raise AssertionError(f"xuezhan play did not start: {''.join(lines)} {errors}")


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()


async def test_play_prints_an_address_that_serves_a_table_to_play(tmp_path: Path) -> None:
    process, lines = start_play(tmp_path)
    try:
        links = LINK.findall("".join(lines))
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
        assert stop(process) == 0


async def test_play_with_seats_prints_one_signed_link_per_person(tmp_path: Path) -> None:
    process, lines = start_play(tmp_path, "--seats", "3")
    try:
        links = LINK.findall("".join(lines))
        assert len(links) == 3 and len(set(links)) == 3
    finally:
        assert stop(process) == 0


def test_play_refuses_a_bad_number_of_seats(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "cli.main", "play", "--seats", "5", "--db", str(tmp_path / "x.db")],
                          capture_output=True, text=True, cwd=Path(__file__).parents[2], check=False)
    assert done.returncode == 2 and "--seats must be 1 to 4" in done.stderr
