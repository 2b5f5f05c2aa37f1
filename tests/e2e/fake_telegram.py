"""A fake Telegram Bot API server on loopback for end-to-end tests of the real bot.

The real ``telegram.ext.Application`` talks to it through ``base_url`` exactly as it talks to
Telegram: long polling, form and multipart requests, Telegram's JSON answers and its error
wording (429 with ``retry_after``, 403 for users who never started the bot, "message is not
modified", oversized text, caption and callback data). Tests drive it from the other side: they
act as users (send text and commands, press buttons, send photos), read each chat as a person
would see it (edits applied, every earlier version kept for privacy checks), wait for
conditions, inject faults, and count how many messages a chat received per minute.

Usage (see ``conftest.py`` for the fixtures)::

    async with FakeTelegram() as tg:
        alice = tg.user("Alice")
        group = tg.group("Friends", members=[alice], admins=[alice])
        ... build the Application with base_url=tg.base_url ...
        await alice.send(group, "/help")
        reply = await tg.wait_for_bot_message(group)
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qs, urlparse

import aiohttp
from aiohttp import web
from fake_markup import (
    CALLBACK_DATA_LIMIT,
    CAPTION_LIMIT,
    TEXT_LIMIT,
    EntityError,
    utf16_length,
    visible_text,
)
from fake_messages import (
    ApiCall,
    ApiError,
    Button,
    CallbackPress,
    ChatMessage,
    Fault,
    Version,
    bad_request,
)
from PIL import Image, UnidentifiedImageError

__all__ = [
    "DEFAULT_TOKEN",
    "SEND_METHODS",
    "ApiCall",
    "Button",
    "CallbackPress",
    "ChatMessage",
    "FakeChat",
    "FakeTelegram",
    "FakeUser",
    "Version",
]

DEFAULT_TOKEN = "1234567890:AAHfakefakefakefakefakefakefakefake0"

# Parameters PTB sends as raw strings; every other form field is JSON encoded.
_STRING_FIELDS = frozenset(
    {"text", "caption", "parse_mode", "callback_query_id", "url", "language_code", "action", "description",
     "short_description",
     "inline_message_id", "business_connection_id", "message_effect_id", "secret_token", "name"}
)
# Methods that put a new message into a chat (what the ~20/minute group limit counts).
SEND_METHODS = frozenset({"sendMessage", "sendPhoto", "sendDocument", "sendMediaGroup", "copyMessage"})


# --------------------------------------------------------------------------- users and chats


# Who Telegram says sent a message an anonymous admin posted as the group.
ANONYMOUS_ADMIN = {"id": 1087968824, "is_bot": True, "first_name": "Group", "username": "GroupAnonymousBot"}

class FakeChat:
    """A group chat; ``id`` is negative like Telegram's group ids. A forum (topics on) has topics,
    each named by the id of the service message that created it, as Telegram does."""

    def __init__(self, server: FakeTelegram, chat_id: int, title: str, kind: str, forum: bool = False) -> None:
        self.server = server
        self.id = chat_id
        self.title = title
        self.kind = kind
        self.forum = forum
        self.topics: dict[int, str] = {}
        # False: the group's members may not send photos, and the bot, not an admin, is a member.
        self.photos_allowed = True
        self.statuses: dict[int, str] = {}

    def to_api(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"id": self.id, "type": self.kind, "title": self.title}
        if self.forum:
            raw["is_forum"] = True
        return raw

    def new_topic(self, name: str, by: FakeUser) -> int:
        """A topic ``by`` created; its thread id (the id of its creation message)."""
        if not self.forum:
            raise AssertionError("only a forum supergroup has topics")
        thread = self.server.topic_created(self, by)
        self.topics[thread] = name
        return thread

    @property
    def messages(self) -> list[ChatMessage]:
        return self.server.messages(self)

    @property
    def bot_messages(self) -> list[ChatMessage]:
        return self.server.bot_messages(self)


class FakeUser:
    """A Telegram user the test acts as. Their DM with the bot has ``id == user.id``."""

    def __init__(self, server: FakeTelegram, user_id: int, first_name: str, username: str | None,
                 language_code: str | None) -> None:
        self.server = server
        self.id = user_id
        self.first_name = first_name
        self.username = username
        self.language_code = language_code
        self.started = False
        self.blocked = False

    def to_api(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.username:
            raw["username"] = self.username
        if self.language_code:
            raw["language_code"] = self.language_code
        return raw

    def private_chat(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"id": self.id, "type": "private", "first_name": self.first_name}
        if self.username:
            raw["username"] = self.username
        return raw

    @property
    def dm(self) -> int:
        return self.id

    @property
    def dm_messages(self) -> list[ChatMessage]:
        return self.server.messages(self.id)

    async def send(self, chat: FakeChat | FakeUser | int, text: str,
                   reply_to: ChatMessage | None = None, topic: int | None = None) -> ChatMessage:
        """Type ``text`` into ``chat`` (a group, or this user / ``user.dm`` for the DM); in a forum,
        into ``topic`` (None: General; a reply stands in its message's topic)."""
        return self.server.user_message(self, chat, text=text, reply_to=reply_to, topic=topic)

    async def send_anonymously(self, group: FakeChat, text: str) -> ChatMessage:
        """An admin with "Remain anonymous" on types in ``group``: Telegram shows the message as the
        group's own, from @GroupAnonymousBot with the group as ``sender_chat``."""
        return self.server.user_message(self, group, text=text, anonymous=True)

    async def edit(self, message: ChatMessage, text: str) -> ChatMessage:
        """Edit a message this user sent (a typo fixed): Telegram sends the bot an ``edited_message``."""
        return self.server.user_edit(self, message, text)

    async def send_photo(self, chat: FakeChat | FakeUser | int, data: bytes,
                         caption: str | None = None, reply_to: ChatMessage | None = None,
                         topic: int | None = None) -> ChatMessage:
        return self.server.user_message(self, chat, photo=data, caption=caption, reply_to=reply_to, topic=topic)

    async def send_document(self, chat: FakeChat | FakeUser | int, data: bytes, file_name: str,
                            mime_type: str, caption: str | None = None,
                            reply_to: ChatMessage | None = None) -> ChatMessage:
        """Send a file (an image sent "as a file" is a document, not a photo)."""
        return self.server.user_message(self, chat, document=(data, file_name, mime_type), caption=caption,
                                        reply_to=reply_to)

    async def start(self, payload: str | None = None) -> ChatMessage:
        """Press Start in the DM (optionally through a ``t.me/<bot>?start=<payload>`` link)."""
        return await self.send(self.id, "/start" if payload is None else f"/start {payload}")

    async def open_link(self, url: str) -> ChatMessage:
        """Follow a deep link to the bot, as tapping it in a client does."""
        parsed = urlparse(url)
        name = parsed.path.strip("/")
        if parsed.netloc not in {"t.me", "telegram.me"} or name != self.server.bot_username:
            raise AssertionError(f"{url!r} is not a link to @{self.server.bot_username}")
        payload = parse_qs(parsed.query).get("start", [None])[0]
        return await self.start(payload)

    async def press(self, message: ChatMessage, text: str | None = None, data: str | None = None,
                    *, check: bool = True) -> CallbackPress:
        """Press a button of ``message`` by (part of) its text or by its callback data.

        With ``check=False`` any ``data`` is sent even if the message no longer shows such a
        button, as an outdated client (or a forged request) would.
        """
        return self.server.press(self, message, text=text, data=data, check=check)

    def block(self) -> None:
        """The user blocks the bot: from now on sends to their DM answer 403."""
        self.blocked = True

    def __repr__(self) -> str:
        return f"FakeUser({self.first_name!r}, id={self.id})"


# --------------------------------------------------------------------------- the server


class FakeTelegram:
    """The fake Bot API server and the test-side view of every chat.

    ``privacy_mode`` mirrors BotFather's group privacy (on by default): in groups the bot only
    receives commands, replies to its own messages and mentions of it.
    ``group_limit_per_minute`` makes the server answer 429 like Telegram's flood control when a
    group receives more new messages than that within 60 seconds (off by default).
    """

    def __init__(self, *, token: str = DEFAULT_TOKEN, bot_username: str = "xuezhan_test_bot",
                 bot_name: str = "Xuezhan", privacy_mode: bool = True,
                 group_limit_per_minute: int | None = None) -> None:
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.bot_username = bot_username
        self.bot_name = bot_name
        self.privacy_mode = privacy_mode
        self.group_limit_per_minute = group_limit_per_minute
        self.port: int | None = None
        self.users: dict[int, FakeUser] = {}
        self.groups: dict[int, FakeChat] = {}
        self.calls: list[ApiCall] = []
        self.presses: dict[str, CallbackPress] = {}
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}
        self.descriptions: dict[tuple[str, str], str] = {}  # (description | short_description, language)
        self.files: dict[str, bytes] = {}
        self.webhook_url = ""
        self.webhook_secret: str | None = None
        self._webhook_task: asyncio.Task[None] | None = None
        self._file_paths: dict[str, str] = {}
        self._chat_messages: dict[int, list[ChatMessage]] = {}
        self._next_message_id: dict[int, int] = {}
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._user_ids = itertools.count(10_001)
        self._group_ids = itertools.count(1)
        self._file_ids = itertools.count(1)
        self._faults: dict[str, deque[Fault]] = {}
        self._lost_responses: list[tuple[str, int | None]] = []  # (method, chat id or any)
        self.migrated: dict[int, int] = {}  # old group id -> its supergroup's id
        self.removed: set[int] = set()  # groups the bot was removed from
        self._sends: dict[int, deque[float]] = {}
        self._changed = asyncio.Event()
        self._delivered_up_to = 0
        self._last_activity = time.monotonic()
        self._closing = False
        self._runner: web.AppRunner | None = None

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> FakeTelegram:
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        self._closing = True
        self._notify()
        if self._webhook_task is not None:
            self._webhook_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._webhook_task
            self._webhook_task = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` (and XUEZHAN_API_URL): the token is appended by PTB."""
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    # ----------------------------------------------------------------- test side: the world

    def user(self, first_name: str, *, username: str | None = None, language_code: str | None = None,
             started: bool = False) -> FakeUser:
        """A new user; ``started=True`` if they already pressed Start in the bot's DM."""
        user = FakeUser(self, next(self._user_ids), first_name, username, language_code)
        user.started = started
        self.users[user.id] = user
        return user

    def group(self, title: str, members: Iterable[FakeUser] = (), admins: Iterable[FakeUser] = (),
              *, creator: FakeUser | None = None, kind: str = "group", forum: bool = False) -> FakeChat:
        """A group the bot is a member of (``kind`` "group" or "supergroup"; ``forum``: a supergroup
        with topics on)."""
        number = next(self._group_ids)
        if forum:
            kind = "supergroup"
        chat_id = -(1_000_000_000_000 + number) if kind == "supergroup" else -(100_000 + number)
        chat = FakeChat(self, chat_id, title, kind, forum)
        for member in members:
            chat.statuses[member.id] = "member"
        for admin in admins:
            chat.statuses[admin.id] = "administrator"
        if creator is not None:
            chat.statuses[creator.id] = "creator"
        self.groups[chat_id] = chat
        return chat

    def migrate(self, group: FakeChat) -> FakeChat:
        """The group becomes a supergroup with a new id, as Telegram does it.

        The bot gets a service message in each chat (``migrate_to_chat_id`` in the old one,
        ``migrate_from_chat_id`` in the new one), and sends to the old id answer 400 with
        ``migrate_to_chat_id`` from now on.
        """
        new = self.group(group.title, kind="supergroup")
        new.statuses = dict(group.statuses)
        self.migrated[group.id] = new.id
        for chat, field, other in ((group, "migrate_to_chat_id", new.id), (new, "migrate_from_chat_id", group.id)):
            creator = next(iter(group.statuses), self.bot_id)
            message = self._new_message(chat.id, creator, from_bot=False)
            message.snapshot()
            self._push_update({"message": {**self._message_api(message), field: other}})
        return new

    def fail_next(self, method: str, times: int = 1, *, status: int = 429, retry_after: int = 1,
                  description: str | None = None) -> None:
        """The next ``times`` calls of ``method`` fail with ``status`` (429, 500, 502, ...)."""
        parameters: dict[str, Any] = {}
        if status == 429:
            parameters = {"retry_after": retry_after}
            description = description or f"Too Many Requests: retry after {retry_after}"
        elif description is None:
            description = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
                           504: "Gateway Timeout"}.get(status, f"Error {status}")
        queue = self._faults.setdefault(method, deque())
        queue.extend(Fault(status, description, parameters) for _ in range(times))

    def lose_next_response(self, method: str, times: int = 1, *, chat: FakeChat | FakeUser | None = None) -> None:
        """The next ``times`` calls of ``method`` (to ``chat``, if given) are applied, then the
        connection drops unanswered: the bot cannot tell whether Telegram acted."""
        self._lost_responses += [(method, None if chat is None else chat.id)] * times

    def remove_bot(self, group: FakeChat, by: FakeUser) -> None:
        """``by`` removes the bot from the group: a ``my_chat_member`` update, and sends there answer 403."""
        self.removed.add(group.id)
        self._member_update(group, by, "member", "kicked")

    def add_bot(self, group: FakeChat, by: FakeUser) -> None:
        """``by`` adds the bot back to the group."""
        self.removed.discard(group.id)
        self._member_update(group, by, "left", "member")

    def promote_bot(self, group: FakeChat, by: FakeUser) -> None:
        """``by`` makes the bot an admin of the group (it was a member)."""
        self._member_update(group, by, "member", "administrator")

    def _member_update(self, group: FakeChat, by: FakeUser, old: str, new: str) -> None:
        def member(status: str) -> dict[str, Any]:
            raw: dict[str, Any] = {"status": status, "user": self._bot_api()}
            if status == "kicked":
                raw["until_date"] = 0
            if status == "administrator":  # the rights an admin bot is given by default
                raw |= {"can_be_edited": False, "is_anonymous": False, "can_manage_chat": True,
                        "can_delete_messages": True, "can_manage_video_chats": False, "can_restrict_members": False,
                        "can_promote_members": False, "can_change_info": False, "can_invite_users": True,
                        "can_post_stories": False, "can_edit_stories": False, "can_delete_stories": False}
            return raw

        self._push_update({"my_chat_member": {
            "chat": group.to_api(), "from": by.to_api(), "date": int(time.time()),
            "old_chat_member": member(old), "new_chat_member": member(new),
        }})

    def clear_faults(self) -> None:
        """Drop every fault still queued by ``fail_next``: normal service from now on."""
        self._faults.clear()
        self._lost_responses.clear()

    # ----------------------------------------------------------------- test side: reading

    def messages(self, chat: FakeChat | FakeUser | int) -> list[ChatMessage]:
        """Every message still in the chat (users' and bot's), oldest first."""
        return [m for m in self._chat_messages.get(_chat_id(chat), []) if not m.deleted]

    def bot_messages(self, chat: FakeChat | FakeUser | int) -> list[ChatMessage]:
        return [m for m in self.messages(chat) if m.from_bot]

    def all_bot_messages(self, chat: FakeChat | FakeUser | int) -> list[ChatMessage]:
        """Bot messages including deleted ones (each with every version it showed)."""
        return [m for m in self._chat_messages.get(_chat_id(chat), []) if m.from_bot]

    def last_bot_message(self, chat: FakeChat | FakeUser | int) -> ChatMessage:
        found = self.bot_messages(chat)
        if not found:
            raise AssertionError(f"the bot has sent nothing to chat {_chat_id(chat)}")
        return found[-1]

    def calls_of(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    def unanswered_presses(self) -> list[CallbackPress]:
        return [p for p in self.presses.values() if not p.answered.is_set()]

    def max_sends_per_minute(self, chat: FakeChat | FakeUser | int,
                             methods: Iterable[str] = SEND_METHODS) -> int:
        """The most new messages (or successful calls of ``methods``) the chat got in any 60 s."""
        wanted = frozenset(methods)
        times = sorted(c.at for c in self.calls
                       if c.method in wanted and c.status == 200 and c.chat_id == _chat_id(chat))
        best, left = 0, 0
        for right, t in enumerate(times):
            while t - times[left] >= 60:
                left += 1
            best = max(best, right - left + 1)
        return best

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 15.0, what: str = "") -> Any:
        """Wait until ``predicate()`` is truthy (re-checked on every API call) and return it.

        The 15 s default is for a loaded 2-core CI machine: a wait that succeeds returns at once.
        """
        deadline = time.monotonic() + timeout
        while True:
            changed = self._changed
            result = predicate()
            if result:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
            # Re-check at least every 0.1 s: the bot may change state without an API call.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(remaining, 0.1))

    async def wait_for_bot_message(self, chat: FakeChat | FakeUser | int,
                                   predicate: Callable[[ChatMessage], bool] | None = None,
                                   *, after: int = 0, timeout: float = 15.0) -> ChatMessage:
        """The first bot message in ``chat`` with id > ``after`` that satisfies ``predicate``."""

        def find() -> ChatMessage | None:
            for m in self.bot_messages(chat):
                if m.message_id > after and (predicate is None or predicate(m)):
                    return m
            return None

        return await self.wait_for(find, timeout, f"a bot message in chat {_chat_id(chat)}")

    async def settle(self, quiet: float = 0.3, timeout: float = 10.0) -> None:
        """Wait until the bot fetched every update and made no call for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            idle = time.monotonic() - self._last_activity
            undelivered = any(u["update_id"] > self._delivered_up_to for u in self._updates)
            if not undelivered and idle >= quiet:
                return
            await asyncio.sleep(max(0.02, quiet - idle))
        raise AssertionError(f"the bot did not settle within {timeout}s")

    # ----------------------------------------------------------------- test side: acting

    def topic_created(self, group: FakeChat, by: FakeUser) -> int:
        """The service message that opens a forum topic (the bot gets no update for it)."""
        message = self._new_message(group.id, by.id, from_bot=False)
        message.thread_id = message.message_id
        return message.message_id

    def user_message(self, user: FakeUser, chat: FakeChat | FakeUser | int, *, text: str | None = None,
                     photo: bytes | None = None, caption: str | None = None,
                     reply_to: ChatMessage | None = None, topic: int | None = None,
                     document: tuple[bytes, str, str] | None = None, anonymous: bool = False) -> ChatMessage:
        chat_id = _chat_id(chat)
        if reply_to is not None and topic is None:
            topic = reply_to.thread_id
        if topic is not None:
            self._check_thread(chat_id, topic)
        if anonymous and self.groups[chat_id].statuses.get(user.id) not in {"administrator", "creator"}:
            raise AssertionError("only a group's admins can post as the group")
        if chat_id > 0:
            if chat_id != user.id:
                raise AssertionError("a user can only write to their own DM with the bot")
            user.started = True
            user.blocked = False
        elif self.groups[chat_id].statuses.get(user.id, "left") in {"left", "kicked"}:
            raise AssertionError(f"{user!r} is not a member of chat {chat_id}")
        message = self._new_message(chat_id, user.id, from_bot=False, text=text, caption=caption)
        message.thread_id = topic
        raw = self._message_api(message)
        if photo is not None:
            file_id = self._store_file(photo)
            message.photo_file_id = file_id
            raw["photo"] = self._photo_sizes(file_id)
        if document is not None:
            data, file_name, mime_type = document
            file_id = self._store_file(data)
            raw["document"] = {"file_id": file_id, "file_unique_id": file_id[-12:], "file_name": file_name,
                               "mime_type": mime_type, "file_size": len(data)}
        if reply_to is not None:
            message.reply_to_message_id = reply_to.message_id
            raw["reply_to_message"] = self._message_api(reply_to)
        entities = _command_entities(text or "")
        if entities:
            raw["entities"] = entities
        if anonymous:
            raw["from"] = dict(ANONYMOUS_ADMIN)
            raw["sender_chat"] = self.groups[chat_id].to_api()
        message.snapshot()
        if self._bot_receives(chat_id, text or caption or "", reply_to):
            self._push_update({"message": raw})
        return message

    def user_edit(self, user: FakeUser, message: ChatMessage, text: str) -> ChatMessage:
        if message.from_bot or message.sender_id != user.id:
            raise AssertionError("a user can only edit their own messages")
        message.text = text
        message.edit_count += 1
        raw = self._message_api(message)
        entities = _command_entities(text)
        if entities:
            raw["entities"] = entities
        replied = next((m for m in self._chat_messages.get(message.chat_id, [])
                        if m.message_id == message.reply_to_message_id), None)
        if replied is not None:  # a reply stays one, showing the replied message as it is now
            raw["reply_to_message"] = self._message_api(replied)
        message.snapshot()
        if self._bot_receives(message.chat_id, text, replied):
            self._push_update({"edited_message": raw})
        return message

    def press(self, user: FakeUser, message: ChatMessage, *, text: str | None, data: str | None,
              check: bool) -> CallbackPress:
        if check or data is None:
            button = message.button(text, data)
            if button.callback_data is None:
                if button.url is None:
                    raise AssertionError(f"button {button.text!r} has neither callback data nor url")
                press = CallbackPress("", user.id, message, "", url=button.url)
                press.answered.set()
                return press
            data = button.callback_data
        query_id = str(secrets.randbits(63))
        press = CallbackPress(query_id, user.id, message, data)
        self.presses[query_id] = press
        self._push_update({"callback_query": {
            "id": query_id, "from": user.to_api(), "message": self._message_api(message),
            "chat_instance": str(message.chat_id), "data": data,
        }})
        return press

    # ----------------------------------------------------------------- HTTP plumbing

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"},
                                     status=401)
        params, uploads = await _read_params(request)
        try:
            fault = self._take_fault(method)
            if fault is not None:
                raise ApiError(fault.status, fault.description, fault.parameters)
            handler = getattr(self, f"_api_{method}", None)
            if handler is None:
                raise ApiError(404, "Not Found: method not found")
            result = await handler(params, uploads)
        except ApiError as error:
            self._record(method, params, error.status)
            return web.json_response(error.body(), status=error.status)
        lost = next((entry for entry in self._lost_responses
                     if entry[0] == method and entry[1] in (None, params.get("chat_id"))), None)
        if lost is not None:  # applied, but the answer never reaches the bot
            self._lost_responses.remove(lost)
            self._record(method, params, 0)
            if request.transport is not None:
                request.transport.close()  # the answer below is never delivered
            return web.Response(status=502)
        self._record(method, params, 200)
        return web.json_response({"ok": True, "result": result})

    async def _download(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        for file_id, file_path in self._file_paths.items():
            if file_path == path and request.match_info["token"] == self.token:
                return web.Response(body=self.files[file_id])
        return web.Response(status=404, text="Not Found")

    def _take_fault(self, method: str) -> Fault | None:
        queue = self._faults.get(method)
        return queue.popleft() if queue else None

    def _record(self, method: str, params: Mapping[str, Any], status: int) -> None:
        self.calls.append(ApiCall(method, dict(params), time.monotonic(), status))
        if method != "getUpdates":
            self._last_activity = time.monotonic()
        self._notify()

    def _notify(self) -> None:
        """Wake everyone waiting for a change (long polls, ``wait_for``)."""
        self._changed.set()
        self._changed = asyncio.Event()

    # ----------------------------------------------------------------- state helpers

    def _push_update(self, payload: dict[str, Any]) -> None:
        self._updates.append({"update_id": next(self._update_ids), **payload})
        self._last_activity = time.monotonic()
        self._notify()

    def _new_message(self, chat_id: int, sender_id: int, *, from_bot: bool, text: str | None = None,
                     caption: str | None = None) -> ChatMessage:
        number = self._next_message_id.get(chat_id, 1)
        self._next_message_id[chat_id] = number + 1
        message = ChatMessage(chat_id, number, sender_id, from_bot, int(time.time()), text=text,
                              caption=caption, _files=self.files)
        self._chat_messages.setdefault(chat_id, []).append(message)
        return message

    def _chat_api(self, chat_id: int) -> dict[str, Any]:
        if chat_id > 0:
            return self.users[chat_id].private_chat()
        return self.groups[chat_id].to_api()

    def _bot_api(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": self.bot_name, "username": self.bot_username}

    def _message_api(self, message: ChatMessage) -> dict[str, Any]:
        sender = self._bot_api() if message.from_bot else self.users[message.sender_id].to_api()
        raw: dict[str, Any] = {"message_id": message.message_id, "date": message.date,
                               "chat": self._chat_api(message.chat_id), "from": sender}
        if message.text is not None:
            raw["text"] = message.text
        if message.caption is not None:
            raw["caption"] = message.caption
        if message.photo_file_id is not None:
            raw["photo"] = self._photo_sizes(message.photo_file_id)
        if message.reply_markup and message.reply_markup.get("inline_keyboard"):
            raw["reply_markup"] = message.reply_markup
        if message.edit_count:
            raw["edit_date"] = int(time.time())
        if message.thread_id is not None:
            raw["message_thread_id"] = message.thread_id
            raw["is_topic_message"] = True
        return raw

    def _store_file(self, data: bytes) -> str:
        number = next(self._file_ids)
        file_id = f"AgACAgFake{number:06d}{secrets.token_hex(6)}"
        self.files[file_id] = data
        self._file_paths[file_id] = f"photos/file_{number}.jpg"
        return file_id

    def _photo_sizes(self, file_id: str) -> list[dict[str, Any]]:
        width, height = _image_size(self.files[file_id])
        return [{"file_id": file_id, "file_unique_id": file_id[-12:], "width": width, "height": height,
                 "file_size": len(self.files[file_id])}]

    def _bot_receives(self, chat_id: int, text: str, reply_to: ChatMessage | None) -> bool:
        if chat_id in self.removed:  # a bot that is not a member hears nothing there
            return False
        if chat_id > 0 or not self.privacy_mode:
            return True
        if reply_to is not None and reply_to.from_bot:
            return True
        if f"@{self.bot_username}" in text:
            return True
        if text.startswith("/"):
            command = text.split()[0]
            return "@" not in command or command.endswith(f"@{self.bot_username}")
        return False

    def _target(self, params: Mapping[str, Any]) -> int:
        """The chat a send goes to, after Telegram's reachability checks."""
        chat_id = params.get("chat_id")
        if not isinstance(chat_id, int):
            raise bad_request("chat not found")
        if chat_id > 0:
            user = self.users.get(chat_id)
            if user is None:
                raise bad_request("chat not found")
            if user.blocked:
                raise ApiError(403, "Forbidden: bot was blocked by the user")
            if not user.started:
                raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        elif chat_id in self.removed:
            raise ApiError(403, "Forbidden: bot was kicked from the group chat")
        elif chat_id in self.migrated:
            raise ApiError(400, "Bad Request: group chat was upgraded to a supergroup chat",
                           {"migrate_to_chat_id": self.migrated[chat_id]})
        elif chat_id not in self.groups:
            raise bad_request("chat not found")
        return chat_id

    def _check_thread(self, chat_id: int, thread: Any) -> None:
        """Telegram's answer to a ``message_thread_id`` that names no topic of the chat."""
        chat = self.groups.get(chat_id)
        if chat is None or not chat.forum or thread not in chat.topics:
            raise bad_request("message thread not found")

    def _thread(self, chat_id: int, params: Mapping[str, Any]) -> int | None:
        """The topic a send goes to: its ``message_thread_id``, checked; None for the main chat."""
        thread = params.get("message_thread_id")
        if thread is not None:
            self._check_thread(chat_id, thread)
        return thread

    def _flood_check(self, chat_id: int) -> None:
        if self.group_limit_per_minute is None or chat_id > 0:
            return
        now = time.monotonic()
        sends = self._sends.setdefault(chat_id, deque())
        while sends and now - sends[0] >= 60:
            sends.popleft()
        if len(sends) >= self.group_limit_per_minute:
            wait = max(1, int(60 - (now - sends[0])) + 1)
            raise ApiError(429, f"Too Many Requests: retry after {wait}", {"retry_after": wait})
        sends.append(now)

    def _find_message(self, params: Mapping[str, Any], missing: str) -> ChatMessage:
        chat_id, message_id = params.get("chat_id"), params.get("message_id")
        if chat_id in self.removed:
            raise ApiError(403, "Forbidden: bot was kicked from the group chat")
        for message in self._chat_messages.get(chat_id, []) if isinstance(chat_id, int) else []:
            if message.message_id == message_id and not message.deleted:
                return message
        raise bad_request(missing)

    # ----------------------------------------------------------------- Bot API methods

    async def _api_getMe(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        return {**self._bot_api(), "can_join_groups": True,
                "can_read_all_group_messages": not self.privacy_mode, "supports_inline_queries": False}

    async def _api_getUpdates(self, params: dict[str, Any], uploads: dict[str, bytes]) -> list[Any]:
        if self.webhook_url:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is active; use "
                                "deleteWebhook to delete the webhook first")
        offset = params.get("offset") or 0
        limit = params.get("limit") or 100
        timeout = float(params.get("timeout") or 0)
        if offset:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        deadline = time.monotonic() + timeout
        while not self._updates and not self._closing and time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), deadline - time.monotonic())
        batch = self._updates[:limit]
        if batch:
            self._delivered_up_to = max(self._delivered_up_to, batch[-1]["update_id"])
        return batch

    async def _api_deleteWebhook(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        self.webhook_url = ""
        if params.get("drop_pending_updates"):
            self._updates.clear()
        return True

    async def _api_setWebhook(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        url = params.get("url", "")
        if url and urlparse(url).scheme not in {"http", "https"}:
            raise bad_request("bad webhook: invalid webhook URL specified")
        self.webhook_url = url
        self.webhook_secret = params.get("secret_token")
        if params.get("drop_pending_updates"):
            self._updates.clear()
        if url and self._webhook_task is None:
            self._webhook_task = asyncio.get_running_loop().create_task(self._deliver_by_webhook())
        return True

    async def _deliver_by_webhook(self) -> None:
        """POST each update, in order, to the webhook until it answers 2xx (as Telegram retries)."""
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            while self.webhook_url and not self._closing:
                if not self._updates:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), 0.5)
                    continue
                if not await self._post_update(session, self._updates[0]):
                    await asyncio.sleep(0.1)
        self._webhook_task = None

    async def _post_update(self, session: aiohttp.ClientSession, update: dict[str, Any]) -> bool:
        """POST one update to the webhook; only a 2xx answer takes it off the queue (Telegram's rule)."""
        secret = self.webhook_secret
        headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret else {}
        try:
            async with session.post(self.webhook_url, json=update, headers=headers) as answer:
                delivered = 200 <= answer.status < 300
        except (aiohttp.ClientError, TimeoutError):
            return False
        if delivered:
            self._updates.remove(update)
            self._delivered_up_to = max(self._delivered_up_to, update["update_id"])
            self._notify()
        return delivered

    async def _api_getWebhookInfo(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        return {"url": self.webhook_url, "has_custom_certificate": False,
                "pending_update_count": len(self._updates)}

    async def _api_setMyCommands(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        commands = params.get("commands") or []
        for command in commands:
            name = command.get("command", "")
            if not (1 <= len(name) <= 32 and name.islower() and name.replace("_", "").isalnum()):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands[(_scope_key(params), params.get("language_code", ""))] = commands
        return True

    async def _api_setMyDescription(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        text = params.get("description") or ""
        if len(text) > 512:
            raise bad_request("BOT_DESCRIPTION_INVALID")
        self.descriptions[("description", params.get("language_code", ""))] = text
        return True

    async def _api_setMyShortDescription(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        text = params.get("short_description") or ""
        if len(text) > 120:
            raise bad_request("BOT_SHORT_DESCRIPTION_INVALID")
        self.descriptions[("short_description", params.get("language_code", ""))] = text
        return True

    async def _api_getMyCommands(self, params: dict[str, Any], uploads: dict[str, bytes]) -> list[Any]:
        return self.commands.get((_scope_key(params), params.get("language_code", "")), [])

    async def _api_deleteMyCommands(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        self.commands.pop((_scope_key(params), params.get("language_code", "")), None)
        return True

    async def _api_sendChatAction(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        self._target(params)
        return True

    async def _api_getChat(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        if not isinstance(chat_id, int) or (chat_id not in self.users and chat_id not in self.groups):
            raise bad_request("chat not found")
        return {**self._chat_api(chat_id), "accent_color_id": 0, "max_reaction_count": 11}

    async def _api_getChatMember(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        chat_id, user_id = params.get("chat_id"), params.get("user_id")
        if user_id not in self.users:
            raise bad_request("user not found")
        if isinstance(chat_id, int) and chat_id > 0:
            status = "member" if chat_id == user_id else "left"
        elif chat_id in self.groups:
            status = self.groups[chat_id].statuses.get(user_id, "left")
        else:
            raise bad_request("chat not found")
        return _member_api(self.users[user_id], status)

    async def _api_getChatAdministrators(self, params: dict[str, Any],
                                         uploads: dict[str, bytes]) -> list[dict[str, Any]]:
        chat = self.groups.get(params.get("chat_id"))  # type: ignore[arg-type]
        if chat is None:
            raise bad_request("chat not found")
        return [_member_api(self.users[uid], status) for uid, status in chat.statuses.items()
                if status in {"creator", "administrator"}]

    async def _api_sendMessage(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        chat_id = self._target(params)
        text = _checked_text(params.get("text"), params.get("parse_mode"))
        markup = _checked_markup(params.get("reply_markup"))
        thread = self._thread(chat_id, params)
        self._flood_check(chat_id)
        message = self._new_message(chat_id, self.bot_id, from_bot=True, text=text)
        message.thread_id = thread
        message.reply_markup = markup
        message.formatting = _formatting(params.get("text"), params.get("parse_mode"))
        message.snapshot()
        return self._message_api(message)

    async def _api_sendPhoto(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        chat_id = self._target(params)
        caption = _checked_caption(params.get("caption"), params.get("parse_mode"))
        markup = _checked_markup(params.get("reply_markup"))
        file_id = self._photo_param(params.get("photo"), uploads, "photo")
        if chat_id < 0 and not self.groups[chat_id].photos_allowed:
            raise bad_request("not enough rights to send photos to the chat")
        thread = self._thread(chat_id, params)
        self._flood_check(chat_id)
        message = self._new_message(chat_id, self.bot_id, from_bot=True, caption=caption)
        message.thread_id = thread
        message.photo_file_id = file_id
        message.reply_markup = markup
        message.formatting = _formatting(params.get("caption"), params.get("parse_mode"))
        message.snapshot()
        return self._message_api(message)

    def _photo_param(self, value: Any, uploads: dict[str, bytes], part: str) -> str:
        """A file id for an uploaded photo, an ``attach://`` part, or a reused ``file_id``."""
        if isinstance(value, str) and value.startswith("attach://"):
            part, value = value[len("attach://"):], None
        if value is None:
            if part not in uploads:
                raise bad_request("there is no photo in the request")
            data = uploads[part]
            if _image_size(data) == (0, 0):
                raise bad_request("IMAGE_PROCESS_FAILED")
            return self._store_file(data)
        if isinstance(value, str) and value in self.files:
            return value
        raise bad_request("wrong file identifier/HTTP URL specified")

    async def _api_editMessageText(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        message = self._find_message(params, "message to edit not found")
        if message.text is None:
            raise bad_request("there is no text in the message to edit")
        text = _checked_text(params.get("text"), params.get("parse_mode"))
        markup = _checked_markup(params.get("reply_markup"))
        return self._apply_edit(message, text=text, markup=markup,
                                formatting=_formatting(params.get("text"), params.get("parse_mode")))

    async def _api_editMessageCaption(self, params: dict[str, Any],
                                      uploads: dict[str, bytes]) -> dict[str, Any]:
        message = self._find_message(params, "message to edit not found")
        if message.photo_file_id is None:
            raise bad_request("there is no caption in the message to edit")
        caption = _checked_caption(params.get("caption"), params.get("parse_mode")) or ""
        markup = _checked_markup(params.get("reply_markup"))
        return self._apply_edit(message, caption=caption, markup=markup,
                                formatting=_formatting(params.get("caption"), params.get("parse_mode")))

    async def _api_editMessageMedia(self, params: dict[str, Any],
                                    uploads: dict[str, bytes]) -> dict[str, Any]:
        message = self._find_message(params, "message to edit not found")
        if message.photo_file_id is None:
            raise bad_request("there is no media in the message to edit")
        media = params.get("media")
        if not isinstance(media, dict) or media.get("type") != "photo":
            raise bad_request("can't parse InputMedia: media type is not supported here")
        caption = _checked_caption(media.get("caption"), media.get("parse_mode")) or ""
        markup = _checked_markup(params.get("reply_markup"))
        file_id = self._photo_param(media.get("media"), uploads, "media")
        return self._apply_edit(message, caption=caption, photo_file_id=file_id, markup=markup,
                                formatting=_formatting(media.get("caption"), media.get("parse_mode")))

    async def _api_editMessageReplyMarkup(self, params: dict[str, Any],
                                          uploads: dict[str, bytes]) -> dict[str, Any]:
        message = self._find_message(params, "message to edit not found")
        return self._apply_edit(message, markup=_checked_markup(params.get("reply_markup")))

    def _apply_edit(self, message: ChatMessage, *, markup: dict[str, Any] | None, text: str | None = None,
                    caption: str | None = None, photo_file_id: str | None = None,
                    formatting: str | None = None) -> dict[str, Any]:
        """Change a bot message; text, caption and photo left as None stay as they are."""
        if not message.from_bot:
            raise bad_request("message can't be edited")
        new_text = message.text if text is None else text
        new_caption = message.caption if caption is None else caption
        new_photo = photo_file_id or message.photo_file_id
        new_formatting = message.formatting if text is None and caption is None else formatting
        if (new_text, new_caption, new_photo, new_formatting, _keyboard_or_none(markup)) == (
            message.text, message.caption, message.photo_file_id, message.formatting,
            _keyboard_or_none(message.reply_markup),
        ):
            raise bad_request(
                "message is not modified: specified new message content and reply markup are exactly "
                "the same as a current content and reply markup of the message"
            )
        message.text, message.caption, message.photo_file_id = new_text, new_caption, new_photo
        message.formatting = new_formatting
        message.reply_markup = markup
        message.edit_count += 1
        message.snapshot()
        return self._message_api(message)

    async def _api_deleteMessage(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        message = self._find_message(params, "message to delete not found")
        message.deleted = True
        return True

    async def _api_answerCallbackQuery(self, params: dict[str, Any], uploads: dict[str, bytes]) -> bool:
        press = self.presses.get(params.get("callback_query_id", ""))
        if press is None or press.answered.is_set():
            raise bad_request("query is too old and response timeout expired or query ID is invalid")
        text = params.get("text")
        if text is not None and utf16_length(text) > 200:
            raise bad_request("MESSAGE_TOO_LONG")
        press.answer_text = text
        press.show_alert = bool(params.get("show_alert"))
        press.answered.set()
        return True

    async def _api_getFile(self, params: dict[str, Any], uploads: dict[str, bytes]) -> dict[str, Any]:
        file_id = params.get("file_id")
        if file_id not in self.files:
            raise bad_request("invalid file_id")
        return {"file_id": file_id, "file_unique_id": file_id[-12:], "file_size": len(self.files[file_id]),
                "file_path": self._file_paths[file_id]}


# --------------------------------------------------------------------------- helpers


def _chat_id(chat: FakeChat | FakeUser | int) -> int:
    return chat if isinstance(chat, int) else chat.id


async def _read_params(request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Decode a Bot API request the way Telegram does: query string, form, multipart or JSON."""
    params: dict[str, Any] = {}
    uploads: dict[str, bytes] = {}
    raw: dict[str, str] = dict(request.query)
    if request.content_type == "application/json":
        body = await request.json()
        params.update(body)
    elif request.can_read_body:
        form = await request.post()
        for name, value in form.items():
            if isinstance(value, web.FileField):
                uploads[name] = value.file.read()
            else:
                raw[name] = str(value)
    for name, value in raw.items():
        params[name] = value if name in _STRING_FIELDS else _json_or_raw(value)
    return params, uploads


def _json_or_raw(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _scope_key(params: Mapping[str, Any]) -> str:
    scope = params.get("scope") or {"type": "default"}
    return json.dumps(scope, sort_keys=True)


def _command_entities(text: str) -> list[dict[str, Any]]:
    if not text.startswith("/"):
        return []
    return [{"type": "bot_command", "offset": 0, "length": utf16_length(text.split()[0])}]


def _checked_text(text: Any, parse_mode: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise bad_request("message text is empty")
    try:
        shown = visible_text(text, parse_mode)
    except EntityError as error:
        raise bad_request(str(error)) from None
    if not shown.strip():
        raise bad_request("message text is empty")
    if utf16_length(shown) > TEXT_LIMIT:
        raise bad_request("message is too long")
    return shown


def _formatting(raw: Any, parse_mode: Any) -> str | None:
    """What decides a text's entities besides its visible characters (None for plain text)."""
    return f"{str(parse_mode).upper()}:{raw}" if parse_mode and raw is not None else None


def _checked_caption(caption: Any, parse_mode: Any) -> str | None:
    if caption is None:
        return None
    try:
        shown = visible_text(str(caption), parse_mode)
    except EntityError as error:
        raise bad_request(str(error)) from None
    if utf16_length(shown) > CAPTION_LIMIT:
        raise bad_request("message caption is too long")
    return shown


def _checked_markup(markup: Any) -> dict[str, Any] | None:
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    for row in markup.get("inline_keyboard", []):
        for button in row:
            data = button.get("callback_data")
            if data is not None and not 1 <= len(data.encode()) <= CALLBACK_DATA_LIMIT:
                raise bad_request("BUTTON_DATA_INVALID")
            if data is None and not {"url", "callback_game", "web_app"} & button.keys():
                raise bad_request("can't parse inline keyboard button: Text buttons are unallowed in the "
                                  "inline keyboard")
            web_app = button.get("web_app")
            if web_app is not None and urlparse(str(web_app.get("url", ""))).scheme != "https":
                raise bad_request("BUTTON_URL_INVALID")  # Mini Apps open only over HTTPS
            url = button.get("url")
            if url is not None and urlparse(url).scheme not in {"http", "https", "tg"}:
                raise bad_request("inline keyboard button URL is invalid")
    return markup


def _keyboard_or_none(markup: Mapping[str, Any] | None) -> Any:
    return (markup or {}).get("inline_keyboard") or None


def _member_api(user: FakeUser, status: str) -> dict[str, Any]:
    raw: dict[str, Any] = {"status": status, "user": user.to_api()}
    if status == "creator":
        raw["is_anonymous"] = False
    elif status == "administrator":
        raw.update(dict.fromkeys(
            ("can_be_edited", "is_anonymous", "can_promote_members", "can_post_stories", "can_edit_stories",
             "can_delete_stories"), False))
        raw.update(dict.fromkeys(
            ("can_manage_chat", "can_delete_messages", "can_manage_video_chats", "can_restrict_members",
             "can_change_info", "can_invite_users", "can_pin_messages"), True))
    elif status == "kicked":
        raw["until_date"] = 0
    return raw


def _image_size(data: bytes) -> tuple[int, int]:
    """Width and height of an image, (0, 0) if the bytes are not an image Pillow can open."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except (UnidentifiedImageError, OSError):
        return (0, 0)
