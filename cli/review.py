"""``xuezhan review GAME_LOG``: 复盘 of one finished hand from the command line.

GAME_LOG is a JSON file (``-`` for standard input) holding the hand's ``rules`` (a preset name
or a ``RuleSet.to_dict()``), ``seed``, ``dealer`` and ``actions`` (``Action.to_dict()`` values,
the bot's action log), and ``wall`` (the whole 108-tile wall) for a hand not dealt by its seed;
``Game.to_json()`` of a dealt-by-seed hand is one. For each seat asked
(``--seat``, default all four) it prints up to five moments where the seat's discard or claim
differed most from the hard computer player's, judged only on what that seat could see then,
with the estimated cost; ``--pictures DIR`` also writes a small picture of each moment.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("review", help="复盘: where a hand's play differed most from the hard computer player")
    p.add_argument("game_log", metavar="GAME_LOG", help="JSON file with rules, seed, dealer and actions ('-': stdin)")
    p.add_argument("--seat", type=int, action="append", help="seat to review, 0-3 (repeatable; default all)")
    p.add_argument("--lang", choices=("zh", "en"), default="zh", help="language of the words (default zh)")
    p.add_argument("--pictures", metavar="DIR", help="also write one PNG per moment into DIR")
    p.add_argument("--samples", type=int, default=None, help="rollout samples per reviewed discard")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_review)


class BadLog(ValueError):
    pass


def load_log(text: str) -> dict[str, Any]:
    """The parts of a game log the review needs, checked, or a ``BadLog`` naming what is wrong."""
    from engine.actions import Action
    from engine.rules import RuleSet

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadLog(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadLog("a game log is a JSON object with rules, seed, dealer and actions")
    missing = [k for k in ("rules", "seed", "dealer", "actions") if k not in data]
    if missing:
        raise BadLog(f"the game log has no {', '.join(missing)}")
    try:
        raw = data["rules"]
        rules = RuleSet.preset(raw) if isinstance(raw, str) else RuleSet.from_dict(raw)
        actions = [Action.from_dict(a) for a in data["actions"]]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise BadLog(f"bad rules or actions: {exc}") from None
    seed, dealer = data["seed"], data["dealer"]
    if not isinstance(seed, int) or not isinstance(dealer, int) or not 0 <= dealer <= 3:
        raise BadLog("seed must be a whole number and dealer a seat 0-3")
    wall = data.get("wall")
    if wall is not None and not (isinstance(wall, list) and len(wall) == 108 and all(isinstance(t, int) for t in wall)):
        raise BadLog("wall, when given, is the hand's whole 108-tile wall as tile numbers")
    return {"rules": rules, "seed": seed, "dealer": dealer, "actions": actions, "wall": wall}


def _read_log(name: str) -> str:
    try:
        return sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BadLog(f"{name} is not a text file: a game log is JSON") from None


def run_review(args: argparse.Namespace) -> int:
    from bot.i18n import translator
    from bot.review_text import moment_picture, moment_text, nothing_to_add, seat_heading
    from engine.actions import GameError
    from engine.review import REVIEW_SAMPLES, review_hand

    try:
        text = _read_log(args.game_log)
        log = load_log(text)
        seats = args.seat or [0, 1, 2, 3]
        if any(not 0 <= s <= 3 for s in seats):
            raise BadLog("--seat must be 0-3")
        samples = args.samples or REVIEW_SAMPLES
        if samples < 1:
            raise BadLog("--samples must be at least 1")
        reviews = {
            s: review_hand(
                log["rules"], log["seed"], log["dealer"], log["actions"], s, samples=samples, wall=log["wall"]
            )
            for s in seats
        }
    except (OSError, BadLog, GameError) as exc:
        message = f"xuezhan review: {exc}"
        if args.json:
            print(json.dumps({"ok": False, "error": "bad_input", "message": message}, ensure_ascii=False))
        else:
            print(message, file=sys.stderr)
        return EXIT_BAD_INPUT
    tr = translator(args.lang)
    if args.pictures:
        out = Path(args.pictures)
        try:
            out.mkdir(parents=True, exist_ok=True)
            for seat, moments in reviews.items():
                for i, m in enumerate(moments, 1):
                    moment_picture(tr, m).save(out / f"seat{seat}-{i}.png")
        except OSError as exc:
            print(f"xuezhan review: cannot write the pictures: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    if args.json:
        payload = {"ok": True, "seats": {str(s): [m.to_dict() for m in ms] for s, ms in reviews.items()}}
        print(json.dumps(payload, ensure_ascii=False))
        return 0
    for seat, moments in reviews.items():
        print(seat_heading(tr, seat))
        if not moments:
            print(nothing_to_add(tr))
        for i, m in enumerate(moments, 1):
            print(moment_text(tr, i, m))
        print()
    return 0
