"""x/bls: hosts' BLS keys. A gentx with a BLS key registers it at genesis; a host registers or replaces its key
later with MsgRegisterBlsKey; bad input (identity or out-of-subgroup key, another key's proof, a non-host, a key
taken by another host, wrong sizes) changes nothing and fails with a clear ``bls`` (or ``sdk``) code; export and
import round-trip; the CLI's key file (``gonkad init``) and ``keys bls show``."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from chain import InProcessChain
from test_bls import non_subgroup_g1

from gonkad import genesis
from protogen.gonka.bls.v1 import query_pb2, tx_pb2
from sdk.client.txbuilder import address_of, sign_tx
from sdk.crypto import bech32, bls, secp256k1
from sdk.services import gonka
from sdk.tx import decode_tx
from x.bls.keyfile import create_key_file, key_file, load_secret
from x.genutil.gentx import build_gentx, check_gentx_shape, collect_gentxs, write_gentx

CHAIN = "gonka-bls"
DENOM = "ngonka"
GNK = 10**9
KEYS = [secp256k1.PrivateKey(bytes([0x90 + i]) * 32) for i in range(4)]
SECRETS = [bls.keygen(bytes([0xA0 + i]) * 32) for i in range(4)]
QUERY = gonka("bls").query
IDENTITY_G1 = bytes([0xC0]) + bytes(47)


def addr(i: int) -> str:
    return address_of(KEYS[i])


def chain_with(path: Path, bls_hosts: int = 2, plain_hosts: int = 1, app_state: dict | None = None) -> InProcessChain:
    """Hosts 0..bls_hosts-1 register by gentx with a BLS key, the next ``plain_hosts`` without; every key funded."""
    state = app_state or genesis.default_app_state()
    gentxs = [
        build_gentx(
            KEYS[i],
            f"h{i}",
            bytes([0xD0 + i]) * 32,
            (DENOM, 1000 * GNK),
            CHAIN,
            bls_secret=SECRETS[i] if i < bls_hosts else None,
        )
        for i in range(bls_hosts + plain_hosts)
    ]
    state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
    return InProcessChain(path, {address_of(k): [(DENOM, 10_000 * GNK)] for k in KEYS}, chain_id=CHAIN, app_state=state)


def register_msg(i: int, secret: bytes, **change: bytes) -> tx_pb2.MsgRegisterBlsKey:
    fields = {"operator": addr(i), "public_key": bls.public_key(secret), "proof_of_possession": bls.pop_prove(secret)}
    fields.update(change)
    return tx_pb2.MsgRegisterBlsKey(**fields)


def deliver(chain: InProcessChain, i: int, msg: tx_pb2.MsgRegisterBlsKey):  # type: ignore[no-untyped-def]
    account = chain.account(addr(i))
    assert account is not None
    raw = sign_tx(KEYS[i], [msg], chain.chain_id, account.account_number, account.sequence, gas_limit=1_000_000)
    response = chain.block([raw])
    return response.tx_results[0]


def keys_of(chain: InProcessChain) -> dict[str, bytes]:
    reply = chain.query(QUERY + "Keys", query_pb2.QueryKeysRequest(), query_pb2.QueryKeysResponse)
    return {k.operator: k.public_key for k in reply.keys}


def test_gentx_registers_the_bls_key_at_genesis(tmp_path: Path) -> None:
    with chain_with(tmp_path / "db") as chain:
        assert keys_of(chain) == {addr(0): bls.public_key(SECRETS[0]), addr(1): bls.public_key(SECRETS[1])}
        one = chain.query(QUERY + "Key", query_pb2.QueryKeyRequest(operator=addr(1)), query_pb2.QueryKeyResponse)
        assert one.key.public_key == bls.public_key(SECRETS[1])
        assert list(keys_of(chain)) == sorted(keys_of(chain), key=lambda a: bech32.decode(a))  # operator order
        with pytest.raises(Exception, match="no BLS key"):
            chain.query(QUERY + "Key", query_pb2.QueryKeyRequest(operator=addr(2)), query_pb2.QueryKeyResponse)


def test_gentx_shapes() -> None:
    plain = decode_tx(build_gentx(KEYS[0], "h", b"\x01" * 32, (DENOM, GNK), CHAIN)).messages
    with_bls = decode_tx(build_gentx(KEYS[0], "h", b"\x01" * 32, (DENOM, GNK), CHAIN, bls_secret=SECRETS[0])).messages
    check_gentx_shape(plain, "a")
    check_gentx_shape(with_bls, "b")
    other = decode_tx(build_gentx(KEYS[1], "h", b"\x01" * 32, (DENOM, GNK), CHAIN, bls_secret=SECRETS[1])).messages
    with pytest.raises(ValueError, match="operator is not the validator's"):
        check_gentx_shape([with_bls[0], other[1]], "mixed")
    with pytest.raises(ValueError, match="not a MsgCreateValidator gentx"):
        check_gentx_shape([with_bls[1]], "bls only")
    with pytest.raises(ValueError, match="not a MsgCreateValidator gentx"):
        check_gentx_shape([with_bls[1], with_bls[0]], "reversed")


def test_collect_gentxs_accepts_both_shapes(tmp_path: Path) -> None:
    write_gentx(tmp_path, "a", build_gentx(KEYS[0], "h", b"\x01" * 32, (DENOM, GNK), CHAIN))
    write_gentx(tmp_path, "b", build_gentx(KEYS[1], "h", b"\x02" * 32, (DENOM, GNK), CHAIN, bls_secret=SECRETS[1]))
    assert len(collect_gentxs(tmp_path / "config" / "gentx")) == 2


def test_a_host_registers_and_replaces_its_key(tmp_path: Path) -> None:
    with chain_with(tmp_path / "db") as chain:
        result = deliver(chain, 2, register_msg(2, SECRETS[2]))
        assert result.code == 0, result.log
        assert any(e.type == "register_bls_key" for e in result.events)
        assert keys_of(chain)[addr(2)] == bls.public_key(SECRETS[2])
        # host 0 replaces its key; the old key is free again, and another host may take it
        result = deliver(chain, 0, register_msg(0, SECRETS[3]))
        assert result.code == 0, result.log
        assert keys_of(chain)[addr(0)] == bls.public_key(SECRETS[3])
        result = deliver(chain, 2, register_msg(2, SECRETS[0]))
        assert result.code == 0, result.log
        assert keys_of(chain)[addr(2)] == bls.public_key(SECRETS[0])
        # registering one's own key again changes nothing and succeeds
        assert deliver(chain, 2, register_msg(2, SECRETS[0])).code == 0


@pytest.mark.parametrize(
    "case, codespace, code, words",
    [
        ("identity", "bls", 2, "identity"),
        ("out-of-subgroup", "bls", 2, "subgroup"),
        ("another-keys-proof", "bls", 3, "does not verify"),
        ("short-key", "bls", 2, "48 bytes"),
        ("long-proof", "bls", 3, "96 bytes"),
        ("empty-proof", "bls", 3, "96 bytes"),
        ("non-host", "bls", 4, "not a host"),
        ("key-of-another-host", "bls", 5, "another host"),
    ],
)
def test_bad_registration_changes_nothing(tmp_path: Path, case: str, codespace: str, code: int, words: str) -> None:
    signer = 3 if case == "non-host" else 2
    msg = {
        "identity": lambda: register_msg(signer, SECRETS[2], public_key=IDENTITY_G1),
        "out-of-subgroup": lambda: register_msg(signer, SECRETS[2], public_key=non_subgroup_g1()),
        "another-keys-proof": lambda: register_msg(signer, SECRETS[2], proof_of_possession=bls.pop_prove(SECRETS[3])),
        "short-key": lambda: register_msg(signer, SECRETS[2], public_key=bls.public_key(SECRETS[2])[:47]),
        "long-proof": lambda: register_msg(signer, SECRETS[2], proof_of_possession=bls.pop_prove(SECRETS[2]) + b"\0"),
        "empty-proof": lambda: register_msg(signer, SECRETS[2], proof_of_possession=b""),
        "non-host": lambda: register_msg(signer, SECRETS[3]),
        "key-of-another-host": lambda: register_msg(signer, SECRETS[0]),
    }[case]()
    with chain_with(tmp_path / "db") as chain:
        before = keys_of(chain)
        result = deliver(chain, signer, msg)
        assert (result.codespace, result.code) == (codespace, code), result.log
        assert words in result.log
        assert keys_of(chain) == before


def test_export_import_round_trip(tmp_path: Path) -> None:
    with chain_with(tmp_path / "db") as chain:
        assert deliver(chain, 2, register_msg(2, SECRETS[2])).code == 0
        height, registered = chain.height, keys_of(chain)
        exported = json.loads(json.dumps(chain.app.export_app_state()))
    section = exported["bls"]
    assert [k["operator"] for k in section["keys"]] == sorted(registered, key=bech32.decode)
    with InProcessChain(tmp_path / "new", {}, chain_id=CHAIN, app_state=exported, initial_height=height + 1) as new:
        assert keys_of(new) == registered
        assert new.app.export_app_state()["bls"] == section
        # the imported indexes agree: host 0's key is still refused to host 2, and host 2 may replace its own
        result = deliver(new, 2, register_msg(2, SECRETS[0]))
        assert (result.codespace, result.code) == ("bls", 5), result.log  # ErrKeyUsed
        assert deliver(new, 2, register_msg(2, SECRETS[3])).code == 0
    # import re-checks every key and that its operator is a host, and refuses repeats
    first = section["keys"][0]
    for n, (keys_, words) in enumerate(
        (
            ([{"operator": first["operator"], "public_key": base64.b64encode(IDENTITY_G1).decode()}], "identity"),
            ([{"operator": first["operator"], "public_key": base64.b64encode(non_subgroup_g1()).decode()}], "subgroup"),
            ([{"operator": addr(3), "public_key": first["public_key"]}], "not a host"),
            ([first, {**first, "operator": section["keys"][1]["operator"]}], "repeated"),
        )
    ):
        bad = json.loads(json.dumps(exported))
        bad["bls"] = {"keys": keys_}
        with pytest.raises(ValueError, match=words):
            InProcessChain(tmp_path / f"bad{n}", {}, chain_id=CHAIN, app_state=bad, initial_height=height + 1)


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GONKA_KEYRING_PASSPHRASE": "unused"}
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60, env=env)


def test_cli_init_creates_the_key_file_once_and_gentx_registers_it(tmp_path: Path) -> None:
    home = str(tmp_path / "node")
    assert gonkad("init", "n0", "--chain-id", CHAIN, "--home", home).returncode == 0
    path = key_file(Path(home))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    consensus = json.loads((Path(home) / "config" / "genesis.json").read_text())["consensus_params"]
    assert consensus["abci"]["vote_extensions_enable_height"] == "1"  # shares (and certificates) from block 1
    first = path.read_text()
    secret = load_secret(Path(home))
    shown = gonkad("keys", "bls", "show", "--home", home)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {
        "public_key": bls.public_key(secret).hex(),
        "proof_of_possession": bls.pop_prove(secret).hex(),
    }
    again = gonkad("init", "n0", "--chain-id", CHAIN, "--home", home, "--overwrite")
    assert again.returncode == 0, again.stderr
    assert path.read_text() == first and not create_key_file(Path(home))
    added = gonkad("keys", "add", "op", "--keyring-backend", "test", "--output", "json", "--home", home)
    assert added.returncode == 0, added.stderr
    for step in (
        ["genesis", "add-genesis-account", "op", "2000000000000ngonka", "--keyring-backend", "test"],
        ["genesis", "gentx", "op", "1000000000000ngonka", "--keyring-backend", "test"],
        ["genesis", "collect-gentxs"],
        ["genesis", "validate"],
    ):
        result = gonkad(*step, "--home", home)
        assert result.returncode == 0, (step, result.stderr)
    doc = json.loads((tmp_path / "node" / "config" / "genesis.json").read_text())
    (gentx,) = doc["app_state"]["genutil"]["gen_txs"]
    messages = decode_tx(base64.b64decode(gentx)).messages
    assert tx_pb2.MsgRegisterBlsKey.FromString(messages[1].value).public_key == bls.public_key(secret)
    path.write_text("{}")
    broken = gonkad("keys", "bls", "show", "--home", home)
    assert broken.returncode == 1 and "not a valid BLS key file" in broken.stderr


def test_invariant_catches_indexes_that_disagree(tmp_path: Path) -> None:
    from x.bls import keys as bls_keys

    with chain_with(tmp_path / "db") as chain:
        module = next(m for m in chain.app.modules if m.name == "bls")
        ctx = chain.context()
        check = module.invariants()["indexes-agree"]
        assert check(ctx) is None
        ctx.kv(bls_keys.STORE_PREFIX).delete(bls_keys.operator_index_key(bls.public_key(SECRETS[0])))
        assert check(ctx) == "2 operators have keys but the key index holds 1"
        # an index entry pointing at the wrong operator
        ctx.kv(bls_keys.STORE_PREFIX).set(
            bls_keys.operator_index_key(bls.public_key(SECRETS[0])), bech32.decode(addr(1))
        )
        assert "indexed to another operator" in (check(ctx) or "")
