"""Scorekeeping (/keep) end to end: four players, kongs, a multiple win, an undo, an empty wall."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from fake_telegram import ChatMessage, FakeChat, FakeTelegram, FakeUser
from harness import BotFactory, clean_environment

from bot.keep import book
from bot.ratelimit import TelegramRateLimiter
from bot.services import services
from engine.rules import GameMode, RuleSet, SelfDrawBonus
from engine.scoring import Pattern
from engine.tiles import Situation, parse_tiles


def quick_limiter() -> TelegramRateLimiter:
    """Telegram's limits, but a busy test group may get more than 20 edits a minute."""
    return TelegramRateLimiter(group_max_rate=1000, backoff=0.01)


async def tap(telegram: FakeTelegram, user: FakeUser, panel: ChatMessage, text: str) -> str | None:
    """Press a button of the panel (or of any message the press edits) and wait until it shows the outcome."""
    before = panel.edit_count
    answer = await (await user.press(panel, text)).answer()
    await telegram.wait_for(lambda: panel.edit_count > before, what=f"the panel after {text!r}")
    return answer


async def reply(telegram: FakeTelegram, user: FakeUser, group, panel: ChatMessage, tiles: str) -> None:
    before = panel.edit_count
    await user.send(group, tiles, reply_to=panel)
    await telegram.wait_for(lambda: panel.edit_count > before, what="the panel to take the tiles")


def totals(panel: ChatMessage) -> dict[str, int]:
    out = {}
    for line in panel.text.splitlines():
        if line.startswith("• "):
            name, _, chips = line[2:].rpartition(": ")
            out[name.removesuffix(" ✓")] = int(chips)
    return out


@pytest.mark.both_backends
async def test_a_session_with_kongs_a_multiple_win_an_undo_and_an_empty_wall(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
    alice, bob, eve = telegram.user("Alice"), telegram.user("Bob"), telegram.user("Eve")
    group = telegram.group("Real tiles", members=[alice, bob, eve], admins=[alice])
    await alice.send(group, "/lang en")
    await telegram.wait_for_bot_message(group, lambda m: "Language" in (m.text or ""))

    await alice.send(group, "/keep me 老王 Dave")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "I'm in" in str(m.buttons))
    assert "(3/4)" in lobby.text
    assert await (await bob.press(lobby, "I'm in")).answer() == "You are in."
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))
    assert "hand 1" in panel.text and "Rules: Chengdu, base stake 1" in panel.text
    assert totals(panel) == {"Alice": 0, "老王": 0, "Dave": 0, "Bob": 0}

    # Someone outside the session cannot record.
    refused = await eve.press(panel, "Kong")
    assert await refused.answer() == "Only the players of this session can record." and refused.show_alert

    # Bob: a concealed kong (2 from each player still in).
    await tap(telegram, bob, panel, "Kong")
    await tap(telegram, bob, panel, "Bob")
    assert await tap(telegram, bob, panel, "concealed") == "Saved."
    assert totals(panel) == {"Alice": -2, "老王": -2, "Dave": -2, "Bob": 6}

    # Dave: a kong on Alice's discard — recorded by mistake, then undone.
    await tap(telegram, alice, panel, "Kong")
    await tap(telegram, alice, panel, "Dave")
    await tap(telegram, alice, panel, "on a discard")
    assert "Whose discard" in panel.text
    await tap(telegram, alice, panel, "Alice")
    assert totals(panel)["Dave"] == 0 and "Alice → Dave 2" in panel.text
    assert await tap(telegram, alice, panel, "Undo last") == "Undone."
    assert "Undone: Dave: kong on a discard fed by Alice" in panel.text
    assert totals(panel) == {"Alice": -2, "老王": -2, "Dave": -2, "Bob": 6}

    # Bob discards right after his kong into 老王 and Dave (一炮多响, 杠上炮 → 呼叫转移).
    await tap(telegram, bob, panel, "Win on a discard")
    await tap(telegram, bob, panel, "Bob")
    await tap(telegram, bob, panel, "老王")
    await tap(telegram, bob, panel, "Dave")
    await tap(telegram, bob, panel, "after a kong")
    await tap(telegram, bob, panel, "Next")
    assert "Value of 老王's win" in panel.text
    await reply(telegram, alice, group, panel, "123m345m789m234p66q")  # a typo first
    assert "can't read that hand (at character 19)" in panel.text
    await reply(telegram, alice, group, panel, "123m345m789m234p66p")  # 平胡 ×2 (杠上炮) = 2
    assert "Value of Dave's win" in panel.text
    await tap(telegram, alice, panel, "full flush")  # 清一色 4 ×2 (杠上炮) = 8, the cap
    assert await tap(telegram, alice, panel, "0") == "Saved."
    assert "Bob → 老王 2" in panel.text and "Bob → Dave 8" in panel.text
    assert "Bob → 老王 6 (kong money passed on)" in panel.text and "Bob → Dave 6" in panel.text
    assert totals(panel) == {"Alice": -2, "老王": 6, "Dave": 12, "Bob": -16}
    assert "老王 ✓" in panel.text and "Dave ✓" in panel.text

    # The wall runs out with Alice and Bob still in: Alice is ready, Bob holds three suits.
    await tap(telegram, alice, panel, "Wall empty")
    assert "Alice's tiles" in panel.text
    await reply(telegram, alice, group, panel, "123m456m789m234p6p")
    assert "Bob's tiles" in panel.text
    await reply(telegram, bob, group, panel, "(5555s) 123m 456p 789s 1m")
    # The pig pays 16 to Alice; Bob's kong money was passed on, so there is nothing to refund.
    assert "Last: Wall empty: Alice ready (1×), Bob three suits" in panel.text
    assert "Bob → Alice 16 (three suits penalty)" in panel.text
    assert "refunded" not in panel.text
    assert "hand 2" in panel.text
    assert totals(panel) == {"Alice": 14, "老王": 6, "Dave": 12, "Bob": -32}

    await tap(telegram, alice, panel, "End")
    assert "End this session?" in panel.text
    await (await alice.press(panel, "End it")).answer()
    summary = await telegram.wait_for_bot_message(group, lambda m: m.photo is not None)
    assert "is over. Records: 3, hands: 1." in summary.caption
    assert "Bob: -32" in summary.caption and "Alice: +14" in summary.caption

    storage = services(app).storage
    assert await storage.verify() == []
    ledger = await storage.ledger(group.id)
    assert any(e.reason.startswith("undo:") for e in ledger)  # the undo is a compensating entry
    net: dict[str, int] = {}
    for e in ledger:
        net[e.payer_name] = net.get(e.payer_name, 0) - e.amount
        net[e.payee_name] = net.get(e.payee_name, 0) + e.amount
    assert net == {"Alice": 14, "老王": 6, "Dave": 12, "Bob": -32}
    assert telegram.unanswered_presses() == []


async def test_players_by_reply_by_name_and_clear_answers_to_bad_names(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Real tiles", members=[alice, bob], admins=[alice])
    await alice.send(group, "/lang en")
    await telegram.wait_for_bot_message(group, lambda m: "Language" in (m.text or ""))

    async def answer_to(text: str, reply_to: ChatMessage | None = None) -> ChatMessage:
        sent = await alice.send(group, text, reply_to=reply_to)
        return await telegram.wait_for_bot_message(group, lambda m: True, after=sent.message_id)

    assert "@dave" in (await answer_to("/keep me Carol @dave")).text  # usernames can't be looked up
    assert "appears once" in (await answer_to("/keep me Carol carol")).text
    assert "you named 5" in (await answer_to("/keep me A B C D")).text
    assert "groups" in (await telegram.wait_for_bot_message(
        alice, lambda m: True, after=(await alice.send(alice, "/keep")).message_id)).text

    # Names listed as a Chinese keyboard lists them, with its commas and no spaces.
    listed = await answer_to("/keep 我，老王、小李")
    assert "(3/4): Alice, 老王, 小李" in listed.text
    await (await alice.press(listed, "Cancel")).answer()
    await telegram.wait_for(lambda: listed.text == "Scorekeeping cancelled.", what="the listed lobby to close")

    lobby = await answer_to("/keep Carol")
    refused = await bob.press(lobby, "Cancel")
    assert "Only whoever opened it" in (await refused.answer() or "")
    await (await alice.press(lobby, "Cancel")).answer()
    await telegram.wait_for(lambda: lobby.text == "Scorekeeping cancelled.", what="the lobby to close")

    hello = await bob.send(group, "Shall we play?")
    panel = await answer_to("/keep me Carol Dave", reply_to=hello)  # Bob is named by the reply
    assert panel.text.startswith("Scorekeeping #")
    session = (await services(app).storage.open_sessions(group.id))[0]
    players = [await services(app).storage.get_player(p) for p in session.seats]
    assert [(p.name, p.user_id) for p in players] == [("Bob", bob.id), ("Alice", alice.id), ("Carol", None),
                                                     ("Dave", None)]
    again = await answer_to("/keep")
    assert "already open" in again.text

    # A restart keeps the session: the old panel's buttons still work, the hand is rebuilt from records.
    for text in ("Kong", "Carol", "concealed"):
        await tap(telegram, alice, panel, text)
    await start_bot.stop(app)
    await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
    for text in ("Win on a discard", "Carol", "Dave", "Next", "plain", "0"):
        await tap(telegram, alice, panel, text)
    assert totals(panel) == {"Bob": -2, "Alice": -2, "Carol": 5, "Dave": -1}
    assert "Dave ✓" in panel.text and "Carol → Dave 1 (win on a discard)" in panel.text

    # Empty wall with positions declared instead of tiles: Bob not ready, Alice three suits, Carol ready.
    for text in ("Wall empty", "Bob: not ready", "Alice: three suits"):
        await tap(telegram, alice, panel, text)
    assert "Carol's tiles" in panel.text
    await reply(telegram, alice, group, panel, "(2222m) 456m789m234p6p")  # ready: 平胡 + a root; keeps her kong money
    assert "Alice → Bob 16" in panel.text and "Alice → Carol 16" in panel.text
    assert "Bob → Carol 2 (not ready)" in panel.text and "refunded" not in panel.text
    assert totals(panel) == {"Bob": 12, "Alice": -34, "Carol": 23, "Dave": -1}


async def alice_keeps_score_for_four(telegram: FakeTelegram,
                                    start_bot: BotFactory) -> tuple[FakeUser, FakeChat, ChatMessage]:
    """Alice opens /keep in an English group for herself and three friends named in the command."""
    await start_bot(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = telegram.group("Real tiles", members=[alice], admins=[alice])
    await alice.send(group, "/lang en")
    await telegram.wait_for_bot_message(group, lambda m: "Language" in (m.text or ""))
    sent = await alice.send(group, "/keep me Bob Carol Dave")
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"),
                                                after=sent.message_id)
    return alice, group, panel


async def test_a_double_tap_acts_once(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    """Found by a driver pressing panels at random: at an empty wall the second tap of a double
    tap on "Alice: three suits" declared the next player (Bob) a 花猪 too, and a double tap on a
    winner's name took the choice back. The panel's buttons now name the entry's moves."""
    alice, _, panel = await alice_keeps_score_for_four(telegram, start_bot)

    await tap(telegram, alice, panel, "Self-draw")
    name = panel.button("Carol").callback_data
    first, second = await alice.press(panel, data=name), await alice.press(panel, data=name, check=False)
    assert {await first.answer(), await second.answer()} == {None, "That button is out of date."}
    await telegram.wait_for(lambda: "✓ Carol" in [b.text for b in panel.buttons], what="Carol chosen once")

    await tap(telegram, alice, panel, "Cancel")
    await tap(telegram, alice, panel, "Wall empty")
    assert "Alice's tiles" in panel.text
    flower_pig = panel.button("Alice: three suits").callback_data
    first, second = (await alice.press(panel, data=flower_pig),
                     await alice.press(panel, data=flower_pig, check=False))
    assert {await first.answer(), await second.answer()} == {None, "That button is out of date."}
    await telegram.wait_for(lambda: "Bob's tiles" in panel.text, what="the next player asked")
    await telegram.settle()
    assert "Bob's tiles" in panel.text and "Carol's tiles" not in panel.text


async def test_a_mistyped_hand_can_be_fixed_by_editing_the_reply(telegram: FakeTelegram,
                                                                  start_bot: BotFactory) -> None:
    """People fix a typo by editing what they sent. The panel shows why the tiles were refused and
    asks the same question, so the edited reply answers it."""
    alice, group, panel = await alice_keeps_score_for_four(telegram, start_bot)
    await tap(telegram, alice, panel, "Wall empty")
    before = panel.edit_count
    typed = await alice.send(group, "123m456m789m234p", reply_to=panel)  # one tile short
    await telegram.wait_for(lambda: panel.edit_count > before, what="the panel to show the mistake")
    assert "tiles" in panel.text and "Alice's tiles" in panel.text

    before = panel.edit_count
    await alice.edit(typed, "123m456m789m234p6p")
    await telegram.wait_for(lambda: panel.edit_count > before and "Bob's tiles" in panel.text,
                            what="the fixed tiles taken and the next player asked")


def photographed(hand: str) -> bytes:
    """A picture of the tiles in a row, drawn with the bot's own tile art (which the recogniser reads)."""
    from rendering import encode_png, render_tiles

    return encode_png(render_tiles(parse_tiles(hand)))


async def test_a_winning_hand_photographed_in_reply_is_corrected_and_recorded(telegram: FakeTelegram,
                                                                              start_bot: BotFactory) -> None:
    """The panel asks for a winner's tiles; a photo in reply is read, offered for correction with
    taps like any photo, and its Record button answers the panel's question as typed tiles would."""
    alice, group, panel = await alice_keeps_score_for_four(telegram, start_bot)
    early = await alice.send_photo(group, photographed("1112345678999m5m"), reply_to=panel)
    refused = await telegram.wait_for_bot_message(group, after=early.message_id)
    assert refused.text == "No tiles are asked for right now; use the buttons first."  # and the photo is not read
    await tap(telegram, alice, panel, "Self-draw")
    await tap(telegram, alice, panel, "Carol")
    await tap(telegram, alice, panel, "Next")
    assert "Value of Carol's win" in panel.text
    sent = await alice.send_photo(group, photographed("1112345678999m5m"), reply_to=panel)
    fixing = await telegram.wait_for_bot_message(group, lambda m: m.photo_file_id is not None, after=sent.message_id)
    assert "Then press Record." in fixing.caption
    assert "Value of Carol's win" in panel.text  # nothing recorded before the tiles are checked

    # Bob is not the one who sent the photo; Alice first makes it a non-win, and Record says why.
    assert await (await telegram.user("Bob").press(fixing, "Record", check=False)).answer() is not None
    nine = next(b for b in fixing.buttons if b.text.startswith("9m"))
    for step in (nine.text, "Remove", "✅ Record"):
        await tap(telegram, alice, fixing, step)
    assert "13 tiles" in fixing.caption and "Value of Carol's win" in panel.text

    # Put the 9m back, and Record: the panel takes the hand (清一色 4, self-draw: 1 + 4 from each).
    for step in ("➕ Add a tile", "characters", "9m"):
        await tap(telegram, alice, fixing, step)
    before = panel.edit_count
    await tap(telegram, alice, fixing, "✅ Record")
    await telegram.wait_for(lambda: panel.edit_count > before and "Value of" not in panel.text,
                            what="the panel to take the photographed hand")
    assert totals(panel) == {"Alice": -5, "Bob": -5, "Carol": 15, "Dave": -5}
    await telegram.wait_for(lambda: fixing.caption == "Recorded on the scorekeeping panel: 1112345567899m +9m",
                            what="the correction to say where its hand went")
    assert not [b for b in fixing.buttons if b.callback_data]

    # At an empty wall the panel asks for a player's 13 tiles: no winning tile is shown or offered.
    await tap(telegram, alice, panel, "Wall empty")
    assert "Alice's tiles" in panel.text
    sent = await alice.send_photo(group, photographed("1112345678999m"), reply_to=panel)
    tiles = await telegram.wait_for_bot_message(group, lambda m: m.photo_file_id is not None, after=sent.message_id)
    assert "The hand: 1112345678999m (tiles: 13)" in tiles.caption and "winning tile" not in tiles.caption
    await tap(telegram, alice, tiles, next(b.text for b in tiles.buttons if b.text.startswith("5m")))
    assert "Winning tile" not in [b.text for b in tiles.buttons] and "Remove" in [b.text for b in tiles.buttons]
    await tap(telegram, alice, tiles, "↩ Back")
    before = panel.edit_count
    await tap(telegram, alice, tiles, "✅ Record")
    await telegram.wait_for(lambda: panel.edit_count > before and "Bob's tiles" in panel.text,
                            what="the panel to take Alice's tiles and ask Bob's")
    assert tiles.caption == "Recorded on the scorekeeping panel: 1112345678999m"


async def test_the_plain_word_记账_opens_a_lobby_where_the_bot_reads_the_group(tmp_path, monkeypatch) -> None:
    for name in clean_environment():
        monkeypatch.delenv(name)
    async with FakeTelegram(privacy_mode=False) as telegram:
        factory = BotFactory(telegram, tmp_path / "xuezhan.db")
        try:
            await factory(rate_limiter=quick_limiter(), XUEZHAN_LANG="en")
            alice = telegram.user("Alice")
            group = telegram.group("Real tiles", members=[alice], admins=[alice])
            await alice.send(group, "/lang en")
            await telegram.wait_for_bot_message(group, lambda m: "Language" in (m.text or ""))
            await alice.send(group, "记账 我 老王")
            lobby = await telegram.wait_for_bot_message(group, lambda m: "I'm in" in str(m.buttons))
            assert "(2/4): Alice, 老王" in lobby.text
            await alice.send(group, "let's keep score later")  # other words are left alone
            await telegram.settle()
            assert telegram.bot_messages(group)[-1] is lobby
        finally:
            await factory.close()


# --- the bookkeeping underneath, without Telegram ------------------------------------------------

WORKED_HANDS = (
    "123m345m789m234p66p", "111m333m444m222p66p", "11224466m558899p", "11112244m558899p",
    "11224444557799m", "123m123m123m789m99m", "123333m45566799s", "66p [111m] [333m] [444m] [222p]",
    "123m456m78m77p (5555p) +9m", "234m567m345p678p1p +1p",
)
SITUATIONS = (frozenset(), frozenset({Situation.SELF_DRAW}),
              frozenset({Situation.SELF_DRAW, Situation.KONG_REPLACEMENT}),
              frozenset({Situation.AFTER_KONG_DISCARD, Situation.LAST_TILE}))
RULESETS = (RuleSet(), RuleSet(cap=None), RuleSet(self_draw=SelfDrawBonus.DOUBLE, cap=16),
            RuleSet(self_draw=SelfDrawBonus.NONE, last_tile_bonus=False))


@pytest.mark.parametrize("text", WORKED_HANDS)
def test_a_picked_pattern_and_roots_pay_what_the_typed_hand_scores(text: str) -> None:
    for situations in SITUATIONS:
        for rules in RULESETS:
            scored = book.typed_score(text, situations, rules)
            picked = book.picked_value(scored.pattern, scored.roots, scored.hand.situations, rules)
            assert (picked.multiplier, picked.payment_per_payer) == (scored.multiplier, scored.payment_per_payer)


@dataclass
class Rec:
    seq: int
    record: dict
    undoes: int | None = None
    undone_by: int | None = None


def win(seq: int, *seats: int, hand: int = 1) -> Rec:
    return Rec(seq, {"kind": "win", "hand": hand, "winners": [{"seat": s} for s in seats]})


def test_the_hand_state_follows_the_mode_and_ignores_undone_records() -> None:
    kong = Rec(0, {"kind": "kong", "konger": 1, "type": "concealed", "discarder": None,
                   "transfers": [{"payer": p, "payee": 1, "amount": 2, "reason": "kong_concealed"} for p in (0, 2, 3)]})
    battle = RuleSet()
    state = book.hand_state([kong, win(1, 2, 3)], battle)
    assert state.number == 1 and state.still_in(battle) == [0, 1] and state.kongs[0].collected == 6
    assert book.hand_state([kong, win(1, 2, 3), win(2, 0)], battle).number == 2  # three have won
    undone = [kong, Rec(1, win(1, 2, 3).record, undone_by=3), win(2, 0), Rec(3, {"undo": 1}, undoes=1)]
    assert book.hand_state(undone, battle).still_in(battle) == [1, 2, 3]
    river = RuleSet(mode=GameMode.BLOODY_RIVER)
    assert book.hand_state([win(0, 2, 3), win(1, 0)], river).still_in(river) == [0, 1, 2, 3]
    first = RuleSet(mode=GameMode.FIRST_WIN)
    assert book.hand_state([kong, win(1, 2)], first) == book.HandState(number=2)
    passed = Rec(1, {**win(1, 2).record, "call_transfer_from": 1})
    after = book.hand_state([kong, passed], battle)
    assert after.kongs == [] and after.last_kong(1) is None  # 呼叫转移: the konger no longer holds it
    transfers, passed_from = book.discard_win_transfers(after, 1, [(0, book.picked_value(
        Pattern.PLAIN, 0, frozenset({Situation.AFTER_KONG_DISCARD}), battle))],
        frozenset({Situation.AFTER_KONG_DISCARD}), battle)
    assert passed_from is None and [t.amount for t in transfers] == [2]  # nothing left to pass on twice


def test_a_declared_position_settles_like_tiles_showing_it_and_a_konger_not_ready_refunds() -> None:
    rules = RuleSet()
    kong = Rec(0, {"kind": "kong", "konger": 0, "type": "added", "discarder": None,
                   "transfers": [{"payer": p, "payee": 0, "amount": 1, "reason": "kong_added"} for p in (1, 2, 3)]})
    state = book.hand_state([kong, win(1, 3)], rules)
    hands = [book.declared_hand(0, book.NOT_READY), book.final_hand("123m456m789m234p6p", 1),
             book.declared_hand(2, book.FLOWER_PIG)]
    end = book.wall_transfers(state, hands, rules)
    assert [(s.seat, s.flower_pig, s.ready) for s in end.statuses] == [(0, False, False), (1, False, True),
                                                                      (2, True, False)]
    paid = {(t.payer, t.payee, t.reason.value): t.amount for t in end.transfers}
    assert paid == {(2, 0, "flower_pig"): 16, (2, 1, "flower_pig"): 16, (0, 1, "not_ready"): 1,
                    (0, 1, "tax_refund"): 1, (0, 2, "tax_refund"): 1, (0, 3, "tax_refund"): 1}
