"""Retries made safe: a repeated edit, delete or answer counts as done; a repeated send's copy goes.

The rate limiter (bot/ratelimit.py) retries a request whose connection dropped or that got a 5xx
answer, and Telegram may have acted on the first attempt. Edits, deletions and callback answers
are idempotent there: a repeated edit is "not modified", a repeated delete "not found", a
repeated answer "too old", and after a retry ``already_done`` counts those as the success they
are. A send is not: Telegram has no idempotency key, so the retry posts the message a second
time. A duplicate DM photo keeps stale buttons under the live one.

Telegram numbers a chat's messages in order, so the lost copy has an id below the retry's and
above the newest id this process had got back in that chat before the first attempt. A bot
message in that range whose id the process never got back can only be a send whose answer was
lost. Each candidate is tested with an edit that repeats the retry's own text (or caption) and
buttons: a copy answers "message is not modified" and is deleted; a person's message "can't be
edited" and a missing one is "not found", and neither changes. Without a known id in the chat
(the first send there since the start) nothing is tried: nothing would bound the search.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from telegram.error import BadRequest, TelegramError

log = logging.getLogger(__name__)

# The send methods a retry could duplicate, and the edit that repeats their visible content.
_TEXT_SENDS = {"sendMessage": "text"}
_CAPTION_SENDS = {"sendPhoto", "sendDocument", "sendAnimation", "sendVideo", "sendAudio"}
SENDS = frozenset(_TEXT_SENDS) | _CAPTION_SENDS
PROBES = 4  # candidates tested below the retry's id: a lost answer is almost always the one before
_REMEMBERED = 32  # recent ids kept per chat (other tasks' sends never count as a lost copy)

Call = Callable[..., Coroutine[Any, Any, Any]]

# What Telegram answers when a retried call finds its change already made: the lost first attempt
# did it. Only after a retry do these mean success (a first attempt's "not found" is a real one).
_ALREADY_DONE = {
    "editMessageText": "message is not modified",
    "editMessageCaption": "message is not modified",
    "editMessageMedia": "message is not modified",
    "editMessageReplyMarkup": "message is not modified",
    "deleteMessage": "message to delete not found",
    "answerCallbackQuery": "query is too old",
}


def already_done(endpoint: str, error: BadRequest) -> bool:
    """True when a retried ``endpoint`` was refused only because its first attempt had acted."""
    expected = _ALREADY_DONE.get(endpoint)
    return expected is not None and expected in error.message.lower()


class KnownIds:
    """The message ids this process got back from Telegram, newest few per chat."""

    def __init__(self, chats: int = 4096) -> None:
        self._ids: dict[Any, deque[int]] = {}
        self._chats = chats

    def newest(self, chat: Any) -> int | None:
        ids = self._ids.get(chat)
        return max(ids) if ids else None

    def note(self, chat: Any, result: Any) -> None:
        """Remember the id of a message Telegram returned (sends and edits return one)."""
        if chat is None or not isinstance(result, dict) or not isinstance(result.get("message_id"), int):
            return
        ids = self._ids.get(chat)
        if ids is None:
            if len(self._ids) >= self._chats:  # forget the chat heard from longest ago
                self._ids.pop(next(iter(self._ids)))
            ids = self._ids[chat] = deque(maxlen=_REMEMBERED)
        ids.append(result["message_id"])

    def known(self, chat: Any, message_id: int) -> bool:
        return message_id in self._ids.get(chat, ())


def _probe(endpoint: str, data: dict[str, Any], message_id: int) -> tuple[str, dict[str, Any]]:
    """The edit that leaves message ``message_id`` as it is exactly when it is a copy of this send."""
    probe: dict[str, Any] = {"chat_id": data["chat_id"], "message_id": message_id}
    if endpoint in _TEXT_SENDS:
        method, content = "editMessageText", ("text", "parse_mode", "entities", "link_preview_options")
    else:
        method, content = "editMessageCaption", ("caption", "parse_mode", "caption_entities")
    for key in (*content, "reply_markup"):
        if data.get(key) is not None:
            probe[key] = data[key]
    return method, probe


async def delete_copies(call: Call, kwargs: dict[str, Any], endpoint: str, data: dict[str, Any],
                        result: Any, known: KnownIds, key: Any, floor: int | None) -> list[int]:
    """After a retried send answered ``result``: delete earlier copies of it; their ids.

    ``call(endpoint, data, **kwargs)`` makes one API request; ``floor`` is the newest id known in
    the chat before the first attempt (None: nothing known, nothing tried); ``key`` is the chat's
    key in ``known``.
    """
    if endpoint not in SENDS or floor is None or not isinstance(result, dict) or "chat_id" not in data:
        return []
    sent = result.get("message_id")
    if not isinstance(sent, int):
        return []
    chat, deleted = data["chat_id"], []
    lowest = max(sent - PROBES, floor + 1)
    for candidate in range(sent - 1, lowest - 1, -1):
        if known.known(key, candidate):
            continue
        method, probe = _probe(endpoint, data, candidate)
        try:
            await call(method, probe, **kwargs)
        except BadRequest as error:
            if "not modified" not in error.message.lower():
                continue  # a person's message, a deleted one, or another of ours: left alone
        except TelegramError as error:
            log.info("%s: could not look for a duplicate of message %s: %s", endpoint, sent, error)
            return deleted
        # Not modified, or changed: either way a lost send of ours that now repeats the kept one.
        try:
            await call("deleteMessage", {"chat_id": chat, "message_id": candidate}, **kwargs)
        except TelegramError as error:
            log.warning("%s: could not delete duplicate message %s: %s", endpoint, candidate, error)
            continue
        log.info("%s: deleted message %s, a copy left by a retried send (kept %s)", endpoint, candidate, sent)
        deleted.append(candidate)
    return deleted
