"""/keep (记账): the books of a game played with real tiles, kept by tapping buttons in the group.

A lobby gathers four players (Telegram users pressing "I'm in", or plain names typed after
``/keep`` for friends without Telegram). The session's panel message then records, in a few
taps, wins by discard (one or several winners), self-draws, kongs and the empty-wall checks.
A win's value is a typed hand (a reply to the panel) scored with the chat's rules, or a picked
pattern and roots. Records and their transfers go to the ledger (``storage.add_record``);
"Undo last" books a compensating record. The entry being made (a draft) lives in memory: a
restart loses at most an unfinished entry, never a saved record.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.error import BadRequest
from telegram.ext import CallbackQueryHandler, CommandHandler, MessageHandler, filters

from bot.feature import AnyApplication, Command, Context, Feature
from bot.i18n import N_, Translator
from bot.keep import book
from bot.keep.words import FLAGS, KONG_KINDS, pattern_label, record_words, transfer_lines, value_words
from bot.messaging import is_not_modified
from bot.services import services, texts_for
from engine.rules import RuleSet
from engine.scoring import Pattern
from engine.settlement import FinalHand, KongKind, Transfer
from engine.tiles import HandError, Situation
from rendering import TallyEntry, encode_png, render_tally_chart
from storage.models import PlayerKind, ScoreSession, SessionStatus

KEEPER_KEY = "xuezhan.keeper"
SEATS = 4
MAX_NAME = 32
PRESS = re.compile(r"^kp:(\d+):([a-z]+)(?::(\w+))?$")
LOBBY_PRESS = re.compile(r"^kl:(\d+):(in|x)$")
FLAG_CODES = {"gp": Situation.AFTER_KONG_DISCARD, "qg": Situation.ROBBING_KONG,
              "gh": Situation.KONG_REPLACEMENT, "hd": Situation.LAST_TILE}
DISCARD_FLAGS = ("gp", "qg", "hd")
SELF_DRAW_FLAGS = ("gh", "hd")
PATTERNS = tuple(Pattern)
MAX_ROOTS = 4
HAND_ERRORS = {
    "parse": N_("I can't read that hand: {detail}. Write tiles like 123m456p (m 万, p 筒, s 条), melds in []."),
    "tile_count": N_("That hand has {found} tiles; it needs {expected} (a kong counts as three)."),
    "too_many_copies": N_("{tile} appears {count} times; there are only four of each tile."),
    "three_suits": N_("That hand holds all three suits, so it cannot win."),
    "not_a_win": N_("Those tiles are not a win (four sets and a pair, or seven pairs)."),
}


@dataclass
class Lobby:
    chat_id: int
    creator_id: int
    entries: list[tuple[str, int | None]]  # (name, Telegram user id or None for a plain name)


@dataclass
class Draft:
    """The entry being made on a session's panel, step by step."""

    kind: str  # "discard" | "self" | "kong" | "wall"
    step: str
    discarder: int | None = None
    winners: list[int] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    values: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    pattern: Pattern | None = None
    konger: int | None = None
    kong_kind: KongKind | None = None
    hands: dict[int, FinalHand] = field(default_factory=dict)
    error: str = ""

    @property
    def situations(self) -> frozenset[Situation]:
        out = {FLAG_CODES[c] for c in self.flags}
        if self.kind == "self":
            out.add(Situation.SELF_DRAW)
        return frozenset(out)

    def next_unvalued(self) -> int | None:
        return next((w for w in self.winners if w not in self.values), None)


@dataclass
class Keeper:
    """In-memory parts of scorekeeping: open lobbies, drafts, one lock per session."""

    lobbies: dict[int, Lobby] = field(default_factory=dict)
    drafts: dict[int, Draft] = field(default_factory=dict)
    locks: dict[int, asyncio.Lock] = field(default_factory=dict)
    next_lobby: int = 1

    def lock(self, session_id: int) -> asyncio.Lock:
        return self.locks.setdefault(session_id, asyncio.Lock())


def keeper(context: Context | AnyApplication) -> Keeper:
    return context.bot_data.setdefault(KEEPER_KEY, Keeper())


# --- the lobby -----------------------------------------------------------------------------


def parse_names(words: list[str], me: tuple[str, int],
                known: Sequence[tuple[str, int | None]] = ()) -> list[tuple[str, int | None]]:
    """Players named after /keep: ``known`` Telegram users first, then each word — ``me`` (or 我) for
    the sender, any other word a plain name. Raises ValueError naming the word that cannot be one.
    """
    candidates = [*known, *(me if w.lower() in ("me", "我") else (w, None) for w in words)]
    out: list[tuple[str, int | None]] = []
    for name, user_id in candidates:
        if not name or len(name) > MAX_NAME or name.startswith("@"):
            raise ValueError(name)
        if any(n.lower() == name.lower() or (u is not None and u == user_id) for n, u in out):
            raise ValueError(name)
        out.append((name, user_id))
    return out


def mentioned_users(message: Message) -> tuple[list[tuple[str, int | None]], list[str]]:
    """Telegram users named in a /keep message (the replied-to author, text mentions) and the words left."""
    text = message.text or ""
    users: list[tuple[str, int | None]] = []
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
        users.append((replied.from_user.first_name[:MAX_NAME], replied.from_user.id))
    spans = message.parse_entities([MessageEntity.TEXT_MENTION])
    for entity in sorted(spans, key=lambda e: e.offset):
        if entity.user is not None:
            users.append((entity.user.first_name[:MAX_NAME], entity.user.id))
    for shown in spans.values():
        text = text.replace(shown, " ", 1)
    return users, text.split()[1:]


def lobby_text(lobby: Lobby, texts: Translator) -> str:
    names = ", ".join(name for name, _ in lobby.entries) or "—"
    return texts.t("Scorekeeping for a game with real tiles. Players ({n}/4): {names}\n"
                   "Press “I'm in” to join; plain names can be given with /keep Alice Bob ...",
                   n=len(lobby.entries), names=names)


def lobby_keyboard(lobby_id: int, texts: Translator) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(texts.t("I'm in"), callback_data=f"kl:{lobby_id}:in"),
                                  InlineKeyboardButton(texts.t("Cancel"), callback_data=f"kl:{lobby_id}:x")]])


async def keep_command(update: Update, context: Context) -> None:
    """``/keep [names...]`` (or 记账 in a group): open a lobby, or show the open session's panel."""
    message, chat, user = update.effective_message, update.effective_chat, update.effective_user
    if message is None or chat is None or user is None:
        return
    texts = await texts_for(update, context)
    if chat.type == ChatType.PRIVATE:
        await message.reply_text(texts.t("Scorekeeping is for groups: use /keep in the group you play with."))
        return
    storage = services(context).storage
    open_now = await storage.open_sessions(chat.id)
    if open_now:
        await message.reply_text(texts.t("A scorekeeping session is already open here."))
        await send_panel(context, open_now[-1], texts)
        return
    known, words = mentioned_users(message)
    try:
        entries = parse_names(words, (user.first_name[:MAX_NAME], user.id), known)
    except ValueError as bad:
        await message.reply_text(texts.t("“{name}” can't be a player: names are 1-32 characters, each player "
                                         "appears once, and Telegram users join with “I'm in”.", name=str(bad)))
        return
    if len(entries) > SEATS:
        await message.reply_text(texts.t("A session has four players; you named {n}.", n=len(entries)))
        return
    lobby = Lobby(chat.id, user.id, entries)
    if len(entries) == SEATS:
        await start_session(context, lobby, texts)
        return
    found = keeper(context)
    lobby_id, found.next_lobby = found.next_lobby, found.next_lobby + 1
    found.lobbies[lobby_id] = lobby
    await message.reply_text(lobby_text(lobby, texts), reply_markup=lobby_keyboard(lobby_id, texts))


async def lobby_press(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    texts = await texts_for(update, context)
    match = LOBBY_PRESS.match(query.data)
    assert match is not None
    lobby_id, what = int(match[1]), match[2]
    found = keeper(context)
    lobby = found.lobbies.get(lobby_id)
    if lobby is None:
        await query.answer(texts.t("This button is no longer active."))
        return
    if what == "x":
        if user.id != lobby.creator_id:
            await query.answer(texts.t("Only whoever opened it can cancel it."), show_alert=True)
            return
        found.lobbies.pop(lobby_id, None)
        await query.answer()
        await _edit(query.message, texts.t("Scorekeeping cancelled."), None)
        return
    if any(uid == user.id for _, uid in lobby.entries):
        await query.answer(texts.t("You are already in."))
        return
    name = user.first_name
    if any(n.lower() == name.lower() for n, _ in lobby.entries):
        name = user.full_name if user.full_name.lower() != name.lower() else f"{name} ({user.id})"
    lobby.entries.append((name[:MAX_NAME], user.id))
    await query.answer(texts.t("You are in."))
    if len(lobby.entries) == SEATS:
        found.lobbies.pop(lobby_id, None)
        await _edit(query.message, lobby_text(lobby, texts), None)
        await start_session(context, lobby, texts)
    else:
        await _edit(query.message, lobby_text(lobby, texts), lobby_keyboard(lobby_id, texts))


async def start_session(context: Context, lobby: Lobby, texts: Translator) -> None:
    storage = services(context).storage
    players = []
    for name, user_id in lobby.entries:
        if user_id is None:
            players.append(await storage.named_player(lobby.chat_id, name, PlayerKind.GUEST))
        else:
            players.append(await storage.player_for_user(lobby.chat_id, user_id, name))
    session = await storage.start_session(lobby.chat_id, [p.id for p in players], lobby.creator_id)
    await send_panel(context, session, texts)


# --- the panel -------------------------------------------------------------------------------


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
    lines = [texts.t("Scorekeeping #{id} — hand {hand}", id=view.session.id, hand=view.state.number)]
    for seat, pid in enumerate(view.session.seats):
        mark = " ✓" if seat in view.state.won else ""
        lines.append(f"• {view.names[seat]}{mark}: {totals.get(pid, 0):+d}")
    last = [r for r in view.records if r.undoes is None and r.undone_by is None]
    if view.records and draft is None:
        newest = view.records[-1]
        if newest.undoes is not None:
            lines.append(texts.t("Undone: the last record."))
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
    seat = next(s for s in view.state.still_in(view.rules) if s not in draft.hands)
    return texts.t("Wall empty. Reply to this message with {name}'s tiles (13, melds in [], concealed kongs "
                   "in ()).", name=names[seat])


def _button(text: str, session_id: int, code: str, arg: object = None) -> InlineKeyboardButton:
    data = f"kp:{session_id}:{code}" + ("" if arg is None else f":{arg}")
    return InlineKeyboardButton(text, callback_data=data)


def _rows(buttons: list[InlineKeyboardButton], width: int) -> list[list[InlineKeyboardButton]]:
    return [buttons[i:i + width] for i in range(0, len(buttons), width)]


def panel_keyboard(view: View, draft: Draft | None, texts: Translator) -> InlineKeyboardMarkup:
    sid = view.session.id
    if draft is None:
        return InlineKeyboardMarkup([
            [_button(texts.t("Win on a discard"), sid, "d"), _button(texts.t("Self-draw"), sid, "s")],
            [_button(texts.t("Kong"), sid, "k"), _button(texts.t("Wall empty"), sid, "w")],
            [_button(texts.t("Undo last"), sid, "u"), _button(texts.t("End"), sid, "e")],
        ])
    still_in = view.state.still_in(view.rules)
    rows: list[list[InlineKeyboardButton]] = []
    if draft.step in ("discarder", "konger", "kong_discarder"):
        code = {"discarder": "dd", "konger": "kk", "kong_discarder": "kd"}[draft.step]
        seats = [s for s in still_in if s != draft.konger] if draft.step == "kong_discarder" else still_in
        rows = _rows([_button(view.names[s], sid, code, s) for s in seats], 2)
    elif draft.step == "winners":
        seats = [s for s in still_in if s != draft.discarder]
        rows = _rows([_button(("✓ " if s in draft.winners else "") + view.names[s], sid, "t", s) for s in seats], 2)
        codes = SELF_DRAW_FLAGS if draft.kind == "self" else DISCARD_FLAGS
        rows += _rows([_button(("✓ " if c in draft.flags else "") + texts.t(FLAGS[FLAG_CODES[c]]), sid, "f", c)
                       for c in codes], 2)
        rows.append([_button(texts.t("Next"), sid, "n")])
    elif draft.step == "value":
        rows = _rows([_button(pattern_label(p, texts), sid, "p", i) for i, p in enumerate(PATTERNS)], 3)
    elif draft.step == "roots":
        rows = [[_button(str(n), sid, "r", n) for n in range(MAX_ROOTS + 1)]]
    elif draft.step == "kong_kind":
        rows = [[_button(texts.t(KONG_KINDS[k.value]), sid, "kt", k.value[0]) for k in KongKind]]
    rows.append([_button(texts.t("Cancel"), sid, "x")])
    return InlineKeyboardMarkup(rows)


async def send_panel(context: Context | AnyApplication, session: ScoreSession, texts: Translator) -> Message:
    view = await load_view(context, session.id)
    draft = keeper(context).drafts.get(session.id)
    return await context.bot.send_message(session.chat_id, await panel_text(context, view, draft, texts),
                                          reply_markup=panel_keyboard(view, draft, texts))


async def _edit(message: Any, text: str, markup: InlineKeyboardMarkup | None) -> None:
    if not isinstance(message, Message):
        return
    try:
        await message.edit_text(text, reply_markup=markup)
    except BadRequest as error:
        if not is_not_modified(error):
            raise


async def refresh(context: Context, message: Any, session_id: int, texts: Translator) -> None:
    view = await load_view(context, session_id)
    draft = keeper(context).drafts.get(session_id)
    await _edit(message, await panel_text(context, view, draft, texts), panel_keyboard(view, draft, texts))


# --- presses on the panel ----------------------------------------------------------------------


def may_record(view: View, user_id: int, context: Context) -> bool:
    """The session's seated Telegram users, whoever opened it, and the bot's admins."""
    return (user_id in view.user_ids or user_id == view.session.creator_id
            or user_id in services(context).settings.admins)


async def panel_press(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    texts = await texts_for(update, context)
    match = PRESS.match(query.data)
    assert match is not None
    session_id, code, arg = int(match[1]), match[2], match[3]
    found = keeper(context)
    async with found.lock(session_id):
        view = await load_view(context, session_id)
        chat_id = query.message.chat.id if query.message else None
        if view.session.chat_id != chat_id or view.session.status is not SessionStatus.OPEN:
            await query.answer(texts.t("This button is no longer active."))
            return
        if not may_record(view, user.id, context):
            await query.answer(texts.t("Only the players of this session can record."), show_alert=True)
            return
        draft = found.drafts.get(session_id)
        answer = await apply_press(context, view, draft, code, arg, texts)
        await query.answer(answer)
        if code == "e" and draft is None:
            await finish(context, query.message, view, texts)
        else:
            await refresh(context, query.message, session_id, texts)


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
            return None
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


async def save_wall(context: Context, view: View, draft: Draft) -> None:
    end = book.wall_transfers(view.state, list(draft.hands.values()), view.rules)
    record = {"kind": book.WALL, "hand": view.state.number, "names": view.names,
              "statuses": [s.to_dict() for s in end.statuses], "transfers": [t.to_dict() for t in end.transfers]}
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
    lines = [texts.t("Scorekeeping #{id} is over: {records} records, {hands} hands.", id=view.session.id,
                     records=len(counted), hands=hands)]
    lines += [f"• {t.name}: {t.net:+d}" for t in totals]
    await _edit(message, "\n".join(lines), None)
    chart = render_tally_chart([TallyEntry(t.name, t.net) for t in totals],
                               title=texts.t("Scorekeeping #{id}", id=view.session.id))
    await context.bot.send_photo(view.session.chat_id, encode_png(chart), caption="\n".join(lines))


# --- typed hands: replies to the panel ------------------------------------------------------------


class _ReplyToPanel(filters.MessageFilter):
    """A text reply to a message carrying scorekeeping buttons (so other replies pass by)."""

    def filter(self, message: Message) -> bool:
        replied = message.reply_to_message
        if replied is None or replied.reply_markup is None or not message.text:
            return False
        return any((b.callback_data or "").startswith("kp:") for row in replied.reply_markup.inline_keyboard
                   for b in row if isinstance(b.callback_data, str))


def hand_error_text(error: HandError, texts: Translator) -> str:
    params = dict(error.params)
    if error.code == "parse":
        return texts.t(HAND_ERRORS["parse"], detail=error.message)
    if error.code in HAND_ERRORS:
        try:
            return texts.t(HAND_ERRORS[error.code], **params)
        except KeyError:
            pass
    return error.message


async def hand_reply(update: Update, context: Context) -> None:
    message, user = update.effective_message, update.effective_user
    if message is None or user is None or message.reply_to_message is None:
        return
    texts = await texts_for(update, context)
    markup = message.reply_to_message.reply_markup
    assert markup is not None
    data = next(b.callback_data for row in markup.inline_keyboard for b in row
                if isinstance(b.callback_data, str) and b.callback_data.startswith("kp:"))
    match = PRESS.match(str(data))
    if match is None:
        return
    session_id = int(match[1])
    found = keeper(context)
    async with found.lock(session_id):
        view = await load_view(context, session_id)
        draft = found.drafts.get(session_id)
        if view.session.status is not SessionStatus.OPEN or draft is None or draft.step not in ("value", "wall_hand"):
            await message.reply_text(texts.t("No tiles are asked for right now; use the buttons first."))
            return
        if not may_record(view, user.id, context):
            await message.reply_text(texts.t("Only the players of this session can record."))
            return
        text = message.text or ""
        try:
            if draft.step == "value":
                scored = book.typed_score(text, draft.situations, view.rules)
                await valued(context, view, draft, scored, scored.to_dict(), texts)
            else:
                seat = next(s for s in view.state.still_in(view.rules) if s not in draft.hands)
                draft.hands[seat] = book.final_hand(text, seat)
                if all(s in draft.hands for s in view.state.still_in(view.rules)):
                    await save_wall(context, view, draft)
        except HandError as error:  # shown on the panel, under the question it answers
            draft.error = hand_error_text(error, texts)
        await refresh(context, message.reply_to_message, session_id, texts)


def _handlers() -> list[Any]:
    return [
        CommandHandler("keep", keep_command),
        MessageHandler(filters.ChatType.GROUPS & filters.Regex(r"^\s*记账(\s|$)"), keep_command),
        CallbackQueryHandler(lobby_press, pattern=LOBBY_PRESS),
        CallbackQueryHandler(panel_press, pattern=PRESS),
        MessageHandler(filters.ChatType.GROUPS & filters.REPLY & _ReplyToPanel(), hand_reply),
    ]


FEATURE = Feature(
    name="keep",
    handlers=_handlers,
    commands=(Command("keep", N_("Keep the books of a game played with real tiles (记账)"), private=False),),
)
