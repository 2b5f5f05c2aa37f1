"""``xuezhan run``: run the Telegram bot, by long polling or, with XUEZHAN_WEBHOOK_URL, a webhook.

Settings come from the environment and ``.env`` (see ``.env.example``). Everything an operator
can get wrong (a missing or rejected token, an unreachable Bot API, an unusable database)
ends in one sentence on stderr and exit code 2, not a traceback.
"""

from __future__ import annotations

import argparse
import gc
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
    parser.add_argument("--workers", type=_worker_count, default=None, metavar="N",
                        help="webhook mode with N worker processes behind a front on the webhook port "
                        "(more than one needs PostgreSQL; see docs/setup.md)")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)  # set by --workers
    parser.set_defaults(func=run)


def _worker_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of workers from 1 to 64")
    return int(text)


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
    # Start-up makes some 700 modules' classes and functions, and they all live as long as the bot:
    # collecting them while importing found nothing and took ~8% of the start (35 of 400 ms here).
    # The bot's start-up hook freezes what start-up made and turns the collector back on.
    gc.disable()
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
    if args.workers is not None:
        gc.enable()  # the front is not a bot: nothing turns the collector back on there
        return _run_workers(args, settings)
    who = "" if args.worker is None else f"worker {args.worker} "
    logging.basicConfig(level=args.log_level, format=f"%(asctime)s {who}%(levelname)s %(name)s: %(message)s")
    app = build_application(settings)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_without(InvalidToken))
        if args.log_level != "DEBUG":  # the one sentence below says it; DEBUG shows every attempt
            handler.addFilter(_without(NetworkError))
            handler.addFilter(_quiet_until_running(app))
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


def _run_workers(args: argparse.Namespace, settings: Any) -> int:
    """``--workers N``: the front and N webhook workers (``bot.workers``), after the checks that
    would stop every worker alike."""
    from bot.workers import run_workers
    from storage.factory import describe, redacted

    if not settings.webhook_url:
        return fail("--workers runs webhook workers: set XUEZHAN_WEBHOOK_URL to the public HTTPS address "
                    "Telegram should post to (docs/setup.md).")
    if args.workers > 1 and describe(settings.db)[0] == "sqlite":
        return fail(f"--workers {args.workers} needs PostgreSQL: the SQLite database XUEZHAN_DB="
                    f"{redacted(settings.db)} is one file for one process. Set XUEZHAN_DB=postgresql://… "
                    "(docs/storage.md#postgresql) or run one worker.")
    if args.workers > 1 and settings.webapp_url:
        return fail("the web table (XUEZHAN_WEBAPP_URL) is served by one process: unset it to run several "
                    "workers.")
    logging.basicConfig(level=args.log_level, format="%(asctime)s front %(levelname)s %(name)s: %(message)s")

    def command(index: int) -> list[str]:
        return [sys.executable, "-m", "cli.main", "run", "--env-file", args.env_file, "--log-level",
                args.log_level, "--worker", str(index)]

    return run_workers(settings, args.workers, command)
