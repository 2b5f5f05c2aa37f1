"""/score end to end: typed hands valued under the chat's rules, waits, corrections, toggles, prompts."""

from __future__ import annotations

import pytest
from fake_telegram import FakeChat, FakeTelegram, FakeUser
from harness import BotFactory

from bot.app import load_features
from bot.services import services
from engine.tiles import parse_tiles
from rendering import MAX_SIDE, encode_png, render_tiles

FEATURES = ("bot.handlers_basic", "bot.rules_menu", "bot.score.chat", "bot.score.photo")
EN = {"XUEZHAN_LANG": "en"}


async def start(start_bot: BotFactory, **overrides: str):
    return await start_bot(features=load_features(FEATURES), **{**EN, **overrides})


async def ask(telegram: FakeTelegram, user: FakeUser, chat: FakeChat | FakeUser | int, text: str):
    sent = await user.send(chat, text)
    return await telegram.wait_for_bot_message(chat, after=sent.message_id)


async def english_group(app, telegram: FakeTelegram, *members: FakeUser) -> FakeChat:
    """A group whose admins chose English (a group speaks its own language, Chinese by default)."""
    group = telegram.group("Friends", members=members, admins=members[:1])
    await services(app).storage.update_chat(group.id, language="en")
    return group


def caption_lines(message) -> list[str]:
    return message.caption.split("\n")


async def test_a_winning_hand_gets_a_card_and_its_value_at_the_chat_s_base_stake(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start(start_bot)
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    await services(app).storage.update_chat(group.id, base_stake=5)

    answer = await ask(telegram, alice, group, "/score 1112345678999m +5m")
    assert answer.photo is not None and answer.photo.startswith(b"\x89PNG")
    lines = caption_lines(answer)
    assert lines[0] == "1112345678999m +5m"  # the normalised notation comes first
    assert "full flush ×4" in lines
    assert "Multiplier: 4× base" in lines
    assert "Win on a discard. Chips from the discarder: 20" in lines
    assert any("base stake 5" in line for line in lines)
    assert [b.text for b in answer.buttons] == ["Self-draw", "Kong flower", "Kong cannon", "Robbing a kong",
                                               "Last tile"]


async def test_the_situation_buttons_re_score_in_place_and_survive_a_restart(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start(start_bot)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = await english_group(app, telegram, alice, bob)
    answer = await ask(telegram, alice, group, "/score 123m456m789m234p55p")
    assert "Multiplier: 1× base" in caption_lines(answer)
    assert "Win on a discard. Chips from the discarder: 1" in caption_lines(answer)

    async def press(user: FakeUser, label: str) -> list[str]:
        edits = answer.edit_count
        await (await user.press(answer, label)).answer()
        await telegram.wait_for(lambda: answer.edit_count > edits, what=f"the edit after {label}")
        return caption_lines(answer)

    # 自摸 under the chengdu rules adds a base (自摸加底): 1 + 1 from each player.
    lines = await press(bob, "Self-draw")
    assert lines[0].endswith("自摸") and "Self-draw adds a base +1" in lines
    assert "Self-draw. Chips from each player still in the hand: 2" in lines
    assert answer.button("✓ Self-draw")
    # 杠上花 doubles and is a self-draw; 杠上炮 is a discard win, so it turns self-draw off.
    lines = await press(alice, "Kong flower")
    assert "Multiplier: 2× base" in lines and lines[-2] == "Self-draw. Chips from each player still in the hand: 3"
    lines = await press(alice, "Kong cannon")
    assert "Multiplier: 2× base" in lines and "Win on a discard. Chips from the discarder: 2" in lines
    assert [b.text for b in answer.buttons if b.text.startswith("✓")] == ["✓ Kong cannon"]
    assert answer.photo is not None

    # A restart forgets the hand in memory; the caption's first line brings it back.
    await start_bot.stop(app)
    await start(start_bot)
    lines = await press(bob, "Last tile")
    assert lines[0] == "123456789m2345p +5p 杠上炮 海底"
    assert "Multiplier: 4× base" in lines
    assert telegram.unanswered_presses() == []


async def test_the_chat_s_rules_decide_the_value(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start(start_bot)
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    hand = "/score 11112222333344m zimo"  # 清七对-like tiles in pungs: a big hand
    capped = caption_lines(await ask(telegram, alice, group, hand))
    assert "Multiplier: 8× base" in capped and "Cap 8" in capped
    await services(app).storage.update_chat(group.id, rules={"cap": None, "self_draw": "jiafan"})
    uncapped = caption_lines(await ask(telegram, alice, group, hand))
    assert "Cap 8" not in uncapped and "self-draw doubles ×2" in uncapped
    assert uncapped[-2].startswith("Self-draw. Chips from each player still in the hand: ")


async def test_a_hand_one_tile_short_answers_with_its_waits(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start(start_bot)
    alice = telegram.user("Alice")
    answer = await ask(telegram, alice, alice.dm, "/score 1112345678999m")
    lines = caption_lines(answer)
    assert lines[0] == "1112345678999m"
    assert lines[1] == "Ready (听牌). It wins on:" and len(lines) == 12
    assert "2m: full flush ×4; chips from the discarder: 4" in lines
    assert answer.photo is not None and answer.buttons == []

    not_ready = caption_lines(await ask(telegram, alice, alice.dm, "/score 123m456m789m1p5p9p2p"))
    assert not_ready[1] == "Not ready yet: shanten 1 (useful draws still needed to be ready)."
    assert not_ready[2].startswith("Tiles that help: ")


async def test_a_hand_fixed_by_editing_the_message_is_scored_again(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """People fix a typo by editing what they sent; Telegram then sends the bot the edited message."""
    app = await start(start_bot)
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    sent = await alice.send(group, "/score 1112345678999m +5")
    wrong = await telegram.wait_for_bot_message(group, after=sent.message_id)
    assert wrong.photo is None and "+" in wrong.text

    await alice.edit(sent, "/score 1112345678999m +5m")
    fixed = await telegram.wait_for_bot_message(group, after=wrong.message_id)
    assert caption_lines(fixed)[0] == "1112345678999m +5m"
    assert "full flush ×4" in caption_lines(fixed)


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("123x", "I can't read “x” (position 4). Write tiles as numbers followed by their suit"),
        ("1230m", "“0” (position 4) is not a tile number: tile numbers go from 1 to 9."),
        ("123 456m", "The numbers just before position 4 have no suit: add m (万), p (筒) or s (条)."),
        ("123m 456", "The numbers at position 6 have no suit: add m (万), p (筒) or s (条)."),
        ("123m [12m]", "[12m] (position 6) is not a pung or a kong"),
        ("123m (555p", "The bracket at position 6 is never closed."),
        ("123m456m789m234p5p +5p+5p", "Mark the winning tile with one + followed by exactly one tile"),
        ("123m456m789m234p5p yolo", "I don't know the word “yolo” (position 20)."),
        ("1234m", "Tiles in this hand: 4. A win is valued from 14 tiles"),
        ("11111m234p567p789p", "1m is written 5 times, but there are only four of each tile."),
        ("123m456p789s11m234m", "The hand holds all three suits"),
        ("123m456m789m19p555p", "These 14 tiles are not a win: they make neither four sets and a pair nor seven "
                                "pairs.\nDiscard 1p 9p and the hand is ready (听牌)."),
        ("147m147p258m258p36m", "Best discards: 1m 2m 4m 5m 7m 8m 1p 2p 4p 5p 7p 8p. After one of them the hand "
                                "is at shanten 2"),
    ],
)
async def test_bad_hands_get_a_specific_correction(
    telegram: FakeTelegram, start_bot: BotFactory, hand: str, expected: str
) -> None:
    await start(start_bot)
    alice = telegram.user("Alice")
    answer = await ask(telegram, alice, alice.dm, f"/score {hand}")
    assert answer.photo is None and expected in answer.text, answer.text


async def test_score_alone_asks_for_the_hand_and_the_reply_is_scored(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start(start_bot)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = await english_group(app, telegram, alice, bob)
    prompt = await ask(telegram, alice, group, "/score")
    assert prompt.text.startswith("Send me the hand as a reply to this message")
    assert telegram.calls_of("sendMessage")[-1].params["reply_markup"]["force_reply"] is True

    reply = await bob.send(group, "123m 456m 789m 234p 55p", reply_to=prompt)
    answer = await telegram.wait_for_bot_message(group, after=reply.message_id)
    assert "Multiplier: 1× base" in caption_lines(answer)
    wrong = await bob.send(group, "123m 456m", reply_to=prompt)
    correction = await telegram.wait_for_bot_message(group, after=wrong.message_id)
    assert correction.text.startswith("Tiles in this hand: 6.")
    # A reply to some other bot message is not taken for a hand.
    other = await bob.send(group, "123m 456m", reply_to=answer)
    await telegram.settle()
    assert not [m for m in telegram.bot_messages(group) if m.message_id > other.message_id]


async def test_chinese_is_the_default_and_every_press_is_answered(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(features=load_features(FEATURES))
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice])
    answer = await ask(telegram, alice, group, "/score 123m456m789m234p55p")
    assert caption_lines(answer)[1:4] == ["平胡 ×1", "共 1 倍", "点炮胡：放炮的玩家付 1"]
    assert [b.text for b in answer.buttons] == ["自摸", "杠上花", "杠上炮", "抢杠", "海底"]
    prompt = await ask(telegram, alice, group, "/score")
    stale = await alice.press(prompt, data="sc:zimo", check=False)
    assert await stale.answer()
    assert telegram.unanswered_presses() == []
    assert answer.photo is not None and len(answer.photo) < 10 * MAX_SIDE * MAX_SIDE


async def test_the_chat_s_house_rules_value_a_typed_hand(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start(start_bot)
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    rules = {"cap": None, "all_pungs_258": 16, "golden_and_flush_terminals": False, "last_copy_bonus": True}
    await services(app).storage.update_chat(group.id, rules=rules)
    # 将对 worth 16 here (8 in the book); on a discard the discarder pays 16.
    answer = await ask(telegram, alice, group, "/score 222m555m888m222p5p +5p")
    assert "2-5-8 all pungs ×16" in caption_lines(answer) and "Multiplier: 16× base" in caption_lines(answer)
    # 清带幺 is not a pattern here: 123m×3 789m 99m is valued as 带幺九, 4.
    answer = await ask(telegram, alice, group, "/score 123m123m123m789m9m +9m")
    assert "Multiplier: 4× base" in caption_lines(answer)
    # 绝张 doubles here, so it has a button: 平胡 1 becomes 2.
    answer = await ask(telegram, alice, group, "/score 123m456m789m234p6p +6p")
    assert answer.buttons[-1].text == "Last copy"
    await (await alice.press(answer, "Last copy")).answer()
    await telegram.wait_for(lambda: "Multiplier: 2× base" in caption_lines(answer), what="绝张 doubles")


async def test_a_marked_tile_also_among_the_fourteen_is_counted_once_and_said(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start(start_bot)
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    answer = await ask(telegram, alice, group, "/score 123m456m789m22p [555p] +2p")
    lines = caption_lines(answer)
    assert lines[0] == "123456789m2p [555p] +2p" and "Multiplier: 1× base" in lines
    assert lines[-1] == "2p was written among the 14 tiles and marked with +: counted once, as the winning tile."


async def test_a_private_chat_scores_a_typed_hand_and_helps_with_anything_else(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(XUEZHAN_LANG="en")  # every feature, so that the fallback comes after them all
    alice = telegram.user("Alice")
    await alice.start()
    await telegram.settle()  # the welcome has come
    answer = await ask(telegram, alice, alice, "1112345678999m +5m")
    assert answer.photo is not None and "full flush ×4" in caption_lines(answer)
    for text in ("/foo", "你好", "三缺一"):  # a sentence may start with a numeral: not a hand
        reply = await ask(telegram, alice, alice, text)
        assert reply.text.startswith("Send me a hand to value it") and "\n" not in reply.text
    correction = await ask(telegram, alice, alice, "123m456m789m234p5")
    assert "no suit" in correction.text
    # as people type in a chat: the tiles' Chinese names, full-width forms, Unicode's tile characters
    for written in ("一一一二三四五六七八九九九万 ＋五万", "１１１２３４５６７８９９９ｍ ＋５ｍ", "🀇🀇🀇🀈🀉🀊🀋🀌🀍🀎🀏🀏🀏 +🀋"):
        answer = await ask(telegram, alice, alice, written)
        assert answer.photo is not None and caption_lines(answer)[0] == "1112345678999m +5m", written
    not_sichuan = await ask(telegram, alice, alice, "🀄🀄🀄 123m")
    assert "is not in a Sichuan set" in not_sichuan.text
    helped = await ask(telegram, alice, alice, "/help")
    assert not helped.text.startswith("Send me a hand")  # a known command is not the fallback's


FLUSH_PICTURE = encode_png(render_tiles(parse_tiles("1112345678999m5m")))  # the bot's own tile art
SELF_DRAWN = "Self-draw. Chips from each player still in the hand: 5"  # 清一色 4 + 自摸加底 1, base 1


async def scored_correction(telegram: FakeTelegram, user: FakeUser, fixing) -> list[str]:
    """Press Score on a photo's correction; the caption lines of the answer it becomes."""
    before = fixing.edit_count
    await (await user.press(fixing, "✅ Score")).answer()
    await telegram.wait_for(lambda: fixing.edit_count > before, what="the score")
    return caption_lines(fixing)


async def test_a_photo_captioned_with_situation_words_is_valued_with_them(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """``/score 自摸`` as a photo's caption: the hand read from the photo is valued as a self-draw,
    as the typed hand with the same words would be."""
    app = await start(start_bot)
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    sent = await alice.send_photo(group, FLUSH_PICTURE, caption="/score 自摸")
    fixing = await telegram.wait_for_bot_message(group, lambda m: m.photo_file_id is not None, after=sent.message_id)
    assert "自摸" in fixing.caption
    assert SELF_DRAWN in await scored_correction(telegram, alice, fixing)


async def test_score_in_reply_to_someone_s_photo_reads_that_photo(telegram: FakeTelegram,
                                                                   start_bot: BotFactory) -> None:
    """Bob posts a photo of his hand (the bot, in privacy mode, does not see it); Alice answers it
    with ``/score 自摸``: that photo is read, and the correction is Alice's to make."""
    app = await start(start_bot)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = await english_group(app, telegram, alice, bob)
    photo = await bob.send_photo(group, FLUSH_PICTURE)
    sent = await alice.send(group, "/score 自摸", reply_to=photo)
    fixing = await telegram.wait_for_bot_message(group, lambda m: m.photo_file_id is not None, after=sent.message_id)
    assert "自摸" in fixing.caption
    assert await (await bob.press(fixing, "✅ Score", check=False)).answer() == (
        "Only the person who asked for this reading can correct it.")
    assert SELF_DRAWN in await scored_correction(telegram, alice, fixing)


async def test_score_in_reply_to_someone_s_typed_hand_values_it(telegram: FakeTelegram,
                                                                 start_bot: BotFactory) -> None:
    """Bob types his hand in the group (the bot, in privacy mode, does not see it); Alice answers it
    with ``/score 自摸``: that hand is valued, self-drawn."""
    app = await start(start_bot)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = await english_group(app, telegram, alice, bob)
    typed = await bob.send(group, "一一一二三四五六七八九九九万 胡五万")
    sent = await alice.send(group, "/score 自摸", reply_to=typed)
    answer = await telegram.wait_for_bot_message(group, after=sent.message_id)
    lines = caption_lines(answer)
    assert lines[0] == "1112345678999m +5m 自摸" and SELF_DRAWN in lines
    chatter = await bob.send(group, "nice hand!")
    sent = await alice.send(group, "/score", reply_to=chatter)  # not a hand: the usual prompt
    assert "Send me the hand as a reply" in (await telegram.wait_for_bot_message(group, after=sent.message_id)).text


async def test_a_group_that_refuses_pictures_gets_the_value_in_words_and_its_buttons(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """Its members may not send photos, nor may the bot: the answer's picture was refused and the
    person got nothing."""
    app = await start(start_bot)
    alice = telegram.user("Alice")
    group = await english_group(app, telegram, alice)
    group.photos_allowed = False
    answer = await ask(telegram, alice, group, "/score 123m456m789m234p55p")
    assert answer.photo is None
    assert "Win on a discard. Chips from the discarder: 1" in answer.text.split("\n")
    await start_bot.stop(app)  # a press after a restart reads the hand back from the text
    await start(start_bot)
    edits = answer.edit_count
    await (await alice.press(answer, "Self-draw")).answer()
    await telegram.wait_for(lambda: answer.edit_count > edits, what="the answer re-scored")
    assert "Self-draw. Chips from each player still in the hand: 2" in answer.text.split("\n")
    assert answer.button("✓ Self-draw")
    assert telegram.unanswered_presses() == []
