"""BLS block certificates on a real 4-validator network (x/bls, "Certificates"), one network for the module,
its tests in order:

(a) every block from height 2 on carries, at its head, the certificate of the height before: the Certificate
    query answers it, ``x/bls/client.fetch_and_verify`` accepts it, so does an outside verifier built from gRPC
    answers and py_ecc alone, and a tampered answer is refused;
(b) node2 (``test_fault = "weak-certificate"``) and node3 (``"forge-certificate"``) propose bad certificates: the
    others reject them (their logs say why) and no committed block is theirs, yet the chain goes on; so every
    certificate comes from node0 and node1, whose share checks are ``deferred`` (node2's and node3's eager);
(c) node1 stopped: its bit is clear in the certificates of the heights it misses, which still hold > 2/3;
    restarted, it keeps its key file and its bit comes back;
(d) a new host joins after genesis (``gonkad tx stake create-validator``, its node added by
    ``localnet.add_node``) and is in the certificates' validator sets from its set-validators height + 2 on,
    with its registered BLS key and its bit set.

Epochs of 10 blocks (epoch n ≥ 1 starts at 1 + 10n, set validators at offset 4), and downtime is never jailed
(stopping node1 must not take it out of the set).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chain_reads import wait_height
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2 as tendermint_query
from nodes import bond_validator, running_localnet
from py_ecc.bls import G2ProofOfPossession

from gonkad import genesis, localnet
from gonkad.paths import pid_file
from protogen.gonka.bls.v1 import bls_pb2, query_pb2
from sdk.abci.blocks import decode_injected_entry
from sdk.client.process import live_pid, terminate
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import address_of
from sdk.crypto import certificate
from sdk.services import gonka
from x.bls import client
from x.bls.keyfile import key_file

EPOCH_LENGTH, RACE_VALIDATION, SET_VALIDATORS, INFERENCE = 10, 2, 4, 5
CHECKED = 16
"""(a) checks the certificates of heights 1..CHECKED."""
OVERRIDES = {
    "epochs": {
        "params": {
            "epoch_length": str(EPOCH_LENGTH),
            "race_validation_offset": str(RACE_VALIDATION),
            "set_validators_offset": str(SET_VALIDATORS),
            "inference_offset": str(INFERENCE),
        }
    },
    "slashing": {"params": {"signed_blocks_window": "1000000"}},  # a stopped validator is never jailed here
}
_base = localnet.load_settings(validators=4, chain_id="gonka-bls-net")
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})
FAULTS = {"node2": "weak-certificate", "node3": "forge-certificate"}
EAGER = ("node2", "node3")
"""The others check shares as nodes do by default (deferred): both modes certify blocks here."""
NEW_STAKE = SETTINGS.validator_stake_ngonka  # node4 bonds what each genesis validator did
GONKA = gonka("bls").query
BLOCK_ID_FLAG_COMMIT = 2
"""CometBFT's flag of a precommit for the block (1: absent, 3: nil)."""


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("bls-net")
    localnet.build(root, settings=SETTINGS)
    for name, fault in FAULTS.items():
        localnet.set_module_settings(root, name, {"bls": {"test_fault": fault}})
    for name in EAGER:
        localnet.set_module_settings(root, name, {"bls": {"share_checks": "eager"}})
    yield from running_localnet(root, SETTINGS)  # started and stopped (whatever happens), node4 included


# --- what the network says ------------------------------------------------------------------------------


def node(root: Path, name: str) -> localnet.NodeSpec:
    return next(n for n in localnet.load(root).nodes if n.name == name)


def rpc0(root: Path) -> CometRPC:
    """node0, which these tests never stop."""
    return CometRPC(node(root, "node0").rpc)


def grpc0(root: Path) -> str:
    return f"127.0.0.1:{node(root, 'node0').grpc_port}"


def validator_address(root: Path, name: str) -> str:
    """The node's CometBFT address (hex, upper case), from its priv_validator_key.json."""
    return json.loads((Path(node(root, name).home) / "config" / "priv_validator_key.json").read_text())[
        "address"
    ].upper()


def certificate_answer(root: Path, height: int) -> query_pb2.QueryCertificateResponse:
    return Querier("", grpc0(root)).query(
        GONKA + "Certificate", query_pb2.QueryCertificateRequest(height=height), query_pb2.QueryCertificateResponse
    )


def signers(answer: query_pb2.QueryCertificateResponse) -> dict[str, bool]:
    """Validator address (hex) -> whether its bit is set, in the answer's set order."""
    validators = answer.validator_set.validators
    flags = certificate.decode_signers(answer.certificate.signers, len(validators))
    return {v.address.hex().upper(): flag for v, flag in zip(validators, flags)}


def checked(root: Path, height: int, validators: int) -> query_pb2.QueryCertificateResponse:
    """``height``'s certificate, verified by the client library, with ``validators`` validators, every signer with
    a key, > 2/3 of the power signed and the powers the answer states."""
    spec = localnet.load(root)
    answer = client.fetch_and_verify(grpc0(root), height, spec.chain_id)
    assert answer.certificate.height == height and answer.certificate.included_height == height + 1
    assert len(answer.validator_set.validators) == validators
    flags = list(signers(answer).values())
    powers = [v.power for v in answer.validator_set.validators]
    assert all(v.public_key for v, f in zip(answer.validator_set.validators, flags) if f)
    assert answer.signed_power == sum(p for p, f in zip(powers, flags) if f) and answer.total_power == sum(powers)
    assert answer.signed_power * 3 > answer.total_power * 2
    return answer


def outside_verify(grpc_address: str, height: int, chain_id: str) -> None:
    """A verifier that trusts nothing of this project but the documented format (sdk/crypto/certificate.py):
    the certificate and the block header from gRPC, the message rebuilt from the header's app hash, the bitmap
    decoded, the power counted, the BLS check by py_ecc."""
    querier = Querier("", grpc_address)
    answer = querier.query(
        GONKA + "Certificate", query_pb2.QueryCertificateRequest(height=height), query_pb2.QueryCertificateResponse
    )
    header = querier.query(
        "/cosmos.base.tendermint.v1beta1.Service/GetBlockByHeight",
        tendermint_query.GetBlockByHeightRequest(height=height),
        tendermint_query.GetBlockByHeightResponse,
    ).sdk_block.header
    app_hash, cid = bytes(header.app_hash), chain_id.encode()
    assert header.chain_id == chain_id and header.height == height
    message = hashlib.sha256(
        b"gonka/bls/v1/block"
        + len(cid).to_bytes(2, "big")
        + cid
        + height.to_bytes(8, "big")
        + len(app_hash).to_bytes(2, "big")
        + app_hash
    ).digest()
    validators = answer.validator_set.validators
    bitmap = answer.certificate.signers
    assert len(bitmap) == (len(validators) + 7) // 8
    chosen = [v for i, v in enumerate(validators) if bitmap[i // 8] >> (i % 8) & 1]
    assert 3 * sum(v.power for v in chosen) > 2 * sum(v.power for v in validators)
    assert G2ProofOfPossession.FastAggregateVerify(
        [bytes(v.public_key) for v in chosen], message, bytes(answer.certificate.signature)
    )


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GONKA_KEYRING_PASSPHRASE": "unused"}
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60, env=env)


def registered_key(root: Path, operator: str) -> bytes:
    """The host's BLS key as ``gonkad query bls key`` answers it."""
    shown = gonkad("query", "bls", "key", operator, "--node", node(root, "node0").rpc, "--output", "json")
    assert shown.returncode == 0, shown.stderr
    return base64.b64decode(json.loads(shown.stdout)["key"]["public_key"])


def next_set_validators_height(after: int) -> int:
    """The first set-validators block strictly after ``after`` (epoch n's is 1 + 10n + 4, n ≥ 1)."""
    n = 1
    while 1 + n * EPOCH_LENGTH + SET_VALIDATORS <= after:
        n += 1
    return 1 + n * EPOCH_LENGTH + SET_VALIDATORS


# --- (a) every block carries the last height's certificate ------------------------------------------------


def test_every_block_carries_the_certificate_of_the_height_before(net: Path) -> None:
    spec = localnet.load(net)
    rpc = rpc0(net)
    wait_height(rpc, CHECKED + 1)
    for height in range(1, CHECKED + 1):
        answer = checked(net, height, validators=4)
        raw = base64.b64decode(rpc.block(height + 1)["block"]["data"]["txs"][0])  # the head of block h + 1
        module, payload = decode_injected_entry(raw)
        entry = bls_pb2.BlockCertificate.FromString(payload)
        assert (module, entry.height, entry.signers, entry.signature) == (
            "bls",
            height,
            answer.certificate.signers,
            answer.certificate.signature,
        )
    for height in (2, CHECKED):  # py_ecc takes a second or two per check
        outside_verify(grpc0(net), height, spec.chain_id)
    # a tampered answer is refused: one signature byte, one bitmap bit
    answer = certificate_answer(net, CHECKED)
    app_hash = bytes.fromhex(rpc.block(CHECKED)["block"]["header"]["app_hash"])
    client.verify_certificate(answer, app_hash, spec.chain_id)
    for field, index, mask in (("signature", 10, 0x01), ("signers", 0, 0x01)):
        tampered = query_pb2.QueryCertificateResponse()
        tampered.CopyFrom(answer)
        value = bytearray(getattr(tampered.certificate, field))
        value[index] ^= mask
        setattr(tampered.certificate, field, bytes(value))
        with pytest.raises(certificate.CertificateError):
            client.verify_certificate(tampered, app_hash, spec.chain_id)


# --- (b) bad certificates are rejected ------------------------------------------------------------------


def test_faulty_proposers_are_rejected_and_the_chain_goes_on(net: Path) -> None:
    rpc = rpc0(net)
    latest = wait_height(rpc, CHECKED + 1)
    faulty = {validator_address(net, name) for name in FAULTS}
    proposers = [rpc.block(h)["block"]["header"]["proposer_address"].upper() for h in range(2, latest + 1)]
    assert not faulty.intersection(proposers), proposers
    assert set(proposers) == {validator_address(net, name) for name in ("node0", "node1")}
    for name in ("node0", "node1"):
        log = (Path(node(net, name).home) / "gonkad.log").read_text()
        assert "not more than 2/3" in log, f"{name} never rejected node2's weak certificate"
        assert "the aggregate signature does not verify for the signers' keys" in log, (
            f"{name} never rejected node3's forged certificate"
        )
        assert "module bls rejects the proposal at height" in log


def signed_as_committed(root: Path, address: str, heights: range, validators: int) -> list[bool]:
    """``address``'s bit in the certificates of ``heights``, each checked to be set exactly when the validator's
    precommit in block h + 1's last commit is for the block (a nil or missing precommit carries no share)."""
    rpc = rpc0(root)
    bits = []
    for height in heights:
        bit = signers(checked(root, height, validators))[address]
        flags = {
            s["validator_address"].upper(): s["block_id_flag"]
            for s in rpc.block(height + 1)["block"]["last_commit"]["signatures"]
        }
        assert bit == (flags.get(address) == BLOCK_ID_FLAG_COMMIT), (height, bit, flags)  # absent: no address
        bits.append(bit)
    return bits


# --- (c) a stopped validator's bit, and its key across a restart -----------------------------------------


def stop_node(root: Path, name: str) -> None:
    """SIGTERM its gonkad and cometbft (gonkad takes its cometbft child down with it) and wait until both are gone."""
    home = Path(node(root, name).home)
    pids = {process: live_pid(pid_file(home, process), process) for process in ("gonkad", "cometbft")}
    assert None not in pids.values(), f"{name}: not all of its processes run: {pids}"
    for process, pid in pids.items():
        terminate(pid, process)
    assert all(live_pid(pid_file(home, p), p) is None for p in ("gonkad", "cometbft"))


def test_a_stopped_validator_is_left_out_and_back_after_restart_with_its_key(net: Path) -> None:
    rpc = rpc0(net)
    node1 = node(net, "node1")
    address = validator_address(net, "node1")
    key_before = key_file(Path(node1.home)).read_bytes()
    stop_node(net, "node1")
    stopped_at = rpc.height()
    wait_height(rpc, stopped_at + 4)
    assert signed_as_committed(net, address, range(stopped_at + 1, stopped_at + 4), validators=4) == [False] * 3
    localnet.start_node(node1)
    assert key_file(Path(node1.home)).read_bytes() == key_before
    shown = gonkad("keys", "bls", "show", "--home", node1.home)
    assert shown.returncode == 0, shown.stderr
    operator = address_of(localnet.load_key(net, "val1"))
    assert bytes.fromhex(json.loads(shown.stdout)["public_key"]) == registered_key(net, operator)
    rpc1 = CometRPC(node1.rpc)
    deadline = time.monotonic() + 60
    while True:  # caught up: node1 at node0's height
        try:
            if rpc1.height() >= rpc.height() and not rpc1.status()["sync_info"]["catching_up"]:
                break
        except RPCError:
            pass
        assert time.monotonic() < deadline, "node1 did not catch up"
        time.sleep(0.3)
    back = rpc.height() + 2  # its first height back in consensus may be a nil precommit (it saw the block late)
    wait_height(rpc, back + 5)
    bits = signed_as_committed(net, address, range(back, back + 4), validators=4)
    assert sum(bits) >= 3, bits


# --- (d) a host joins after genesis --------------------------------------------------------------------


def test_a_new_host_joins_at_set_validators_and_signs_the_next_certificates(net: Path) -> None:
    rpc = rpc0(net)
    node4 = localnet.add_node(net, "node4", SETTINGS)
    localnet.start_node(node4)
    operator, committed_height = bond_validator(net, node4, NEW_STAKE)
    bls_key = registered_key(net, operator)
    assert bls_key.hex() == json.loads(key_file(Path(node4.home)).read_text())["public_key"]
    address = validator_address(net, "node4")
    joins = next_set_validators_height(committed_height) + 2
    wait_height(rpc, joins + 4, timeout_s=120)
    in_comet = {v["address"].upper() for v in rpc.call("validators", height=str(joins), per_page="100")["validators"]}
    assert address in in_comet and len(in_comet) == 5
    assert address not in signers(checked(net, joins - 1, validators=4))
    for height in range(joins, joins + 3):
        answer = checked(net, height, validators=5)
        entry = next(v for v in answer.validator_set.validators if v.address.hex().upper() == address)
        assert (entry.operator, bytes(entry.public_key)) == (operator, bls_key)
    bits = signed_as_committed(net, address, range(joins, joins + 3), validators=5)
    assert sum(bits) >= 2, bits
