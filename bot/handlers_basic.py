"""/start, /help and /lang: meeting the bot, learning what it does, choosing its language.

``/start`` in a private chat marks the user as reachable by DM (the bot may only write to users
who pressed Start). A deep link ``t.me/<bot>?start=<prefix>_<argument>`` arrives as
``/start <prefix>_<argument>`` and is handed to the feature that registered ``<prefix>``.
"""

from __future__ import annotations

import re

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, Update
from telegram.constants import ChatType
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler
from telegram.ext import filters as f

from bot.feature import Command, Context, Feature
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, N_, Translator, language_named, translator
from bot.messaging import edit_query_text
from bot.permissions import is_chat_admin, sent_as_the_group
from bot.services import services, texts_for

LANG_CALLBACK = re.compile(r"^lang:(zh|en)$")


def lang_callback_data(language: str) -> str:
    """The callback data of the /lang button for ``language`` (well under 64 bytes)."""
    return f"lang:{language}"


async def start(update: Update, context: Context) -> None:
    user, message = update.effective_user, update.effective_message
    if user is None or message is None:
        return
    await services(context).storage.save_user(user.id, user.full_name, started_dm=True)
    payload = context.args[0] if context.args else ""
    prefix, _, argument = payload.partition("_")
    handler = services(context).start_payloads.get(prefix) if payload else None
    if handler is not None:
        await handler(update, context, argument)
        return
    texts = await texts_for(update, context)
    await message.reply_text(
        texts.t("Welcome to Xuezhan, {name}! I can now send you your tiles in this chat.",
                name=user.first_name)
        + "\n\n"
        + help_text(update, context, texts)
    )


async def start_in_group(update: Update, context: Context) -> None:
    """``/start`` in a group: there is nothing to start there, so explain what the bot does."""
    await help_command(update, context)


async def help_command(update: Update, context: Context) -> None:
    message = update.effective_message
    if message is None:
        return
    texts = await texts_for(update, context)
    await message.reply_text(help_text(update, context, texts),
                             link_preview_options=LinkPreviewOptions(is_disabled=True))


def help_text(update: Update, context: Context, texts: Translator) -> str:
    """What the bot does and the commands of this kind of chat, in ``texts``' language."""
    in_group = update.effective_chat is not None and update.effective_chat.type != ChatType.PRIVATE
    lines = [texts.t("Xuezhan hosts, referees and scores Sichuan mahjong (血战到底) for your group.")]
    if in_group:
        link = "https://t.me/" + context.bot.username
        lines.append(texts.t("Your tiles come by private message: open {link} and press Start once.",
                             link=link))
    lines.append("")
    for feature in services(context).features:
        for command in feature.commands:
            if command.group if in_group else command.private:
                lines.append(f"/{command.name} — {texts.t(command.description)}")
    return "\n".join(lines)


def _language_keyboard() -> InlineKeyboardMarkup:
    buttons = [InlineKeyboardButton(LANGUAGE_NAMES[code], callback_data=lang_callback_data(code))
               for code in LANGUAGES]
    return InlineKeyboardMarkup([buttons])


async def lang_command(update: Update, context: Context) -> None:
    """``/lang`` shows the choice; ``/lang en`` chooses directly."""
    message, user, chat = update.effective_message, update.effective_user, update.effective_chat
    if message is None or user is None or chat is None:
        return
    texts = await texts_for(update, context)
    if not (sent_as_the_group(update) or await _may_set_language(context, chat.id, chat.type, user.id)):
        # Only those who may choose get the buttons; anyone else gets one line, not a keyboard.
        await message.reply_text(texts.t("Only group admins can change the group's language."))
        return
    chosen = language_named(" ".join(context.args)) if context.args else None
    if chosen is None:
        await message.reply_text(texts.t("Choose the language:"), reply_markup=_language_keyboard())
        return
    await _save_language(context, chat.id, chat.type, user.id, user.full_name, chosen)
    await message.reply_text(_chosen_text(chosen))


async def lang_chosen(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    chat = update.effective_chat
    assert query is not None and user is not None and query.data is not None
    match = LANG_CALLBACK.match(query.data)
    assert match is not None
    if chat is None:
        await query.answer()
        return
    if not await _may_set_language(context, chat.id, chat.type, user.id):
        texts = await texts_for(update, context)
        await query.answer(texts.t("Only group admins can change the group's language."), show_alert=True)
        return
    chosen = match.group(1)
    await query.answer(_chosen_text(chosen))
    await _save_language(context, chat.id, chat.type, user.id, user.full_name, chosen)
    await edit_query_text(query, _chosen_text(chosen))


def _chosen_text(language: str) -> str:
    return translator(language).t("Language: {name}", name=LANGUAGE_NAMES[language])


async def _may_set_language(context: Context, chat_id: int, chat_type: str, user_id: int) -> bool:
    """Anyone chooses their own DM's language; a group's is for its admins (and the bot's admins)."""
    return await is_chat_admin(context, chat_id, chat_type, user_id)


async def _save_language(context: Context, chat_id: int, chat_type: str, user_id: int, name: str,
                         language: str) -> None:
    storage = services(context).storage
    if chat_type == ChatType.PRIVATE:
        await storage.save_user(user_id, name, language=language)
    else:
        await storage.update_chat(chat_id, language=language)


def _handlers() -> list[BaseHandler[Update, Context, None]]:
    return [
        CommandHandler("start", start, filters=f.ChatType.PRIVATE),
        CommandHandler("start", start_in_group, filters=f.ChatType.GROUPS),
        CommandHandler("help", help_command),
        CommandHandler("lang", lang_command),
        CallbackQueryHandler(lang_chosen, pattern=LANG_CALLBACK),
    ]


FEATURE = Feature(
    name="basic",
    handlers=_handlers,
    commands=(
        Command("start", N_("Start the bot here so it can send you your tiles"), group=False),
        Command("help", N_("What the bot does and its commands")),
        Command("lang", N_("Language: 中文 / English")),
    ),
)
