"""BaseApp driven by a scripted sequence of ABCI calls: genesis, blocks, failing txs, restart."""

from __future__ import annotations

from pathlib import Path
from typing import Unpack

from chain import AppOptions, InProcessChain
from cosmpy.protos.cosmos.base.abci.v1beta1 import abci_pb2 as abci_types
from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import bech32, secp256k1
from sdk.store.proof import verify_membership, verify_nonmembership
from x.bank import keys as bank_keys

CHAIN = "gonka-unit"
ALICE = secp256k1.PrivateKey(b"\x01" * 32)
BOB = address_of(secp256k1.PrivateKey(b"\x02" * 32))


def start(path: Path, **options: Unpack[AppOptions]) -> InProcessChain:
    """Alice funded at genesis, no block yet: each test's own txs go in block 1."""
    return InProcessChain(
        path, {address_of(ALICE): [("ngonka", 1_000_000)]}, chain_id=CHAIN, first_block=False, **options
    )


def send(sequence: int, amount: str, account_number: int = 0, chain_id: str = CHAIN) -> bytes:
    return sign_tx(ALICE, [send_msg(address_of(ALICE), BOB, parse_coins(amount))], chain_id, account_number, sequence)


def test_send_moves_funds_and_failing_tx_reverts_only_itself(tmp_path: Path) -> None:
    chain = start(tmp_path / "db")
    response = chain.block([send(0, "100ngonka"), send(1, "999999999ngonka"), send(2, "5ngonka")])
    codes = [r.code for r in response.tx_results]
    assert codes[0] == 0 and codes[2] == 0
    assert codes[1] == 5, response.tx_results[1].log  # insufficient funds: only its message reverted
    data = abci_types.TxMsgData.FromString(response.tx_results[0].data)
    assert [any_.type_url for any_ in data.msg_responses] == ["/cosmos.bank.v1beta1.MsgSendResponse"]
    assert response.tx_results[1].data == b""
    assert chain.balance(BOB) == 105
    assert chain.balance(address_of(ALICE)) == 1_000_000 - 105
    assert response.app_hash == chain.app.store.root_hash


def test_invalid_replay_and_wrong_chain_rejected_without_state_change(tmp_path: Path) -> None:
    chain = start(tmp_path / "db")
    tx = send(0, "1ngonka")
    chain.block([tx])
    root = chain.app.store.root_hash
    for bad, code in (
        (tx, 32),
        (send(1, "1ngonka", chain_id="other"), 4),
        (send(1, "1ngonka", account_number=7), 4),
        (b"\xff\x00garbage", 2),
    ):
        checked = chain.check(bad)
        assert (checked.codespace, checked.code) == ("sdk", code), checked.log
    response = chain.block([tx, b"\xff\x00garbage"])
    assert [r.code for r in response.tx_results] == [32, 2]
    assert chain.balance(BOB) == 1
    assert chain.app.store.root_hash == root and chain.app.store.version == 2


def test_restart_restores_height_and_hash_and_proofs_verify(tmp_path: Path) -> None:
    chain = start(tmp_path / "db")
    chain.block([send(0, "7ngonka")])
    chain.block([])
    info = chain.app.info(abci.RequestInfo())
    chain.reopen()
    reopened = chain.app
    again = reopened.info(abci.RequestInfo())
    assert info.last_block_height == 2 and len(info.last_block_app_hash) == 32
    assert (again.last_block_height, again.last_block_app_hash) == (info.last_block_height, info.last_block_app_hash)
    key = bank_keys.STORE_PREFIX + bank_keys.balance_key(bech32.decode(BOB), "ngonka")
    reply = reopened.query(abci.RequestQuery(path="/store/key", data=key, height=1, prove=True))
    assert reply.code == 0 and reply.value == b"7"
    assert reply.proof_ops.ops[0].type == "ics23:jmt" and reply.proof_ops.ops[0].key == key
    proof = reply.proof_ops.ops[0].data
    assert verify_membership(reopened.store.root_at(1), key, b"7", proof)
    assert not verify_membership(reopened.store.root_at(1), key, b"8", proof)
    absent = key + b"!"
    reply = reopened.query(abci.RequestQuery(path="/store/key", data=absent, height=1, prove=True))
    assert reply.code == 0 and reply.value == b""
    assert verify_nonmembership(reopened.store.root_at(1), absent, reply.proof_ops.ops[0].data)
    other_root = bytes([reopened.store.root_at(1)[0] ^ 1]) + reopened.store.root_at(1)[1:]
    assert not verify_nonmembership(other_root, absent, reply.proof_ops.ops[0].data)


def test_only_configured_events_are_marked_for_indexing(tmp_path: Path) -> None:
    chain = start(tmp_path / "db", index_events=frozenset({"transfer.recipient"}))
    [result] = chain.block([send(0, "3ngonka")]).tx_results
    indexed = {(e.type, a.key) for e in result.events for a in e.attributes if a.index}
    assert indexed == {("transfer", "recipient")}
    assert {e.type for e in result.events} >= {"tx", "message", "transfer"}  # the rest is still reported
