"""The classifier's label space: the 27 suited tiles (engine tile ints) and one "not a suited tile".

Winds, dragons, flowers and anything else the detector mistakes for a tile share the last
class, because Sichuan mahjong has no use for them and the user only needs to know they are
not part of the hand.
"""

from __future__ import annotations

from engine.tiles import NUM_KINDS, parse_tile

NOT_SUITED = NUM_KINDS
NUM_CLASSES = NUM_KINDS + 1


def class_of_notation(notation: str) -> int:
    """Map the data set's notation ("5p", "other:hwe") to a class id.

    >>> class_of_notation("1m"), class_of_notation("9s"), class_of_notation("other:hdr")
    (0, 26, 27)
    """
    if notation.startswith("other"):
        return NOT_SUITED
    return parse_tile(notation)
