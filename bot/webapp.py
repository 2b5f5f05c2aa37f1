"""The web table inside the bot: its server in the bot's process, and the "打开牌桌" buttons.

When ``XUEZHAN_WEBAPP_URL`` is set, start-up runs the web server (``web.server``) on
``XUEZHAN_WEB_LISTEN:XUEZHAN_WEB_PORT`` with the bot token for checking ``initData``, and gives
the live tables a ``Fanout`` of their Telegram presenter and the web hub, so both views hear
every event of the same runners. Each person at a new
hand gets a DM with a ``web_app`` button (the "your turn" DMs keep coming as before); the
lobby carries the Mini App's direct link, since groups cannot show ``web_app`` buttons. Opened
before the hand is dealt, the page shows the lobby (who sits where, the rules); opened by
someone who is not seated, it shows the open table only, as the group picture does, and only to
a member of the table's group.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import partial

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo
from telegram.error import TelegramError

from bot.feature import AnyApplication, Feature
from bot.i18n import N_
from bot.permissions import is_member
from bot.services import services
from bot.settings import Settings
from bot.table.runner import TableRunner
from bot.table.tables import SeatTexts
from engine.events import Event
from storage.interface import NotFound, Storage

log = logging.getLogger(__name__)

HUB_KEY = "xuezhan.web.hub"
SERVER_KEY = "xuezhan.web.server"
OPEN_TABLE = N_("Open the table")



def web_app_url(base: str, table_id: int) -> str:
    """The page for one table, as a DM's ``web_app`` button opens it."""
    return f"{base.rstrip('/')}/?table={table_id}"


def direct_link(bot_username: str, app_name: str, table_id: int) -> str:
    """The Mini App's direct link for a group (``t.me/<bot>/<app>?startapp=<table>``)."""
    return f"https://t.me/{bot_username}/{app_name}?startapp={table_id}"


def lobby_link(settings: Settings, bot_username: str, table_id: int) -> str | None:
    """The lobby's "打开牌桌" link, or None when the web table is off."""
    return direct_link(bot_username, settings.webapp_name, table_id) if settings.webapp_url else None


class DmLinks:
    """At the start of a hand, each person gets one DM with a button that opens the table. The
    runner tells its presenters under the table's lock, so the DMs go out from a task of their
    own (behind Telegram's rate limits they may take seconds) and the table does not wait."""

    def __init__(self, bot: Bot, base_url: str, seat_texts: SeatTexts) -> None:
        self.bot = bot
        self.base_url = base_url
        self.seat_texts = seat_texts
        self._sending: set[asyncio.Task[None]] = set()

    async def hand_started(self, runner: TableRunner, resumed: bool) -> None:
        if resumed:
            return
        task = asyncio.get_running_loop().create_task(self._send(runner))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def close(self) -> None:
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, return_exceptions=True)

    async def _send(self, runner: TableRunner) -> None:
        for seat, player in enumerate(runner.seats):
            if player.user_id is None:
                continue
            texts = self.seat_texts(runner, seat)
            button = InlineKeyboardButton(texts.t(OPEN_TABLE),
                                          web_app=WebAppInfo(web_app_url(self.base_url, runner.table_id)))
            try:
                await self.bot.send_message(
                    player.user_id, texts.t("Hand {n}: play here with the buttons, or on the web table.",
                                            n=runner.hand.number),
                    reply_markup=InlineKeyboardMarkup([[button]]),
                )
            except TelegramError as error:
                log.info("table %s seat %s: no web table link sent: %s", runner.table_id, seat, error)

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None:
        return None

    async def prompt(self, runner: TableRunner, seat: int) -> None:
        return None

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None:
        return None


async def on_start(app: AnyApplication) -> None:
    """Serve the web table and join its view to the live tables (runs after the table feature's
    start, so hands resumed after a restart are joined too)."""
    from bot.table.feature import TABLES_KEY  # the table feature imports this module for lobby_link

    settings = services(app).settings
    live = app.bot_data.get(TABLES_KEY)
    if not settings.webapp_url or live is None:
        return
    from web.hub import Fanout, WebHub  # like the server: imported only when the web table is on
    from web.lobby import describe_table
    from web.server import WebServer  # aiohttp's server: ~1 s of start-up, paid only when the web table is on

    storage = services(app).storage
    hub = WebHub(describe=lambda table_id: describe_table(storage, table_id))
    server = WebServer(hub, bot_token=settings.token, may_watch=partial(_in_the_group, app.bot, storage))
    url = await server.start(str(settings.web_listen), settings.web_port)
    app.bot_data[HUB_KEY] = hub
    app.bot_data[SERVER_KEY] = server
    links = DmLinks(app.bot, settings.webapp_url, live.seat_texts)
    view = Fanout(hub, live.presenter, links)
    live.presenter = view
    for runner in live.runners.values():
        runner.presenter = view
        await hub.hand_started(runner, resumed=True)
    log.info("web table served at %s for %s", url, settings.webapp_url)


async def _in_the_group(bot: Bot, storage: Storage, user_id: int, table_id: int) -> bool:
    """Only the table's group may watch it: the open table is what that group sees."""
    try:
        table = await storage.get_table(table_id)
    except NotFound:
        return False
    return await is_member(bot, table.chat_id, user_id)


async def on_stop(app: AnyApplication) -> None:
    server = app.bot_data.pop(SERVER_KEY, None)
    app.bot_data.pop(HUB_KEY, None)
    if server is not None:
        await server.stop()


FEATURE = Feature(name="webapp", handlers=lambda: [], on_start=on_start, on_stop=on_stop)
