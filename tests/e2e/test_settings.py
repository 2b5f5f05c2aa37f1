"""Settings: defaults, parsing, and one clear sentence for each kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_telegram import DEFAULT_TOKEN
from harness import clean_environment

from bot.settings import TELEGRAM_API_URL, ConfigError, load_settings


@pytest.fixture(autouse=True)
def no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in clean_environment():
        monkeypatch.delenv(name)


def test_only_the_token_is_required_and_everything_else_has_the_documented_default() -> None:
    settings = load_settings(None, TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN)
    assert (settings.db, settings.lang, settings.tz) == ("xuezhan.db", "zh", "Asia/Shanghai")
    assert (settings.discard_seconds, settings.claim_seconds) == (30, 15)
    assert settings.api_url == TELEGRAM_API_URL and settings.file_url == "https://api.telegram.org/file/bot"
    assert settings.admins == frozenset() and settings.webhook_url == ""
    assert DEFAULT_TOKEN not in repr(settings)


def test_every_setting_in_env_example_is_a_setting() -> None:
    example = Path(__file__).parents[2] / ".env.example"
    names = {line.split("=")[0] for line in example.read_text().splitlines() if line and line[0].isupper()}
    settings = load_settings(None, TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN)
    aliases = {field.alias for field in type(settings).model_fields.values()}
    assert names == aliases


def test_values_come_from_the_environment_before_the_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(f"TELEGRAM_BOT_TOKEN={DEFAULT_TOKEN}\nXUEZHAN_LANG=en\nXUEZHAN_ADMINS=1, 22,333\n")
    monkeypatch.setenv("XUEZHAN_LANG", "zh")
    settings = load_settings(env_file)
    assert settings.lang == "zh" and settings.admins == {1, 22, 333}


def test_a_local_bot_api_server_gets_its_file_url_too() -> None:
    settings = load_settings(None, TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN, XUEZHAN_API_URL="http://127.0.0.1:8081/bot/")
    assert (settings.api_url, settings.file_url) == ("http://127.0.0.1:8081/bot", "http://127.0.0.1:8081/file/bot")
    # the server's address alone, as an operator may well write it, means the same server
    for written in ("http://127.0.0.1:8081", "http://127.0.0.1:8081/"):
        settings = load_settings(None, TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN, XUEZHAN_API_URL=written)
        assert (settings.api_url, settings.file_url) == ("http://127.0.0.1:8081/bot",
                                                         "http://127.0.0.1:8081/file/bot")


def test_the_webhook_path_and_secret_come_from_the_url_and_the_token() -> None:
    settings = load_settings(None, TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN,
                             XUEZHAN_WEBHOOK_URL="https://bot.example.com/hooks/xuezhan")
    assert settings.webhook_path == "hooks/xuezhan"
    assert len(settings.webhook_secret) == 64 and DEFAULT_TOKEN.split(":")[1] not in settings.webhook_secret


@pytest.mark.parametrize(
    ("overrides", "sentence"),
    [
        ({}, "TELEGRAM_BOT_TOKEN is not set: put the token BotFather gave you in the environment or in .env "
             "(see .env.example)."),
        ({"TELEGRAM_BOT_TOKEN": "123:abc"}, "TELEGRAM_BOT_TOKEN is invalid: does not look like a BotFather token "
                                            "(digits, a colon, then 35 characters)."),
        ({"XUEZHAN_ADMINS": "12,bob"}, "XUEZHAN_ADMINS is invalid: 'bob' is not a numeric Telegram user id."),
        ({"XUEZHAN_ADMINS": "12,³"}, "XUEZHAN_ADMINS is invalid: '³' is not a numeric Telegram user id."),
        ({"XUEZHAN_API_URL": "api.telegram.org"}, "XUEZHAN_API_URL is invalid: 'api.telegram.org' is not an "
                                                  "http(s) URL."),
        ({"XUEZHAN_CLAIM_SECONDS": "0"}, "XUEZHAN_CLAIM_SECONDS is invalid: Input should be greater than 0."),
        ({"XUEZHAN_WEBHOOK_PORT": "70000"}, "XUEZHAN_WEBHOOK_PORT is invalid: Input should be less than or "
                                            "equal to 65535."),
    ],
)
def test_a_bad_setting_is_one_sentence_naming_the_variable(overrides: dict[str, str], sentence: str) -> None:
    values = {"TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN, **overrides} if overrides else {}
    with pytest.raises(ConfigError) as caught:
        load_settings(None, **values)
    assert str(caught.value) == sentence
