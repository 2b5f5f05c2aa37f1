"""What the fake Bot API keeps and hands to tests: messages as users see them, presses, calls.

These are plain values; ``fake_telegram`` creates and changes them as the bot calls the API.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class ApiError(Exception):
    """An error answer, worded as Telegram words it."""

    def __init__(self, status: int, description: str, parameters: Mapping[str, Any] | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = dict(parameters or {})

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error_code": self.status, "description": self.description}
        if self.parameters:
            body["parameters"] = self.parameters
        return body


def bad_request(what: str) -> ApiError:
    return ApiError(400, f"Bad Request: {what}")


# --------------------------------------------------------------------------- value types


@dataclass(frozen=True)
class Button:
    """One inline keyboard button as the user sees it."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    web_app: str | None = None  # the Mini App's URL of a ``web_app`` button

    @classmethod
    def from_api(cls, raw: Mapping[str, Any]) -> Button:
        web_app = raw.get("web_app")
        return cls(raw.get("text", ""), raw.get("callback_data"), raw.get("url"),
                   web_app.get("url") if isinstance(web_app, dict) else None)


Keyboard = tuple[tuple[Button, ...], ...]


@dataclass(frozen=True)
class Version:
    """What a message showed at one moment (each send and each edit adds one)."""

    text: str | None
    caption: str | None
    photo_file_id: str | None
    keyboard: Keyboard


@dataclass
class ChatMessage:
    """A message in a chat, with edits applied; ``versions`` keeps everything it ever showed."""

    chat_id: int
    message_id: int
    sender_id: int
    from_bot: bool
    date: int
    text: str | None = None
    caption: str | None = None
    photo_file_id: str | None = None
    reply_markup: dict[str, Any] | None = None
    reply_to_message_id: int | None = None
    thread_id: int | None = None  # the forum topic it stands in; None: the main chat (General)
    deleted: bool = False
    edit_count: int = 0
    # The text or caption as sent, with its parse mode: an edit that only changes formatting
    # (bold, links) is a change for Telegram although the visible text stays the same.
    formatting: str | None = None
    versions: list[Version] = field(default_factory=list)
    _files: Mapping[str, bytes] = field(default_factory=dict, repr=False)

    @property
    def keyboard(self) -> Keyboard:
        rows = (self.reply_markup or {}).get("inline_keyboard", [])
        return tuple(tuple(Button.from_api(b) for b in row) for row in rows)

    @property
    def buttons(self) -> list[Button]:
        return [b for row in self.keyboard for b in row]

    @property
    def photo(self) -> bytes | None:
        """The bytes of the photo currently shown, if any."""
        return self._files.get(self.photo_file_id) if self.photo_file_id else None

    @property
    def shown_text(self) -> str:
        """Text or caption, whichever the message carries (empty if neither)."""
        return self.text if self.text is not None else (self.caption or "")

    def button(self, text: str | None = None, data: str | None = None) -> Button:
        """The button whose text contains ``text`` (or whose callback data equals ``data``)."""
        for b in self.buttons:
            if (data is not None and b.callback_data == data) or (
                text is not None and data is None and text in b.text
            ):
                return b
        shown = [b.text for b in self.buttons]
        raise AssertionError(f"no button text={text!r} data={data!r} on message {self.message_id}: {shown}")

    def snapshot(self) -> None:
        self.versions.append(Version(self.text, self.caption, self.photo_file_id, self.keyboard))


@dataclass
class CallbackPress:
    """A button press sent to the bot; ``answered`` is set once the bot answers the query."""

    query_id: str
    user_id: int
    message: ChatMessage
    data: str
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    answer_text: str | None = None
    show_alert: bool = False
    url: str | None = None

    async def answer(self, timeout: float = 5.0) -> str | None:
        """Wait for the bot's answer and return its text (None if answered silently)."""
        try:
            await asyncio.wait_for(self.answered.wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"callback query {self.data!r} was not answered in {timeout}s") from None
        return self.answer_text


@dataclass(frozen=True)
class ApiCall:
    """One request the bot made, with its decoded parameters and the status it got."""

    method: str
    params: Mapping[str, Any]
    at: float
    status: int

    @property
    def chat_id(self) -> int | None:
        value = self.params.get("chat_id")
        return value if isinstance(value, int) else None


@dataclass
class Fault:
    """An answer queued by ``FakeTelegram.fail_next``."""

    status: int
    description: str
    parameters: dict[str, Any]
