"""The tx decoder and the whole CheckTx path on ≥ 10,000 generated inputs: never a crash, never a hang."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2 as staking_tx
from cosmpy.protos.cosmos.tx.v1beta1 import tx_pb2
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdk.client.txbuilder import address_of, pack, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import bech32, secp256k1
from sdk.errors import ABCIError
from sdk.tx import SECP256K1_PUBKEY_URL, SIGN_MODE_DIRECT, decode_tx, sign_doc_bytes

KEY = secp256k1.PrivateKey(b"\x05" * 32)
VALID = sign_tx(KEY, [send_msg(address_of(KEY), address_of(KEY), parse_coins("1ngonka"))], "fuzz", 0, 0)


@st.composite
def mutated_tx(draw: st.DrawFn) -> bytes:
    """A valid tx with bytes flipped, cut, inserted or spliced: reaches deep into the decoders."""
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] ^= draw(st.integers(1, 255))
        elif op == "cut":
            del data[pos : pos + draw(st.integers(1, 8))]
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[pos:]
    return bytes(data)


inputs = st.one_of(st.binary(max_size=512), mutated_tx())


def funded_chain(tmp_path_factory: pytest.TempPathFactory, name: str) -> InProcessChain:
    """KEY funded at genesis, block 1 committed."""
    path = tmp_path_factory.mktemp(name) / "db"
    return InProcessChain(path, {address_of(KEY): [("ngonka", 10**12)]}, chain_id="fuzz")


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessChain]:
    with funded_chain(tmp_path_factory, "fuzz") as chain:
        yield chain


@settings(max_examples=6000, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(inputs)
def test_decoder_raises_only_abci_errors(data: bytes) -> None:
    try:
        decode_tx(data)
    except ABCIError as err:
        assert err.code > 1


def test_checktx_never_crashes(chain: InProcessChain) -> None:
    root = chain.app.store.root_hash

    @settings(max_examples=4500, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(inputs)
    def check(data: bytes) -> None:
        response = chain.check(data)
        assert response.code != 1, f"internal error on {data.hex()}: {response.log}"
        if response.code == 0:  # only the signed content itself may pass, however it was re-framed
            tx, valid = decode_tx(data), decode_tx(VALID)
            assert (tx.raw.body_bytes, tx.raw.auth_info_bytes, list(tx.raw.signatures)) == (
                valid.raw.body_bytes,
                valid.raw.auth_info_bytes,
                list(valid.raw.signatures),
            )

    check()
    assert chain.app.store.root_hash == root


amount_texts = st.one_of(
    st.text(alphabet=st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=12),  # every script's digits
    st.integers(0, 1 << 300).map(str),
    st.integers(4000, 6000).map(lambda n: "9" * n),
    st.text(max_size=12),
)


@st.composite
def hostile_tx(draw: st.DrawFn, sequence: int) -> bytes:
    """A correctly signed tx carrying hostile values where user input is parsed: amounts, fees, gas, keys."""
    sender = address_of(KEY)
    kind = draw(st.sampled_from(["send", "multi-send", "fee", "create-validator", "account-key"]))
    amount = draw(amount_texts) if kind in ("send", "multi-send", "create-validator") else "1"
    coin = coin_pb2.Coin(denom="ngonka", amount=amount)
    if kind == "create-validator":
        msg: Message = staking_tx.MsgCreateValidator(
            description=staking_pb2.Description(moniker="fuzz"),
            value=coin,
            validator_address=bech32.encode(bech32.decode(sender), bech32.VALOPER_PREFIX),
            pubkey=AnyPb(type_url="/cosmos.crypto.ed25519.PubKey", value=draw(st.binary(max_size=40))),
        )
    elif kind == "multi-send":
        msg = bank_tx.MsgMultiSend(
            inputs=[bank_pb2.Input(address=sender, coins=[coin])],
            outputs=[bank_pb2.Output(address=sender, coins=[coin])],
        )
    else:
        msg = bank_tx.MsgSend(from_address=sender, to_address=sender, amount=[coin])
    public_key = keys_pb2.PubKey(key=KEY.public_key).SerializeToString()
    if kind == "account-key":
        public_key = draw(
            st.one_of(
                st.binary(max_size=40),
                st.binary(min_size=33, max_size=33).map(lambda k: keys_pb2.PubKey(key=k).SerializeToString()),
            )
        )
    fee = draw(amount_texts) if kind == "fee" else "0"
    body = tx_pb2.TxBody(messages=[pack(msg)]).SerializeToString()
    auth_info = tx_pb2.AuthInfo(
        signer_infos=[
            tx_pb2.SignerInfo(
                public_key=AnyPb(type_url=SECP256K1_PUBKEY_URL, value=public_key),
                mode_info=tx_pb2.ModeInfo(single=tx_pb2.ModeInfo.Single(mode=SIGN_MODE_DIRECT)),
                sequence=sequence,
            )
        ],
        fee=tx_pb2.Fee(
            amount=[coin_pb2.Coin(denom="ngonka", amount=fee)],
            gas_limit=draw(st.one_of(st.just(400_000), st.integers(0, (1 << 64) - 1))),
        ),
    ).SerializeToString()
    signature = KEY.sign(sign_doc_bytes(body, auth_info, "fuzz", 0))
    return tx_pb2.TxRaw(body_bytes=body, auth_info_bytes=auth_info, signatures=[signature]).SerializeToString()


def test_hostile_values_never_internal_error(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Signed txs with non-ASCII digits, huge integers, malformed keys and gas limits, through CheckTx and
    a block each: every refusal is a registered code (never 1), and supply never moves."""
    chain = funded_chain(tmp_path_factory, "hostile")
    supply = chain.supply()
    codes: set[int] = set()

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        raw = data.draw(hostile_tx(chain.sequence(address_of(KEY))))
        checked = chain.check(raw)
        assert checked.code != 1, f"internal error at CheckTx: {checked.log}"
        [result] = chain.block([raw]).tx_results
        assert result.code != 1, f"internal error in a block: {result.log}"
        codes.add(result.code)

    run()
    assert chain.supply() == supply
    assert {0, 8, 10, 18} <= codes  # accepted, bad key, bad amount, bad gas: the generator reaches each
