"""Who may change a chat's settings: in a private chat its user; in a group its admins and owner.

The bot's own admins (``XUEZHAN_ADMINS``) may act everywhere. Asking Telegram can fail (the bot
was removed, a network hiccup); that counts as "no", never as an error for the person.
"""

from __future__ import annotations

import hashlib
import hmac

from telegram import Bot, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

from bot.feature import Context
from bot.services import services


def sent_as_the_group(update: Update) -> bool:
    """A message an anonymous admin sent. Telegram shows it as the group's own (from
    @GroupAnonymousBot, with the group as ``sender_chat``), and only the group's admins can post
    so; asked about @GroupAnonymousBot, Telegram would not call it an admin. A post forwarded
    from a linked channel names the channel, not the group."""
    message = update.effective_message
    return message is not None and message.sender_chat is not None and message.sender_chat.id == message.chat.id


async def acts_as_admin(update: Update, context: Context) -> bool:
    """``is_chat_admin`` for the update's sender, an anonymous admin included."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return False
    return sent_as_the_group(update) or await is_chat_admin(context, chat.id, chat.type, user.id)


async def is_chat_admin(context: Context, chat_id: int, chat_type: str, user_id: int) -> bool:
    if chat_type == ChatType.PRIVATE or user_id in services(context).settings.admins:
        return True
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def is_chat_member(context: Context, chat_id: int, user_id: int) -> bool:
    """True if Telegram says ``user_id`` is in the group now (a failed question counts as no)."""
    return await is_member(context.bot, chat_id, user_id)


async def is_member(bot: Bot, chat_id: int, user_id: int) -> bool:
    """``is_chat_member`` outside an update (the web table asks it of a page's login)."""
    try:
        member = await bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    if member.status == ChatMemberStatus.RESTRICTED:
        return bool(getattr(member, "is_member", False))
    return member.status in (ChatMemberStatus.MEMBER, ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


def link_signature(secret: str, kind: str, value: int) -> str:
    """A short keyed signature of an id put in a deep link, so that ids cannot be guessed.

    Table ids are sequential; a link names ``<id>_<signature>`` and only the bot (which knows
    ``secret``, its token) can make a valid one. 12 hex digits keep the link short.
    """
    digest = hmac.new(secret.encode(), f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()
    return digest[:12]


def signed_id(secret: str, kind: str, value: int) -> str:
    return f"{value}_{link_signature(secret, kind, value)}"


def verified_id(secret: str, kind: str, argument: str) -> int | None:
    """The id of a ``<id>_<signature>`` argument, or None if it is malformed or forged."""
    raw, _, signature = argument.partition("_")
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 12:  # "²".isdigit(), and int("²") fails
        return None
    value = int(raw)
    return value if hmac.compare_digest(signature.encode(), link_signature(secret, kind, value).encode()) else None
