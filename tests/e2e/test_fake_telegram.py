"""The fake Bot API answers a real PTB ``Bot`` the way Telegram does, errors included."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator

import pytest
from fake_telegram import FakeTelegram
from PIL import Image
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputMediaPhoto
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, RetryAfter


def png(width: int, height: int, colour: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "PNG")
    return buffer.getvalue()


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d.upper(), callback_data=d) for d in data]])


@pytest.fixture
async def bot(telegram: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(telegram.token, base_url=telegram.base_url, base_file_url=telegram.base_file_url) as b:
        yield b


async def test_get_me_describes_the_bot(bot: Bot, telegram: FakeTelegram) -> None:
    me = await bot.get_me()
    assert me.username == telegram.bot_username and me.is_bot
    assert me.can_read_all_group_messages is False  # privacy mode, BotFather's default


async def test_a_wrong_token_is_unauthorized(telegram: FakeTelegram) -> None:
    with pytest.raises(InvalidToken):
        async with Bot("999999:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", base_url=telegram.base_url):
            pass


async def test_sent_text_is_what_the_user_sees(bot: Bot, telegram: FakeTelegram) -> None:
    group = telegram.group("Friends")
    sent = await bot.send_message(group.id, "<b>东风</b> &amp; 西风", parse_mode="HTML",
                                  reply_markup=keyboard("a"))
    shown = telegram.last_bot_message(group)
    assert sent.text == shown.text == "东风 & 西风"
    assert shown.button("A").callback_data == "a"


async def test_users_who_never_started_the_bot_cannot_be_written_to(bot: Bot, telegram: FakeTelegram) -> None:
    stranger, blocker = telegram.user("Stranger"), telegram.user("Blocker", started=True)
    with pytest.raises(Forbidden, match="bot can't initiate conversation with a user"):
        await bot.send_message(stranger.id, "hello")
    await stranger.start()
    await bot.send_message(stranger.id, "hello")
    blocker.block()
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(blocker.id, "hello")


@pytest.mark.parametrize(
    ("send", "error"),
    [
        (lambda bot, chat: bot.send_message(chat, "x" * 4097), "Message is too long"),
        (lambda bot, chat: bot.send_message(chat, "五" * 4096), None),
        (lambda bot, chat: bot.send_message(chat, "x", reply_markup=keyboard("d" * 65)),
         "Button_data_invalid"),
        (lambda bot, chat: bot.send_message(chat, "x", reply_markup=keyboard("d" * 64)), None),
        (lambda bot, chat: bot.send_photo(chat, png(8, 8), caption="c" * 1025),
         "Message caption is too long"),
        (lambda bot, chat: bot.send_message(chat, "<b>open", parse_mode="HTML"), "Can't parse entities"),
        (lambda bot, chat: bot.send_message(chat, "<div>x</div>", parse_mode="HTML"), "Can't parse entities"),
        (lambda bot, chat: bot.send_message(-42, "nobody here"), "Chat not found"),
        (lambda bot, chat: bot.send_photo(chat, "no-such-file-id"), "Wrong file identifier"),
    ],
)
async def test_telegram_limits_are_enforced(bot: Bot, telegram: FakeTelegram, send, error) -> None:
    group = telegram.group("Friends")
    if error is None:
        await send(bot, group.id)
        assert len(telegram.bot_messages(group)) == 1
    else:
        with pytest.raises(BadRequest, match=error):
            await send(bot, group.id)
        assert telegram.bot_messages(group) == []


async def test_an_edit_that_changes_nothing_is_refused(bot: Bot, telegram: FakeTelegram) -> None:
    group = telegram.group("Friends")
    sent = await bot.send_message(group.id, "seat 1", reply_markup=keyboard("join"))
    with pytest.raises(BadRequest, match="Message is not modified"):
        await bot.edit_message_text("seat 1", chat_id=group.id, message_id=sent.message_id,
                                    reply_markup=keyboard("join"))
    await bot.edit_message_text("seat 1", chat_id=group.id, message_id=sent.message_id)  # keyboard removed
    await bot.edit_message_reply_markup(chat_id=group.id, message_id=sent.message_id,
                                        reply_markup=keyboard("x"))
    shown = telegram.last_bot_message(group)
    assert shown.edit_count == 2 and [b.callback_data for b in shown.buttons] == ["x"]
    assert [v.keyboard != () for v in shown.versions] == [True, False, True]
    await bot.edit_message_text("<b>seat 1</b>", chat_id=group.id, message_id=sent.message_id,
                                parse_mode="HTML", reply_markup=keyboard("x"))  # only the formatting changes
    with pytest.raises(BadRequest, match="Message is not modified"):
        await bot.edit_message_text("<b>seat 1</b>", chat_id=group.id, message_id=sent.message_id,
                                    parse_mode="HTML", reply_markup=keyboard("x"))
    await bot.delete_message(group.id, sent.message_id)
    assert telegram.bot_messages(group) == []
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("gone", chat_id=group.id, message_id=sent.message_id)


async def test_photos_upload_by_multipart_and_are_reused_by_file_id(bot: Bot, telegram: FakeTelegram) -> None:
    alice = telegram.user("Alice", started=True)
    group = telegram.group("Friends", members=[alice])
    first = await bot.send_photo(alice.id, png(40, 30), caption="your hand")
    size = first.photo[-1]
    assert (size.width, size.height) == (40, 30)
    again = await bot.send_photo(group.id, size.file_id, caption="the same picture")
    assert again.photo[-1].file_id == size.file_id
    assert telegram.last_bot_message(group).photo == png(40, 30)

    await bot.edit_message_media(InputMediaPhoto(png(50, 20, "blue"), caption="new"), chat_id=group.id,
                                 message_id=again.message_id)
    shown = telegram.last_bot_message(group)
    assert shown.photo == png(50, 20, "blue") and shown.caption == "new"
    assert shown.versions[0].photo_file_id == size.file_id  # history keeps the old picture
    await bot.edit_message_caption(chat_id=group.id, message_id=again.message_id, caption="newer")
    assert telegram.last_bot_message(group).caption == "newer"
    with pytest.raises(BadRequest, match="no text in the message"):
        await bot.edit_message_text("x", chat_id=group.id, message_id=again.message_id)

    file = await bot.get_file(size.file_id)
    assert bytes(await file.download_as_bytearray()) == png(40, 30)


async def test_get_updates_long_polls_and_honours_the_offset(bot: Bot, telegram: FakeTelegram) -> None:
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice])
    began = time.monotonic()
    assert await bot.get_updates(timeout=1) == ()
    assert time.monotonic() - began >= 0.9

    waiting = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.1)
    await alice.send(group, "/help")
    updates = await asyncio.wait_for(waiting, 2)
    assert [u.message.text for u in updates] == ["/help"]
    assert updates[0].message.entities[0].type == "bot_command"

    await alice.send(group, "/rules")
    assert len(await bot.get_updates(timeout=0)) == 2  # nothing confirmed yet
    latest = await bot.get_updates(offset=updates[0].update_id + 1, timeout=0)
    assert [u.message.text for u in latest] == ["/rules"]


async def test_privacy_mode_hides_chatter_but_not_commands_replies_or_mentions(
    bot: Bot, telegram: FakeTelegram
) -> None:
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice])
    prompt = await bot.send_message(group.id, "send me a hand")
    await alice.send(group, "just chatting")
    await alice.send(group, "/help@other_bot")
    await alice.send(group, "/help")
    await alice.send(group, "123m", reply_to=telegram.last_bot_message(group))
    await alice.send(group, f"hey @{telegram.bot_username}")
    received = [u.message.text for u in await bot.get_updates(timeout=0)]
    assert received == ["/help", "123m", f"hey @{telegram.bot_username}"]
    assert telegram.messages(group)[0].message_id == prompt.message_id


async def test_button_presses_reach_the_bot_and_wait_for_an_answer(bot: Bot, telegram: FakeTelegram) -> None:
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice])
    await bot.send_message(group.id, "lobby", reply_markup=keyboard("join", "leave"))
    press = await alice.press(telegram.last_bot_message(group), "JOIN")
    (update,) = await bot.get_updates(timeout=0)
    assert update.callback_query.data == "join" and update.callback_query.from_user.id == alice.id
    assert telegram.unanswered_presses() == [press]
    await update.callback_query.answer("seated", show_alert=True)
    assert await press.answer() == "seated" and press.show_alert
    with pytest.raises(BadRequest, match="Query is too old"):
        await update.callback_query.answer("twice")
    with pytest.raises(AssertionError, match="no button"):
        await alice.press(telegram.last_bot_message(group), "Start")
    forged = await alice.press(telegram.last_bot_message(group), data="not-on-the-keyboard", check=False)
    assert forged.data == "not-on-the-keyboard"


async def test_injected_faults_come_first_then_normal_service(bot: Bot, telegram: FakeTelegram) -> None:
    group = telegram.group("Friends")
    telegram.fail_next("sendMessage", status=429, retry_after=7)
    telegram.fail_next("sendMessage", status=502)
    with pytest.raises(RetryAfter, match="Retry in 7 seconds"):
        await bot.send_message(group.id, "one")
    with pytest.raises(NetworkError, match="Bad Gateway"):
        await bot.send_message(group.id, "one")
    await bot.send_message(group.id, "one")
    assert [c.status for c in telegram.calls_of("sendMessage")] == [429, 502, 200]
    assert [m.text for m in telegram.bot_messages(group)] == ["one"]


async def test_flood_control_and_the_per_minute_count(telegram: FakeTelegram) -> None:
    telegram.group_limit_per_minute = 3
    group = telegram.group("Friends")
    async with Bot(telegram.token, base_url=telegram.base_url) as bot:
        for n in range(3):
            sent = await bot.send_message(group.id, f"update {n}")
        with pytest.raises(RetryAfter):
            await bot.send_message(group.id, "one too many")
        await bot.edit_message_text("edited", chat_id=group.id, message_id=sent.message_id)
    assert telegram.max_sends_per_minute(group) == 3
    assert telegram.max_sends_per_minute(group, {"sendMessage", "editMessageText"}) == 4


async def test_commands_are_kept_per_scope_and_language(bot: Bot, telegram: FakeTelegram) -> None:
    from telegram import BotCommand, BotCommandScopeAllGroupChats

    await bot.set_my_commands([BotCommand("help", "帮助")], scope=BotCommandScopeAllGroupChats())
    await bot.set_my_commands([BotCommand("help", "Help")], scope=BotCommandScopeAllGroupChats(),
                              language_code="en")
    en = await bot.get_my_commands(scope=BotCommandScopeAllGroupChats(), language_code="en")
    assert [c.description for c in en] == ["Help"]
    with pytest.raises(BadRequest, match="Bot_command_invalid"):
        await bot.set_my_commands([BotCommand("Not Valid", "x")])


async def test_group_membership_and_deep_links(bot: Bot, telegram: FakeTelegram) -> None:
    owner, admin, member, outsider = (telegram.user(n) for n in ("Owner", "Admin", "Member", "Outsider"))
    group = telegram.group("Friends", members=[member], admins=[admin], creator=owner)
    statuses = [(await bot.get_chat_member(group.id, u.id)).status for u in (owner, admin, member, outsider)]
    assert statuses == ["creator", "administrator", "member", "left"]
    await outsider.open_link(f"https://t.me/{telegram.bot_username}?start=join_42")
    (update,) = await bot.get_updates(timeout=0)
    assert update.message.text == "/start join_42" and update.message.chat.type == "private"
    assert outsider.started
