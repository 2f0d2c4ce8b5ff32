"""Every way a transaction is refused: a clear code and log, and no state change beyond what is due."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2 as staking_tx
from cosmpy.protos.cosmos.tx.signing.v1beta1 import signing_pb2
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2, tx_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.client.txbuilder import address_of, pack, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import bech32, secp256k1
from sdk.tx import SECP256K1_PUBKEY_URL, SIGN_MODE_DIRECT, sign_doc_bytes
from x.auth.keys import FEE_COLLECTOR, module_address
from x.bank import keys as bank_keys
from x.stake.keys import BONDED_POOL

CHAIN = "gonka-ante"
ALICE = secp256k1.PrivateKey(b"\x11" * 32)
BOB = address_of(secp256k1.PrivateKey(b"\x12" * 32))
FUNDS = 10_000_000_000


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[InProcessChain]:
    with InProcessChain(
        tmp_path / "db", {address_of(ALICE): [("ngonka", FUNDS)]}, chain_id=CHAIN, min_gas_prices="0.01ngonka"
    ) as chain:
        yield chain


def send(
    sequence: int = 0,
    amount: str = "100ngonka",
    chain_id: str = CHAIN,
    account_number: int = 0,
    gas: int = 100_000,
    fee: str = "1000ngonka",
) -> bytes:
    msg = send_msg(address_of(ALICE), BOB, parse_coins(amount))
    return sign_tx(ALICE, [msg], chain_id, account_number, sequence, parse_coins(fee), gas)


def with_signature(tx: bytes, signature: bytes) -> bytes:
    raw = tx_pb2.TxRaw.FromString(tx)
    del raw.signatures[:]
    raw.signatures.append(signature)
    return raw.SerializeToString()


def signed(
    body: tx_pb2.TxBody | bytes,
    gas: int = 100_000,
    fee: str | None = "1000ngonka",
    public_key: bytes | None = None,
    auth_info_extra: bytes = b"",
    fee_denom: str = "ngonka",
    sequence: int = 0,
    key_in_signer_info: bool = True,
    mode: int = SIGN_MODE_DIRECT,
) -> bytes:
    """ALICE's tx over any body (bytes: exactly those, unknown fields and all), signed as a wallet would;
    ``key_in_signer_info`` off leaves the public key out, as a wallet may once the chain has it; ``fee`` None
    puts no fee coin in at all."""
    body_bytes = body if isinstance(body, bytes) else body.SerializeToString()
    key = keys_pb2.PubKey(key=ALICE.public_key).SerializeToString() if public_key is None else public_key
    signer = tx_pb2.SignerInfo(
        public_key=AnyPb(type_url=SECP256K1_PUBKEY_URL, value=key) if key_in_signer_info else None,
        mode_info=tx_pb2.ModeInfo(single=tx_pb2.ModeInfo.Single(mode=mode)),
        sequence=sequence,
    )
    auth = tx_pb2.AuthInfo(
        signer_infos=[signer],
        fee=tx_pb2.Fee(
            amount=[coin_pb2.Coin(denom=fee_denom, amount=fee.removesuffix("ngonka"))] if fee is not None else [],
            gas_limit=gas,
        ),
    )
    auth_bytes = auth.SerializeToString() + auth_info_extra
    signature = ALICE.sign(sign_doc_bytes(body_bytes, auth_bytes, CHAIN, 0))
    return tx_pb2.TxRaw(body_bytes=body_bytes, auth_info_bytes=auth_bytes, signatures=[signature]).SerializeToString()


def raw_send(amount: str, to: str = BOB) -> bank_tx.MsgSend:
    """A MsgSend whose amount text is taken as is, as a hostile wallet could send it."""
    return bank_tx.MsgSend(
        from_address=address_of(ALICE), to_address=to, amount=[coin_pb2.Coin(denom="ngonka", amount=amount)]
    )


def assert_refused(chain: InProcessChain, tx: bytes, code: int, words: str) -> None:
    """Refused at CheckTx and, if a proposer includes it anyway, in the block, with no state change."""
    root = chain.app.store.root_hash
    checked = chain.check(tx)
    assert (checked.code, checked.codespace) == (code, "sdk"), checked.log
    assert words in checked.log and "\n" not in checked.log
    next_send = send(chain.sequence(address_of(ALICE)))
    assert chain.check(next_send).code == 0, "a refused tx changed the mempool's check state"
    [result] = chain.block([tx]).tx_results
    assert result.code == code and words in result.log, result.log
    bob_balance = b"bank/" + bank_keys.balance_key(bech32.decode(BOB), "ngonka")
    assert chain.app.store.get_at(bob_balance, chain.app.store.version) is None
    assert chain.balance(address_of(ALICE)) == FUNDS
    assert chain.app.store.root_hash == root


def test_valid_send_pays_fee_to_collector(chain: InProcessChain) -> None:
    assert chain.check(send()).code == 0
    [result] = chain.block([send()]).tx_results
    assert result.code == 0, result.log
    assert chain.balance(BOB) == 100
    assert chain.balance(module_address(FEE_COLLECTOR)) == 1000
    assert chain.balance(address_of(ALICE)) == FUNDS - 1100
    types = {e.type for e in result.events}
    assert {"tx", "message", "transfer"} <= types


def test_invalid_replay(chain: InProcessChain) -> None:
    tx = send()
    assert chain.block([tx]).tx_results[0].code == 0
    root = chain.app.store.root_hash
    assert chain.check(tx).code == 32
    [result] = chain.block([tx]).tx_results
    assert result.code == 32 and "account sequence mismatch, expected 1, got 0" in result.log
    assert chain.app.store.root_hash == root


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
    ids=[
        "wrong-chain-id",
        "wrong-account-number",
        "zero-signature",
        "bad-signature",
        "malformed-protobuf",
        "more-than-balance",
    ],
)
def test_invalid_tx_refused(chain: InProcessChain, tx: bytes, code: int, words: str) -> None:
    if code == 5:  # the ante passes (fee paid), the message fails: only the fee and sequence change
        assert chain.check(tx).code == 0
        [result] = chain.block([tx]).tx_results
        assert result.code == 5 and words in result.log
        assert chain.balance(BOB) == 0 and chain.balance(address_of(ALICE)) == FUNDS - 1000
        return
    assert_refused(chain, tx, code, words)


def test_invalid_high_s_signature(chain: InProcessChain) -> None:
    tx = send()
    signature = tx_pb2.TxRaw.FromString(tx).signatures[0]
    s = int.from_bytes(signature[32:], "big")
    high = signature[:32] + (secp256k1.ORDER - s).to_bytes(32, "big")
    assert_refused(chain, with_signature(tx, high), 4, "low-S")


def test_simulation_takes_an_unset_sign_mode_and_nothing_else_does(chain: InProcessChain) -> None:
    """CosmJS simulates a tx with ``SIGN_MODE_UNSPECIFIED`` and an empty signature (the Cosmos SDK reads the
    mode only to verify, which a simulation does not): a simulation takes it, CheckTx and a block never do,
    and a simulation takes no other mode."""
    body = tx_pb2.TxBody(messages=[pack(send_msg(address_of(ALICE), BOB, parse_coins("100ngonka")))])

    def simulate(tx: bytes) -> abci.ResponseQuery:
        return chain.app.query(abci.RequestQuery(path="/app/simulate", data=tx))

    unset = with_signature(signed(body, mode=signing_pb2.SIGN_MODE_UNSPECIFIED), b"")
    assert simulate(unset).code == 0, simulate(unset).log
    amino = signed(body, mode=signing_pb2.SIGN_MODE_LEGACY_AMINO_JSON)
    assert (simulate(amino).code, simulate(amino).log) == (
        18,
        "only SIGN_MODE_DIRECT single signatures are supported: invalid request",
    )
    assert_refused(chain, unset, 18, "only SIGN_MODE_DIRECT")
    assert_refused(chain, signed(body, mode=signing_pb2.SIGN_MODE_UNSPECIFIED), 18, "only SIGN_MODE_DIRECT")


def test_simulation_without_a_fee_meters_the_fee_transfer(chain: InProcessChain) -> None:
    """Wallets simulate with no fee, then pay one on the gas found times a margin (CosmJS 1.4, Keplr 1.3): the
    estimate counts the fee's transfer all the same, so the paid tx fits in it; the simulation moves nothing."""
    body = tx_pb2.TxBody(messages=[pack(send_msg(address_of(ALICE), BOB, parse_coins("100ngonka")))])
    unset = with_signature(signed(body, gas=0, fee=None, mode=signing_pb2.SIGN_MODE_UNSPECIFIED), b"")
    reply = chain.app.query(abci.RequestQuery(path="/app/simulate", data=unset))
    assert reply.code == 0, reply.log
    estimate = service_pb2.SimulateResponse.FromString(reply.value).gas_info.gas_used
    assert chain.balance(address_of(ALICE)) == FUNDS
    [paid] = chain.block([send(gas=estimate * 13 // 10, fee=f"{estimate * 13 // 10}ngonka")]).tx_results
    assert paid.code == 0, paid.log
    assert paid.gas_used - 1_000 < estimate <= paid.gas_used  # short only by the signature's bytes


def test_invalid_fee_too_low_refused_by_mempool(chain: InProcessChain) -> None:
    checked = chain.check(send(gas=100_000, fee="999ngonka"))
    assert checked.code == 13 and "insufficient fees" in checked.log and "1000ngonka" in checked.log


def test_invalid_out_of_gas_charges_fee_and_reverts_messages(chain: InProcessChain) -> None:
    [result] = chain.block([send(gas=30_000, fee="1000ngonka")]).tx_results
    assert result.code == 11 and "out of gas" in result.log
    assert result.gas_used > result.gas_wanted == 30_000
    assert chain.balance(BOB) == 0
    assert chain.balance(address_of(ALICE)) == FUNDS - 1000


def test_invalid_unknown_message_type(chain: InProcessChain) -> None:
    body = tx_pb2.TxBody(messages=[AnyPb(type_url="/gonka.nothing.v1.MsgNothing", value=b"")]).SerializeToString()
    raw = tx_pb2.TxRaw(body_bytes=body, auth_info_bytes=b"", signatures=[bytes(64)]).SerializeToString()
    assert_refused(chain, raw, 6, "unrecognized message type")


def test_invalid_double_spend_in_one_block(chain: InProcessChain) -> None:
    half = (FUNDS - 2000) // 2 + 1
    first, second = send(0, f"{half}ngonka"), send(1, f"{half}ngonka")
    assert chain.check(first).code == 0 and chain.check(second).code == 0
    results = chain.block([first, second]).tx_results
    assert [r.code for r in results] == [0, 5]
    assert chain.balance(BOB) == half
    assert chain.balance(address_of(ALICE)) == FUNDS - half - 2000


def test_multi_send_splits_one_input_and_rejects_unbalanced(chain: InProcessChain) -> None:
    carol = address_of(secp256k1.PrivateKey(b"\x13" * 32))

    def multi(sequence: int, total: int, parts: list[tuple[str, int]]) -> bytes:
        msg = bank_tx.MsgMultiSend(
            inputs=[bank_pb2.Input(address=address_of(ALICE), coins=parse_coins(f"{total}ngonka").to_proto())],
            outputs=[bank_pb2.Output(address=a, coins=parse_coins(f"{n}ngonka").to_proto()) for a, n in parts],
        )
        return sign_tx(ALICE, [msg], CHAIN, 0, sequence, parse_coins("1000ngonka"), 100_000)

    [ok] = chain.block([multi(0, 30, [(BOB, 10), (carol, 20)])]).tx_results
    assert ok.code == 0, ok.log
    assert (chain.balance(BOB), chain.balance(carol)) == (10, 20)
    checked = chain.check(multi(1, 30, [(BOB, 10), (carol, 10)]))
    assert checked.code == 10 and "sum of inputs does not equal sum of outputs" in checked.log


NOT_ASCII_AMOUNTS = [
    "\uff11\uff10",
    "\u0661\u0660",
    "\u00b2",
    "1" * 5000,
    "-1",
    " 10",
    "10 ",
    "10\n",
    "+10",
    "0x10",
    "",
]


@pytest.mark.parametrize(
    "amount",
    NOT_ASCII_AMOUNTS,
    ids=[
        "full-width",
        "arabic-indic",
        "superscript",
        "5000-digits",
        "negative",
        "lead-space",
        "trail-space",
        "trail-newline",
        "plus",
        "hex",
        "empty",
    ],
)
def test_invalid_amount_text_is_invalid_coins(chain: InProcessChain, amount: str) -> None:
    """Only ASCII digits are amounts (the SDK's ^[0-9]+$), in a message and in the fee alike."""
    assert_refused(chain, signed(tx_pb2.TxBody(messages=[pack(raw_send(amount))])), 10, "malformed amount")
    assert_refused(chain, signed(tx_pb2.TxBody(messages=[pack(raw_send("1"))]), fee=amount), 10, "malformed amount")


@pytest.mark.parametrize("denom", ["ngonka\n", "\nngonka", "ngonka\n\n", "ngonka "])
def test_invalid_denom_with_a_newline_or_space_is_invalid_coins(chain: InProcessChain, denom: str) -> None:
    """A denom is the whole text (Python's ``$`` also matches before a final newline): in a message and in
    the fee alike, refused at CheckTx with ``sdk/10``."""
    msg = bank_tx.MsgSend(
        from_address=address_of(ALICE), to_address=BOB, amount=[coin_pb2.Coin(denom=denom, amount="1")]
    )
    assert_refused(chain, signed(tx_pb2.TxBody(messages=[pack(msg)])), 10, f"invalid denom {denom!r}")
    assert_refused(
        chain, signed(tx_pb2.TxBody(messages=[pack(raw_send("1"))]), fee_denom=denom), 10, f"invalid denom {denom!r}"
    )


def test_invalid_amount_over_256_bits(chain: InProcessChain) -> None:
    assert_refused(chain, signed(tx_pb2.TxBody(messages=[pack(raw_send(str(1 << 256)))])), 10, "exceeds 2^256 - 1")


@pytest.mark.parametrize("gas", [1 << 63, (1 << 64) - 1])
def test_invalid_gas_limit_over_int64(chain: InProcessChain, gas: int) -> None:
    """Refused before any gas is metered, and the check state untouched (it once kept the sequence bump)."""
    assert_refused(chain, signed(tx_pb2.TxBody(messages=[pack(raw_send("1"))]), gas=gas), 18, "invalid gas supplied")


def test_invalid_malformed_account_pubkey(chain: InProcessChain) -> None:
    body = tx_pb2.TxBody(messages=[pack(raw_send("1"))])
    assert_refused(chain, signed(body, public_key=b"\x0a\x21\x02"), 8, "malformed secp256k1 public key")
    assert_refused(chain, signed(body, public_key=b"\xff" * 8), 8, "malformed secp256k1 public key")


def test_invalid_signer_pubkey_is_refused_when_the_account_already_has_one(chain: InProcessChain) -> None:
    """Every key a SignerInfo carries is checked, as the SDK's SetPubKeyDecorator does, not only the first
    one an account records: malformed bytes or another address's key are ``sdk/8``, nothing changed."""
    to_self = send_msg(address_of(ALICE), address_of(ALICE), parse_coins("1ngonka"))
    [first] = chain.block([sign_tx(ALICE, [to_self], CHAIN, 0, 0, gas_limit=100_000)]).tx_results  # no fee: FUNDS kept
    alice = chain.account(address_of(ALICE))
    assert first.code == 0 and alice is not None and alice.HasField("pub_key"), first.log
    body = tx_pb2.TxBody(messages=[pack(raw_send("1"))])
    for malformed in (b"\x0a\x21\x02", b"\xff" * 8, keys_pb2.PubKey(key=ALICE.public_key[:32]).SerializeToString()):
        assert_refused(chain, signed(body, public_key=malformed, sequence=1), 8, "malformed secp256k1 public key")
    other = keys_pb2.PubKey(key=secp256k1.PrivateKey(b"\x13" * 32).public_key).SerializeToString()
    assert_refused(chain, signed(body, public_key=other, sequence=1), 8, "public key does not match the signer address")
    # the key may be left out once the account has one, as the SDK allows
    [ok] = chain.block([signed(body, sequence=1, key_in_signer_info=False)]).tx_results
    assert ok.code == 0, ok.log


def test_invalid_send_to_module_account(chain: InProcessChain) -> None:
    """Module accounts hold what their module accounts for: a send there is refused, the fee still due."""
    for sequence, name in enumerate((FEE_COLLECTOR, BONDED_POOL)):
        to = bech32.encode(module_address(name))
        before = chain.balance(to)
        send_there = sign_tx(ALICE, [raw_send("7", to)], CHAIN, 0, sequence, parse_coins("1000ngonka"), 100_000)
        [result] = chain.block([send_there]).tx_results
        assert (result.code, result.codespace) == (4, "sdk") and "is not allowed to receive funds" in result.log
        assert chain.balance(to) == before + (1000 if name == FEE_COLLECTOR else 0)  # only the fee arrived
    multi = bank_tx.MsgMultiSend(
        inputs=[bank_pb2.Input(address=address_of(ALICE), coins=parse_coins("2ngonka").to_proto())],
        outputs=[
            bank_pb2.Output(address=BOB, coins=parse_coins("1ngonka").to_proto()),
            bank_pb2.Output(
                address=bech32.encode(module_address(BONDED_POOL)), coins=parse_coins("1ngonka").to_proto()
            ),
        ],
    )
    [result] = chain.block([sign_tx(ALICE, [multi], CHAIN, 0, 2, parse_coins("1000ngonka"), 100_000)]).tx_results
    assert result.code == 4 and "is not allowed to receive funds" in result.log
    assert chain.balance(BOB) == 0 and chain.balance(address_of(ALICE)) == FUNDS - 3000
    assert chain.supply() == FUNDS


def test_invalid_timeout_height_passed(chain: InProcessChain) -> None:
    """Valid through its timeout height, refused after it, as in the SDK."""
    next_height = chain.height + 1
    expired = signed(tx_pb2.TxBody(messages=[pack(raw_send("1"))], timeout_height=next_height - 1))
    assert_refused(chain, expired, 30, f"block height: {next_height}, timeout height: {next_height - 1}")
    in_time = signed(tx_pb2.TxBody(messages=[pack(raw_send("1"))], timeout_height=next_height + 1))
    [ok] = chain.block([in_time]).tx_results
    assert ok.code == 0, ok.log


def test_invalid_extension_options(chain: InProcessChain) -> None:
    option = AnyPb(type_url="/gonka.unknown.v1.Option", value=b"\x08\x01")
    assert_refused(
        chain,
        signed(tx_pb2.TxBody(messages=[pack(raw_send("1"))], extension_options=[option])),
        31,
        "unknown extension options",
    )
    ignored = signed(tx_pb2.TxBody(messages=[pack(raw_send("1"))], non_critical_extension_options=[option]))
    [ok] = chain.block([ignored]).tx_results
    assert ok.code == 0, ok.log


def unknown_field(number: int) -> bytes:
    """A varint field with this number and value 1, which no Cosmos message defines."""
    tag = number << 3
    encoded = bytearray()
    while tag >= 0x80:
        encoded.append(tag & 0x7F | 0x80)
        tag >>= 7
    return bytes(encoded) + bytes([tag, 1])


def test_invalid_unknown_fields(chain: InProcessChain) -> None:
    """Critical unknown fields anywhere in the signed content are refused; non-critical ones (1024+) in the
    body are ignored, as the Cosmos SDK's decoder does."""
    body = tx_pb2.TxBody(messages=[pack(raw_send("1"))]).SerializeToString()
    assert_refused(chain, signed(body + unknown_field(999)), 2, "TxBody has unknown field 999")
    assert_refused(chain, signed(body, auth_info_extra=unknown_field(999)), 2, "AuthInfo has unknown field 999")
    inner = AnyPb(type_url=pack(raw_send("1")).type_url, value=raw_send("1").SerializeToString() + unknown_field(7))
    assert_refused(chain, signed(tx_pb2.TxBody(messages=[inner])), 2, "MsgSend has unknown field 7")
    assert_refused(chain, signed(body, auth_info_extra=unknown_field(1030)), 2, "AuthInfo has unknown field 1030")
    [ok] = chain.block([signed(body + unknown_field(1030))]).tx_results
    assert ok.code == 0, ok.log


def create_validator(pubkey_bytes: bytes, collateral: str) -> bytes:
    msg = staking_tx.MsgCreateValidator(
        description=staking_pb2.Description(moniker="hostile"),
        validator_address=bech32.encode(bech32.decode(address_of(ALICE)), bech32.VALOPER_PREFIX),
        value=coin_pb2.Coin(denom="ngonka", amount=collateral),
        pubkey=AnyPb(type_url="/" + ed25519.PubKey.DESCRIPTOR.full_name, value=pubkey_bytes),
    )
    return signed(tx_pb2.TxBody(messages=[pack(msg)]), gas=400_000)


def test_invalid_create_validator_inputs(chain: InProcessChain) -> None:
    """A malformed consensus key or collateral text is a clear code; a well-formed one creates the validator."""
    good_key = ed25519.PubKey(key=bytes(range(32))).SerializeToString()
    assert_refused(chain, create_validator(b"\xff\xff\xff", "1000000000"), 8, "malformed ed25519 consensus key")
    for collateral in NOT_ASCII_AMOUNTS:
        assert_refused(chain, create_validator(good_key, collateral), 10, "malformed collateral")
    [ok] = chain.block([create_validator(good_key, "1000000000")]).tx_results
    assert ok.code == 0, ok.log
