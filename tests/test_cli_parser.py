"""``gonkad``'s parser loads only the command asked for, and parses it exactly as the whole parser does."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from gonkad.cli import COMMANDS, MODULES, build_parser

ADDRESS = "gonka1qqqsyqcyq5rqwzqfpg9scrgwpugpzysn2y9lgf"

COMMAND_LINES = [
    ["tx", "bank", "send", "alice", ADDRESS, "5ngonka", "--fees", "1ngonka"],
    ["tx", "stake", "create-validator", "10ngonka", "--moniker", "m", "--from", "alice"],
    ["tx", "gov", "vote", "3", "yes", "--from", "alice"],
    ["tx", "gov", "submit-proposal", "proposal.json", "--from", "alice"],
    ["q", "bank", "balances", ADDRESS],
    ["query", "tx", "AB" * 32],
    ["query", "inference", "params"],
    ["status", "--node", "tcp://127.0.0.1:1"],
    ["keys", "list"],
    ["localnet", "status", "--home", "x"],
    ["export", "--home", "x"],
    ["chain-info", "keplr", "--home", "x"],
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=[" ".join(argv[:3]) for argv in COMMAND_LINES])
def test_a_command_parses_as_the_whole_parser_parses_it(argv: list[str]) -> None:
    assert parsed(build_parser(argv), argv) == parsed(build_parser(), argv)


def parsed(parser: argparse.ArgumentParser, argv: list[str]) -> dict[str, object]:
    """The parsed flags, with handlers by name: a module's handlers are closures made anew by each parser."""
    return {key: getattr(value, "__qualname__", value) for key, value in vars(parser.parse_args(argv)).items()}


def test_a_module_command_loads_no_other_modules_cli() -> None:
    argv = ["q", "bank", "balances", ADDRESS]
    probe = (
        f"import sys; from gonkad.cli import build_parser; build_parser({argv!r}).parse_args({argv!r}); "
        "print(sorted(m for m in sys.modules if m.startswith('gonkad.cmd.')"
        " or m.endswith('.cli') and m.startswith(('x.', 'mlnode', 'diloco'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['x.bank.cli']"


def test_the_whole_listing_names_every_command() -> None:
    top = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"init", "start", "status", "tx", "query", "q", "localnet", *COMMANDS} == set(top)
    assert set(top["tx"]._subparsers._group_actions[0].choices) == {*MODULES, "consensus"}  # type: ignore[union-attr]
    assert set(top["query"]._subparsers._group_actions[0].choices) == {*MODULES, "tx"}  # type: ignore[union-attr]


@pytest.mark.parametrize("argv", [["bogus"], ["tx", "bogus"]])
def test_an_unknown_word_is_refused_with_the_whole_list(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser(argv).parse_args(argv)
    assert "invalid choice: 'bogus'" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["tx", "gov", "submit-proposal", "p.json"], ["q", "gov", "proposal", "1"]])
def test_a_gov_command_knows_every_modules_messages(argv: list[str]) -> None:
    """A proposal carries any module's messages in ``Any``: the gov commands pack and print them by type URL."""
    probe = (
        f"from gonkad.cli import build_parser; build_parser({argv!r}); "
        "from google.protobuf import symbol_database as s; d = s.Default(); "
        "print(d.GetSymbol('gonka.epochs.v1.MsgUpdateParams').DESCRIPTOR.full_name,"
        " d.GetSymbol('cosmos.distribution.v1beta1.MsgCommunityPoolSpend').DESCRIPTOR.full_name)"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert loaded.stdout.split() == [
        "gonka.epochs.v1.MsgUpdateParams",
        "cosmos.distribution.v1beta1.MsgCommunityPoolSpend",
    ], loaded.stderr
