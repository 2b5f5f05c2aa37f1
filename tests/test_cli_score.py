"""``xuezhan score`` / ``xuezhan waits`` as a script would call them: one JSON object, exit codes."""

from __future__ import annotations

import json

import pytest

from cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_score_json_matches_the_issue_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "score", "234m567m888m5m (1111m) +5m gangshanghua", "--json")
    assert code == 0
    assert out == {
        "ok": True,
        "hand": "2345567888m (1111m) +5m 自摸 杠上花",
        "win_tile": "5m",
        "pattern": "清一色",
        "pattern_en": "full flush",
        "roots": 1,
        "bonuses": ["杠上花"],
        "multiplier": 8,
        "uncapped_multiplier": 16,
        "self_draw": True,
        "payment_per_payer": 9,
    }


def test_score_options_change_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    hand = "234m567m888m5m (1111m) +5m gangshanghua"
    assert run(capsys, "score", hand, "--cap", "none", "--json")[1]["multiplier"] == 16
    out = run(capsys, "score", hand, "--cap", "none", "--zimo", "jiafan", "--json")[1]
    assert (out["multiplier"], out["payment_per_payer"]) == (32, 32)


@pytest.mark.parametrize(
    ("hand", "error"),
    [
        ("123m45q", "parse"),
        ("123m456m", "tile_count"),
        ("11111m2m456m789m55m", "too_many_copies"),
        ("123m456m789p123s55s", "three_suits"),
        ("123m456m789m124p55p", "not_a_win"),
    ],
)
def test_bad_hands_exit_2_with_a_code(capsys: pytest.CaptureFixture[str], hand: str, error: str) -> None:
    code, out = run(capsys, "score", hand, "--json")
    assert code == 2
    assert out["ok"] is False and out["error"] == error and out["message"]


def test_waits_lists_each_winning_tile_with_its_value(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "waits", "123m456m789m23p55p", "--json")
    assert code == 0
    assert out["shanten"] == 0
    assert out["waits"] == [
        {"tile": "1p", "pattern": "平胡", "multiplier": 1},
        {"tile": "4p", "pattern": "平胡", "multiplier": 1},
    ]


def test_waits_of_a_hand_not_ready(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "waits", "123m456m789m24p58p", "--json")
    assert (code, out["shanten"], out["waits"]) == (0, 1, [])


def test_words_mode_prints_the_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "11224466m55889p +9p"]) == 0
    text = capsys.readouterr().out
    assert "七对 ×4" in text and "seven pairs" in text


def test_the_book_example_earthly_win_with_self_draw_double(capsys: pytest.CaptureFixture[str]) -> None:
    # RULES.md §5: 清带幺 16 × 2² roots × 2 (加番) = 128; marking it 地胡 cannot lower it.
    argv = ["--cap", "none", "--zimo", "jiafan", "--json"]
    assert run(capsys, "score", "1112233789999p +1p dihu zimo", *argv)[1]["multiplier"] == 128
    assert run(capsys, "score", "1112233789999p +1p zimo", *argv)[1]["multiplier"] == 128


def test_house_rules_that_change_a_typed_hand(capsys: pytest.CaptureFixture[str]) -> None:
    jiang = "222m555m888m222p5p +5p"  # 将对; no root, on a discard
    assert run(capsys, "score", jiang, "--json")[1]["multiplier"] == 8
    assert run(capsys, "score", jiang, "--cap", "none", "--jiangdui", "16", "--json")[1]["multiplier"] == 16
    out = run(capsys, "score", jiang, "--jiangdui", "none", "--json")[1]
    assert (out["pattern"], out["multiplier"]) == ("对对胡", 2)
    flush = "123m123m123m789m9m +9m"  # 清带幺 16; without it 带幺九 4
    assert run(capsys, "score", flush, "--cap", "none", "--json")[1]["multiplier"] == 16
    out = run(capsys, "score", flush, "--cap", "none", "--no-jingoudiao-qingdaiyao", "--json")[1]
    assert (out["pattern"], out["multiplier"]) == ("带幺九", 4)
    plain = "123m456m789m234p6p +6p juezhang"
    assert run(capsys, "score", plain, "--json")[1]["multiplier"] == 1  # 绝张 is off by default
    assert run(capsys, "score", plain, "--juezhang", "--json")[1]["multiplier"] == 2
    assert run(capsys, "score", plain, "--set", "last_copy_bonus=true", "--json")[1]["multiplier"] == 2
    code, out = run(capsys, "score", plain, "--set", "last_copy_bonus=maybe", "--json")
    assert code == 2 and "one of false, true" in out["message"]


def test_a_marked_tile_also_written_among_the_fourteen_is_read_as_the_mark(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "score", "123m456m789m22p555p +2p", "--json")
    assert code == 0 and out["hand"] == "123456789m2555p +2p" and "also written" in out["note"]
    code, out = run(capsys, "score", "123m456m789m2p555p +2p +3p", "--json")
    assert code == 2


def test_simulate_with_a_house_rule_checks_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--hands", "2", "--players", "greedy,greedy,greedy,greedy", "--json"]
    assert main([*argv, "--set", "declare_void=false", "--set", "swap_direction=across"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["settings"] == ["declare_void=false", "swap_direction=across"]
    assert main([*argv, "--set", "pass_win_scope=sometimes"]) == 2
    assert "any, same_tile, off" in json.loads(capsys.readouterr().out)["message"]
