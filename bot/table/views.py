"""What each audience sees of a live hand, as words, buttons and rendering descriptions.

Pure functions from the game to text, ``InlineKeyboardMarkup`` and the frozen descriptions
``rendering`` draws; nothing here sends. The group's view is built only from public facts
(``public_table``): a seat still in play contributes the *number* of its concealed tiles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.i18n import Translator
from bot.table import callbacks
from bot.table.runner import TableRunner
from engine.actions import SEATS, Action, ActionType
from engine.events import EndReason, Event, EventType, Win
from engine.game import Game, Phase
from engine.scoring import Score
from engine.settlement import Transfer, TransferReason
from engine.tiles import Suit, Tile, rank_of, suit_of, tile_name
from rendering import Payment, ResultCard, ScoredHand, ScoreLine, SeatHand, SeatView, TableLabels, TableView
from rendering.models import display_order

BUTTONS_PER_ROW = 5
_REASON_EN = {
    TransferReason.WIN_DISCARD: "win on discard",
    TransferReason.SELF_DRAW: "self-draw",
    TransferReason.ROBBING_KONG: "robbing a kong",
    TransferReason.KONG_CONCEALED: "concealed kong",
    TransferReason.KONG_ADDED: "added kong",
    TransferReason.KONG_DIRECT: "kong on a discard",
    TransferReason.CALL_TRANSFER: "kong money passed on",
    TransferReason.FLOWER_PIG: "three suits (flower pig)",
    TransferReason.NOT_READY: "not ready",
    TransferReason.TAX_REFUND: "kong money refunded",
}


def tile_label(tile: Tile, texts: Translator) -> str:
    """A tile as a button says it: ``5筒`` in Chinese, ``5p`` in English."""
    if texts.language == "zh":
        return f"{rank_of(tile)}{suit_of(tile).zh}"
    return tile_name(tile)


def suit_label(suit: Suit, texts: Translator) -> str:
    return suit.zh if texts.language == "zh" else suit.en


def reason_label(reason: TransferReason, texts: Translator) -> str:
    return reason.zh if texts.language == "zh" else _REASON_EN[reason]


@lru_cache(maxsize=16)
def table_labels(texts: Translator) -> TableLabels:
    """The table picture's words in ``texts``' language, made once per language (one translator
    per language): every view of every table asks for them, several times per update."""
    return TableLabels(
        title=texts.t("Sichuan mahjong"),
        wall=texts.t("Wall {n}", n="{n}"),
        turn=texts.t("{name} to play", name="{name}"),
        dealer=texts.t("Dealer"),
        void=texts.t("Void {suit}", suit="{suit}"),
        suits=tuple(suit_label(s, texts) for s in Suit),  # type: ignore[arg-type]
        won=texts.t("Won"),
    )


def last_discard_seat(game: Game) -> int | None:
    """The seat whose newest river tile is still the table's latest discard, if any."""
    if game.window is not None:
        return game.window.from_seat
    for action in reversed(game.actions):
        if action.type is ActionType.DISCARD:
            river = game.rivers[action.seat]
            return action.seat if river and river[-1] == action.tile else None
        if action.type in (ActionType.PUNG, ActionType.KONG):
            return None
    return None


def public_table(runner: TableRunner, texts: Translator) -> TableView:
    """The table as the whole group may see it: counts for hidden hands, never their tiles."""
    game = runner.game
    voids_public = game.phase not in (Phase.SWAP, Phase.VOID)
    chips = game.chips()
    seats = []
    for s in range(SEATS):
        wins = tuple(w.tile for w in game.wins if w.seat == s)
        out_of_play = not game.in_play[s]
        status = texts.t("Computer") if runner.seats[s].computer else (
            texts.t("Auto-play") if runner.state[s].auto else ""
        )
        seats.append(
            SeatView(
                name=runner.seats[s].name,
                concealed_count=len(game.hand(s)),
                melds=tuple(game.melds[s]),
                discards=tuple(game.rivers[s]),
                is_dealer=s == game.dealer,
                void_suit=game.voids[s] if voids_public else None,
                wins=wins,
                revealed=tuple(game.hand(s)) if out_of_play and wins else None,
                chips=chips[s],
                status=status,
            )
        )
    turn = game.current if game.phase is Phase.PLAY else None
    return TableView(tuple(seats), game.wall_count, turn, last_discard_seat(game), table_labels(texts))


# --- narration ---------------------------------------------------------------------------


def narrate(event: Event, names: Sequence[str], texts: Translator) -> str | None:
    """One public line about an event, or None for events the table does not narrate."""
    who = names[event.seat] if event.seat is not None else ""
    tile = tile_label(event.tile, texts) if event.tile is not None else ""
    match event.type:
        case EventType.DISCARDED:
            return texts.t("{name} discards {tile}", name=who, tile=tile)
        case EventType.PUNGED:
            return texts.t("{name} pungs {tile}", name=who, tile=tile)
        case EventType.KONG_DECLARED:
            return texts.t("{name} adds {tile} to a pung", name=who, tile=tile)
        case EventType.KONG:
            assert event.kong is not None
            kind = event.kong.zh if texts.language == "zh" else event.kong.value + " kong"
            return texts.t("{name} makes a kong of {tile} ({kind})", name=who, tile=tile, kind=kind)
        case EventType.WON:
            assert event.win is not None
            return win_headline(event.win, names, texts)
        case EventType.SWAPPED if event.seat == 0 and event.direction is not None:
            return texts.t("Tiles passed {direction}", direction=direction_label(event, texts))
        case EventType.VOID_REVEALED if event.suit is not None:
            return texts.t("{name} voids {suit}", name=who, suit=suit_label(event.suit, texts))
        case EventType.HAND_OVER:
            return end_line(event.end, texts)
    return None


def direction_label(event: Event, texts: Translator) -> str:
    assert event.direction is not None
    return {
        "clockwise": texts.t("clockwise"),
        "counter_clockwise": texts.t("counter-clockwise"),
        "across": texts.t("across"),
    }[event.direction.value]


def end_line(end: EndReason | None, texts: Translator) -> str:
    if end is EndReason.THREE_WON:
        return texts.t("Hand over: three players have won.")
    if end is EndReason.FIRST_WIN:
        return texts.t("Hand over: first win.")
    return texts.t("Hand over: the wall is empty.")


def win_headline(win: Win, names: Sequence[str], texts: Translator) -> str:
    tile = tile_label(win.tile, texts)
    if win.from_seat is None:
        return texts.t("{name} wins on {tile}, self-drawn", name=names[win.seat], tile=tile)
    return texts.t(
        "{name} wins on {tile} from {other}", name=names[win.seat], tile=tile, other=names[win.from_seat]
    )


def recent_lines(events: Sequence[Event], names: Sequence[str], texts: Translator) -> list[str]:
    lines = [line for e in events if (line := narrate(e.visible_to(None), names, texts))]
    return lines[-4:]


# --- the group's caption and the seats' prompts ----------------------------------------------


def group_caption(runner: TableRunner, texts: Translator) -> str:
    game = runner.game
    names = [p.name for p in runner.seats]
    head = texts.t("Hand {n}", n=runner.hand.number) + " · " + texts.t("Wall {n}", n=game.wall_count)
    lines = [head, *recent_lines(runner.last_events, names, texts)]
    if game.phase is Phase.SWAP:
        lines.append(texts.t("Everyone is choosing three tiles to swap."))
        lines += choosing_lines(runner, texts)
    elif game.phase is Phase.VOID:
        lines += swap_lines(runner, None, texts, lines)
        lines.append(texts.t("Everyone is choosing a void suit."))
        lines += choosing_lines(runner, texts)
    elif game.phase is Phase.PLAY and game.current is not None:
        lines.append(texts.t("{name} to play", name=names[game.current]))
    elif game.phase in (Phase.CLAIM, Phase.ROB):
        lines.append(texts.t("Waiting for claims…"))
    return "\n".join(lines)[:1024]


def seat_caption(runner: TableRunner, seat: int, texts: Translator) -> str:
    """The text under a player's private picture: what happened, what to do, how long."""
    game = runner.game
    names = [p.name for p in runner.seats]
    state = runner.state[seat]
    lines = [texts.t("Hand {n}", n=runner.hand.number) + " · " + texts.t("Wall {n}", n=game.wall_count)]
    lines += recent_lines(runner.last_events, names, texts)
    if game.phase is Phase.VOID:
        lines += swap_lines(runner, seat, texts, lines)
    if game.over:
        lines.append(texts.t("The hand is over; the result is in the group."))
    elif state.auto:
        lines.append(texts.t("The computer is playing for you. Press “I'm back” to play again."))
    elif state.prompt_seq is not None:
        lines.append(prompt_line(runner, seat, texts))
        lines.append(texts.t("{n} seconds to decide.", n=int(runner.decision_seconds(seat))))
    elif not game.in_play[seat]:
        lines.append(texts.t("You have won and left this hand; the others play on."))
    else:
        lines.append(texts.t("Waiting for the others…"))
    return "\n".join(lines)[:1024]


def choosing_lines(runner: TableRunner, texts: Translator) -> list[str]:
    """Swap three and void, for the group: who has chosen, who is still choosing."""
    pending = set(runner.game.pending_seats())
    chosen = [p.name for s, p in enumerate(runner.seats) if s not in pending]
    waiting = [p.name for s, p in enumerate(runner.seats) if s in pending]
    lines = [texts.t("Chosen: {names}", names=", ".join(chosen))] if chosen else []
    if waiting:
        lines.append(texts.t("Still choosing: {names}", names=", ".join(waiting)))
    return lines


def swap_lines(runner: TableRunner, seat: int | None, texts: Translator, shown: Sequence[str]) -> list[str]:
    """After the swap, while voids are chosen: the direction stays in view, and a seat's
    caption names the tiles it received (its picture marks them too, see ``hand_labels``)."""
    game = runner.game
    if not game.swapped:
        return []
    direction = {
        "clockwise": texts.t("clockwise"),
        "counter_clockwise": texts.t("counter-clockwise"),
        "across": texts.t("across"),
    }[game.direction.value]
    passed = texts.t("Tiles passed {direction}", direction=direction)
    lines = [] if passed in shown else [passed]
    if seat is not None:
        received = swap_received(game, seat)
        if received:
            lines.append(texts.t("You received {tiles}.", tiles=" ".join(tile_label(t, texts) for t in received)))
    return lines


def swap_received(game: Game, seat: int) -> tuple[Tile, ...]:
    """The three tiles the seat got in the swap (empty before it)."""
    return tuple(game.view(seat).swap_received) if game.swapped else ()


def played_label(action: Action, texts: Translator) -> str:
    """What a computer player did for a person whose time ran out, in a few words."""
    if action.type is ActionType.SWAP:
        return texts.t("passed on {tiles}", tiles=" ".join(tile_label(t, texts) for t in action.tiles))
    if action.type is ActionType.VOID and action.suit is not None:
        return texts.t("Void {suit}", suit=suit_label(action.suit, texts))
    if action.type is ActionType.DISCARD and action.tile is not None:
        return texts.t("discarded {tile}", tile=tile_label(action.tile, texts))
    return action_label(action, texts)


def prompt_line(runner: TableRunner, seat: int, texts: Translator) -> str:
    game = runner.game
    if game.phase is Phase.SWAP:
        return texts.t("Choose three tiles of one suit to pass on, then confirm.")
    if game.phase is Phase.VOID:
        return texts.t("Choose the suit you will void (定缺).")
    if game.phase is Phase.PLAY:
        return texts.t("Your turn: choose a tile to discard.")
    window = game.window
    assert window is not None
    return texts.t(
        "{name} discarded {tile}: claim it or pass.",
        name=runner.seats[window.from_seat].name,
        tile=tile_label(window.tile, texts),
    )


def seat_keyboard(runner: TableRunner, seat: int, texts: Translator) -> InlineKeyboardMarkup | None:
    """The buttons of a seat's current decision (or "I'm back" under 托管)."""
    state = runner.state[seat]
    table = runner.table_id
    if runner.game.over:
        return None
    if state.auto:
        return keyboard(((texts.t("I'm back"), callbacks.game_data(table, 0, callbacks.BACK)),),)
    if state.prompt_seq is None:
        return None
    seq = state.prompt_seq

    def button(label: str, code: str) -> Button:
        return label, callbacks.game_data(table, seq, code)

    game = runner.game
    if game.phase is Phase.SWAP:
        picked = set(state.swap_pick)
        tiles = game.hand(seat)
        buttons = [
            button(("✓" if i in picked else "") + tile_label(t, texts), callbacks.toggle_code(i))
            for i, t in enumerate(tiles)
        ]
        rows = _rows(buttons)
        if len(picked) == 3:
            rows.append((button(texts.t("Swap these three"), callbacks.SWAP_CONFIRM),))
        return keyboard(*rows)
    legal = state.legal
    if game.phase is Phase.VOID:
        return keyboard(
            tuple(button(texts.t("Void {suit}", suit=suit_label(a.suit, texts)), callbacks.action_code(a))
                  for a in legal if a.suit is not None)
        )
    specials = [a for a in legal if a.type is not ActionType.DISCARD]
    discards = [a for a in legal if a.type is ActionType.DISCARD]
    top = tuple(button(action_label(a, texts), callbacks.action_code(a)) for a in specials)
    tiles = [button(tile_label(a.tile, texts), callbacks.action_code(a)) for a in discards if a.tile is not None]
    return keyboard(*([top] if top else []), *_rows(tiles))


Button = tuple[str, str]  # a button's label and its callback data


@lru_cache(maxsize=512)
def keyboard(*rows: tuple[Button, ...]) -> InlineKeyboardMarkup:
    """The markup of these rows of buttons, built once for as long as it is shown: a seat's DM
    asks for its buttons two or three times per update (to compare, then to send), and PTB's
    frozen objects cost ~15 us a button to build. The same object is returned each time: PTB's
    markups are immutable, and comparing one with itself is immediate."""
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, callback_data=data) for label, data in row]
                                 for row in rows])


def action_label(action: Action, texts: Translator) -> str:
    tile = tile_label(action.tile, texts) if action.tile is not None else ""
    match action.type:
        case ActionType.WIN:
            return texts.t("Win {tile}", tile=tile)
        case ActionType.PUNG:
            return texts.t("Pung {tile}", tile=tile)
        case ActionType.KONG:
            return texts.t("Kong {tile}", tile=tile)
        case ActionType.PASS:
            return texts.t("Pass")
    return tile


def _rows(buttons: list[Button]) -> list[tuple[Button, ...]]:
    return [tuple(buttons[i : i + BUTTONS_PER_ROW]) for i in range(0, len(buttons), BUTTONS_PER_ROW)]


def private_hand(runner: TableRunner, seat: int) -> tuple[list[Tile], Tile | None, Suit | None]:
    """A seat's concealed tiles for its own picture: the drawn tile set apart while it plays."""
    game = runner.game
    hand = game.hand(seat)
    view_void = game.voids[seat]
    drawn = game.drawn if game.phase is Phase.PLAY and game.current == seat else None
    if drawn is not None and drawn in hand:
        hand.remove(drawn)
    return hand, drawn, view_void


def hand_labels(runner: TableRunner, seat: int, texts: Translator) -> list[str] | None:
    """Labels under the private hand that match the discard buttons (empty under others)."""
    game = runner.game
    if game.phase is Phase.VOID:
        return received_labels(runner, seat, texts)
    if game.phase is not Phase.PLAY or runner.state[seat].prompt_seq is None:
        return None
    hand, drawn, void = private_hand(runner, seat)
    allowed = {a.tile for a in runner.state[seat].legal if a.type is ActionType.DISCARD}
    order = display_order(hand, void) + ([drawn] if drawn is not None else [])
    return [tile_label(t, texts) if t in allowed else "" for t in order]


def received_labels(runner: TableRunner, seat: int, texts: Translator) -> list[str] | None:
    """While voids are chosen, "in" under each tile the seat received in the swap."""
    received = list(swap_received(runner.game, seat))
    if not received:
        return None
    hand, _, void = private_hand(runner, seat)
    labels = []
    for tile in display_order(hand, void):
        if tile in received:
            received.remove(tile)
            labels.append(texts.t("in"))
        else:
            labels.append("")
    return labels


# --- result cards ----------------------------------------------------------------------------


def score_lines(score: Score, texts: Translator) -> tuple[ScoreLine, ...]:
    lang = texts.language
    lines = [ScoreLine(score.pattern.name_in(lang), f"×{score.pattern_value}")]
    if score.roots:
        lines.append(ScoreLine(texts.tn("{n} root", "{n} roots", score.roots), f"×{2**score.roots}"))
    for bonus in score.bonuses:
        value = "×2" if bonus.doubles else texts.t("at least {n}", n=score.uncapped_multiplier)
        lines.append(ScoreLine(bonus.name_in(lang), value))
    if score.capped:
        lines.append(ScoreLine(texts.t("Cap"), str(score.cap)))
    if score.payment_per_payer != score.multiplier:
        lines.append(ScoreLine(texts.t("Self-draw adds a base"), f"+{score.payment_per_payer - score.multiplier}"))
    return tuple(lines)


WIN_REASONS = (TransferReason.WIN_DISCARD, TransferReason.SELF_DRAW, TransferReason.ROBBING_KONG)


def win_transfers(wins: Sequence[Win], transfers: Sequence[Transfer]) -> list[list[Transfer]]:
    """The transfers that paid each of ``wins`` (in order), found in the chronological ``transfers``.

    A win's payment is one unbroken block of win transfers to its winner, each payer once;
    winners on one discard get one block each. Should the blocks not line up with the wins,
    each win gets every win transfer to its seat.
    """
    blocks: list[list[Transfer]] = []
    previous_was_win = False
    for t in transfers:
        if t.reason not in WIN_REASONS:
            previous_was_win = False
            continue
        block = blocks[-1] if blocks and previous_was_win else None
        if block is not None and block[-1].payee == t.payee and all(p.payer != t.payer for p in block):
            block.append(t)
        else:
            blocks.append([t])
        previous_was_win = True
    if len(blocks) == len(wins) and all(b[0].payee == w.seat for b, w in zip(blocks, wins, strict=True)):
        return blocks
    return [[t for t in transfers if t.reason in WIN_REASONS and t.payee == w.seat] for w in wins]


def colon(texts: Translator) -> str:
    """The colon between a label and what follows: full width in Chinese, as in every catalog text."""
    return "：" if texts.language == "zh" else ": "


def name_list(names: Sequence[str], texts: Translator) -> str:
    return ("、" if texts.language == "zh" else ", ").join(names)


def who_pays(paid: Sequence[Transfer], names: Sequence[str], texts: Translator) -> str:
    """``Bob pays 8`` / ``Ann, Bob pay 5 each``: each payer by name, summed over ``paid``."""
    owed: dict[int, int] = {}
    for t in paid:
        owed[t.payer] = owed.get(t.payer, 0) + t.amount
    if not owed:
        return ""
    amounts = set(owed.values())
    if len(owed) > 1 and len(amounts) == 1:
        return texts.t("{names} pay {chips} each", names=name_list([names[s] for s in owed], texts),
                       chips=amounts.pop())
    return name_list([texts.t("{name} pays {chips}", name=names[s], chips=n) for s, n in owed.items()], texts)


def scored_win(win: Win, names: Sequence[str], texts: Translator, paid: Sequence[Transfer]) -> ScoredHand:
    """A win explained; its total names who paid it and how much (never "each payer")."""
    score = win.score
    total = texts.t("{m}× base", m=score.multiplier)
    pays = who_pays(paid, names, texts)
    if pays:
        total += " · " + pays
    return ScoredHand(win.hand, win_headline(win, names, texts), score_lines(score, texts), total)


def payments(transfers: Sequence[Transfer], names: Sequence[str], texts: Translator) -> tuple[Payment, ...]:
    return tuple(
        Payment(names[t.payer], names[t.payee], t.amount, reason_label(t.reason, texts)) for t in transfers
    )


def public_win(win: Win, game: Game) -> Win:
    """The win as the group may see it while the hand goes on.

    In 血流成河 a winner keeps playing, so the concealed tiles stay hidden: the card shows the
    winning tile and the (already public) melds only. A winner who is out of play, or any
    winner once the hand is over, lays the hand open as the rules say.
    """
    if game.over or not game.in_play[win.seat] or win.hand.win_tile is None:
        return win
    return dataclasses.replace(win, hand=dataclasses.replace(win.hand, concealed=(win.hand.win_tile,)))


def win_card(runner: TableRunner, wins: Sequence[Win], transfers: Sequence[Transfer], texts: Translator) -> ResultCard:
    names = [p.name for p in runner.seats]
    title = (texts.t("Hand {n}: a win", n=runner.hand.number) if len(wins) == 1
             else texts.t("Hand {n}: {count} winners on one discard", n=runner.hand.number, count=len(wins)))
    paid = win_transfers(wins, transfers)
    return ResultCard(
        title=title,
        wins=tuple(scored_win(public_win(w, runner.game), names, texts, p) for w, p in zip(wins, paid, strict=True)),
        payments=payments(transfers, names, texts),
        payments_heading=texts.t("Payments"),
        totals_heading=texts.t("This hand so far"),
        caption=win_caption(title, wins, transfers, names, texts),
    )


def win_caption(title: str, wins: Sequence[Win], transfers: Sequence[Transfer], names: Sequence[str],
                texts: Translator) -> str:
    """Who won on what and who pays them what (呼叫转移 included), for the notification."""
    lines = [title]
    for win in wins:
        line = win_headline(win, names, texts)
        pays = who_pays([t for t in transfers if t.payee == win.seat], names, texts)
        lines.append(line + colon(texts) + pays if pays else line)
    return "\n".join(lines)[:1024]


def nets_line(names: Sequence[str], chips: Sequence[int], texts: Translator) -> str:
    order = sorted(range(len(names)), key=lambda s: -chips[s])
    return name_list([f"{names[s]} {chips[s]:+d}" if chips[s] else f"{names[s]} 0" for s in order], texts)


def final_card(runner: TableRunner, texts: Translator) -> ResultCard:
    """The settlement: every win, every payment, and every seat's hand face up with its net."""
    game = runner.game
    names = [p.name for p in runner.seats]
    chips = game.chips()
    title = texts.t("Hand {n} settled", n=runner.hand.number)
    paid = win_transfers(game.wins, game.transfers)
    hands = tuple(
        SeatHand(
            names[s],
            tuple(game.hand(s)),
            tuple(game.melds[s]),
            tuple(w.tile for w in game.wins if w.seat == s),
            chips[s],
        )
        for s in range(SEATS)
    )
    lines = [title, texts.t("Net: {nets}", nets=nets_line(names, chips, texts))]
    for win, p in zip(game.wins, paid, strict=True):
        pays = who_pays(p, names, texts)
        lines.append(win_headline(win, names, texts) + (colon(texts) + pays if pays else ""))
    lines.append(end_line(game.end, texts))
    return ResultCard(
        title=title,
        wins=tuple(scored_win(w, names, texts, p) for w, p in zip(game.wins, paid, strict=True)),
        payments=payments(game.transfers, names, texts),
        totals=tuple((names[s], chips[s]) for s in range(SEATS)),
        payments_heading=texts.t("Every payment"),
        totals_heading=texts.t("Net this hand"),
        footer=end_line(game.end, texts),
        hands=hands,
        hands_heading=texts.t("Every hand, face up"),
        caption="\n".join(lines)[:1024],
    )
