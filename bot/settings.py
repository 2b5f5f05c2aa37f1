"""The bot's settings, read from the environment and ``.env`` (every one is in ``.env.example``).

Only ``TELEGRAM_BOT_TOKEN`` has no default. A bad setting becomes one ``ConfigError`` sentence
naming the variable, so that ``xuezhan run`` can say what to fix instead of printing a traceback.
"""

from __future__ import annotations

import hashlib
import re
from ipaddress import IPv4Address
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, IPvAnyAddress, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from storage.factory import describe as describe_database
from storage.interface import StorageError

TELEGRAM_API_URL = "https://api.telegram.org/bot"

# BotFather tokens: the bot's numeric id, a colon, and a 35-character secret.
_TOKEN_PATTERN = re.compile(r"^\d{5,20}:[A-Za-z0-9_-]{30,100}$")


class ConfigError(ValueError):
    """A setting is missing or invalid; ``str(error)`` is one sentence for the operator."""


class Settings(BaseSettings):
    """Every setting of ``xuezhan run``; field aliases are the environment variable names."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore",
                                      frozen=True)

    token: str = Field(alias="TELEGRAM_BOT_TOKEN", repr=False)
    db: str = Field("xuezhan.db", alias="XUEZHAN_DB")  # a file path, sqlite:///path or postgresql://…
    lang: Literal["zh", "en"] = Field("zh", alias="XUEZHAN_LANG")
    tz: str = Field("Asia/Shanghai", alias="XUEZHAN_TZ")
    admins_text: str = Field("", alias="XUEZHAN_ADMINS")
    api_url: str = Field(TELEGRAM_API_URL, alias="XUEZHAN_API_URL")
    discard_seconds: float = Field(30, alias="XUEZHAN_DISCARD_SECONDS", gt=0, le=3600)
    claim_seconds: float = Field(15, alias="XUEZHAN_CLAIM_SECONDS", gt=0, le=3600)
    group_update_seconds: float = Field(4, alias="XUEZHAN_GROUP_UPDATE_SECONDS", ge=0, le=60)
    computer_delay: float = Field(1, alias="XUEZHAN_COMPUTER_DELAY", ge=0, le=30)
    webhook_url: str = Field("", alias="XUEZHAN_WEBHOOK_URL")
    webhook_port: int = Field(8443, alias="XUEZHAN_WEBHOOK_PORT", ge=1, le=65535)
    webhook_listen: IPvAnyAddress = Field(IPv4Address("0.0.0.0"), alias="XUEZHAN_WEBHOOK_LISTEN")
    # Bot processes sharing the database (xuezhan run --workers N sets it for its workers): with
    # PostgreSQL and more than one, Telegram's rate limits are kept in the database for all of them.
    workers: int = Field(1, alias="XUEZHAN_WORKERS", ge=1, le=64)
    webapp_url: str = Field("", alias="XUEZHAN_WEBAPP_URL")  # public HTTPS address of the web table
    webapp_name: str = Field("table", alias="XUEZHAN_WEBAPP_NAME", pattern=r"^[A-Za-z0-9_]{3,30}$")
    web_listen: IPvAnyAddress = Field(IPv4Address("127.0.0.1"), alias="XUEZHAN_WEB_LISTEN")
    web_port: int = Field(8080, alias="XUEZHAN_WEB_PORT", ge=0, le=65535)

    @field_validator("token")
    @classmethod
    def _token_shape(cls, value: str) -> str:
        value = value.strip()
        if not _TOKEN_PATTERN.match(value):
            raise ValueError("does not look like a BotFather token (digits, a colon, then 35 characters)")
        return value

    @field_validator("db")
    @classmethod
    def _database(cls, value: str) -> str:
        try:
            describe_database(value)
        except StorageError as error:
            raise ValueError(str(error)) from None
        return value.strip()

    @field_validator("tz")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError(f"{value!r} is not an IANA time zone such as Asia/Shanghai") from None
        return value

    @field_validator("admins_text")
    @classmethod
    def _admin_ids(cls, value: str) -> str:
        for part in value.split(","):
            if part.strip() and not (part.strip().isascii() and part.strip().lstrip("-").isdigit()):
                raise ValueError(f"{part.strip()!r} is not a numeric Telegram user id")
        return value

    @field_validator("api_url", "webhook_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if value and urlparse(value).scheme not in {"http", "https"}:
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value.rstrip("/")

    @field_validator("api_url")
    @classmethod
    def _bot_api_base(cls, value: str) -> str:
        """The Bot API's methods are at ``<server>/bot<token>/<method>``: a server's address written
        without its ``/bot`` (an easy slip with a local Bot API server) gets it, instead of every
        call going to ``<server><token>/…``."""
        return value if value.endswith("/bot") else f"{value}/bot"

    @field_validator("webapp_url")
    @classmethod
    def _https_url(cls, value: str) -> str:
        if value and urlparse(value).scheme != "https":
            raise ValueError(f"{value!r} is not an https URL (Telegram opens Mini Apps only over HTTPS)")
        return value

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


def load_settings(env_file: str | Path | None = ".env", **overrides: object) -> Settings:
    """Read the settings (environment first, then ``env_file``), or raise one ``ConfigError``.

    ``overrides`` use the environment names (``XUEZHAN_DB=...``) and win over both; tests use them.
    """
    try:
        return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg]
    except ValidationError as error:
        raise ConfigError(_one_sentence(error)) from None


def _one_sentence(error: ValidationError) -> str:
    first = error.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "settings"
    if name == "TELEGRAM_BOT_TOKEN" and first["type"] == "missing":
        return ("TELEGRAM_BOT_TOKEN is not set: put the token BotFather gave you in the environment or in "
                ".env (see .env.example).")
    if name == "TELEGRAM_BOT_TOKEN" and not str(first.get("input") or "").strip():
        return ("TELEGRAM_BOT_TOKEN is empty: put the token BotFather gave you after the = sign, in the "
                "environment or in .env (see .env.example).")
    message = first["msg"].removeprefix("Value error, ")
    return f"{name} is invalid: {message}."
