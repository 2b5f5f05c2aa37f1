"""Who may change a chat's settings: in a private chat its user; in a group its admins and owner.

The bot's own admins (``XUEZHAN_ADMINS``) may act everywhere. Asking Telegram can fail (the bot
was removed, a network hiccup); that counts as "no", never as an error for the person.
"""

from __future__ import annotations

from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

from bot.feature import Context
from bot.services import services


async def is_chat_admin(context: Context, chat_id: int, chat_type: str, user_id: int) -> bool:
    if chat_type == ChatType.PRIVATE or user_id in services(context).settings.admins:
        return True
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)
