"""The table's seat panels are kept and pasted back (``rendering.table._kept_panel``): a table drawn
from kept panels is the same pixels as one drawn afresh, in every layout, and a panel never draws
outside the area that is kept of it."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest
from PIL import Image, ImageDraw

from engine.tiles import Meld, MeldKind, Suit
from rendering import SeatView, TableLabels, TableView, samples
from rendering import table as drawing

NAMES = ("Alice", "王小明", "Борис (bot)", "Dee 🀄", "A name that goes on and on and on 😀😂", "محمد", "สมชาย",
         "👍🏾🎉")
LAYOUTS = (drawing.GROUP, *drawing.DM_LAYOUTS)


def _seat(rng: random.Random) -> SeatView:
    won = rng.random() < 0.3
    wins = tuple(rng.randrange(27) for _ in range(rng.choice((1, 1, 2, 3)))) if won else ()
    laid_open = won and rng.random() < 0.6
    revealed = tuple(sorted(rng.randrange(27) for _ in range(rng.randrange(1, 11)))) if laid_open else None
    return SeatView(
        rng.choice(NAMES), 0 if revealed else rng.randrange(15),
        tuple(Meld(rng.choice(list(MeldKind)), rng.randrange(27)) for _ in range(rng.choice((0, 0, 1, 2, 4)))),
        tuple(rng.randrange(27) for _ in range(rng.randrange(30))), is_dealer=rng.random() < 0.25,
        void_suit=rng.choice((None, *Suit)), wins=wins, revealed=revealed, chips=rng.randrange(-200, 200),
        status=rng.choice(("", "托管", "Auto-play")),
    )


def _views() -> Iterator[TableView]:
    yield samples.table_sample()
    yield samples.table_start_sample()
    rng = random.Random(15)  # fixed: the same tables every run
    for _ in range(12):
        seats = tuple(_seat(rng) for _ in range(4))
        last = rng.choice([None, *(i for i in range(4) if seats[i].discards)])
        labels = rng.choice((TableLabels(), samples.table_start_sample().labels))
        yield TableView(seats, rng.randrange(56), rng.choice((None, 0, 1, 2, 3)), last, labels)


def _afresh(view: TableView, layout: drawing.Layout) -> bytes:
    drawing._panels.clear()
    pixels = drawing.render_table(view, layout).tobytes()
    drawing._panels.clear()
    return pixels


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda lay: f"discard{lay.discard_tile}")
def test_a_table_from_kept_panels_is_the_table_drawn_afresh(layout: drawing.Layout) -> None:
    for view in _views():
        drawing.render_table(view, layout)
        assert drawing.render_table(view, layout).tobytes() == _afresh(view, layout)  # every panel kept
        first = view.seats[0]
        moved = dataclasses.replace(view, seats=(dataclasses.replace(first, discards=first.discards * 2),
                                                 *view.seats[1:]))  # the panels below move down
        drawing.render_table(view, layout)
        assert drawing.render_table(moved, layout).tobytes() == _afresh(moved, layout)


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda lay: f"discard{lay.discard_tile}")
def test_a_panel_draws_only_inside_the_area_kept_of_it(layout: drawing.Layout) -> None:
    for view in _views():
        img = Image.new("RGB", (drawing.WIDTH, drawing.table_height(view, layout)), (255, 0, 255))
        draw = ImageDraw.Draw(img)
        kept = Image.new("L", img.size, 0)
        y = layout.margin + layout.header
        for index, seat in enumerate(view.seats):
            box = (layout.margin, y, drawing.WIDTH - layout.margin, y + drawing._panel_height(seat, layout))
            drawing._panel(img, draw, seat, view.labels, box, layout, view.turn == index,
                           view.last_discard_seat == index)
            ImageDraw.Draw(kept).rectangle(box, fill=255)  # the area kept: the box, far edges included
            y = box[3] + layout.panel_gap
        outside = Image.composite(Image.new("RGB", img.size, (255, 0, 255)), img, kept)
        assert outside.getcolors(1) == [(img.width * img.height, (255, 0, 255))]
