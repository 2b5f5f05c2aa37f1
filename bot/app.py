"""The one place that builds the bot's ``Application``.

Features (``bot.feature.Feature``) come from the modules in ``FEATURE_MODULES``; to add one, write
a module with ``FEATURE = Feature(...)`` and add its name here. Start-up (``post_init``) opens
storage, publishes the commands in Chinese (the default) and English (in the background, while
polling starts), then runs each feature's ``on_start``; ``post_stop`` runs ``on_stop`` in reverse
order and ``post_shutdown`` closes storage.
Tests build the same Application with ``api_url`` pointing at the fake Bot API server.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
from collections.abc import Iterable, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from telegram import (
    BotCommand,
    BotCommandScope,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Update,
)
from telegram.error import ChatMigrated, Forbidden, TelegramError
from telegram.ext import Application, ApplicationBuilder, BaseRateLimiter, CallbackQueryHandler, Defaults

from bot.feature import AnyApplication, Context, Feature
from bot.http import AiohttpRequest
from bot.i18n import DEFAULT_LANGUAGE, LANGUAGES, N_, translator
from bot.ratelimit import STOP_GRACE_SECONDS, Stopping, TelegramRateLimiter
from bot.services import HTTP_POOL_SIZE, HTTP_POOL_TIMEOUT, SERVICES_KEY, Services, services, texts_for
from bot.settings import Settings
from bot.shared_limits import rate_limiter_for
from storage import StorageError, open_storage

log = logging.getLogger(__name__)

FEATURE_MODULES: tuple[str, ...] = (
    "bot.handlers_basic",
    "bot.table.feature",
    "bot.webapp",  # after the table feature: joins the web table's view to its runners
    "bot.table.review",  # after the web feature: wraps the tables' presenter to offer 复盘
    "bot.rules_menu",
    "bot.score.chat",
    "bot.score.photo",
    "bot.keep.feature",
    "bot.tallies",
    "bot.score.dm",  # last: private messages no other feature took
)


class XuezhanApplication(Application[Any, Any, Any, Any, Any, Any]):
    """PTB's Application, whose stop gives the sends still waiting for a turn a few seconds
    (``TelegramRateLimiter.stop_waiting``) instead of waiting out every queue."""

    async def stop(self) -> None:
        limiter = self.bot.rate_limiter
        if isinstance(limiter, TelegramRateLimiter) and self.running:
            limiter.stop_waiting(STOP_GRACE_SECONDS)
        await super().stop()


class _UpdatesPulledWhileStopping(logging.Filter):
    """PTB logs CRITICAL "Updater stopped unexpectedly" when a long poll brings updates just after
    the stop began. The stop was asked for, and those updates, never confirmed, come again at the
    next start: nothing is lost. An operator restarting a busy bot would read the CRITICAL line as
    a crash, so it is said at INFO, in words that say what happened."""

    PTB_MESSAGE = "Updater stopped unexpectedly."

    def filter(self, record: logging.LogRecord) -> bool:
        if not (isinstance(record.msg, str) and record.msg.startswith(self.PTB_MESSAGE)):
            return True
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        record.msg, record.args = "stopping: the updates that came during the stop are left for the next start", ()
        return logging.getLogger(record.name).isEnabledFor(logging.INFO)


_STOP_RACE = _UpdatesPulledWhileStopping()


def load_features(names: Iterable[str] = FEATURE_MODULES) -> tuple[Feature, ...]:
    """The ``FEATURE`` of each named module, in order."""
    return tuple(importlib.import_module(name).FEATURE for name in names)


def build_application(
    settings: Settings,
    *,
    features: Sequence[Feature] | None = None,
    rate_limiter: BaseRateLimiter[Any] | None = None,
) -> AnyApplication:
    """A ready-to-run Application: handlers registered, hooks set, nothing opened yet.

    ``features`` defaults to ``load_features()``; ``rate_limiter`` to Telegram's limits with
    retries (``TelegramRateLimiter``), shared in the database by several workers (``bot.shared_limits``).
    """
    chosen = tuple(features) if features is not None else load_features()
    logging.getLogger("telegram.ext.Updater").addFilter(_STOP_RACE)  # once: the same filter is not added twice
    app = (
        ApplicationBuilder()
        .application_class(XuezhanApplication)
        .token(settings.token)
        .concurrent_updates(True)  # tables serialise their own decisions (one lock per table)
        .base_url(settings.api_url)
        .base_file_url(settings.file_url)
        .defaults(Defaults(tzinfo=ZoneInfo(settings.tz)))
        .rate_limiter(rate_limiter if rate_limiter is not None else rate_limiter_for(settings))
        .request(AiohttpRequest(HTTP_POOL_SIZE, pool_timeout=HTTP_POOL_TIMEOUT))
        .get_updates_request(AiohttpRequest())
        .post_init(_post_init)
        .post_stop(_post_stop)
        .post_shutdown(_post_shutdown)
        .build()
    )
    app.bot_data[SERVICES_KEY] = Services(settings, chosen)
    for feature in chosen:
        for handler in feature.handlers():
            app.add_handler(handler)
    # Last in group 0: a press no feature claimed still gets an answer.
    app.add_handler(CallbackQueryHandler(_unclaimed_press))
    app.add_error_handler(_log_error)
    return app


def bot_commands(features: Sequence[Feature], language: str, *, group: bool) -> list[BotCommand]:
    """The command menu of private chats or of groups, in ``language``."""
    texts = translator(language)
    return [
        BotCommand(c.name, texts.t(c.description))
        for f in features
        for c in f.commands
        if (c.group if group else c.private)
    ]


async def publish_commands(app: AnyApplication) -> None:
    """``set_my_commands`` for private chats and groups, Chinese by default and English for en."""
    features = services(app).features
    scopes: tuple[tuple[BotCommandScope, bool], ...] = (
        (BotCommandScopeAllPrivateChats(), False),
        (BotCommandScopeAllGroupChats(), True),
    )
    await asyncio.gather(*(
        app.bot.set_my_commands(bot_commands(features, language, group=group), scope=scope,
                                language_code=None if language == DEFAULT_LANGUAGE else language)
        for language in LANGUAGES for scope, group in scopes
    ))


DESCRIPTION = N_("I host, referee and score Sichuan mahjong (血战到底) for your group. Add me to a group and "
                 "send /newgame to open a table: your tiles come here by private message. Playing with real "
                 "tiles? /keep keeps the score. /score values any hand, and a photo of a hand works too.")
SHORT_DESCRIPTION = N_("Sichuan mahjong for your group: hosted tables, scorekeeping, hand values.")


async def publish_profile(app: AnyApplication) -> None:
    """The description a new user sees in an empty chat with the bot, and the short one on its
    profile, in Chinese (the default) and English. A failure here never stops the start."""
    async def publish(language: str) -> None:
        texts = translator(language)
        code = None if language == DEFAULT_LANGUAGE else language
        try:
            await app.bot.set_my_description(texts.t(DESCRIPTION), language_code=code)
            await app.bot.set_my_short_description(texts.t(SHORT_DESCRIPTION), language_code=code)
        except TelegramError as error:
            log.warning("could not set the bot's description (%s): %s", language, error)

    await asyncio.gather(*(publish(language) for language in LANGUAGES))


async def _post_init(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    found = services(app)
    found.attach_storage(await open_storage(
        found.settings.db, default_language=found.settings.lang, default_timezone=found.settings.tz
    ))
    # Telegram keeps the command menu and the profile texts between runs: they go out (8 calls at
    # once) once polling has begun (the job queue starts after the first getUpdates), so that
    # neither their round trip nor their CPU delays a restarted bot's first updates.
    assert app.job_queue is not None, "install python-telegram-bot[job-queue]"
    app.job_queue.run_once(_begin_publishing, 0, name="xz-publish")
    for feature in found.features:
        if feature.on_start is not None:
            await feature.on_start(app)
    if not gc.isenabled():  # ``xuezhan run`` paused the collector for the start (cli/run.py)
        gc.freeze()  # what start-up made (modules, resumed tables) lives on: later collections skip it
        gc.enable()
    log.info("@%s started with features: %s", app.bot.username, ", ".join(f.name for f in found.features))


async def _begin_publishing(context: Context) -> None:
    found = services(context.application)
    found.publishing = asyncio.get_running_loop().create_task(_publish(context.application))


async def _publish(app: AnyApplication) -> None:
    try:
        await asyncio.gather(publish_commands(app), publish_profile(app))
    except TelegramError as error:
        log.warning("could not publish the bot's commands: %s", error)


async def _post_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    publishing = services(app).publishing
    if publishing is not None:
        await publishing
    for feature in reversed(services(app).features):
        if feature.on_stop is not None:
            await feature.on_stop(app)


async def _post_shutdown(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    await services(app).close_storage()


async def _unclaimed_press(update: Update, context: Context) -> None:
    texts = await texts_for(update, context)
    assert update.callback_query is not None
    await update.callback_query.answer(texts.t("This button is no longer active."))


async def _log_error(update: object, context: Context) -> None:
    """Log what a handler raised; the Application keeps serving other updates. A press whose
    handler failed because the database was away (PostgreSQL restarting) is told to try again:
    unanswered, its spinner just stops and the press looks taken. A send the stopping bot gave up
    (``Stopping``) is no error: it is said once, without the stack. Nor is a reply refused because,
    after the update came, the chat removed or blocked the bot (``Forbidden``) or became a
    supergroup (``ChatMigrated``; the next command there comes from the new chat): there is nothing
    to fix, so it is one warning line."""
    if isinstance(context.error, Stopping):
        log.info("%s", context.error)
        return
    if isinstance(context.error, Forbidden | ChatMigrated):
        chat = update.effective_chat if isinstance(update, Update) else None
        log.warning("could not answer in chat %s: %s", chat.id if chat else "?", context.error)
        return
    log.error("error while handling %r", update, exc_info=context.error)
    if isinstance(context.error, StorageError) and isinstance(update, Update) and update.callback_query:
        try:
            texts = await texts_for(update, context)
        except StorageError:
            texts = translator(DEFAULT_LANGUAGE)
        with contextlib.suppress(TelegramError):  # already answered before the failure: nothing to add
            await update.callback_query.answer(texts.t("Something went wrong; please try again."))
