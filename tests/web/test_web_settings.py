"""The web table's settings: Telegram opens Mini Apps only over HTTPS, and the lobby's direct link."""

from __future__ import annotations

import os

import pytest

from bot.settings import ConfigError, load_settings
from bot.webapp import direct_link, lobby_link, web_app_url

TOKEN = "123456789:" + "A1b2C3d4E5" * 4


@pytest.fixture(autouse=True)
def no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("XUEZHAN_") or n == "TELEGRAM_BOT_TOKEN"]:
        monkeypatch.delenv(name)


def test_a_plain_http_web_app_address_is_refused_with_the_variables_name() -> None:
    with pytest.raises(ConfigError, match="XUEZHAN_WEBAPP_URL"):
        load_settings(None, TELEGRAM_BOT_TOKEN=TOKEN, XUEZHAN_WEBAPP_URL="http://table.example")


def test_the_lobby_link_appears_only_when_the_web_table_is_on() -> None:
    off = load_settings(None, TELEGRAM_BOT_TOKEN=TOKEN)
    on = load_settings(None, TELEGRAM_BOT_TOKEN=TOKEN, XUEZHAN_WEBAPP_URL="https://table.example/",
                       XUEZHAN_WEBAPP_NAME="mahjong")
    assert lobby_link(off, "xz_bot", 7) is None
    assert lobby_link(on, "xz_bot", 7) == direct_link("xz_bot", "mahjong", 7) == "https://t.me/xz_bot/mahjong?startapp=7"
    assert web_app_url(on.webapp_url, 7) == "https://table.example/?table=7"
