"""Every way a transaction is refused: a clear code and log, and no state change beyond what is due."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.tx.v1beta1 import tx_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.any_pb2 import Any as AnyPb

from app import GonkaApp
from gonkad import genesis
from gonkad.coins import parse_coins
from gonkad.crypto import bech32, secp256k1
from gonkad.store.commitstore import CommitStore
from gonkad.txbuilder import address_of, send_msg, sign_tx
from x.auth.keys import FEE_COLLECTOR, module_address
from x.bank import keys as bank_keys

CHAIN = "gonka-ante"
ALICE = secp256k1.PrivateKey(b"\x11" * 32)
BOB = address_of(secp256k1.PrivateKey(b"\x12" * 32))
FUNDS = 1_000_000_000


@pytest.fixture
def app(tmp_path: Path) -> GonkaApp:
    app = GonkaApp(CommitStore(str(tmp_path / "db")), min_gas_prices="0.01ngonka")
    state = genesis.add_genesis_account(genesis.default_app_state(), address_of(ALICE), [("ngonka", FUNDS)])
    app.init_chain(abci.RequestInitChain(chain_id=CHAIN, initial_height=1, app_state_bytes=json.dumps(state).encode()))
    app.finalize_block(abci.RequestFinalizeBlock(height=1))
    app.commit(abci.RequestCommit())
    return app


def balance(app: GonkaApp, address: str | bytes) -> int:
    raw_address = bech32.decode(address) if isinstance(address, str) else address
    raw = app.store.get(bank_keys.STORE_PREFIX + bank_keys.balance_key(raw_address, "ngonka"))
    return int(raw) if raw else 0


def send(sequence: int = 0, amount: str = "100ngonka", chain_id: str = CHAIN, account_number: int = 0,
         gas: int = 100_000, fee: str = "1000ngonka") -> bytes:
    msg = send_msg(address_of(ALICE), BOB, parse_coins(amount))
    return sign_tx(ALICE, [msg], chain_id, account_number, sequence, parse_coins(fee), gas)


def with_signature(tx: bytes, signature: bytes) -> bytes:
    raw = tx_pb2.TxRaw.FromString(tx)
    del raw.signatures[:]
    raw.signatures.append(signature)
    return raw.SerializeToString()


def block(app: GonkaApp, txs: list[bytes]) -> list[abci.ExecTxResult]:
    height = app.store.version + 1
    response = app.finalize_block(abci.RequestFinalizeBlock(height=height, txs=txs))
    app.commit(abci.RequestCommit())
    return list(response.tx_results)


def check(app: GonkaApp, tx: bytes) -> abci.ResponseCheckTx:
    return app.check_tx(abci.RequestCheckTx(tx=tx))


def assert_refused(app: GonkaApp, tx: bytes, code: int, words: str) -> None:
    """Refused at CheckTx and, if a proposer includes it anyway, in the block, with no state change."""
    root = app.store.root_hash
    checked = check(app, tx)
    assert (checked.code, checked.codespace) == (code, "sdk"), checked.log
    assert words in checked.log
    [result] = block(app, [tx])
    assert result.code == code and words in result.log, result.log
    assert app.store.get_at(b"bank/" + bank_keys.balance_key(bech32.decode(BOB), "ngonka"), app.store.version) is None
    assert balance(app, address_of(ALICE)) == FUNDS
    assert app.store.root_hash == root


def test_valid_send_pays_fee_to_collector(app: GonkaApp) -> None:
    assert check(app, send()).code == 0
    [result] = block(app, [send()])
    assert result.code == 0, result.log
    assert balance(app, BOB) == 100
    assert balance(app, module_address(FEE_COLLECTOR)) == 1000
    assert balance(app, address_of(ALICE)) == FUNDS - 1100
    types = {e.type for e in result.events}
    assert {"tx", "message", "transfer"} <= types


def test_invalid_replay(app: GonkaApp) -> None:
    tx = send()
    assert block(app, [tx])[0].code == 0
    root = app.store.root_hash
    assert check(app, tx).code == 32
    [result] = block(app, [tx])
    assert result.code == 32 and "account sequence mismatch, expected 1, got 0" in result.log
    assert app.store.root_hash == root


@pytest.mark.parametrize(
    "tx, code, words",
    [
        (send(chain_id="other-chain"), 4, "signature verification failed"),
        (send(account_number=9), 4, "signature verification failed"),
        (with_signature(send(), bytes(64)), 4, "low-S"),
        (with_signature(send(), b"\x01" * 32 + b"\x01" * 32), 4, "signature verification failed"),
        (b"\x0a\x05garbage-not-a-tx", 2, "tx parse error"),
        (send(amount=f"{FUNDS * 2}ngonka", fee="1000ngonka"), 5, "insufficient funds"),
    ],
    ids=["wrong-chain-id", "wrong-account-number", "zero-signature", "bad-signature", "malformed-protobuf",
         "more-than-balance"],
)
def test_invalid_tx_refused(app: GonkaApp, tx: bytes, code: int, words: str) -> None:
    if code == 5:  # the ante passes (fee paid), the message fails: only the fee and sequence change
        assert check(app, tx).code == 0
        [result] = block(app, [tx])
        assert result.code == 5 and words in result.log
        assert balance(app, BOB) == 0 and balance(app, address_of(ALICE)) == FUNDS - 1000
        return
    assert_refused(app, tx, code, words)


def test_invalid_high_s_signature(app: GonkaApp) -> None:
    tx = send()
    signature = tx_pb2.TxRaw.FromString(tx).signatures[0]
    s = int.from_bytes(signature[32:], "big")
    high = signature[:32] + (secp256k1.ORDER - s).to_bytes(32, "big")
    assert_refused(app, with_signature(tx, high), 4, "low-S")


def test_invalid_fee_too_low_refused_by_mempool(app: GonkaApp) -> None:
    checked = check(app, send(gas=100_000, fee="999ngonka"))
    assert checked.code == 13 and "insufficient fees" in checked.log and "1000ngonka" in checked.log


def test_invalid_out_of_gas_charges_fee_and_reverts_messages(app: GonkaApp) -> None:
    [result] = block(app, [send(gas=30_000, fee="1000ngonka")])
    assert result.code == 11 and "out of gas" in result.log
    assert result.gas_used > result.gas_wanted == 30_000
    assert balance(app, BOB) == 0
    assert balance(app, address_of(ALICE)) == FUNDS - 1000


def test_invalid_unknown_message_type(app: GonkaApp) -> None:
    body = tx_pb2.TxBody(messages=[AnyPb(type_url="/gonka.nothing.v1.MsgNothing", value=b"")]).SerializeToString()
    raw = tx_pb2.TxRaw(body_bytes=body, auth_info_bytes=b"", signatures=[bytes(64)]).SerializeToString()
    assert_refused(app, raw, 6, "unrecognized message type")


def test_invalid_double_spend_in_one_block(app: GonkaApp) -> None:
    half = (FUNDS - 2000) // 2 + 1
    first, second = send(0, f"{half}ngonka"), send(1, f"{half}ngonka")
    assert check(app, first).code == 0 and check(app, second).code == 0
    results = block(app, [first, second])
    assert [r.code for r in results] == [0, 5]
    assert balance(app, BOB) == half
    assert balance(app, address_of(ALICE)) == FUNDS - half - 2000


def test_multi_send_splits_one_input_and_rejects_unbalanced(app: GonkaApp) -> None:
    carol = address_of(secp256k1.PrivateKey(b"\x13" * 32))

    def multi(sequence: int, total: int, parts: list[tuple[str, int]]) -> bytes:
        msg = bank_tx.MsgMultiSend(
            inputs=[bank_pb2.Input(address=address_of(ALICE), coins=parse_coins(f"{total}ngonka").to_proto())],
            outputs=[bank_pb2.Output(address=a, coins=parse_coins(f"{n}ngonka").to_proto()) for a, n in parts],
        )
        return sign_tx(ALICE, [msg], CHAIN, 0, sequence, parse_coins("1000ngonka"), 100_000)

    [ok] = block(app, [multi(0, 30, [(BOB, 10), (carol, 20)])])
    assert ok.code == 0, ok.log
    assert (balance(app, BOB), balance(app, carol)) == (10, 20)
    checked = check(app, multi(1, 30, [(BOB, 10), (carol, 10)]))
    assert checked.code == 10 and "sum of inputs does not equal sum of outputs" in checked.log
