"""``xuezhan run``: run the Telegram bot, by long polling or, with XUEZHAN_WEBHOOK_URL, a webhook.

Settings come from the environment and ``.env`` (see ``.env.example``). Everything an operator
can get wrong (a missing or rejected token, an unreachable Bot API, an unusable database)
ends in one sentence on stderr and exit code 2, not a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Any

EXIT_CONFIG = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the Telegram bot",
        description="Run the bot: long polling, or a webhook server when XUEZHAN_WEBHOOK_URL is set. "
        "Settings are read from the environment and from the .env file.",
    )
    parser.add_argument("--env-file", default=".env", help="file of settings to read (default: .env)")
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="how much to log (default: INFO)")
    parser.set_defaults(func=run)


def fail(message: str) -> int:
    print(f"xuezhan run: {message}", file=sys.stderr)
    return EXIT_CONFIG


def _without(kind: type[BaseException]) -> Callable[[logging.LogRecord], bool]:
    """A log filter that drops records about ``kind``: ``run`` reports that error in one sentence."""

    def keep(record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        while error is not None:
            if isinstance(error, kind):
                return False
            error = error.__cause__ or error.__context__
        return True

    return keep


def _quiet_until_running(app: Any) -> Callable[[logging.LogRecord], bool]:
    """Until the bot runs, retries of its first requests stay quiet: if they all fail, ``run``
    prints one sentence; if one succeeds, there was nothing to say."""

    def keep(record: logging.LogRecord) -> bool:
        return app.running or record.levelno >= logging.ERROR or "retrying in" not in record.getMessage()

    return keep


def run(args: argparse.Namespace) -> int:
    # Imported here so that other sub-commands do not pay for Telegram's imports.
    from telegram import Update
    from telegram.error import InvalidToken, NetworkError

    from bot.app import build_application
    from bot.settings import ConfigError, load_settings
    from storage import StorageError
    from storage.factory import redacted
    from storage.preflight import database_problem

    try:
        settings = load_settings(args.env_file)
    except ConfigError as error:
        return fail(str(error))
    problem = database_problem(settings.db)
    if problem is not None:
        return fail(f"cannot use the database XUEZHAN_DB={redacted(settings.db)}: {problem}.")
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = build_application(settings)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_without(InvalidToken))
        if args.log_level != "DEBUG":  # the one sentence below says it; DEBUG shows every attempt
            handler.addFilter(_without(NetworkError))
            handler.addFilter(_quiet_until_running(app))
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    try:
        if settings.webhook_url:
            app.run_webhook(
                listen=str(settings.webhook_listen),
                port=settings.webhook_port,
                url_path=settings.webhook_path,
                webhook_url=settings.webhook_url,
                secret_token=settings.webhook_secret,
                allowed_updates=Update.ALL_TYPES,
            )
        else:
            app.run_polling(allowed_updates=Update.ALL_TYPES)
    except InvalidToken:
        return fail("Telegram rejected TELEGRAM_BOT_TOKEN; copy the current token from BotFather (/token).")
    except NetworkError as error:
        return fail(f"cannot reach the Bot API at {settings.api_url} ({error}); check XUEZHAN_API_URL "
                    "and the network.")
    except (StorageError, OSError) as error:
        return fail(f"cannot open the database XUEZHAN_DB={redacted(settings.db)} ({error}).")
    return 0
