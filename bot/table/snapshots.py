"""Restarts resume a hand from its snapshot, where the snapshot agrees with the log.

Replaying a hand's whole log re-checks every decision (4-5 ms a hand); restoring the saved
``Game`` state and replaying only the actions logged after it is several times cheaper, which
is what brings 200 open hands back in well under a second. The log stays the truth: a snapshot
is used only if it is a state of this very hand (rules, seed and dealer) whose own action list
equals the logged actions it claims to reflect; then the rest of the log is applied to it
(``Game.apply`` checks each action). Anything else, and any error on the way, falls back to the
full replay.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from engine.actions import Action, GameError
from engine.game import Game
from engine.rules import RuleSet
from storage.models import JSON, Hand

log = logging.getLogger(__name__)


def restore_game(rules: RuleSet, hand: Hand, actions: Sequence[Action], snapshot: tuple[int, JSON] | None) -> Game:
    """The hand's game after its logged ``actions``: from the snapshot if it checks out, else replayed."""
    if snapshot is not None:
        try:
            game = _from_snapshot(rules, hand, actions, snapshot)
        except (GameError, ValueError, KeyError, TypeError) as error:
            log.warning("hand %s: the snapshot does not apply (%s); replaying the log", hand.id, error)
        else:
            if game is not None:
                return game
            log.warning("hand %s: the snapshot disagrees with the log; replaying the log", hand.id)
    return Game.replay(rules, hand.seed, hand.dealer, list(actions))


def _from_snapshot(rules: RuleSet, hand: Hand, actions: Sequence[Action], snapshot: tuple[int, JSON]) -> Game | None:
    seq, state = snapshot
    if not 0 <= seq <= len(actions):
        return None
    game = Game.from_dict(state)
    if game.seed != hand.seed or game.dealer != hand.dealer or game.rules != rules:
        return None
    if len(game.actions) != seq or list(game.actions) != list(actions[:seq]):
        return None
    for action in actions[seq:]:
        game.apply(action)
    return game


def snapshot_of(game: Game) -> tuple[int, JSON]:
    """What ``save_snapshot`` keeps of a live game: its action count and its full state."""
    return len(game.actions), game.to_dict()
