"""Reading order of the tiles found in a photo: rows top to bottom, each row left to right.

A hand row is often photographed at an angle, so rows are not horizontal in the picture. The
direction of the rows is taken from each tile's nearest neighbour (in a row, the nearest
neighbour of a tile is the next tile in that row, because tiles are narrower than tall); the
centres are turned so that the rows run horizontally, then cut into rows where the vertical gap
between consecutive centres is large. A row that runs straight down the picture (a phone held
sideways without orientation data) is read top to bottom.

When the classifier can tell which way up the tiles stand, the picture is first turned by
quarter turns so that the tiles stand upright (``upright_turns``, ``turn_boxes``): a row
photographed from across the table, upside down, then reads as its player sees it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

ROW_GAP = 0.5  # a new row starts when centres jump by this fraction of a tile's short side
LEVEL_DEGREES = 8.0  # rows slanted less than this are read from the detector's boxes as they are
ALONG_ROW = np.radians(20)  # a tile whose nearest neighbour lies this close to the rows' direction...
ROW_SHARE = 0.6  # ... stands in a row; tiles cut along rows need this share of them to
ELONGATED = 3.0  # tiles lying along one line: spread along it this many times the spread across
OFF_AXIS = np.radians(30)  # neighbours this far off that line have been pulled across two rows


def box_centres(boxes: np.ndarray) -> np.ndarray:
    """The centres (N x 2) of N x 4 boxes (x0 y0 x1 y1)."""
    return np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2], axis=1)


def long_sides(boxes: np.ndarray) -> np.ndarray:
    """The longer side of each of N x 4 boxes (x0 y0 x1 y1): a tile's length, standing or lying."""
    return np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])


def nearest_steps(centres: np.ndarray) -> np.ndarray:
    """From each of two or more centres to its nearest neighbour (N x 2): in a row of touching
    tiles, the next tile along the row."""
    distances = np.linalg.norm(centres[:, None] - centres[None, :], axis=2)
    np.fill_diagonal(distances, np.inf)
    return centres[distances.argmin(axis=1)] - centres


def _off_direction(angles: np.ndarray | float, direction: float) -> np.ndarray:
    """How far directions (radians, either way along a line) lie from ``direction``, in [0, pi/2]."""
    return np.abs(np.angle(np.exp(2j * (np.asarray(angles) - direction)))) / 2


def row_angle(centres: np.ndarray) -> float:
    """The direction of the rows in radians, in (-pi/2, pi/2], from nearest-neighbour vectors.

    Two rows touching along their length at a steep angle give many tiles a nearest neighbour in
    the other row, which pulls the average off the rows. When the tiles as a whole lie along a
    line (their spread along it at least ``ELONGATED`` times the spread across) and the
    neighbours' direction is more than ``OFF_AXIS`` from that line, the line is the rows'
    direction.
    """
    if len(centres) < 2:
        return 0.0
    vectors = nearest_steps(centres)
    doubled = 2 * np.arctan2(vectors[:, 1], vectors[:, 0])
    angle = float(np.arctan2(np.sin(doubled).sum(), np.cos(doubled).sum()) / 2)
    if len(centres) >= 6:
        spread, axes = np.linalg.eigh(np.cov(centres.T))
        if spread[1] >= ELONGATED**2 * max(spread[0], 1e-9):
            axis = float(np.arctan2(axes[1, 1], axes[0, 1]))
            if float(_off_direction(axis, angle)) > OFF_AXIS:
                angle = axis
    angle = (angle + np.pi / 2) % np.pi - np.pi / 2  # a direction, not a heading: into [-pi/2, pi/2)
    return angle + np.pi if angle <= -np.pi / 2 else angle


@dataclass(frozen=True)
class RowSlant:
    """How a photo's rows run across the picture, for cutting tiles along them."""

    angle: float  # the rows' direction in radians, picture coordinates (y down), in (-pi/2, pi/2]
    pitch: float  # from one tile's centre to its neighbour's: a tile's width along the row


def row_slant(boxes: np.ndarray, members: np.ndarray) -> RowSlant | None:
    """The slant of the rows the ``members`` (a boolean mask of the hand's boxes) stand in, or
    None when they run within ``LEVEL_DEGREES`` of level, are too few to tell, or lie in a heap
    (fewer than ``ROW_SHARE`` of them with their nearest neighbour along the rows' direction).

    The pitch is the median distance from each tile to its nearest neighbour: tiles in a row
    touch, so that is a tile's width whatever the angle, where the box of a slanted tile is
    wider than the tile.

    >>> stair = np.array([[0, 0, 14, 18], [10, 6, 24, 24], [20, 12, 34, 30]], float)  # down-right
    >>> slant = row_slant(stair, np.ones(3, dtype=bool))
    >>> round(float(np.degrees(slant.angle))), round(slant.pitch, 1)
    (31, 11.7)
    >>> level = np.array([[0, 0, 10, 14], [10, 1, 20, 15], [20, 0, 30, 14]], float)
    >>> row_slant(level, np.ones(3, dtype=bool)) is None
    True
    """
    chosen = boxes[members]
    if len(chosen) < 3:
        return None
    centres = box_centres(chosen)
    angle = row_angle(centres)
    if np.degrees(abs(angle)) < LEVEL_DEGREES:
        return None
    steps = nearest_steps(centres)
    if float((_off_direction(np.arctan2(steps[:, 1], steps[:, 0]), angle) < ALONG_ROW).mean()) < ROW_SHARE:
        return None  # a heap, not rows: no one direction to cut along
    return RowSlant(angle, float(np.median(np.hypot(steps[:, 0], steps[:, 1]))))


def steps_within_suits(tiles: list[int]) -> int:
    """Rising minus falling steps between neighbouring tiles of one suit (tiles 0-26: 1-9 of each
    suit in turn): how much a reading looks like a hand sorted from 1 up to 9, as people sort
    the tiles they hold, or (negative) like one read from the other side of the table.

    >>> steps_within_suits([0, 1, 1, 4, 10, 12, 20]), steps_within_suits([20, 12, 10, 4, 1, 1, 0])
    (3, -3)
    """
    return sum((b > a) - (b < a) for a, b in itertools.pairwise(tiles) if a // 9 == b // 9)


def upright_turns(ups: np.ndarray, min_agreement: float = 0.3) -> int:
    """Quarter turns (counter-clockwise) that make tiles whose tops point along ``ups`` stand upright.

    ``ups`` is N x 2, each tile's top direction in picture coordinates (y down), of length 1 when
    the classifier is sure and shorter when it is not. The turn is the one the tiles agree on:
    their mean direction must be at least ``min_agreement`` long and at least half of the tiles
    must point the same quarter; otherwise no turn is made, and the picture is read as it is.
    (0.3 was chosen on scenes of the training designs and the training photos: lower turned
    upright photos; 0.5 left many upside-down rows unturned.)

    >>> upright_turns(np.array([[0.0, 1.0], [0.1, 0.9]])), upright_turns(np.array([[1.0, 0.0]]))
    (2, 1)
    """
    if len(ups) == 0:
        return 0
    x, y = ups.mean(axis=0)
    if float(np.hypot(x, y)) < min_agreement:
        return 0
    quarters = _quarter(ups[:, 0], ups[:, 1])
    chosen = int(_quarter(np.asarray([x]), np.asarray([y]))[0])
    return chosen if float((quarters == chosen).mean()) >= 0.5 else 0


def _quarter(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The quarter turns that bring a top pointing along (x, y) up: 0 up, 1 right, 2 down, 3 left."""
    return np.where(np.abs(y) >= np.abs(x), np.where(y < 0, 0, 2), np.where(x > 0, 1, 3))


def turn_boxes(boxes: np.ndarray, turns: int, width: float, height: float) -> np.ndarray:
    """Boxes (x0 y0 x1 y1) in the picture turned ``turns`` quarter turns counter-clockwise.

    >>> turn_boxes(np.array([[0.0, 0.0, 10.0, 20.0]]), 1, 100, 50).tolist()
    [[0.0, 90.0, 20.0, 100.0]]
    """
    for _ in range(turns % 4):
        x0, y0, x1, y1 = boxes.T
        boxes = np.stack([y0, width - x1, y1, width - x0], axis=1)
        width, height = height, width
    return boxes


def reading_order(boxes: np.ndarray) -> list[tuple[int, int]]:
    """(box index, row number) pairs in reading order for N x 4 boxes (x0 y0 x1 y1).

    >>> boxes = np.array([[20, 0, 30, 14], [0, 0, 10, 14], [0, 20, 10, 34], [10, 1, 20, 15]], float)
    >>> reading_order(boxes)
    [(1, 0), (3, 0), (0, 0), (2, 1)]
    """
    if len(boxes) == 0:
        return []
    centres = box_centres(boxes)
    angle = row_angle(centres)
    cos, sin = np.cos(-angle), np.sin(-angle)
    along = centres[:, 0] * cos - centres[:, 1] * sin
    across = centres[:, 0] * sin + centres[:, 1] * cos
    short_side = float(np.median(np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])))
    by_across = np.argsort(across, kind="stable")
    rows: list[list[int]] = [[int(by_across[0])]]
    for index in by_across[1:]:
        row_mean = float(np.mean(across[rows[-1]]))
        if across[index] - row_mean > ROW_GAP * max(short_side, 1e-6):
            rows.append([])
        rows[-1].append(int(index))
    return [(index, row_number) for row_number, row in enumerate(rows) for index in sorted(row, key=lambda i: along[i])]


def hand_members(boxes: np.ndarray, min_group: int = 3) -> np.ndarray:
    """Which boxes belong to the hand: those in a run of at least ``min_group`` tiles side by side.

    Tiles of a hand, and its melds, stand next to each other in rows; tiles lying about
    elsewhere on the table (discards, the wall's loose ends) stand alone or in pairs. Two
    tiles are side by side when their centres are close along the row direction (up to 2.5
    tile widths apart, so a winning tile set a little apart still counts) and less than half a
    tile's height apart across it. If no run is long enough, every box is kept.

    Discards often touch each other, so a heap of them near a hand is a run too. When the
    longest run is plainly a hand row (``HAND_ROW`` or more tiles, straight and evenly spaced),
    runs away from its line (more than ``ROW_BAND`` tile heights) are left out unless the photo
    is a grid of rows (another straight, touching run anywhere, of four or more tiles and at
    least half as long as the hand row): a hand photo has one row, or two close together; a heap
    of discards is not a long straight row of touching tiles. The hand row is judged in its own
    frame (its direction and tile size from its own boxes), so that discards do not bend it, and
    by even spacing rather than by the boxes' widths, which overstate a tile's width when the
    row runs at an angle across the picture.

    >>> row = np.array([[0, 0, 10, 14], [10, 0, 20, 14], [20, 0, 30, 14], [5, 60, 15, 74]], float)
    >>> hand_members(row).tolist()
    [True, True, True, False]
    """
    count = len(boxes)
    if count == 0:
        return np.zeros(0, dtype=bool)
    group = _runs(boxes)
    sizes = np.bincount(group, minlength=count)
    members = sizes[group] >= min_group
    if not members.any():
        return np.ones(count, dtype=bool)
    hand_run = int(np.argmax(sizes))
    longest = np.nonzero(group == hand_run)[0]
    if len(longest) < HAND_ROW:
        return members
    row = _RowFrame.of(boxes, longest)
    if not row.is_evenly_spaced(longest):
        return members
    slope, offset = row.line(longest)
    off_line = np.abs(row.across - (slope * row.along + offset)) >= ROW_BAND * row.long_side
    away = np.unique(group[members & off_line & (group != hand_run)])
    others = np.unique(group[members & (group != hand_run)])
    grid_row = max(4, len(longest) / 2)
    if any(sizes[run] >= grid_row and row.is_row(np.nonzero(group == run)[0]) for run in others):
        return members  # a grid of rows, not a hand and its discards
    return members & ~np.isin(group, away)


def _runs(boxes: np.ndarray) -> np.ndarray:
    """Each box's run (the index of its run's first box): boxes side by side along the row
    direction (centres up to 2.5 tile widths apart along it, under half a tile's height across)."""
    count = len(boxes)
    frame = _RowFrame.of(boxes)
    near = (np.abs(frame.along[:, None] - frame.along[None, :]) < 2.5 * frame.short_side) & (
        np.abs(frame.across[:, None] - frame.across[None, :]) < 0.5 * frame.long_side
    )
    group = np.arange(count)
    changed = True
    while changed:
        merged = np.where(near, group[None, :], count).min(axis=1)
        changed = bool((merged != group).any())
        group = merged
    return group


def longest_run(boxes: np.ndarray) -> np.ndarray:
    """The indices of the boxes in the longest run of tiles side by side (see ``hand_members``).

    >>> row = np.array([[0, 0, 10, 14], [10, 0, 20, 14], [20, 0, 30, 14], [5, 60, 15, 74]], float)
    >>> longest_run(row).tolist()
    [0, 1, 2]
    """
    if len(boxes) == 0:
        return np.zeros(0, dtype=np.int64)
    group = _runs(boxes)
    return np.nonzero(group == np.bincount(group).argmax())[0]


def one_box_per_tile(boxes: np.ndarray, members: np.ndarray) -> np.ndarray:
    """``members`` without the boxes that sit on a tile a better box already covers.

    ``boxes`` come best first, as the detector gives them. In a row running at an angle the
    detector's upright boxes of neighbours overlap a lot, so suppression by overlap keeps a
    second box half on one tile and half on the next (read as an extra tile). Here a box counts
    as a second box when its centre is within half the row's pitch of a better member's centre
    along the row, and within half a tile's height across it.

    >>> row = np.array([[0, 0, 10, 14], [10, 0, 20, 14], [20, 0, 30, 14], [30, 0, 40, 14], [13, 1, 23, 15]], float)
    >>> one_box_per_tile(row, np.ones(5, dtype=bool)).tolist()
    [True, True, True, True, False]
    """
    keep = members.copy()
    chosen = np.nonzero(members)[0]
    if len(chosen) < 3:
        return keep
    row = _RowFrame.of(boxes, chosen)
    pitch = float(np.median(np.diff(np.sort(row.along[chosen]))))
    for later in chosen:
        better = chosen[(chosen < later) & keep[chosen]]
        close = (np.abs(row.along[better] - row.along[later]) < 0.5 * pitch) & (
            np.abs(row.across[better] - row.across[later]) < 0.5 * row.long_side
        )
        keep[later] = not close.any()
    return keep


HAND_ROW = 10  # tiles in a run that make it plainly a hand row
ROW_BAND = 1.6  # tile heights from the hand row's line within which runs stay (a second row, melds)


@dataclass(frozen=True)
class _RowFrame:
    """Box centres turned so that rows run along the x axis, and the typical tile sides."""

    along: np.ndarray
    across: np.ndarray
    short_side: float
    long_side: float

    @classmethod
    def of(cls, boxes: np.ndarray, reference: np.ndarray | None = None) -> _RowFrame:
        """The frame of all ``boxes``, with the row direction and tile sides of the ``reference`` ones."""
        centres = box_centres(boxes)
        chosen = boxes if reference is None else boxes[reference]
        angle = row_angle(centres if reference is None else centres[reference])
        cos, sin = np.cos(-angle), np.sin(-angle)
        sides = np.sort(np.stack([chosen[:, 2] - chosen[:, 0], chosen[:, 3] - chosen[:, 1]], axis=1), axis=1)
        short_side, long_side = (max(float(v), 1e-6) for v in np.median(sides, axis=0))
        along = centres[:, 0] * cos - centres[:, 1] * sin
        across = centres[:, 0] * sin + centres[:, 1] * cos
        return cls(along, across, short_side, long_side)

    def line(self, indices: np.ndarray) -> tuple[float, float]:
        """Slope and offset of the straight line (across = slope * along + offset) through these centres."""
        design = np.stack([self.along[indices], np.ones(len(indices))], axis=1)
        (slope, offset), *_ = np.linalg.lstsq(design, self.across[indices], rcond=None)
        return float(slope), float(offset)

    def is_row(self, indices: np.ndarray) -> bool:
        """Whether these tiles stand in a straight row, most of them touching their neighbours."""
        slope, offset = self.line(indices)
        off = np.abs(self.across[indices] - (slope * self.along[indices] + offset))
        gaps = np.diff(np.sort(self.along[indices])) / self.short_side
        touching = float(((gaps > 0.7) & (gaps < 1.4)).mean())
        return float(np.median(off)) < 0.2 * self.long_side and touching >= 0.7

    def is_evenly_spaced(self, indices: np.ndarray) -> bool:
        """Whether these tiles stand in a straight row at a tile's pitch, most gaps about the same.

        Unlike ``is_row`` the pitch is measured against the row's own median gap, not the boxes'
        widths: the box of a tile in a row running at an angle is wider than the tile.
        """
        slope, offset = self.line(indices)
        off = np.abs(self.across[indices] - (slope * self.along[indices] + offset))
        gaps = np.diff(np.sort(self.along[indices]))
        pitch = float(np.median(gaps))
        if not 0.35 * self.short_side <= pitch <= 1.4 * self.short_side:
            return False
        even = float(((gaps > 0.6 * pitch) & (gaps < 1.5 * pitch)).mean())
        return float(np.median(off)) < 0.2 * self.long_side and even >= 0.7
