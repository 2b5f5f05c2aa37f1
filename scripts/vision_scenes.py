"""Photo-like scenes of one tile design: hands on a table, seen by a phone, with their labels.

A scene is laid out flat on a "table" (a texture: felt, wood, cloth, paper), then seen through
a random camera: any turn of the picture (rows upside down or sideways included), a low angle
that squeezes the far side, a zoom that makes tiles 2% to 100% of the picture height, and a
frame that is either a wide shot or a tight crop of one row. Then the light and the camera:
shadows, glare, white balance, blur, noise, JPEG.

Layouts: a row of 13/14 tiles touching; two rows; melds set apart at the end of the row; a
busy table with discards lying at any angle; neighbours partly covered (a finger, a tile lying
across). Each tile's box is the axis-aligned box of its corners after the camera, like the
labels of the real photos, and each tile also records which way its top points (``ups``), for
the classifier's upright/upside-down output and the reading order.

``unseen_photos`` renders the fixed unseen-designs validation set (seed ``UNSEEN_SEED``, designs
from ``vision_designs.unseen_designs``); training never calls it.
Training-only: Pillow and numpy, never torch.
"""

from __future__ import annotations

import io
import itertools
import math
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from vision_data import Photo
from vision_designs import CJK_FONTS, LATIN_FONTS, ROOT, Design, random_face, sprite

from vision.classes import NOT_SUITED

UNSEEN_SEED = 20261202
UNSEEN_COUNT = 120
FRESH_SEED = 20261203
FRESH_COUNT = 90
WINS_SEED = 20261204
WINS_COUNT = 120
RIICHI_SEED = 20261207
RIICHI_COUNT = 60
TUNING_SEED = 7777  # group g's scenes use TUNING_SEED + g
TUNING_WINS_SEED = 7790  # ... and its winning hands TUNING_WINS_SEED + g
TUNING_GROUPS = 3
WORLD_TILE = 64  # tile width on the flat table, in table pixels


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3x3 matrix mapping four src points onto four dst points."""
    rows = []
    for (x, y), (u, v) in zip(src, dst, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    solution = np.linalg.solve(np.asarray(rows, float), dst.reshape(-1).astype(float))
    return np.append(solution, 1.0).reshape(3, 3)


def apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    out = np.hstack([points, np.ones((len(points), 1))]) @ matrix.T
    return out[:, :2] / out[:, 2:3]


def table_texture(rng: random.Random, width: int, height: int) -> Image.Image:
    """Felt, wood, cloth or paper in a random colour, with uneven light."""
    np_rng = np.random.default_rng(rng.randrange(1 << 30))
    kind = rng.choice(["felt", "wood", "cloth", "plain", "paper", "blotches"])
    colour = np.asarray([rng.randrange(256) for _ in range(3)], np.float32)
    if kind == "paper":
        colour = np.asarray([rng.uniform(200, 250)] * 3, np.float32) * np.asarray([1, 1, rng.uniform(0.85, 1)])
    small = (height // 8 + 1, width // 8 + 1)
    ys, xs = np.mgrid[0 : small[0], 0 : small[1]].astype(np.float32)
    if kind == "wood":
        freq, phase = rng.uniform(0.05, 0.3), rng.uniform(0, 6)
        wobble = np.sin(xs * rng.uniform(0.01, 0.05)) * rng.uniform(2, 10)
        base = 1 + 0.18 * np.sin((ys + wobble) * freq + phase)[..., None]
        pixels = colour * base
    elif kind == "cloth":
        period = rng.randrange(3, 12)
        check = ((xs // period + ys // period) % 2)[..., None]
        other = np.asarray([rng.randrange(256) for _ in range(3)], np.float32)
        pixels = colour * (1 - check) + other * check if rng.random() < 0.4 else colour * (1 + 0.1 * check)
    elif kind == "blotches":
        noise = np_rng.normal(0, 1, (small[0] // 8 + 2, small[1] // 8 + 2, 3)).astype(np.float32)
        big = np.asarray(
            Image.fromarray(np.clip(noise * 40 + 128, 0, 255).astype(np.uint8)).resize(
                (small[1], small[0]), Image.BICUBIC
            ),
            np.float32,
        )
        pixels = colour * 0.6 + big * 0.4
    else:
        pixels = np.broadcast_to(colour, (*small, 3)).astype(np.float32)
    grain = {"felt": 10, "paper": 4}.get(kind, 5) * rng.uniform(0.3, 1.5)
    pixels = pixels + np_rng.standard_normal((*small, 1), dtype=np.float32) * grain
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).resize((width, height), Image.BILINEAR)


class Table:
    """Tiles placed on the flat table: the picture, and per tile its four corners, class and up."""

    def __init__(self, image: Image.Image, design: Design | str, rng: random.Random) -> None:
        self.image = image
        self.design = design
        self.rng = rng
        self.quads: list[np.ndarray] = []
        self.classes: list[int] = []
        self.ups: list[np.ndarray] = []
        self.hand: list[bool] = []

    def place(self, face: int | str, x: float, y: float, width: float, angle: float = 0.0, hand: bool = True) -> None:
        """Paste one tile, top-left corner at (x, y) before turning it ``angle`` radians about its centre."""
        art = sprite(self.design, face)
        height = width * art.height / art.width
        art = art.resize((max(2, round(width)), max(2, round(height))), Image.BILINEAR)
        corners = np.asarray([[0, 0], [width, 0], [width, height], [0, height]], float)
        centre = np.asarray([x + width / 2, y + height / 2])
        rotation = np.asarray([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        quad = (corners - [width / 2, height / 2]) @ rotation.T + centre
        if angle:
            art = art.rotate(-math.degrees(angle), Image.BILINEAR, expand=True)
        self.image.paste(art, (round(centre[0] - art.width / 2), round(centre[1] - art.height / 2)), art)
        self.quads.append(quad)
        self.classes.append(face if isinstance(face, int) else NOT_SUITED)
        self.ups.append(rotation @ np.asarray([0.0, -1.0]))
        self.hand.append(hand)

    def row(self, faces: list[int | str], x: float, y: float, width: float, gap_after: dict[int, float]) -> float:
        """A row of touching tiles from (x, y); extra space after the given positions. Returns the end x."""
        for k, face in enumerate(faces):
            self.place(face, x, y, width)
            x += width + self.rng.uniform(0, 0.04) * width + gap_after.get(k, 0.0)
        return x


def hand_faces(rng: random.Random, count: int, other_share: float) -> list[int | str]:
    faces = [random_face(rng, other_share) for _ in range(count)]
    if rng.random() < 0.5:  # hands are usually sorted, with pairs and runs next to each other
        suited = sorted(f for f in faces if isinstance(f, int))
        others = [f for f in faces if not isinstance(f, int)]
        faces = suited + others if rng.random() < 0.7 else others + suited
    return faces


def lay_out(rng: random.Random, table: Table, kind: str, other_share: float,
            faces: list[int | str] | None = None) -> None:
    """Put a hand (and maybe melds and discards) near the middle of the table; ``faces``: that
    hand, in that order, instead of a random one."""
    w = WORLD_TILE
    width, height = table.image.size
    x0, y0 = width * 0.25, height * 0.45
    count = len(faces) if faces is not None else rng.choice([13, 14, 14, 13, 11, 12, 15, 16, 17, 18])
    given = iter(faces or ())

    def deal(n: int) -> list[int | str]:
        """The next ``n`` tiles of the given hand, or ``n`` random ones."""
        return hand_faces(rng, n, other_share) if faces is None else list(itertools.islice(given, n))

    if kind in ("row", "discards"):
        gaps = {}
        if rng.random() < 0.35:  # melds set apart from the concealed hand at the end of the row
            for end in (count - 4, count - 7):
                if end > 3 and rng.random() < 0.7:
                    gaps[end - 1] = rng.uniform(0.2, 1.2) * w
        if rng.random() < 0.3:
            gaps[count - 2] = rng.uniform(0.2, 1.0) * w  # the winning tile a little apart
        table.row(deal(count), x0, y0, w, gaps)
    else:  # two rows: melds (or a second half of the hand) above the concealed tiles
        top = rng.choice([3, 4, 6, 7, 8])
        art = sprite(table.design, 0)
        tile_h = w * art.height / art.width
        table.row(
            deal(top),
            x0 + rng.uniform(0, 3) * w,
            y0 - tile_h * rng.uniform(1.05, 1.5),
            w,
            {2: rng.uniform(0, 0.5) * w} if top > 4 else {},
        )
        table.row(deal(max(count - top, 5)), x0, y0, w, {})
    if kind == "discards":  # loose tiles about the table at any angle
        for _ in range(rng.randrange(4, 20)):
            x, y = rng.uniform(0.05, 0.9) * width, rng.uniform(0.05, 0.3) * height
            table.place(random_face(rng, 0.2), x, y, w, rng.uniform(-math.pi, math.pi), hand=False)
    if rng.random() < 0.15:  # a finger over the edge of a tile
        quad = table.quads[rng.randrange(len(table.quads))]
        cx, cy = quad[rng.randrange(4)]
        draw = ImageDraw.Draw(table.image)
        skin = (rng.randrange(150, 240), rng.randrange(100, 190), rng.randrange(80, 160))
        draw.ellipse((cx - w * 0.35, cy - w * 0.35, cx + w * 0.35, cy + w * 0.6), fill=skin)


def camera(
    rng: random.Random, quads: np.ndarray, tight: bool, turn: float, max_side: int | None = None
) -> tuple[np.ndarray, tuple[int, int]]:
    """A homography from the table to the photo, and the photo's size."""
    centre = quads.reshape(-1, 2).mean(axis=0)
    tilt = rng.choice([0.0, rng.uniform(0, 0.25), rng.uniform(0.2, 0.5)])
    squash = 1 - rng.uniform(0, 0.45) if rng.random() < 0.5 else 1.0
    span = 1000.0
    src = np.asarray([[-1, -1], [1, -1], [1, 1], [-1, 1]], float) * span + centre
    dst = np.asarray([[-1 + tilt, -squash], [1 - tilt, -squash], [1, squash], [-1, squash]], float) * span
    rotation = np.asarray([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    dst = dst @ rotation.T
    flat = homography(src, dst)
    seen = apply(flat, quads.reshape(-1, 2))
    lo, hi = seen.min(axis=0), seen.max(axis=0)
    box_h = np.median([np.ptp(apply(flat, q)[:, 1]) for q in quads])
    if tight:
        margin = (hi - lo) * np.asarray([rng.uniform(0, 0.08), rng.uniform(0, 0.15)]) + box_h * rng.uniform(0, 0.3)
        lo, hi = lo - margin * rng.uniform(0.3, 1.0), hi + margin * rng.uniform(0.3, 1.0)
    else:
        share = math.exp(rng.uniform(math.log(0.03), math.log(0.35)))  # tile height / photo height
        view_h = max(box_h / share, (hi - lo)[1] * 1.05)
        aspect = rng.choice([4 / 3, 3 / 4, 16 / 9, 9 / 16, 1.0])
        view_w = max(view_h * aspect, (hi - lo)[0] * 1.05)
        mid = (lo + hi) / 2 + np.asarray(
            [
                rng.uniform(-0.5, 0.5) * max(view_w - (hi - lo)[0], 0),
                rng.uniform(-0.5, 0.5) * max(view_h - (hi - lo)[1], 0),
            ]
        )
        half = np.asarray([view_w / 2, view_h / 2])
        lo, hi = mid - half, mid + half
    longest = min(rng.randrange(480, 1280), max_side or 1280)
    scale = longest / max(hi - lo)
    size = (max(16, round((hi - lo)[0] * scale)), max(16, round((hi - lo)[1] * scale)))
    place = np.asarray([[scale, 0, -lo[0] * scale], [0, scale, -lo[1] * scale], [0, 0, 1]])
    return place @ flat, size


def photograph(rng: random.Random, image: Image.Image) -> Image.Image:
    """Light and camera: shadow, glare, white balance, blur, noise, JPEG."""
    width, height = image.size
    pixels = np.asarray(image, np.float32)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    xs, ys = xs / width, ys / height
    light = 1 + rng.uniform(-0.4, 0.4) * (xs - 0.5) + rng.uniform(-0.4, 0.4) * (ys - 0.5)
    pixels = pixels * light[..., None]
    if rng.random() < 0.35:  # a shadow: a soft dark half-plane
        a = rng.uniform(0, 2 * math.pi)
        edge = (xs - 0.5) * math.cos(a) + (ys - 0.5) * math.sin(a) - rng.uniform(-0.3, 0.3)
        pixels = pixels * (1 - rng.uniform(0.2, 0.55) / (1 + np.exp(-edge * rng.uniform(10, 60))))[..., None]
    if rng.random() < 0.3:  # glare: a bright soft spot
        gx, gy, r = rng.random(), rng.random(), rng.uniform(0.05, 0.3)
        spot = np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * r * r))
        pixels = pixels + spot[..., None] * rng.uniform(60, 200)
    pixels = pixels * np.asarray([rng.uniform(0.8, 1.2) for _ in range(3)], np.float32)
    pixels = pixels * rng.uniform(0.6, 1.25)
    if rng.random() < 0.5:
        pixels = pixels + np.random.default_rng(rng.randrange(1 << 30)).normal(0, rng.uniform(2, 9), pixels.shape)
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    if rng.random() < 0.5:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.6) * max(width, height) / 800))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=rng.randrange(35, 95))
    return Image.open(buffer).convert("RGB")


def scene_photo(
    rng: random.Random,
    design: Design | str,
    name: str,
    kind: str | None = None,
    other_share: float = 0.12,
    max_side: int | None = None,
    faces: list[int | str] | None = None,
) -> Photo:
    """One photo of a hand of ``design`` (``faces``, or a random one) with boxes, classes and ups
    of every tile."""
    kind = kind or rng.choice(["row", "row", "row", "two_rows", "discards"])
    world = table_texture(rng, 1800, 1400)
    table = Table(world, design, rng)
    lay_out(rng, table, kind, other_share, faces)
    turn_choice = rng.random()
    if turn_choice < 0.6:
        turn = rng.uniform(-0.35, 0.35)
    elif turn_choice < 0.75:
        turn = math.pi + rng.uniform(-0.35, 0.35)
    elif turn_choice < 0.9:
        turn = rng.choice([-1, 1]) * math.pi / 2 + rng.uniform(-0.3, 0.3)
    else:
        turn = rng.uniform(-math.pi, math.pi)
    tight = kind != "discards" and rng.random() < 0.3
    hand = np.asarray(table.hand)
    quads = np.asarray(table.quads)
    forward, size = camera(rng, quads[hand] if tight else quads, tight, turn, max_side)
    backward = np.linalg.inv(forward)
    coefficients = tuple((backward / backward[2, 2]).reshape(-1)[:8])
    fill = tuple(int(v) for v in np.asarray(world.resize((16, 16))).reshape(-1, 3).mean(axis=0))
    image = world.transform(size, Image.PERSPECTIVE, coefficients, Image.BILINEAR, fillcolor=fill)
    image = photograph(rng, image)
    boxes, ups = [], []
    for quad, up in zip(quads, table.ups, strict=True):
        moved = apply(forward, quad)
        boxes.append([*moved.min(axis=0), *moved.max(axis=0)])
        centre = quad.mean(axis=0)
        ends = apply(forward, np.stack([centre, centre + up * 10]))
        ups.append(math.atan2(*(ends[1] - ends[0])[::-1]))
    whole = np.asarray(boxes, np.float32)
    limits = np.asarray([size[0], size[1]] * 2, np.float32)
    clipped = np.clip(whole, 0, limits)
    area = (whole[:, 2] - whole[:, 0]) * (whole[:, 3] - whole[:, 1])
    visible = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
    keep = visible >= 0.6 * np.maximum(area, 1e-6)
    return Photo(
        name,
        np.asarray(image),
        clipped[keep],
        np.asarray(table.classes, np.int64)[keep],
        np.asarray(ups, np.float32)[keep],
        hand[keep],
    )


TEXT_FONTS = [ROOT / "rendering" / "fonts" / name for name in ("XuezhanSans-Regular.ttf", "XuezhanSans-Bold.ttf")]
LATIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.,:-/%$ "
CJK = "一二三四五六七八九十万萬条筒东南西北中发白元价合计总数量号日月年店"


def distractor_photo(rng: random.Random, name: str, max_side: int | None = None, receipts: bool = False) -> Photo:
    """A photo of something that is not tiles (no boxes): a page of text, a receipt, or objects.

    Printed text (Latin, digits, and the Chinese numerals and 万 that tiles carry) and blobs of
    colour teach both networks that such things are not tiles, so that a photo of something
    else gets ``no_tiles``. With ``receipts`` two in five are till receipts or tables of
    numbers: a column of short prices looks much like a column of tiles lying sideways.
    """
    world = table_texture(rng, 1800, 1400)
    draw = ImageDraw.Draw(world)
    if receipts and rng.random() < 0.4:
        frame = _receipt(rng, draw)
    elif rng.random() < 0.7:  # a sheet of paper with lines of text
        width, height = rng.uniform(400, 900), rng.uniform(500, 1200)
        x0, y0 = rng.uniform(100, 1700 - width), rng.uniform(50, 1350 - height)
        paper = tuple(int(v) for v in np.asarray([rng.uniform(215, 255)] * 3) * [1, 1, rng.uniform(0.88, 1)])
        draw.rectangle((x0, y0, x0 + width, y0 + height), fill=paper)
        size = rng.randrange(14, 60)
        cjk = rng.random() < 0.4
        font = ImageFont.truetype(str(CJK_FONTS[rng.randrange(2)] if cjk else rng.choice(TEXT_FONTS)), size)
        ink = tuple(rng.randrange(0, 90) for _ in range(3)) if rng.random() < 0.8 else (180, 30, 30)
        y = y0 + size
        while y < y0 + height - 2 * size:
            letters = CJK if cjk else LATIN
            count = int(rng.uniform(0.3, 1.0) * (width - 2 * size) / (size * (1.0 if cjk else 0.6)))
            line = "".join(rng.choice(letters) for _ in range(max(1, count)))
            draw.text((x0 + size * rng.uniform(0.5, 1.5), y), line, fill=ink, font=font)
            y += size * rng.uniform(1.2, 2.2)
        frame = np.asarray([[[x0, y0], [x0 + width, y0], [x0 + width, y0 + height], [x0, y0 + height]]])
    else:  # objects: blobs, stripes and discs of colour (a pet, a cup, a toy)
        for _ in range(rng.randrange(2, 9)):
            cx, cy, r = rng.uniform(300, 1500), rng.uniform(250, 1150), rng.uniform(40, 350)
            colour = tuple(rng.randrange(256) for _ in range(3))
            draw.ellipse((cx - r, cy - r * rng.uniform(0.4, 1.0), cx + r, cy + r * rng.uniform(0.4, 1.0)), fill=colour)
            for _ in range(rng.randrange(0, 6)):
                sx = cx + rng.uniform(-r, r)
                draw.line(
                    (sx, cy - r / 2, sx + rng.uniform(-30, 30), cy + r / 2),
                    fill=(40, 30, 20),
                    width=rng.randrange(4, 20),
                )
        frame = np.asarray([[[300.0, 250.0], [1500.0, 250.0], [1500.0, 1150.0], [300.0, 1150.0]]])
    turn = rng.uniform(-math.pi, math.pi) if rng.random() < 0.3 else rng.uniform(-0.3, 0.3)
    forward, size = camera(rng, frame, True, turn, max_side)
    backward = np.linalg.inv(forward)
    coefficients = tuple((backward / backward[2, 2]).reshape(-1)[:8])
    fill = tuple(int(v) for v in np.asarray(world.resize((16, 16))).reshape(-1, 3).mean(axis=0))
    image = photograph(rng, world.transform(size, Image.PERSPECTIVE, coefficients, Image.BILINEAR, fillcolor=fill))
    return Photo(name, np.asarray(image), np.zeros((0, 4), np.float32), np.zeros(0, np.int64), np.zeros(0, np.float32))


def _receipt(rng: random.Random, draw: ImageDraw.ImageDraw) -> np.ndarray:
    """A till receipt or a table of numbers drawn on the table; returns the paper's corners."""
    width, height = rng.uniform(300, 800), rng.uniform(600, 1300)
    x0, y0 = rng.uniform(100, 1700 - width), rng.uniform(50, 1350 - height)
    paper = tuple(int(v) for v in np.asarray([rng.uniform(215, 255)] * 3) * [1, 1, rng.uniform(0.88, 1)])
    draw.rectangle((x0, y0, x0 + width, y0 + height), fill=paper)
    size = rng.randrange(16, 44)
    cjk = rng.random() < 0.3
    font = ImageFont.truetype(str(rng.choice(LATIN_FONTS)), size)
    names = ImageFont.truetype(str(CJK_FONTS[rng.randrange(2)]), size) if cjk else font
    ink = tuple(rng.randrange(0, 80) for _ in range(3))
    columns = rng.choice([1, 1, 2, 3])  # price columns at the right (a table has several)
    y = y0 + size * rng.uniform(1, 3)
    while y < y0 + height - 2 * size:
        count = rng.randrange(3, 12)
        item = "".join(rng.choice(CJK if cjk else LATIN[:26]) for _ in range(count // (2 if cjk else 1) + 1))
        draw.text((x0 + size * 0.6, y), item, fill=ink, font=names)
        for column in range(columns):
            price = (
                f"{rng.randrange(1, 999)}.{rng.randrange(100):02d}" if rng.random() < 0.8 else str(rng.randrange(1, 99))
            )
            right = x0 + width - size * 0.6 - column * size * 4.2
            draw.text((right - draw.textlength(price, font=font), y), price, fill=ink, font=font)
        y += size * rng.uniform(1.25, 1.9)
    return np.asarray([[[x0, y0], [x0 + width, y0], [x0 + width, y0 + height], [x0, y0 + height]]])


def unseen_photos(count: int = UNSEEN_COUNT) -> list[Photo]:
    """The unseen-designs validation set: fixed seed, designs training never sees, hands only.

    Layouts are hand rows (one or two, melds apart, tight crops, turned any way); discards
    are left out so that "the whole hand" is every suited tile in the picture.
    """
    from vision_designs import unseen_designs

    return _hands(unseen_designs(), UNSEEN_SEED, "unseen", count)


def fresh_photos(count: int = FRESH_COUNT) -> list[Photo]:
    """The fresh-designs check: like ``unseen_photos``, of the ``FRESH_DESIGNS`` (training never sees them)."""
    from vision_designs import fresh_designs

    return _hands(fresh_designs(), FRESH_SEED, "fresh", count)


def tuning_photos(groups: int = TUNING_GROUPS) -> list[Photo]:
    """The tuning check: 120 scenes of each group of ``TUNING_DESIGNS``, composed as the unseen
    set's. Run-time settings are chosen on these (and on the hold-out photos), never on the
    unseen or fresh sets; training never calls it."""
    from vision_designs import tuning_designs

    return [photo for group in range(groups)
            for photo in _hands(tuning_designs(group), TUNING_SEED + group, f"tuning{group}", UNSEEN_COUNT)]


def tuning_winning_photos(groups: int = TUNING_GROUPS) -> list[Photo]:
    """Winning hands of the tuning designs, 120 of each group, composed as ``winning_photos``."""
    from vision_designs import tuning_designs

    return [photo for group in range(groups)
            for photo in _winning_hands(tuning_designs(group), TUNING_WINS_SEED + group, f"w{group}", WINS_COUNT)]


def riichi_photos(count: int = RIICHI_COUNT) -> list[Photo]:
    """The riichi check: hands of FluffyStuff Black (never trained on) composed as real riichi sets
    are (``vision_designs.riichi_look``: the art at its own size or smaller, sides and backs of
    several kinds, red fives in half of them), laid out as the unseen set's."""
    from vision_designs import riichi_look

    rng = random.Random(RIICHI_SEED)
    return _hands([riichi_look(rng, "Black") for _ in range(count)], RIICHI_SEED, "riichi", count)


def winning_photos(count: int = WINS_COUNT) -> list[Photo]:
    """Winning hands of the unseen designs (seed ``WINS_SEED``), as a player photographs a hand
    to score it: 14 tiles (15-16 with kongs), sorted, the winning tile last, nothing else in the
    picture. For ``vision.win_reading``; like the unseen set, training never calls it."""
    from vision_designs import unseen_designs

    return _winning_hands(unseen_designs(), WINS_SEED, "win", count)


def winning_faces(rng: random.Random) -> list[int | str]:
    """A random winning hand in two suits: four sets (pungs, runs, now and then a kong) and a
    pair, or now and then seven pairs; sorted by suit and rank with the winning tile last."""
    suits = rng.sample(range(3), 2)
    while True:
        tiles: list[int] = []
        if rng.random() < 0.12:
            for _ in range(7):
                tile = rng.choice(suits) * 9 + rng.randrange(9)
                tiles += [tile, tile]
        else:
            for _ in range(4):
                base = rng.choice(suits) * 9
                shape = rng.random()
                if shape < 0.08:
                    tiles += [base + rng.randrange(9)] * 4
                elif shape < 0.4:
                    tiles += [base + rng.randrange(9)] * 3
                else:
                    start = base + rng.randrange(7)
                    tiles += [start, start + 1, start + 2]
            pair = rng.choice(suits) * 9 + rng.randrange(9)
            tiles += [pair, pair]
        if max(tiles.count(t) for t in tiles) <= 4:
            break
    last = tiles.pop(rng.randrange(len(tiles)))
    return [*sorted(tiles), last]


def _winning_hands(designs: list, seed: int, name: str, count: int) -> list[Photo]:
    """``count`` winning hands (``winning_faces``) of ``designs`` in turn, one or two rows, nothing else."""
    rng = random.Random(seed)
    return [
        scene_photo(rng, designs[i % len(designs)], f"{name}_{i:03d}", rng.choice(["row", "row", "two_rows"]),
                    other_share=0.0, faces=winning_faces(rng))
        for i in range(count)
    ]


def _hands(designs: list, seed: int, name: str, count: int) -> list[Photo]:
    rng = random.Random(seed)
    return [
        scene_photo(rng, designs[i % len(designs)], f"{name}_{i:03d}", rng.choice(["row", "row", "two_rows"]))
        for i in range(count)
    ]
