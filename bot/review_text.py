"""复盘 in words and pictures: one ``engine.review.Moment`` as a short text and a small image.

Shared by the bot's 复盘 button and ``xuezhan review``. The words say what the player did, what
the hard player would have done, what each leaves (steps to ready and live outs, which a person
can check) and the estimated cost in chips. The picture is the hand with the tile thrown and the
suggested tile marked underneath. Needs no Telegram: only the catalogs and the renderer.
"""

from __future__ import annotations

from PIL import Image

from bot.i18n import Translator
from engine.actions import Action, ActionType
from engine.review import Moment, Outs
from engine.tiles import tile_name
from rendering.hand import display_order, render_hand

PICTURE_WIDTH = 480


def action_words(tr: Translator, action: Action) -> str:
    if action.type is ActionType.DISCARD and action.tile is not None:
        return tr.t("discard {tile}", tile=tile_name(action.tile))
    if action.type is ActionType.PUNG:
        return tr.t("pung")
    if action.type is ActionType.KONG:
        return tr.t("kong {tile}", tile=tile_name(action.tile)) if action.tile is not None else tr.t("kong")
    if action.type is ActionType.WIN:
        return tr.t("win")
    return tr.t("pass")


def outs_words(tr: Translator, outs: Outs) -> str:
    if outs.shanten <= 0:
        return tr.tn("ready, {n} winning tile left", "ready, {n} winning tiles left", outs.live_outs)
    return tr.tn(
        "{steps} step(s) from ready, {n} useful tile left",
        "{steps} step(s) from ready, {n} useful tiles left",
        outs.live_outs,
        steps=outs.shanten,
    )


def seat_heading(tr: Translator, seat: int) -> str:
    return tr.t("Seat {seat}:", seat=seat)


def nothing_to_add(tr: Translator) -> str:
    return tr.t("Nothing to add: every choice matched the hard computer player or cost almost nothing.")


def moment_text(tr: Translator, number: int, moment: Moment) -> str:
    """A few plain sentences for one moment (well under a 1024-character caption)."""
    lines = [tr.t("{number}. With {left} tiles left in the wall", number=number, left=moment.wall_count)]
    if moment.offered is not None:
        lines[0] += tr.t(", on the offered {tile}", tile=tile_name(moment.offered))
    lines.append(
        tr.t(
            "You chose: {chosen}. The hard computer player would {suggested}.",
            chosen=action_words(tr, moment.chosen),
            suggested=action_words(tr, moment.suggested),
        )
    )
    if moment.chosen_outs is not None and moment.suggested_outs is not None:
        lines.append(tr.t("Yours leaves: {outs}.", outs=outs_words(tr, moment.chosen_outs)))
        lines.append(tr.t("Suggested leaves: {outs}.", outs=outs_words(tr, moment.suggested_outs)))
    lines.append(tr.t("Estimated cost: about {cost} chips per hand.", cost=format(moment.cost, ".1f")))
    return "\n".join(lines)


def moment_picture(tr: Translator, moment: Moment) -> Image.Image:
    """The hand at that moment, the chosen tile and the suggested tile labelled underneath."""
    order = display_order(moment.hand)
    labels = [""] * len(order)
    highlight: set[int] = set()
    for action, label in ((moment.chosen, tr.t("yours")), (moment.suggested, tr.t("better"))):
        if action.type is ActionType.DISCARD and action.tile in order:
            i = order.index(action.tile)
            while labels[i] and i + 1 < len(order) and order[i + 1] == action.tile:
                i += 1  # a second copy of the same tile gets the second label
            labels[i] = label
            highlight.add(i)
    return render_hand(order, moment.melds, labels=labels, highlight=highlight, width=PICTURE_WIDTH)
