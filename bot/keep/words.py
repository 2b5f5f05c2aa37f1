"""What the scorekeeper says: transfers, records, the panel's text — words only, no Telegram calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.i18n import N_, Translator
from engine.scoring import Pattern
from engine.settlement import Transfer, TransferReason
from engine.tiles import Situation

REASONS = {
    TransferReason.WIN_DISCARD: N_("win on a discard"),
    TransferReason.SELF_DRAW: N_("self-draw"),
    TransferReason.ROBBING_KONG: N_("robbing a kong"),
    TransferReason.KONG_CONCEALED: N_("concealed kong"),
    TransferReason.KONG_ADDED: N_("added kong"),
    TransferReason.KONG_DIRECT: N_("kong on a discard"),
    TransferReason.CALL_TRANSFER: N_("kong money passed on"),
    TransferReason.FLOWER_PIG: N_("three suits penalty"),
    TransferReason.NOT_READY: N_("not ready"),
    TransferReason.TAX_REFUND: N_("kong money refunded"),
}
KONG_KINDS = {"concealed": N_("concealed kong"), "added": N_("added kong"), "direct": N_("kong on a discard")}
FLAGS = {
    Situation.AFTER_KONG_DISCARD: N_("after a kong (杠上炮)"),
    Situation.ROBBING_KONG: N_("robbing a kong (抢杠)"),
    Situation.KONG_REPLACEMENT: N_("on a kong's replacement (杠上花)"),
    Situation.LAST_TILE: N_("last tile (海底)"),
}


def reason_words(reason: str, texts: Translator) -> str:
    try:
        return texts.t(REASONS[TransferReason(reason)])
    except ValueError:
        return reason


def transfer_lines(transfers: Sequence[Transfer], names: Sequence[str], texts: Translator) -> list[str]:
    """One line per payment: ``Bob → Alice 8 (win on a discard)``."""
    return [f"{names[t.payer]} → {names[t.payee]} {t.amount} ({reason_words(t.reason.value, texts)})"
            for t in transfers]


def value_words(value: dict[str, Any], texts: Translator) -> str:
    """``清一色 ×4, 1 root: 8×`` for a stored win value (typed or picked)."""
    pattern = value.get("pattern_en") if texts.language == "en" else value.get("pattern")
    roots = value.get("roots", 0)
    parts = [str(pattern)]
    if roots:
        parts.append(texts.t("roots: {n}", n=roots))
    parts.extend(value.get("bonuses") or [])
    return texts.t("{what}: {multiplier}×", what=", ".join(parts), multiplier=value.get("multiplier"))


def record_words(record: dict[str, Any], names: Sequence[str], texts: Translator) -> str:
    """One sentence for a stored record: who won what, who made which kong, the wall's end."""
    kind = record.get("kind")
    if kind == "win":
        wins = [f"{names[w['seat']]} ({value_words(w['value'], texts)})" for w in record["winners"]]
        if record.get("discarder") is None:
            return texts.t("Self-draw: {wins}", wins=", ".join(wins))
        return texts.t("{discarder} discarded into {wins}", discarder=names[record["discarder"]],
                       wins=", ".join(wins))
    if kind == "kong":
        what = texts.t(KONG_KINDS[record["type"]])
        if record.get("discarder") is not None:
            return texts.t("{konger}: {kind} fed by {discarder}", konger=names[record["konger"]], kind=what,
                           discarder=names[record["discarder"]])
        return texts.t("{konger}: {kind}", konger=names[record["konger"]], kind=what)
    if kind == "wall":
        return texts.t("Wall empty: {who}", who=", ".join(position_words(s, names, texts)
                                                         for s in record.get("statuses", [])))
    return texts.t("Undo")


def position_words(status: dict[str, Any], names: Sequence[str], texts: Translator) -> str:
    """One player's position at an empty wall: three suits, not ready, or ready and worth how much."""
    name = names[status["seat"]]
    if status.get("flower_pig"):
        return texts.t("{name} three suits", name=name)
    if not status.get("ready"):
        return texts.t("{name} not ready", name=name)
    return texts.t("{name} ready ({value}×)", name=name, value=status.get("value"))


def pattern_label(pattern: Pattern, texts: Translator) -> str:
    return f"{pattern.name_in(texts.language)} ×{pattern.multiplier}"
