"""Fixtures shared by every test folder: the storage backends.

- ``db_url``: a fresh database for the test — a SQLite file in ``tmp_path`` by default, and
  for a test (or a module, with ``pytestmark``) marked ``@pytest.mark.both_backends`` also a
  new database on a PostgreSQL server started for the session. Pass it to
  ``storage.open_storage`` (or as ``XUEZHAN_DB``). ``backend`` says which one it is.
- ``postgres_server``: that server (``tests/pg_server.py``); tests needing it skip with the
  reason when PostgreSQL is not installed.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
from hypothesis import HealthCheck, settings
from pg_server import PgServer, running_server

BACKENDS = ("sqlite", "postgresql")

# Property tests are about what the code does, not how fast: on a loaded machine (CI runs four
# workers on two cores) a wall-clock deadline or the "too slow" health check fails a correct test.
# Examples are derived from each test (derandomize), so every run checks the same ones and a red
# suite means a change broke something; HYPOTHESIS_PROFILE=explore draws new examples each run.
settings.register_profile("xuezhan", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "xuezhan"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "both_backends: run the test's db_url on SQLite and on PostgreSQL (skipped if not installed)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_backends"):
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PgServer]:
    with running_server() as server:
        yield server


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture
async def db_url(backend: str, tmp_path, request: pytest.FixtureRequest) -> AsyncIterator[str]:
    if backend == "sqlite":
        yield str(tmp_path / "xuezhan.db")
        return
    server: PgServer = request.getfixturevalue("postgres_server")
    url = await server.create_database()
    try:
        yield url
    finally:
        await server.drop_database(url)
