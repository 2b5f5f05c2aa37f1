"""What a bot module hands to ``bot.app``: its handlers, commands, deep links and start-up work.

Each module listed in ``bot.app.FEATURE_MODULES`` defines ``FEATURE = Feature(...)``. The app
registers the handlers in list order, publishes the commands in every language with
``set_my_commands``, routes ``/start <prefix>_<argument>`` deep links to ``start_payloads``, and
calls ``on_start`` / ``on_stop`` once storage is open / before it closes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.ext import Application, BaseHandler, CallbackContext

Context = CallbackContext[Any, Any, Any, Any]
AnyApplication = Application[Any, Any, Any, Any, Any, Any]
PayloadHandler = Callable[[Update, Context, str], Awaitable[None]]
Hook = Callable[[AnyApplication], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    """A command for Telegram's menu and ``/help``; ``description`` is an English msgid (``N_``)."""

    name: str
    description: str
    private: bool = True
    group: bool = True


@dataclass(frozen=True)
class Feature:
    """One bot module's contribution.

    ``handlers`` is a factory so that each Application gets fresh handler objects.
    ``start_payloads`` maps a deep-link prefix to its handler: ``/start join_42`` calls
    ``start_payloads["join"](update, context, "42")`` after the user is marked reachable.
    """

    name: str
    handlers: Callable[[], Sequence[BaseHandler[Any, Any, Any]]]
    commands: Sequence[Command] = ()
    start_payloads: Mapping[str, PayloadHandler] = field(default_factory=dict)
    on_start: Hook | None = None
    on_stop: Hook | None = None
