"""Every name Telegram allows is drawn with real glyphs: the bundled fonts and their fallback.

The corpus holds over 500 names in every script the issue lists: Chinese (simplified and
traditional, with the rare characters that used to turn into boxes), Japanese, Korean,
Latin with diacritics, Cyrillic, Greek, Arabic, Thai, and emoji with skin tones, ZWJ
sequences, keycaps and flags. For each character the test asks fontTools whether the font
the renderer picked really maps it (the cmap), so a box can't hide behind a passing test.
"""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw

from rendering import text
from rendering.text import FONT_DIR, PLACEHOLDER, clusters, draw_text, face_for, faces, runs, text_width

SURNAMES_SIMPLIFIED = "李王张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程魏"
GIVEN_SIMPLIFIED = ["婷", "昊然", "鑫", "晗璇", "宝", "梓涵", "一诺", "浩宇", "欣怡", "子轩", "雨桐", "芃芃", "彧",
                    "喆", "犇", "淼", "骉", "昱", "玥", "翀", "珺", "瑄", "祎", "钰", "嫣然", "婧", "頔", "妘"]
SURNAMES_TRADITIONAL = "陳張黃劉鄭蘇葉謝羅馮鄧蕭韓傅闕龔嚴鍾歐陽"
GIVEN_TRADITIONAL = ["曉華", "德華", "學友", "偉強", "秀文", "麗珍", "國榮", "嘉慧", "誌瑋", "鳳嬌", "龍", "鵬飛",
                     "藝謀", "詠麟", "慧琳", "韻儀"]
JAPANESE = ["山田太郎", "佐藤さくら", "鈴木一郎", "高橋ひなた", "田中ゆうき", "渡辺みゆき", "伊藤あおい", "中村ケンジ",
            "小林まりこ", "加藤しょうた", "吉田ななみ", "山本リョウ", "松本ゆい", "井上こはる", "木村タクヤ",
            "林ゆず", "清水はるか", "山崎ソウタ", "森みなと", "池田あかり", "橋本カナ", "阿部りく", "石川そら",
            "前田ひかる", "藤田メイ", "小川ちひろ", "岡田ゆうと", "後藤すず", "長谷川ハナ", "村上レン",
            "ヨシコ", "ミク", "さとし", "ゆいな", "コウヘイ", "はるか", "ケイ", "まゆ", "アキラ", "つばさ"]
KOREAN = ["김민준", "이서연", "박지호", "최서윤", "정도윤", "강하은", "조예준", "윤지우", "장시우", "임하윤",
          "한주원", "오지아", "서은우", "신수아", "권건우", "황서아", "안유준", "송지안", "류현우", "홍채원",
          "전민서", "고준서", "문윤서", "양지민", "손하린", "배도현", "백예린", "허승민", "유지훈", "남궁민",
          "독고영재", "선우정아", "제갈성렬", "황보혜정", "사공민", "서문탁", "김빛나", "이슬기", "박하늘", "최가람"]
LATIN = ["Zoë", "Łukasz", "Nguyễn Thị Minh Khai", "José Álvarez", "François", "Jürgen Müller", "Søren Ørsted",
         "Ásgeir Þór", "Dvořák", "Đorđe", "İbrahim Çelik", "Ğülşen", "Mañana", "Çağla", "Ærøskøbing", "Zuzana Ďurčová",
         "Trần Hưng Đạo", "Lê Văn Thịnh", "Phạm Ngọc Thạch", "Œdipe", "Štěpán", "Ľubomír", "Ŕehák", "Ștefan",
         "Țuțuianu", "Gößling", "Saoirse Ní Bhriain", "Sigurðsson", "Malgorzata Wójcik", "Ōtani", "Ūla", "Dāvis",
         "Kęstutis", "Ėglė", "Bob", "alice_99", "Dee", "Ann-Marie O'Neil", "J.R.R.", "Renée", "Noël", "Chloë",
         "Björk", "Aurélie", "Iñaki", "Ñuñoa", "Grün", "Crème Brûlée", "Žofia", "Ĳsbrand"]
CYRILLIC = ["Борис", "Анна", "Дмитрий", "Ёлка", "Наталья", "Сергей", "Юлия", "Владимир", "Екатерина", "Олег",
            "Тарас", "Ґанна", "Їжак", "Єва", "Іван", "Ђорђе", "Љубица", "Њего", "Џон", "Ћирило", "Ўлмас", "Қанат",
            "Ғалым", "Ұлан", "Ңа", "Өмір", "Үміт", "Һәм", "Әсел", "Жұлдыз", "Мирослава", "Святослав", "Ярослав",
            "Людмила", "Фёдор", "Щукин", "Хабиб", "Цой", "Шамиль", "Эльвира"]
GREEK = ["Γιώργος", "Αλέξανδρος", "Μαρία", "Ελένη", "Δημήτρης", "Νίκος", "Κωνσταντίνος", "Σοφία", "Ιωάννα",
         "Παναγιώτης", "Χρήστος", "Βασιλική", "Αθηνά", "Ζωή", "Θεόδωρος", "Ξανθή", "Ψυχή", "Ωραιοζήλη", "Ϊάσων",
         "Ευάγγελος", "Φώτης", "Σπύρος", "Ηλίας", "Λάμπρος", "Ρένα", "Τάσος", "Υπατία", "Όλγα", "Ἀχιλλεύς", "Ἑλένη"]
ARABIC = ["محمد", "علي", "فاطمة", "أحمد", "عائشة", "يوسف", "مريم", "عمر", "خديجة", "حسن", "زينب", "إبراهيم",
          "ليلى", "سارة", "خالد", "نور", "عبد الله", "رشيد", "سلمى", "طارق", "هدى", "ياسمين", "بلال", "جميلة",
          "كريم", "منى", "وليد", "رانيا", "سعيد", "ضياء", "پریا", "چنگیز", "گلناز", "ژاله", "ڤيكتور"]
THAI = ["สมชาย", "สมหญิง", "ณัฐพล", "กิตติ", "ปิยะ", "วิชัย", "สุดารัตน์", "อรุณี", "ธนากร", "ศิริพร",
        "พิมพ์ชนก", "ชัยวัฒน์", "จักรพันธ์", "นภัสสร", "ภูมิใจ", "ฤทัย", "ฦาชา", "เพ็ญศรี", "แก้วตา", "โชคดี",
        "ใจดี", "ไพลิน", "ขวัญใจ", "ฆนา", "ญาดา", "ฐิติ", "ฑามรี", "ฒาลี", "ทองคำ", "บุญมี"]
EMOJI = ["Dee 🀄", "😀", "小红🌸", "Max 🐶", "👨‍👩‍👧‍👦 family", "🏳️‍🌈 pride", "🇨🇳", "🇯🇵 Ken", "🇺🇦 Оля",
         "🇧🇷 João", "👍🏽 ok", "👩🏿‍💻 dev", "🧑‍🍳", "❤️‍🔥", "1️⃣ first", "#️⃣", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scot", "🐼 熊猫",
         "🎉 Party", "🤖 bot", "☕", "⭐ Star", "🥟 饺子", "🀄 雀神", "🦄", "👋🏻 Hi", "🧕🏽", "🤝🏼", "👨‍❤️‍👨",
         "🏃‍♀️‍➡️", "🐉龙", "🇰🇷 민수", "🇸🇦 علي", "🇹🇭 สมชาย", "🇬🇷 Νίκος", "😂😂😂", "🫠", "🪭", "🍀", "✌️"]


def simplified() -> list[str]:
    return [s + g for s, g in itertools.islice(itertools.product(SURNAMES_SIMPLIFIED, GIVEN_SIMPLIFIED), 0, None, 7)]


def traditional() -> list[str]:
    return [s + g for s, g in itertools.islice(itertools.product(SURNAMES_TRADITIONAL, GIVEN_TRADITIONAL), 0, None, 5)]


CORPUS: dict[str, list[str]] = {
    "simplified": simplified(),
    "traditional": traditional(),
    "japanese": JAPANESE,
    "korean": KOREAN,
    "latin": LATIN,
    "cyrillic": CYRILLIC,
    "greek": GREEK,
    "arabic": ARABIC,
    "thai": THAI,
    "emoji": EMOJI,
}
ALL_NAMES = sorted({name for names in CORPUS.values() for name in names})
IGNORABLE = {0x200D, *range(0xFE00, 0xFE10)}  # joiners and variation selectors: shaping, not glyphs


@cache
def cmap(file: str) -> frozenset[int]:
    return frozenset(TTFont(str(FONT_DIR / file), lazy=True).getBestCmap())


def test_the_corpus_is_large_and_covers_every_script() -> None:
    assert len(ALL_NAMES) >= 500
    assert all(len(names) >= 30 for names in CORPUS.values()), {k: len(v) for k, v in CORPUS.items()}


@pytest.mark.parametrize("bold", [False, True])
def test_every_character_of_every_name_comes_from_a_font_that_has_it(bold: bool) -> None:
    """Per run the renderer draws: the file it uses maps each code point of the run (the cmap)."""
    missing = []
    for name in ALL_NAMES:
        for run in runs(name, 28, bold):
            assert PLACEHOLDER not in run.text, (name, run)
            have = cmap(run.file)
            missing += [(name, ch, run.file) for ch in run.text if ord(ch) not in IGNORABLE and ord(ch) not in have]
    assert not missing, missing[:20]


def test_every_cjk_ideograph_kana_and_hangul_syllable_is_in_the_cjk_font() -> None:
    """The ideographs up to Unicode 12 (all Noto Sans CJK 2.004 has; the 26 added in Unicode 13
    and 14, U+9FF0.. and U+4DB6.., are in no font here and draw as the placeholder)."""
    cjk = next(f for f in faces() if ord("万") in f.coverage)
    have = cmap(cjk.regular)
    blocks = {
        "CJK Unified Ideographs": range(0x4E00, 0x9FEF + 1),
        "extension A": range(0x3400, 0x4DB5 + 1),
        "hiragana": range(0x3041, 0x3096 + 1),
        "katakana": range(0x30A1, 0x30FA + 1),
        "Hangul syllables": range(0xAC00, 0xD7A3 + 1),
    }
    for block, points in blocks.items():
        absent = [hex(p) for p in points if p not in have]
        assert not absent, (block, absent[:10])


def test_the_manifest_agrees_with_the_fonts_cmaps() -> None:
    for face in faces():
        for file, coverage in ((face.regular, face.coverage), (face.bold, face.bold_coverage)):
            if file is None:
                continue
            have = cmap(file)
            assert all(p in coverage for p in have), file
            assert all(p in have for p in range(0x20, 0x2FFFF) if p in coverage), file


@pytest.mark.parametrize("sequence", ["👨‍👩‍👧‍👦", "🏳️‍🌈", "🇨🇳", "👍🏽", "1️⃣", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🧑‍🍳"])
def test_emoji_sequences_and_flags_are_one_picture(sequence: str) -> None:
    assert len(clusters(sequence)) == 1
    face = face_for(sequence)
    assert face is not None and face.emoji
    # Shaped by Raqm into a single glyph: as wide as one plain emoji, not one per code point.
    assert text_width(sequence, 32) == pytest.approx(text_width("😀", 32), rel=0.15)


def test_emoji_are_drawn_in_colour() -> None:
    img = Image.new("RGB", (120, 60), (255, 255, 255))
    draw_text(ImageDraw.Draw(img), (4, 30), "🇨🇳😀", 36, (0, 0, 0))
    colours = {px for _, px in img.getcolors(maxcolors=1 << 16) if max(px) - min(px) > 80}
    assert len(colours) > 20


def test_a_character_no_font_has_is_a_neutral_placeholder_not_a_box() -> None:
    unknown = "\U000f0001"  # a private-use code point: no font maps it
    assert face_for(unknown) is None
    drawn = "".join(r.text for r in runs(f"Ann{unknown}Lee", 24))
    assert drawn == f"Ann{PLACEHOLDER}Lee"


def test_a_bold_name_never_mixes_two_weights() -> None:
    common = runs("李宝", 30, bold=True)  # both in the bold font
    assert len(common) == 1 and common[0].stroke == 0 and "Bold" in common[0].file
    rare = runs("陈晗璇", 30, bold=True)  # 晗 and 璇 only in the regular weight: all three thickened
    assert len(rare) == 1 and rare[0].stroke > 0 and "Regular" in rare[0].file


@pytest.mark.parametrize("script", sorted(CORPUS))
def test_each_script_draws_ink(script: str) -> None:
    img = Image.new("RGB", (900, 50), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for name in CORPUS[script][:10]:
        img.paste((255, 255, 255), (0, 0, 900, 50))
        width = draw_text(draw, (5, 25), name, 28, (0, 0, 0))
        assert width > 0
        assert img.convert("L").getextrema()[0] < 128, name


def test_labels_are_cached_sprites() -> None:
    first = text.label("王小明 +12", 28, (0, 0, 0), True)
    assert text.label("王小明 +12", 28, (0, 0, 0), True) is first


def test_fonts_ship_with_their_licence_and_stay_small() -> None:
    files = sorted(p for p in FONT_DIR.iterdir() if p.suffix in (".otf", ".ttf"))
    listed = {f for face in faces() for f in (face.regular, face.bold) if f}
    assert {p.name for p in files} == listed
    assert (FONT_DIR / "OFL.txt").read_text(encoding="utf-8").startswith("Copyright")
    attribution = (FONT_DIR / "ATTRIBUTION.txt").read_text(encoding="utf-8")
    for path in files:
        assert path.name in attribution, path.name
    total = sum(p.stat().st_size for p in files)
    assert total < 22 * 1024 * 1024, total


def test_no_system_font_is_used(monkeypatch) -> None:
    """Every file the renderer opens lies inside the package."""
    opened: list[Path] = []
    real = text.ImageFont.truetype

    def spy(path, *args, **kwargs):
        opened.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(text.ImageFont, "truetype", spy)
    text._font.cache_clear()
    text.label.cache_clear()
    img = Image.new("RGB", (600, 40))
    for name in ("Борис 李婷 😀", "محمد สมชาย"):
        draw_text(ImageDraw.Draw(img), (0, 20), name, 23, (255, 255, 255), bold=True)
    assert opened and all(p.parent == FONT_DIR for p in opened)


def test_a_space_after_an_emoji_is_a_text_space() -> None:
    gap = text_width("🇻🇳 김", 28) - text_width("🇻🇳김", 28)
    assert gap == pytest.approx(text_width(" ", 28), abs=2)
