"""Building and collecting gentxs: a validator's signed MsgCreateValidator for the genesis file."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2, tx_pb2

from sdk.crypto import bech32, secp256k1
from sdk.tx import decode_tx
from sdk.client.txbuilder import sign_tx

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


def build_gentx(
    key: secp256k1.PrivateKey, moniker: str, pubkey: bytes, collateral: tuple[str, int], chain_id: str
) -> bytes:
    """MsgCreateValidator signed with account number 0 and sequence 0, as genesis transactions are.

    ``collateral`` is (denom, amount); the stake module decides which denom it takes."""
    operator = secp256k1.address_bytes(key.public_key)
    msg = tx_pb2.MsgCreateValidator(
        description=staking_pb2.Description(moniker=moniker),
        commission=staking_pb2.CommissionRates(rate="0", max_rate="0", max_change_rate="0"),
        min_self_delegation="1",
        delegator_address=bech32.encode(operator),
        validator_address=bech32.encode(operator, bech32.VALOPER_PREFIX),
        value={"denom": collateral[0], "amount": str(collateral[1])},
    )
    msg.pubkey.Pack(ed25519.PubKey(key=pubkey), type_url_prefix="/")
    return sign_tx(key, [msg], chain_id, 0, 0, gas_limit=GENTX_GAS)


def write_gentx(home: Path, node_id: str, raw: bytes) -> Path:
    folder = home / "config" / "gentx"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"gentx-{node_id}.json"
    path.write_text(json.dumps({"tx": base64.b64encode(raw).decode()}) + "\n")
    return path


def collect_gentxs(folder: Path) -> list[str]:
    """Every gentx file in the folder, checked to decode to a MsgCreateValidator, in file-name order."""
    collected = []
    for path in sorted(folder.glob("*.json")):
        encoded = json.loads(path.read_text())["tx"]
        tx = decode_tx(base64.b64decode(encoded))
        if [m.type_url for m in tx.messages] != ["/" + tx_pb2.MsgCreateValidator.DESCRIPTOR.full_name]:
            raise ValueError(f"{path} is not a MsgCreateValidator gentx")
        collected.append(encoded)
    if not collected:
        raise ValueError(f"no gentx files in {folder}")
    return collected
