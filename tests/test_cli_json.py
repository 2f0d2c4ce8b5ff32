"""JSON files given to commands (proposals, params, genesis files, gentxs) are read by one helper
(sdk/cli/jsonfile.py): a file nested too deep or of the wrong shape is one line on stderr and exit 1,
never a RecursionError or an AttributeError traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sdk.cli.jsonfile import MAX_JSON_DEPTH, read_json_file
from sdk.client.txbuilder import address_of
from sdk.crypto import secp256k1

LEVELS = 100_000
ARRAYS = "[" * LEVELS + "]" * LEVELS
OBJECTS = '{"a":' * LEVELS + "1" + "}" * LEVELS
TX_FLAGS = ["--from", "nobody", "--keyring-backend", "test", "--node", "tcp://127.0.0.1:1", "-y"]


def gonkad(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gonkad", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )


def nested(depth: int) -> str:
    """``depth`` arrays, one inside the other."""
    return "[" * depth + "]" * depth


def assert_one_error_line(done: subprocess.CompletedProcess[str], line: str) -> None:
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"Error: {line}\n")


def genesis_home(root: Path, genesis_text: str) -> Path:
    """A node home whose config/genesis.json holds ``genesis_text``."""
    (root / "home" / "config").mkdir(parents=True)
    (root / "home" / "config" / "genesis.json").write_text(genesis_text)
    return root / "home"


@pytest.mark.parametrize("text", [ARRAYS, OBJECTS], ids=["arrays", "objects"])
@pytest.mark.parametrize(
    "command",
    [
        ["tx", "gov", "submit-proposal", "FILE", *TX_FLAGS],
        ["tx", "bank", "update-params", "FILE", *TX_FLAGS],
        ["genesis", "validate", "FILE"],
    ],
    ids=["submit-proposal", "update-params", "genesis-validate"],
)
def test_a_file_nested_100000_levels_is_one_error_line(tmp_path: Path, command: list[str], text: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(text)
    done = gonkad(*[str(path) if a == "FILE" else a for a in command], "--home", str(tmp_path), cwd=tmp_path)
    assert_one_error_line(done, f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels")


def test_a_proposal_message_nested_600_levels_is_one_error_line(tmp_path: Path) -> None:
    """Shallow enough for the JSON decoder, too deep for what reads the message after it (a deep copy,
    protobuf's JSON parser): refused when the file is read."""
    path = tmp_path / "proposal.json"
    path.write_text(
        json.dumps(
            {"messages": [{"@type": "/cosmos.bank.v1beta1.MsgSend", "amount": "X"}], "title": "t", "summary": "s"}
        ).replace('"X"', nested(600))
    )
    done = gonkad("tx", "gov", "submit-proposal", str(path), *TX_FLAGS, "--home", str(tmp_path), cwd=tmp_path)
    assert_one_error_line(done, f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels")


@pytest.mark.parametrize(
    "command",
    [
        ["genesis", "add-genesis-account", address_of(secp256k1.PrivateKey(b"\x01" * 32)), "1ngonka"],
        ["genesis", "collect-gentxs"],
        ["export"],
    ],
    ids=["add-genesis-account", "collect-gentxs", "export"],
)
def test_a_deep_or_non_object_genesis_is_one_error_line(tmp_path: Path, command: list[str]) -> None:
    home = genesis_home(tmp_path / "deep", OBJECTS)
    done = gonkad(*command, "--home", str(home), cwd=tmp_path)
    assert_one_error_line(done, f"{home / 'config' / 'genesis.json'}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    home = genesis_home(tmp_path / "list", "[1]")
    done = gonkad(*command, "--home", str(home), cwd=tmp_path)
    assert_one_error_line(done, f"{home / 'config' / 'genesis.json'}: expected a JSON object, got list")


def test_a_deep_gentx_file_is_one_error_line(tmp_path: Path) -> None:
    home = genesis_home(tmp_path, json.dumps({"chain_id": "c", "app_state": {}}))
    gentx = tmp_path / "gentxs" / "gentx-a.json"
    gentx.parent.mkdir()
    gentx.write_text(ARRAYS)
    done = gonkad("genesis", "collect-gentxs", "--gentx-dir", str(gentx.parent), "--home", str(home), cwd=tmp_path)
    assert_one_error_line(done, f"{gentx}: JSON nested deeper than {MAX_JSON_DEPTH} levels")


def test_params_file_that_is_not_an_object_is_one_error_line(tmp_path: Path) -> None:
    """x/consensus's update-params takes the file's fields as the message's own."""
    path = tmp_path / "params.json"
    path.write_text("[1]")
    done = gonkad("tx", "consensus", "update-params", str(path), *TX_FLAGS, "--home", str(tmp_path), cwd=tmp_path)
    assert_one_error_line(done, f"{path}: expected a JSON object, got list")


def test_depth_limit_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(nested(MAX_JSON_DEPTH))
    assert read_json_file(path) is not None
    path.write_text(json.dumps({"a": json.loads(nested(MAX_JSON_DEPTH - 1)), "b": 1}))
    assert read_json_file(path)["b"] == 1
    path.write_text(nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(ValueError, match=f"^{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels$"):
        read_json_file(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match=f"^{path} is not JSON: Expecting property name"):
        read_json_file(path)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ValueError, match=f"^{path} is not UTF-8 text: invalid start byte at byte 7$"):
        read_json_file(path)
