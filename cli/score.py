"""``xuezhan score`` and ``xuezhan waits``: the rules core from a shell, for people and scripts.

Both print plain words by default and exactly one JSON object with ``--json``; bad input is
answered with ``{"ok": false, "error": code, "message": ...}`` and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from engine import analysis
from engine.rules import SETTING_VALUES, RuleSet, SelfDrawBonus, parse_setting
from engine.scoring import score, wait_scores
from engine.tiles import (
    COPIES,
    HandError,
    check_tiles,
    counts_of,
    format_hand,
    parse_hand,
    parse_typed_hand,
    tile_name,
)

EXIT_BAD_INPUT = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("score", help="value a winning hand, e.g. \"123m456m789m234p6p +6p\"")
    p.add_argument("hand", help="the hand in notation: tiles, [pung], [kong], (concealed kong), +win, words")
    _add_rule_options(p)
    p.set_defaults(func=run_score)

    w = subparsers.add_parser("waits", help="shanten and winning tiles of a hand one tile short")
    w.add_argument("hand")
    _add_rule_options(w)
    w.set_defaults(func=run_waits)


def _add_rule_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="chengdu", help="preset: chengdu, xueliu or classic")
    p.add_argument("--cap", choices=["8", "16", "32", "64", "none"], help="封顶 in 倍")
    p.add_argument("--zimo", choices=[b.value for b in SelfDrawBonus], help="self-draw: jiadi, jiafan, none")
    p.add_argument("--jiangdui", choices=["8", "16", "none"], help="将对 worth 8 (default), 16, or not a pattern")
    p.add_argument("--no-jingoudiao-qingdaiyao", action="store_true",
                   help="金钩钓 and 清带幺 are not patterns (the hand is valued without them)")
    p.add_argument("--juezhang", action="store_true", help="绝张 (win on the last unseen copy) doubles")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help=f"any table setting, repeatable; keys: {', '.join(SETTING_VALUES)}")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def rules_from_args(args: argparse.Namespace) -> RuleSet:
    rules = RuleSet.preset(args.rules)
    if args.cap is not None:
        rules = rules.with_changes(cap=None if args.cap == "none" else int(args.cap))
    if args.zimo is not None:
        rules = rules.with_changes(self_draw=SelfDrawBonus(args.zimo))
    if args.jiangdui is not None:
        rules = rules.with_changes(all_pungs_258=None if args.jiangdui == "none" else int(args.jiangdui))
    if args.no_jingoudiao_qingdaiyao:
        rules = rules.with_changes(golden_and_flush_terminals=False)
    if args.juezhang:
        rules = rules.with_changes(last_copy_bonus=True)
    return with_settings(rules, args.set)


def with_settings(rules: RuleSet, assignments: Sequence[str]) -> RuleSet:
    """``rules`` changed by ``KEY=VALUE`` strings (``--set``); ``ValueError`` names a bad one."""
    for assignment in assignments:
        key, sep, value = assignment.partition("=")
        if not sep:
            raise ValueError(f"--set takes KEY=VALUE, got {assignment!r}")
        field, parsed = parse_setting(key.strip(), value)
        rules = rules.with_changes(**{field: parsed})
    return rules


def _emit(args: argparse.Namespace, payload: dict[str, Any], words: list[str]) -> None:
    if args.json:
        print(json.dumps(payload, ensure_ascii=False))
    else:
        print("\n".join(words))


def _fail(args: argparse.Namespace, error: HandError | ValueError) -> int:
    code = error.code if isinstance(error, HandError) else "rules"
    message = error.message if isinstance(error, HandError) else str(error)
    payload: dict[str, Any] = {"ok": False, "error": code, "message": message}
    if isinstance(error, HandError):
        payload.update({k: v for k, v in error.params.items() if isinstance(v, int | str)})
    if args.json:
        print(json.dumps(payload, ensure_ascii=False))
    else:
        print(f"error ({code}): {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_score(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args)
        hand, marked = parse_typed_hand(args.hand)
        result = score(hand, rules)
    except (HandError, ValueError) as error:
        return _fail(args, error)
    payload = {"ok": True, "hand": format_hand(hand), **result.to_dict()}
    words = [format_hand(hand), *result.lines("zh"), *result.lines("en")]
    if marked:
        note = (f"+{tile_name(hand.win_tile or 0)} was also written among the tiles: "
                "read as marking that tile as the winning one")
        payload["note"] = note
        words.insert(1, f"note: {note}")
    _emit(args, payload, words)
    return 0


def run_waits(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args)
        hand = parse_hand(args.hand)
        check_tiles(hand, 13)
    except HandError as error:
        if error.code != "three_suits":
            return _fail(args, error)
    except ValueError as error:
        return _fail(args, error)
    hand = replace(hand, win_tile=None)  # a hand one short has no winning tile yet
    counts = counts_of(hand.concealed)
    shanten = analysis.shanten(counts, len(hand.melds))
    waits = wait_scores(hand.concealed, hand.melds, rules)
    entries = [
        {"tile": tile_name(t), "pattern": s.pattern.zh, "multiplier": s.multiplier}
        for t, s in sorted(waits.items())
    ]
    all_counts = counts_of(hand.all_tiles())
    payload = {"ok": True, "hand": format_hand(hand), "shanten": shanten, "waits": entries}
    if entries:
        words = [f"{format_hand(hand)}: ready (听牌), waits:"]
        words += [
            f"  {e['tile']}  {e['pattern']} ×{e['multiplier']}"
            f"  ({COPIES - all_counts[analysis_tile]} left unseen by you)"
            for e, analysis_tile in zip(entries, sorted(waits), strict=True)
        ]
    else:
        words = [f"{format_hand(hand)}: shanten {shanten} (not ready)"]
    _emit(args, payload, words)
    return 0
