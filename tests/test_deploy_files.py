"""The Docker image holds everything ``pip install .`` installs from.

The image copies the files it needs one by one (tests, docs and scripts stay out). Two were
missing: the web table's package, so a bot in Docker with the web table on (XUEZHAN_WEBAPP_URL)
could not start (``bot.webapp`` imports ``web`` then); and LICENSE, which pyproject.toml names
among its licence files (setuptools warns today, and will refuse to build from 2027-02-18).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def copied_into_the_image() -> set[str]:
    """The paths the Dockerfile's COPY lines take from the build context."""
    copied: set[str] = set()
    for line in re.findall(r"^COPY (.+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE):
        copied.update(line.split()[:-1])
    return copied


def test_the_image_copies_every_package_pip_installs() -> None:
    packages = {pattern.rstrip("*") for pattern in project()["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert {"bot", "engine", "web"} <= packages  # the pattern read what it should
    assert packages - copied_into_the_image() == set()


def test_the_image_copies_the_readme_and_every_licence_file() -> None:
    copied = copied_into_the_image()
    metadata = project()["project"]
    assert metadata["readme"] in copied
    for pattern in metadata["license-files"]:
        matches = [path.relative_to(ROOT) for path in ROOT.glob(pattern)]
        assert matches, pattern
        assert all(str(m) in copied or m.parts[0] in copied for m in matches), pattern
