"""Recording on the panel: each press moves the entry one step; the last one saves a record.

Presses and typed hands (replies to the panel) of one session are serialised by its lock.
The transfers come from ``bot.keep.book`` (``engine.settlement`` under the chat's rules) and are
booked with the record in one storage call.
"""

from __future__ import annotations

import re
from typing import Any

from telegram import CallbackQuery, Message, Update
from telegram.ext import filters

from bot.feature import Context
from bot.i18n import N_, Translator
from bot.keep import book
from bot.keep.drafts import DISCARD_FLAGS, SELF_DRAW_FLAGS, Draft, Keeper, keeper
from bot.keep.panel import (
    MAX_ROOTS,
    PATTERNS,
    PRESS,
    View,
    edit_message,
    load_view,
    refresh,
    version,
    wall_seat,
)
from bot.messaging import is_image, picture_or_text
from bot.score.fixing import Finish
from bot.score.photo import offer_fixing, read_photo
from bot.services import services, texts_for
from bot.topics import in_topic
from engine.settlement import FinalHand, KongKind
from engine.tiles import DescribedHand, HandError, format_hand
from rendering.models import TallyEntry
from storage import NotFound
from storage.models import SessionStatus

HAND_ERRORS = {
    "parse": N_("I can't read that hand (at character {position}). Write tiles like 123m456p (m 万, p 筒, s 条), "
                "melds in []."),
    "tile_count": N_("That hand has {found} tiles; it needs {expected} (a kong counts as three)."),
    "too_many_copies": N_("{tile} appears {count} times; there are only four of each tile."),
    "three_suits": N_("That hand holds all three suits, so it cannot win."),
    "not_a_win": N_("Those tiles are not a win (four sets and a pair, or seven pairs)."),
}


def may_record(view: View, user_id: int, context: Context) -> bool:
    """The session's seated Telegram users, whoever opened it, and the bot's admins."""
    return (user_id in view.user_ids or user_id == view.session.creator_id
            or user_id in services(context).settings.admins)


async def panel_press(update: Update, context: Context) -> None:
    """A press is answered and recorded holding the session's lock; the panel is redrawn after
    the lock is let go. The redraw is a group edit, which waits for the group's turn (20 a
    minute): made holding the lock, it kept the next press from being answered for seconds."""
    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    texts = await texts_for(update, context)
    match = PRESS.match(query.data)
    assert match is not None
    if await _press_holding_the_lock(query, user.id, match, context, texts):
        await refresh(context, query.message, int(match[1]), texts)


async def _press_holding_the_lock(query: CallbackQuery, user_id: int, match: re.Match[str], context: Context,
                                  texts: Translator) -> bool:
    """Answer and record a press; whether the panel is to be redrawn."""
    session_id, pressed_version, code, arg = int(match[1]), match[2], match[3], match[4]
    found = keeper(context)
    async with found.lock(session_id):
        try:
            view = await load_view(context, session_id)
        except NotFound:  # a forged or ancient button: answer it like any other stale one
            await query.answer(texts.t("This button is no longer active."))
            return False
        chat_id = query.message.chat.id if query.message else None
        if view.session.chat_id != chat_id or view.session.status is not SessionStatus.OPEN:
            await query.answer(texts.t("This button is no longer active."))
            return False
        draft = found.drafts.get(session_id)
        if pressed_version != version(view, draft):
            await query.answer(texts.t("That button is out of date."))
            return True
        if not may_record(view, user_id, context):
            await query.answer(texts.t("Only the players of this session can record."), show_alert=True)
            return False
        if code == "ey" and draft is not None and draft.step == "confirm_end":
            await query.answer()
            await finish(context, query.message, view, texts)
            return False
        answer = await apply_press(context, view, draft, code, arg, texts)
        _moved(found, session_id, draft)
        await query.answer(answer)
        return True


def _moved(found: Keeper, session_id: int, draft: Draft | None) -> None:
    """Count a press or reply taken by a draft that goes on (its panel's buttons change version)."""
    if draft is not None and found.drafts.get(session_id) is draft:
        draft.moves += 1


def _seat(arg: str | None, allowed: list[int]) -> int | None:
    seat = int(arg) if arg is not None and arg.isdigit() else None
    return seat if seat in allowed else None


async def apply_press(context: Context, view: View, draft: Draft | None, code: str, arg: str | None,
                      texts: Translator) -> str | None:
    """Move the draft one step (or save it); the text answers the press (None: no text)."""
    drafts, sid = keeper(context).drafts, view.session.id
    still_in = view.state.still_in(view.rules)
    stale = texts.t("That button is out of date.")
    if draft is None:
        if code == "d":
            drafts[sid] = Draft("discard", "discarder")
        elif code == "s":
            drafts[sid] = Draft("self", "winners")
        elif code == "k":
            drafts[sid] = Draft("kong", "konger")
        elif code == "w":
            if len(still_in) < 2:
                return texts.t("Fewer than two players are still in: nothing to check.")
            drafts[sid] = Draft("wall", "wall_hand")
        elif code == "u":
            undone = await services(context).storage.undo_last_record(sid)
            return texts.t("Undone.") if undone else texts.t("Nothing to undo.")
        elif code == "e":
            drafts[sid] = Draft("end", "confirm_end")
        else:
            return stale
        return None
    if code == "x":
        drafts.pop(sid, None)
        return texts.t("Cancelled.")
    draft.error = ""
    if code == "dd" and draft.step == "discarder":
        seat = _seat(arg, still_in)
        if seat is None:
            return stale
        draft.discarder, draft.step = seat, "winners"
    elif code == "t" and draft.step == "winners":
        seat = _seat(arg, [s for s in still_in if s != draft.discarder])
        if seat is None:
            return stale
        if seat in draft.winners:
            draft.winners.remove(seat)
        elif draft.kind == "self":
            draft.winners = [seat]
        else:
            draft.winners.append(seat)
    elif code == "f" and draft.step == "winners":
        allowed = SELF_DRAW_FLAGS if draft.kind == "self" else DISCARD_FLAGS
        if arg not in allowed:
            return stale
        draft.flags ^= {arg}
    elif code == "n" and draft.step == "winners":
        if not draft.winners:
            return texts.t("Pick the winner first.")
        draft.step = "value"
    elif code == "p" and draft.step == "value":
        if arg is None or not arg.isdigit() or int(arg) >= len(PATTERNS):
            return stale
        draft.pattern, draft.step = PATTERNS[int(arg)], "roots"
    elif code == "r" and draft.step == "roots":
        if arg is None or not arg.isdigit() or int(arg) > MAX_ROOTS or draft.pattern is None:
            return stale
        value = book.picked_value(draft.pattern, int(arg), draft.situations, view.rules)
        return await valued(context, view, draft, value, value.to_dict(), texts)
    elif code == "kk" and draft.step == "konger":
        seat = _seat(arg, still_in)
        if seat is None:
            return stale
        draft.konger, draft.step = seat, "kong_kind"
    elif code == "kt" and draft.step == "kong_kind":
        kinds = {k.value[0]: k for k in KongKind}
        if arg not in kinds:
            return stale
        draft.kong_kind = kinds[arg]
        if draft.kong_kind is KongKind.DIRECT:
            draft.step = "kong_discarder"
            return None
        return await save_kong(context, view, draft, texts)
    elif code in ("wp", "wn") and draft.step == "wall_hand":
        seat = wall_seat(view, draft)
        declared = book.FLOWER_PIG if code == "wp" else book.NOT_READY
        draft.declared[seat] = declared
        return await wall_position(context, view, draft, book.declared_hand(seat, declared), texts)
    elif code == "kd" and draft.step == "kong_discarder":
        seat = _seat(arg, [s for s in still_in if s != draft.konger])
        if seat is None:
            return stale
        draft.discarder = seat
        return await save_kong(context, view, draft, texts)
    else:
        return stale
    return None


async def valued(context: Context, view: View, draft: Draft, value: Any, value_json: dict[str, Any],
                 texts: Translator) -> str | None:
    """One winner's value is known; ask for the next one or save the win."""
    seat = draft.next_unvalued()
    assert seat is not None
    draft.values[seat] = (value, value_json)
    draft.pattern = None
    if draft.next_unvalued() is not None:
        draft.step = "value"
        return None
    return await save_win(context, view, draft, texts)


async def save_win(context: Context, view: View, draft: Draft, texts: Translator) -> str | None:
    state, rules = view.state, view.rules
    values = [(w, draft.values[w][0]) for w in draft.winners]
    passed_from = None
    if draft.kind == "self":
        transfers = book.self_draw_transfers(state, draft.winners[0], values[0][1], draft.situations, rules)
    else:
        assert draft.discarder is not None
        transfers, passed_from = book.discard_win_transfers(state, draft.discarder, values, draft.situations, rules)
    record = {
        "kind": book.WIN, "hand": state.number, "names": view.names, "discarder": draft.discarder,
        "winners": [{"seat": w, "value": draft.values[w][1]} for w in draft.winners],
        "situations": sorted(s.value for s in draft.situations),
        "call_transfer_from": passed_from,
        "transfers": [t.to_dict() for t in transfers],
    }
    await services(context).storage.add_record(view.session.id, record, transfers)
    keeper(context).drafts.pop(view.session.id, None)
    return texts.t("Saved.")


async def save_kong(context: Context, view: View, draft: Draft, texts: Translator) -> str | None:
    assert draft.konger is not None and draft.kong_kind is not None
    transfers = book.kong_transfers(view.state, draft.konger, draft.kong_kind, draft.discarder, view.rules)
    record = {"kind": book.KONG, "hand": view.state.number, "names": view.names, "konger": draft.konger,
              "type": draft.kong_kind.value, "discarder": draft.discarder,
              "transfers": [t.to_dict() for t in transfers]}
    await services(context).storage.add_record(view.session.id, record, transfers)
    keeper(context).drafts.pop(view.session.id, None)
    return texts.t("Saved.")


async def wall_position(context: Context, view: View, draft: Draft, hand: FinalHand,
                        texts: Translator) -> str | None:
    """One player's position at the empty wall is known; ask for the next or settle."""
    draft.hands[hand.seat] = hand
    if any(s not in draft.hands for s in view.state.still_in(view.rules)):
        return None
    await save_wall(context, view, draft)
    return texts.t("Saved.")


async def save_wall(context: Context, view: View, draft: Draft) -> None:
    end = book.wall_transfers(view.state, list(draft.hands.values()), view.rules)
    statuses = [{**s.to_dict(), "declared": draft.declared.get(s.seat)} for s in end.statuses]
    record = {"kind": book.WALL, "hand": view.state.number, "names": view.names,
              "statuses": statuses, "transfers": [t.to_dict() for t in end.transfers]}
    await services(context).storage.add_record(view.session.id, record, end.transfers)
    keeper(context).drafts.pop(view.session.id, None)


async def finish(context: Context, message: Any, view: View, texts: Translator) -> None:
    """End the session: the panel becomes its summary, with a chart of who is up and down."""
    storage = services(context).storage
    keeper(context).drafts.pop(view.session.id, None)
    await storage.end_session(view.session.id)
    totals = await storage.session_totals(view.session.id)
    counted = [r for r in view.records if r.undoes is None and r.undone_by is None]
    hands = len({r.record.get("hand") for r in counted})
    lines = [texts.t("Scorekeeping #{id} is over. Records: {records}, hands: {hands}.", id=view.session.id,
                     records=len(counted), hands=hands)]
    lines += [f"• {t.name}: {t.net:+d}" for t in totals]
    await edit_message(message, "\n".join(lines), None)
    from rendering import encode_png, render_tally_chart  # Pillow loads with the first picture

    chart = render_tally_chart([TallyEntry(t.name, t.net) for t in totals],
                               title=texts.t("Scorekeeping #{id}", id=view.session.id))
    chat_id, text = view.session.chat_id, "\n".join(lines)
    await in_topic(lambda topic: picture_or_text(
        lambda: context.bot.send_photo(chat_id, encode_png(chart), caption=text, message_thread_id=topic),
        lambda: context.bot.send_message(chat_id, text, message_thread_id=topic)), view.session.topic_id)


# --- typed hands: replies to the panel ------------------------------------------------------------


class ReplyToPanel(filters.MessageFilter):
    """A reply with text or a photo to a message carrying scorekeeping buttons (so other replies
    pass by)."""

    def filter(self, message: Message) -> bool:
        replied = message.reply_to_message
        if replied is None or replied.reply_markup is None or not (message.text or is_image(message)):
            return False
        return any((b.callback_data or "").startswith("kp:") for row in replied.reply_markup.inline_keyboard
                   for b in row if isinstance(b.callback_data, str))


def hand_error_text(error: HandError, texts: Translator) -> str:
    """The engine's reason in the chat's language (its params fill the fields; else a plain hint)."""
    try:
        return texts.t(HAND_ERRORS[error.code], **error.params)
    except KeyError:
        return texts.t("I can't read that hand. Write tiles like 123m456p (m 万, p 筒, s 条), melds in [].")


async def hand_reply(update: Update, context: Context) -> None:
    """Tiles for the panel's question, typed or photographed. A photo is read (``bot.score.photo``)
    and offered for correction with taps; its Record button answers the question as typed tiles
    would, if the panel still asks it."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None or message.reply_to_message is None:
        return
    texts = await texts_for(update, context)
    panel = message.reply_to_message
    markup = panel.reply_markup
    assert markup is not None
    data = next(b.callback_data for row in markup.inline_keyboard for b in row
                if isinstance(b.callback_data, str) and b.callback_data.startswith("kp:"))
    match = PRESS.match(str(data))
    if match is None:
        return
    session_id, asked = int(match[1]), match[2]
    found = keeper(context)
    async with found.lock(session_id):
        question = await _question(context, session_id, asked, message.chat.id, user.id)
        refusal = question if isinstance(question, str) else None
        winning = not isinstance(question, str) and question[1].step == "value"  # else the tiles at the wall
        if not isinstance(question, str) and message.text is not None:
            await _answer(context, session_id, *question, message.text, texts)
    if refusal is not None:  # said after the lock: a group reply waits for the group's turn
        await message.reply_text(texts.t(refusal))
        return
    if message.text is not None:
        await refresh(context, panel, session_id, texts)  # after the lock: see panel_press
        return
    fixing = await read_photo(message, user.id, context, texts)
    if fixing is not None:
        async def take(context: Context, hand: DescribedHand, user_id: int) -> str | None:
            return await _photographed(context, panel, session_id, asked, hand, user_id, texts)

        fixing.finish = Finish(N_("Record"), N_("Recorded on the scorekeeping panel: {hand}"), take, winning)
        await offer_fixing(message, fixing, context, texts)


async def _question(context: Context, session_id: int, asked: str, chat_id: int,
                    user_id: int) -> tuple[View, Draft] | str:
    """The session and the entry whose question (at version ``asked``) tiles sent now by
    ``user_id`` answer; or why they cannot be taken (a text to translate). Called holding the
    session's lock."""
    try:
        view = await load_view(context, session_id)
    except NotFound:
        return N_("No tiles are asked for right now; use the buttons first.")
    draft = keeper(context).drafts.get(session_id)
    if (view.session.chat_id != chat_id or view.session.status is not SessionStatus.OPEN
            or draft is None or draft.step not in ("value", "wall_hand")):
        return N_("No tiles are asked for right now; use the buttons first.")
    if asked != version(view, draft):  # sent for a question that has been answered since
        return N_("The panel has moved on since; reply to it as it is now.")
    if not may_record(view, user_id, context):
        return N_("Only the players of this session can record.")
    return view, draft


async def _answer(context: Context, session_id: int, view: View, draft: Draft, text: str,
                  texts: Translator) -> str | None:
    """Take ``text`` as the tiles the panel asks for; the reason they are not a hand, or None.
    The reason is also shown on the panel, under the question, which stands: so a typed reply may
    be edited to answer it. Called holding the session's lock, with what ``_question`` found."""
    found = keeper(context)
    try:
        if draft.step == "value":
            scored = book.typed_score(text, draft.situations, view.rules)
            await valued(context, view, draft, scored, scored.to_dict(), texts)
        else:
            await wall_position(context, view, draft, book.final_hand(text, wall_seat(view, draft)), texts)
        _moved(found, session_id, draft)
    except HandError as error:
        draft.error = hand_error_text(error, texts)
        return draft.error
    return None


async def _photographed(context: Context, panel: Message, session_id: int, asked: str, hand: DescribedHand,
                        user_id: int, texts: Translator) -> str | None:
    """Record pressed on a photo's correction: its hand answers the panel's question if the
    panel still asks it. The reason it does not, or None."""
    async with keeper(context).lock(session_id):
        question = await _question(context, session_id, asked, panel.chat_id, user_id)
        if isinstance(question, str):
            return texts.t(question)
        problem = await _answer(context, session_id, *question, format_hand(hand), texts)
    # Redrawn without waiting: the caller holds the correction's lock, and a group edit waits its turn.
    context.application.create_task(refresh(context, panel, session_id, texts))
    return problem
