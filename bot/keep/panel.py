"""The session's panel message: each player's net, the last record, and the question being asked."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.error import BadRequest

from bot.feature import AnyApplication, Context
from bot.i18n import Translator
from bot.keep import book
from bot.keep.drafts import DISCARD_FLAGS, FLAG_CODES, SELF_DRAW_FLAGS, Draft, keeper
from bot.keep.words import FLAGS, KONG_KINDS, pattern_label, record_words, transfer_lines, value_words
from bot.messaging import is_not_modified
from bot.rules_menu import preset_words
from bot.services import services
from bot.topics import in_topic
from engine.rules import RuleSet
from engine.scoring import Pattern
from engine.settlement import KongKind, Transfer
from storage.models import ScoreSession

# session, version (records, and the draft's moves), code, argument (ids of at most 18 digits:
# SQLite's integers hold 19)
PRESS = re.compile(r"^kp:(\d{1,18}):(\d{1,18}(?:\.\d{1,6})?):([a-z]+)(?::([a-z0-9]{1,8}))?$")
PATTERNS = tuple(Pattern)
MAX_ROOTS = 4


@dataclass(frozen=True)
class View:
    """What a session's panel needs: the session, names per seat, rules, records, current hand."""

    session: ScoreSession
    names: list[str]
    user_ids: list[int | None]
    rules: RuleSet
    records: list[Any]
    state: book.HandState


async def load_view(context: Context | AnyApplication, session_id: int) -> View:
    storage = services(context).storage
    session = await storage.get_session(session_id)
    players = [await storage.get_player(pid) for pid in session.seats]
    chat = await storage.get_chat(session.chat_id)
    rules = RuleSet.from_dict(chat.rules).with_changes(base=chat.base_stake)
    records = await storage.session_records(session_id)
    state = book.hand_state(records, rules, len(players))
    return View(session, [p.name for p in players], [p.user_id for p in players], rules, records, state)


async def panel_text(context: Context | AnyApplication, view: View, draft: Draft | None, texts: Translator) -> str:
    totals = {t.player_id: t.net for t in await services(context).storage.session_totals(view.session.id)}
    lines = [texts.t("Scorekeeping #{id} — hand {hand}", id=view.session.id, hand=view.state.number),
             texts.t("Rules: {preset}, base stake {base} (/rules)",
                     preset=preset_words(view.rules.preset_name(), texts), base=view.rules.base)]
    for seat, pid in enumerate(view.session.seats):
        mark = " ✓" if seat in view.state.won else ""
        lines.append(f"• {view.names[seat]}{mark}: {totals.get(pid, 0):+d}")
    last = [r for r in view.records if r.undoes is None and r.undone_by is None]
    if view.records and draft is None:
        newest = view.records[-1]
        if newest.undoes is not None:
            target = next((r for r in view.records if r.id == newest.undoes), None)
            what = record_words(target.record, view.names, texts) if target is not None else ""
            lines += ["", texts.t("Undone: {what}", what=what)]
        elif last:
            transfers = [Transfer.from_dict(t) for t in last[-1].record.get("transfers", [])]
            lines.append("")
            lines.append(texts.t("Last: {what}", what=record_words(last[-1].record, view.names, texts)))
            lines.extend(transfer_lines(transfers, view.names, texts) or [texts.t("(no chips moved)")])
    if draft is not None:
        lines.append("")
        lines.extend(draft_so_far(view, draft, texts))
        lines.append(draft_prompt(view, draft, texts))
        if draft.error:
            lines.append("⚠️ " + draft.error)
    return "\n".join(lines)


def draft_so_far(view: View, draft: Draft, texts: Translator) -> list[str]:
    """What the entry holds already: who won on whose discard, the situation, the values known."""
    names = view.names
    if draft.kind not in ("discard", "self") or not draft.winners:
        return []
    who = ", ".join(names[w] for w in draft.winners)
    head = (texts.t("Self-draw: {wins}", wins=who) if draft.discarder is None else
            texts.t("{discarder} discarded into {wins}", discarder=names[draft.discarder], wins=who))
    flags = [texts.t(FLAGS[FLAG_CODES[c]]) for c in sorted(draft.flags)]
    lines = [head + (f" · {', '.join(flags)}" if flags else "")]
    lines += [f"  {names[w]}: {value_words(v[1], texts)}" for w, v in draft.values.items()]
    return lines


def draft_prompt(view: View, draft: Draft, texts: Translator) -> str:
    names = view.names
    if draft.step == "discarder":
        return texts.t("Who discarded the winning tile?")
    if draft.step == "winners":
        if draft.kind == "self":
            return texts.t("Who won by self-draw? Then press Next.")
        return texts.t("{name} discarded. Who won on it (one or more)? Then press Next.",
                       name=names[draft.discarder or 0])
    if draft.step == "value":
        seat = draft.next_unvalued()
        return texts.t("Value of {name}'s win: reply to this message with the hand (e.g. 123m456m789m234p66p), "
                       "or pick the pattern.", name=names[seat if seat is not None else 0])
    if draft.step == "roots":
        return texts.t("How many roots (根: sets of four) beyond the pattern?")
    if draft.step == "konger":
        return texts.t("Who made the kong?")
    if draft.step == "kong_kind":
        return texts.t("Which kong did {name} make?", name=names[draft.konger or 0])
    if draft.step == "kong_discarder":
        return texts.t("Whose discard did {name} kong?", name=names[draft.konger or 0])
    if draft.step == "confirm_end":
        return texts.t("End this session? Its records stay in the books; a new /keep starts afresh.")
    return texts.t("Wall empty. Reply to this message with {name}'s tiles (13, melds in [], concealed kongs "
                   "in ()), or say below if they hold three suits or are not ready.",
                   name=names[wall_seat(view, draft)])


def wall_seat(view: View, draft: Draft) -> int:
    """At an empty wall, the next player still in whose position is not known yet."""
    return next(s for s in view.state.still_in(view.rules) if s not in draft.hands)


def version(view: View, draft: Draft | None) -> str:
    """The state a panel button acts on: the number of records (an undo is a record too) and,
    while an entry is being made, the presses and replies it has taken.

    A button names it, so a second tap finds a newer state and is refused as stale instead of
    acting twice: on "Undo last", on a player's name (which would take the choice back), or on
    "花猪" at an empty wall (which would declare the next player too). So is any press from an
    older panel.
    """
    return str(len(view.records)) if draft is None else f"{len(view.records)}.{draft.moves}"


def _button(text: str, stamp: str, code: str, arg: object = None) -> InlineKeyboardButton:
    """``stamp``: the panel's session and version, which every button names."""
    return InlineKeyboardButton(text, callback_data=f"kp:{stamp}:{code}" + ("" if arg is None else f":{arg}"))


def _rows(buttons: list[InlineKeyboardButton], width: int) -> list[list[InlineKeyboardButton]]:
    return [buttons[i:i + width] for i in range(0, len(buttons), width)]


def panel_keyboard(view: View, draft: Draft | None, texts: Translator) -> InlineKeyboardMarkup:
    stamp = f"{view.session.id}:{version(view, draft)}"
    if draft is None:
        return InlineKeyboardMarkup([
            [_button(texts.t("Win on a discard"), stamp, "d"), _button(texts.t("Self-draw"), stamp, "s")],
            [_button(texts.t("Kong"), stamp, "k"), _button(texts.t("Wall empty"), stamp, "w")],
            [_button(texts.t("Undo last"), stamp, "u"), _button(texts.t("End"), stamp, "e")],
        ])
    still_in = view.state.still_in(view.rules)
    rows: list[list[InlineKeyboardButton]] = []
    if draft.step in ("discarder", "konger", "kong_discarder"):
        code = {"discarder": "dd", "konger": "kk", "kong_discarder": "kd"}[draft.step]
        seats = [s for s in still_in if s != draft.konger] if draft.step == "kong_discarder" else still_in
        rows = _rows([_button(view.names[s], stamp, code, s) for s in seats], 2)
    elif draft.step == "winners":
        seats = [s for s in still_in if s != draft.discarder]
        rows = _rows([_button(("✓ " if s in draft.winners else "") + view.names[s], stamp, "t", s) for s in seats], 2)
        codes = SELF_DRAW_FLAGS if draft.kind == "self" else DISCARD_FLAGS
        rows += _rows([_button(("✓ " if c in draft.flags else "") + texts.t(FLAGS[FLAG_CODES[c]]), stamp, "f", c)
                       for c in codes], 2)
        rows.append([_button(texts.t("Next"), stamp, "n")])
    elif draft.step == "value":
        rows = _rows([_button(pattern_label(p, texts), stamp, "p", i) for i, p in enumerate(PATTERNS)], 3)
    elif draft.step == "roots":
        rows = [[_button(str(n), stamp, "r", n) for n in range(MAX_ROOTS + 1)]]
    elif draft.step == "kong_kind":
        rows = [[_button(texts.t(KONG_KINDS[k.value]), stamp, "kt", k.value[0]) for k in KongKind]]
    elif draft.step == "confirm_end":
        rows = [[_button(texts.t("End it"), stamp, "ey")]]
    elif draft.step == "wall_hand":
        name = view.names[wall_seat(view, draft)]
        rows = [[_button(texts.t("{name}: three suits (花猪)", name=name), stamp, "wp"),
                 _button(texts.t("{name}: not ready", name=name), stamp, "wn")]]
    rows.append([_button(texts.t("Cancel"), stamp, "x")])
    return InlineKeyboardMarkup(rows)


async def send_panel(context: Context | AnyApplication, session: ScoreSession, texts: Translator) -> Message:
    view = await load_view(context, session.id)
    draft = keeper(context).drafts.get(session.id)
    text, markup = await panel_text(context, view, draft, texts), panel_keyboard(view, draft, texts)
    return await in_topic(lambda topic: context.bot.send_message(session.chat_id, text, reply_markup=markup,
                                                                 message_thread_id=topic), session.topic_id)


async def edit_message(message: Any, text: str, markup: InlineKeyboardMarkup | None) -> None:
    if not isinstance(message, Message):
        return
    try:
        await message.edit_text(text, reply_markup=markup)
    except BadRequest as error:
        if not is_not_modified(error):
            raise


async def refresh(context: Context, message: Any, session_id: int, texts: Translator) -> None:
    """Redraw the panel. The records and the draft are read holding the session's lock, so the
    panel never shows an entry half saved (a complete draft whose record is being written had no
    question left to ask); the edit, which waits for the group's turn, is made after it."""
    found = keeper(context)
    async with found.lock(session_id):
        view = await load_view(context, session_id)
        draft = found.drafts.get(session_id)
        text, markup = await panel_text(context, view, draft, texts), panel_keyboard(view, draft, texts)
    await edit_message(message, text, markup)
