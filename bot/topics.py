"""Forum groups (topics on): a table, a scorekeeping session and the daily summary post in the
topic the group plays in.

In such a group a post without ``message_thread_id`` lands in the General topic, away from the
players who opened a table in their mahjong topic. A reply goes to its message's topic by itself
(python-telegram-bot's ``reply_text``); every other post names the topic it was opened in, which
storage keeps with the table and the session, so it holds across restarts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram import Message
from telegram.error import BadRequest

from storage import Storage
from storage.models import Chat

T = TypeVar("T")


def topic_of(message: object) -> int | None:
    """The forum topic a group message stands in, or None for the group's main chat.

    Outside forums a reply also carries a ``message_thread_id`` (its reply thread), which is not a
    topic: only ``is_topic_message`` says it is one.
    """
    if isinstance(message, Message) and message.is_topic_message:
        return message.message_thread_id
    return None


def topic_gone(error: BadRequest) -> bool:
    """Whether a post was refused because its topic was deleted or closed."""
    text = error.message.lower()
    return any(words in text for words in ("message thread not found", "topic_closed", "topic_deleted"))


async def in_topic(send: Callable[[int | None], Awaitable[T]], topic: int | None) -> T:
    """``send(topic)``, or ``send(None)`` (the main chat) where the topic was deleted or closed
    since: a session's panel or a summary must reach the group somewhere."""
    try:
        return await send(topic)
    except BadRequest as error:
        if topic is None or not topic_gone(error):
            raise
        return await send(None)


async def summary_follows_play(storage: Storage, chat: Chat, topic: int | None) -> None:
    """The daily summary is posted where the group last opened a table or a scorekeeping session
    (or set ``/summary``): a group that plays in its mahjong topic reads its tally there."""
    if chat.summary_topic_id != topic:
        await storage.update_chat(chat.id, summary_topic_id=topic)
