"""Building and collecting gentxs: a validator's signed MsgCreateValidator for the genesis file, optionally
followed (same tx, same signer) by MsgRegisterBlsKey registering the node's BLS key (x/bls)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2, tx_pb2
from google.protobuf.message import Message

from protogen.gonka.bls.v1 import tx_pb2 as bls_tx
from sdk.cli.jsonfile import read_json_object
from sdk.client.txbuilder import sign_tx
from sdk.crypto import bech32, bls, secp256k1
from sdk.tx import decode_tx

GENTX_GAS = 400_000


def consensus_pubkey(home: Path) -> bytes:
    """The node's ed25519 validator key, from CometBFT's priv_validator_key.json."""
    key = json.loads((home / "config" / "priv_validator_key.json").read_text())["pub_key"]
    if key.get("type") != "tendermint/PubKeyEd25519":
        raise ValueError(f"unsupported consensus key type {key.get('type')!r}")
    return base64.b64decode(key["value"])


def node_id(home: Path) -> str:
    """CometBFT's node id: hex of the first 20 bytes of sha256 of the node's ed25519 public key."""
    private = base64.b64decode(json.loads((home / "config" / "node_key.json").read_text())["priv_key"]["value"])
    return hashlib.sha256(private[32:]).digest()[:20].hex()


CREATE_VALIDATOR_URL = "/" + tx_pb2.MsgCreateValidator.DESCRIPTOR.full_name
REGISTER_BLS_KEY_URL = "/" + bls_tx.MsgRegisterBlsKey.DESCRIPTOR.full_name


def create_validator_messages(
    operator: bytes,
    moniker: str,
    pubkey: bytes,
    collateral: tuple[str, int],
    bls_secret: bytes | None = None,
) -> list[Message]:
    """What a host sends to join: MsgCreateValidator (``operator`` bonds ``collateral``, (denom, amount), and signs
    blocks with the ed25519 ``pubkey``), then, when ``bls_secret`` (the node's BLS secret key) is given,
    ``gonka.bls.v1.MsgRegisterBlsKey`` with its public key and proof of possession. A gentx carries them at genesis
    (``build_gentx``); ``gonkad tx stake create-validator`` sends them to a running chain."""
    msg = tx_pb2.MsgCreateValidator(
        description=staking_pb2.Description(moniker=moniker),
        commission=staking_pb2.CommissionRates(rate="0", max_rate="0", max_change_rate="0"),
        min_self_delegation="1",
        delegator_address=bech32.encode(operator),
        validator_address=bech32.encode(operator, bech32.VALOPER_PREFIX),
        value={"denom": collateral[0], "amount": str(collateral[1])},
    )
    msg.pubkey.Pack(ed25519.PubKey(key=pubkey), type_url_prefix="/")
    msgs: list[Message] = [msg]
    if bls_secret is not None:
        msgs.append(
            bls_tx.MsgRegisterBlsKey(
                operator=bech32.encode(operator),
                public_key=bls.public_key(bls_secret),
                proof_of_possession=bls.pop_prove(bls_secret),
            )
        )
    return msgs


def build_gentx(
    key: secp256k1.PrivateKey,
    moniker: str,
    pubkey: bytes,
    collateral: tuple[str, int],
    chain_id: str,
    bls_secret: bytes | None = None,
) -> bytes:
    """MsgCreateValidator signed with account number 0 and sequence 0, as genesis transactions are.

    ``collateral`` is (denom, amount); the stake module decides which denom it takes. ``bls_secret``: the
    node's BLS secret key; when given, the same tx then registers its public key with its proof of
    possession (``gonka.bls.v1.MsgRegisterBlsKey``), so the host has a BLS key from genesis on."""
    operator = secp256k1.address_bytes(key.public_key)
    return sign_tx(
        key,
        create_validator_messages(operator, moniker, pubkey, collateral, bls_secret),
        chain_id,
        0,
        0,
        gas_limit=GENTX_GAS,
    )


def write_gentx(home: Path, node_id: str, raw: bytes) -> Path:
    folder = home / "config" / "gentx"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"gentx-{node_id}.json"
    path.write_text(json.dumps({"tx": base64.b64encode(raw).decode()}) + "\n")
    return path


def collect_gentxs(folder: Path) -> list[str]:
    """Every gentx file in the folder, in file-name order, checked to be one of two shapes: MsgCreateValidator
    alone, or MsgCreateValidator then MsgRegisterBlsKey of the same operator."""
    collected = []
    for path in sorted(folder.glob("*.json")):
        encoded = read_json_object(path)["tx"]
        check_gentx_shape(decode_tx(base64.b64decode(encoded)).messages, str(path))
        collected.append(encoded)
    if not collected:
        raise ValueError(f"no gentx files in {folder}")
    return collected


def check_gentx_shape(messages: list, what: str) -> None:
    """``messages`` (packed Anys) are MsgCreateValidator, optionally followed by MsgRegisterBlsKey whose
    operator is the validator's; else ValueError."""
    urls = [m.type_url for m in messages]
    if urls not in ([CREATE_VALIDATOR_URL], [CREATE_VALIDATOR_URL, REGISTER_BLS_KEY_URL]):
        raise ValueError(f"{what} is not a MsgCreateValidator gentx (optionally followed by MsgRegisterBlsKey)")
    if len(urls) == 2:
        create = tx_pb2.MsgCreateValidator.FromString(messages[0].value)
        register = bls_tx.MsgRegisterBlsKey.FromString(messages[1].value)
        try:
            same = bech32.decode(create.validator_address, bech32.VALOPER_PREFIX) == bech32.decode(register.operator)
        except ValueError:
            same = False
        if not same:
            raise ValueError(f"{what}: MsgRegisterBlsKey's operator is not the validator's")
