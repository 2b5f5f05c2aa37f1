"""FluffyStuff composed as real riichi sets are: the look's fields, the red fives, and that
training only ever composes Regular (Black is the riichi check's, never trained on)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
FLUFFY = ROOT.parent / "shared" / "vision" / "fluffystuff" / "Export"
sys.path.insert(0, str(ROOT / "scripts"))

from vision_designs import RIICHI_BACKS, _fluffy_look, riichi_look, sprite  # noqa: E402

needs_fluffy = pytest.mark.skipif(not FLUFFY.is_dir(), reason=f"needs FluffyStuff's tiles at {FLUFFY} "
                                  "(absent in a plain clone; present in CI)")


def test_the_first_composition_is_kept_for_the_plain_name() -> None:
    assert _fluffy_look("fluffy:Regular") == ("Regular", 0.86, 0.12, None, False)


def test_a_riichi_look_names_its_art_size_side_back_and_fives() -> None:
    assert _fluffy_look("fluffy:Black:1.0:0.0:2:1") == ("Black", 1.0, 0.0, RIICHI_BACKS[2], True)
    looks = [riichi_look(random.Random(seed), "Regular") for seed in range(200)]
    parsed = [_fluffy_look(look) for look in looks]
    assert {p[0] for p in parsed} == {"Regular"}
    assert {p[4] for p in parsed} == {True, False}  # red fives in some sets, not in others
    assert len({p[1] for p in parsed}) > 1 and len({p[2] for p in parsed}) > 1


@needs_fluffy
def test_red_fives_change_only_the_fives() -> None:
    plain, red = "fluffy:Regular:1.0:0.12:0:0", "fluffy:Regular:1.0:0.12:0:1"
    for five in (4, 13, 22):  # 5m, 5p, 5s
        assert not np.array_equal(np.asarray(sprite(plain, five)), np.asarray(sprite(red, five)))
    for other in (3, 12, 21, 0):
        assert np.array_equal(np.asarray(sprite(plain, other)), np.asarray(sprite(red, other)))


@needs_fluffy
def test_no_side_is_drawn_when_the_look_has_none() -> None:
    flat, sided = sprite("fluffy:Regular:1.0:0.0:0:0", 0), sprite("fluffy:Regular:1.0:0.18:0:0", 0)
    assert flat.width == sided.width and flat.height < sided.height
