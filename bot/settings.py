"""The bot's settings, read from the environment and ``.env`` (every one is in ``.env.example``).

Only ``TELEGRAM_BOT_TOKEN`` has no default. A bad setting becomes one ``ConfigError`` sentence
naming the variable, so that ``xuezhan run`` can say what to fix instead of printing a traceback.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from ipaddress import ip_address
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from storage.factory import describe as describe_database
from storage.interface import StorageError

TELEGRAM_API_URL = "https://api.telegram.org/bot"

# BotFather tokens: the bot's numeric id, a colon, and a 35-character secret.
_TOKEN_PATTERN = re.compile(r"^\d{5,20}:[A-Za-z0-9_-]{30,100}$")


class ConfigError(ValueError):
    """A setting is missing or invalid; ``str(error)`` is one sentence for the operator."""


def _env(name: str, parse: Callable[[str], Any], **options: Any) -> Any:
    """A field read from the environment variable ``name``; ``parse`` checks and converts its text."""
    default = options.pop("default", None)
    metadata = {"env": name, "parse": parse}
    if default is None:
        return field(metadata=metadata, **options)
    return field(default=default, metadata=metadata, **options)


def _number(kind: type, low: float, high: float, *, low_open: bool = False) -> Callable[[str], Any]:
    """A number within bounds, worded as the settings always were ("Input should be greater than 0")."""
    def parse(text: str) -> Any:
        try:
            value = kind(text.strip())
        except ValueError:
            noun = "integer" if kind is int else "number"
            raise ValueError(f"Input should be a valid {noun}, not {text!r}") from None
        if low_open and not value > low:
            raise ValueError(f"Input should be greater than {low:g}")
        if not low_open and value < low:
            raise ValueError(f"Input should be greater than or equal to {low:g}")
        if value > high:
            raise ValueError(f"Input should be less than or equal to {high:g}")
        return value
    return parse


def _token(value: str) -> str:
    value = value.strip()
    if not _TOKEN_PATTERN.match(value):
        raise ValueError("does not look like a BotFather token (digits, a colon, then 35 characters)")
    return value


def _database(value: str) -> str:
    try:
        describe_database(value)
    except StorageError as error:
        raise ValueError(str(error)) from None
    return value.strip()


def _language(value: str) -> str:
    if value not in ("zh", "en"):
        raise ValueError("Input should be 'zh' or 'en'")
    return value


def _known_zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{value!r} is not an IANA time zone such as Asia/Shanghai") from None
    return value


def _admin_ids(value: str) -> str:
    for part in value.split(","):
        if part.strip() and not part.strip().lstrip("-").isdigit():
            raise ValueError(f"{part.strip()!r} is not a numeric Telegram user id")
    return value


def _http_url(value: str) -> str:
    if value and urlparse(value).scheme not in {"http", "https"}:
        raise ValueError(f"{value!r} is not an http(s) URL")
    return value.rstrip("/")


def _https_url(value: str) -> str:
    if value and urlparse(value).scheme != "https":
        raise ValueError(f"{value!r} is not an https URL (Telegram opens Mini Apps only over HTTPS)")
    return value


def _address(value: str) -> str:
    try:
        return str(ip_address(value.strip()))
    except ValueError:
        raise ValueError("value is not a valid IPv4 or IPv6 address") from None


def _app_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_]{3,30}", value):
        raise ValueError("String should match pattern '^[A-Za-z0-9_]{3,30}$'")
    return value


@dataclass(frozen=True)
class Settings:
    """Every setting of ``xuezhan run``; each field's ``env`` metadata is its environment variable.

    A plain dataclass read by ``load_settings``: a validation library cost a third of a second of
    every start-up, for a dozen variables."""

    token: str = _env("TELEGRAM_BOT_TOKEN", _token, repr=False)
    db: str = _env("XUEZHAN_DB", _database, default="xuezhan.db")  # a path, sqlite:///path or postgresql://…
    lang: Literal["zh", "en"] = _env("XUEZHAN_LANG", _language, default="zh")
    tz: str = _env("XUEZHAN_TZ", _known_zone, default="Asia/Shanghai")
    admins_text: str = _env("XUEZHAN_ADMINS", _admin_ids, default="")
    api_url: str = _env("XUEZHAN_API_URL", _http_url, default=TELEGRAM_API_URL)
    discard_seconds: float = _env("XUEZHAN_DISCARD_SECONDS", _number(float, 0, 3600, low_open=True), default=30.0)
    claim_seconds: float = _env("XUEZHAN_CLAIM_SECONDS", _number(float, 0, 3600, low_open=True), default=15.0)
    group_update_seconds: float = _env("XUEZHAN_GROUP_UPDATE_SECONDS", _number(float, 0, 60), default=4.0)
    computer_delay: float = _env("XUEZHAN_COMPUTER_DELAY", _number(float, 0, 30), default=1.0)
    webhook_url: str = _env("XUEZHAN_WEBHOOK_URL", _http_url, default="")
    webhook_port: int = _env("XUEZHAN_WEBHOOK_PORT", _number(int, 1, 65535), default=8443)
    webhook_listen: str = _env("XUEZHAN_WEBHOOK_LISTEN", _address, default="0.0.0.0")
    # Bot processes sharing the database (xuezhan run --workers N sets it for its workers): with
    # PostgreSQL and more than one, Telegram's rate limits are kept in the database for all of them.
    workers: int = _env("XUEZHAN_WORKERS", _number(int, 1, 64), default=1)
    webapp_url: str = _env("XUEZHAN_WEBAPP_URL", _https_url, default="")  # public HTTPS address of the web table
    webapp_name: str = _env("XUEZHAN_WEBAPP_NAME", _app_name, default="table")
    web_listen: str = _env("XUEZHAN_WEB_LISTEN", _address, default="127.0.0.1")  # an IP address
    web_port: int = _env("XUEZHAN_WEB_PORT", _number(int, 0, 65535), default=8080)

    @property
    def admins(self) -> frozenset[int]:
        """Telegram user ids allowed to run bot-wide admin commands."""
        return frozenset(int(p) for p in self.admins_text.split(",") if p.strip())

    @property
    def file_url(self) -> str:
        """The Bot API file URL that goes with ``api_url`` (``.../bot`` -> ``.../file/bot``)."""
        head, sep, tail = self.api_url.rpartition("/")
        return f"{head}/file/{tail}" if sep else f"{self.api_url}/file"

    @property
    def webhook_path(self) -> str:
        """The local path the webhook server listens on: the path of ``webhook_url``."""
        return urlparse(self.webhook_url).path.lstrip("/")

    @property
    def webhook_secret(self) -> str:
        """A secret Telegram echoes in each webhook request, derived from the token (stable, unguessable)."""
        return hashlib.sha256(f"xuezhan-webhook:{self.token}".encode()).hexdigest()


def variables() -> tuple[str, ...]:
    """The environment variable of every setting, in order."""
    return tuple(f.metadata["env"] for f in fields(Settings))


def load_settings(env_file: str | Path | None = ".env", **overrides: object) -> Settings:
    """Read the settings (environment first, then ``env_file``), or raise one ``ConfigError``.

    ``overrides`` use the environment names (``XUEZHAN_DB=...``) and win over both; tests use them.
    Names are matched without regard to case, as they always were.
    """
    found: dict[str, str] = {}
    if env_file is not None and Path(env_file).is_file():
        from dotenv import dotenv_values

        found.update(_upper(dotenv_values(env_file)))
    found.update(_upper(os.environ))
    found.update(_upper({k: str(v) for k, v in overrides.items()}))
    values: dict[str, Any] = {}
    for f in fields(Settings):
        name = f.metadata["env"]
        if name not in found:
            if name == "TELEGRAM_BOT_TOKEN":
                raise ConfigError(_one_sentence(name, "missing", None, ""))
            continue
        try:
            values[f.name] = f.metadata["parse"](found[name])
        except ValueError as error:
            raise ConfigError(_one_sentence(name, "invalid", found[name], str(error))) from None
    return Settings(**values)


def _upper(values: Mapping[str, str | None]) -> dict[str, str]:
    return {k.upper(): v for k, v in values.items() if v is not None}


def _one_sentence(name: str, kind: str, given: str | None, message: str) -> str:
    if name == "TELEGRAM_BOT_TOKEN" and kind == "missing":
        return ("TELEGRAM_BOT_TOKEN is not set: put the token BotFather gave you in the environment or in "
                ".env (see .env.example).")
    if name == "TELEGRAM_BOT_TOKEN" and not (given or "").strip():
        return ("TELEGRAM_BOT_TOKEN is empty: put the token BotFather gave you after the = sign, in the "
                "environment or in .env (see .env.example).")
    return f"{name} is invalid: {message}."
