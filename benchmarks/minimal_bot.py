"""The peer of ``bot_load.py``: the least a python-telegram-bot bot does for a button press.

It answers each press with one callback answer and one message edit, with PTB's defaults
otherwise (no rate limiter, its default HTTP client), so that ``bot_load.py`` can put the
Xuezhan bot's CPU per action beside the CPU per update of a bot that does almost nothing.
``/start`` in a DM gets the message with the button. Reads the same variables as ``xuezhan
run``: TELEGRAM_BOT_TOKEN and XUEZHAN_API_URL.
"""

from __future__ import annotations

import os

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ApplicationBuilder, CallbackQueryHandler, CommandHandler, ContextTypes

BUTTON = InlineKeyboardMarkup([[InlineKeyboardButton("Press", callback_data="press")]])


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_chat is not None
    await update.effective_chat.send_message("Pressed 0 times", reply_markup=BUTTON)


async def press(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    assert query is not None and context.user_data is not None
    await query.answer()
    count = context.user_data["presses"] = context.user_data.get("presses", 0) + 1
    await query.edit_message_text(f"Pressed {count} times", reply_markup=BUTTON)


def main() -> None:
    builder = ApplicationBuilder().token(os.environ["TELEGRAM_BOT_TOKEN"]).concurrent_updates(True)
    if os.environ.get("XUEZHAN_API_URL"):
        builder = builder.base_url(os.environ["XUEZHAN_API_URL"])
    app = builder.build()
    app.add_handler(CommandHandler("start", start))
    app.add_handler(CallbackQueryHandler(press))
    app.run_polling(poll_interval=0.0, timeout=5)


if __name__ == "__main__":
    main()
