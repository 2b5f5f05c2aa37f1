"""``xuezhan``'s entry point imports only the sub-command it runs (start-up time of ``xuezhan run``)."""

from __future__ import annotations

import argparse

import pytest

from cli.main import COMMANDS, build_parser


def sub_commands(parser: argparse.ArgumentParser) -> set[str]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(action.choices)


def test_the_table_of_sub_commands_names_every_one_registered() -> None:
    assert sub_commands(build_parser()) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_sub_command_is_parsed_with_only_its_module(name: str) -> None:
    parser = build_parser(name)
    assert name in sub_commands(parser)
    assert len(sub_commands(parser)) <= 2  # score/waits and simulate/arena share a module


def test_an_unknown_name_gets_the_full_list(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser("nonsense").parse_args(["nonsense"])
    assert "run" in capsys.readouterr().err
