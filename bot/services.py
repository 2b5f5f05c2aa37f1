"""What handlers share at run time: settings, storage, the features, and whose language to speak.

The Application keeps one ``Services`` in ``bot_data``; handlers reach it with
``services(context)``. Storage is opened when the Application starts and closed when it stops,
so building an Application (in tests too) touches no file.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.constants import ChatType

from bot.feature import AnyApplication, Context, Feature, PayloadHandler
from bot.i18n import Translator, supported, translator
from bot.settings import Settings
from storage import Storage

SERVICES_KEY = "xuezhan.services"
STORAGE_CLOSE_SECONDS = 10
# The HTTP client's connection pool (``bot.http``): Telegram's limits (30 calls a second, answered
# in ~0.1 s) plus callback answers keep well under 16 requests in flight. A request that finds
# every connection busy waits for one up to HTTP_POOL_TIMEOUT seconds.
HTTP_POOL_SIZE = 16
HTTP_POOL_TIMEOUT = 10.0
log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    features: tuple[Feature, ...]
    _storage: Storage | None = field(default=None, repr=False)
    publishing: asyncio.Task[None] | None = field(default=None, repr=False)  # the commands going out at start

    @property
    def storage(self) -> Storage:
        if self._storage is None:
            raise RuntimeError("storage is opened when the Application starts (post_init)")
        return self._storage

    def attach_storage(self, storage: Storage) -> None:
        self._storage = storage

    async def close_storage(self) -> None:
        """Close storage at shut-down, but never hang there: every write was already committed
        (each call returns only after its commit), so giving up on a stuck close loses nothing."""
        if self._storage is not None:
            storage, self._storage = self._storage, None
            try:
                await asyncio.wait_for(storage.close(), STORAGE_CLOSE_SECONDS)
            except TimeoutError:
                log.error("storage did not close within %s s; leaving it to the operating system",
                          STORAGE_CLOSE_SECONDS)

    @property
    def start_payloads(self) -> dict[str, PayloadHandler]:
        return {prefix: handler for f in self.features for prefix, handler in f.start_payloads.items()}


def services(context: Context | AnyApplication) -> Services:
    """The Services of the Application a handler (or job) runs in."""
    bot_data: dict[str, Any] = context.bot_data
    return bot_data[SERVICES_KEY]


async def user_language(context: Context | AnyApplication, user_id: int) -> str:
    """The language the user chose with /lang, else the bot's default (XUEZHAN_LANG)."""
    found = services(context)
    stored = await found.storage.get_user(user_id)
    return supported(stored.language if stored else None) or found.settings.lang


async def chat_language(context: Context | AnyApplication, chat_id: int, chat_type: str) -> str:
    """A private chat speaks its user's language; a group speaks the language set for it."""
    if chat_type == ChatType.PRIVATE:
        return await user_language(context, chat_id)
    found = services(context)
    return supported((await found.storage.get_chat(chat_id)).language) or found.settings.lang


async def texts_for(update: Update, context: Context) -> Translator:
    """The translator for a reply to ``update`` in the chat it came from."""
    if update.effective_chat is not None:
        chat = update.effective_chat
        return translator(await chat_language(context, chat.id, chat.type))
    if update.effective_user is not None:
        return translator(await user_language(context, update.effective_user.id))
    return translator(services(context).settings.lang)
