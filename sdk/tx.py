"""Cosmos SDK transactions: TxRaw decoding with strict checks, and SIGN_MODE_DIRECT sign bytes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2
from cosmpy.protos.cosmos.tx.signing.v1beta1 import signing_pb2
from cosmpy.protos.cosmos.tx.v1beta1 import tx_pb2
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.codec import decode_strict
from sdk.coins import Coins, coins_from_proto
from sdk.errors import ErrInvalidRequest, ErrTxDecode, ErrUnknownExtensionOptions

MAX_TX_BYTES = 1 << 20
MAX_GAS_WANTED = (1 << 63) - 1
"""The Cosmos SDK's bound on a tx's gas limit: gas is int64 in CometBFT's results."""
SECP256K1_PUBKEY_URL = "/" + keys_pb2.PubKey.DESCRIPTOR.full_name
SIGN_MODE_DIRECT = signing_pb2.SIGN_MODE_DIRECT


@dataclass(frozen=True)
class Tx:
    """A decoded transaction that still holds the exact bytes that were signed.

    One is shared by every run of the same bytes (CheckTx, recheck, its block: ``sdk/prepared.py``), so what
    it derives from its own bytes alone (its fee, its sign bytes) is derived once and kept."""

    raw: tx_pb2.TxRaw
    body: tx_pb2.TxBody
    auth_info: tx_pb2.AuthInfo

    size: int
    _sign_docs: dict[tuple[str, int], bytes] = field(default_factory=dict, compare=False, repr=False)
    _fee: Coins | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def messages(self) -> list[AnyPb]:
        return list(self.body.messages)

    @property
    def fee(self) -> Coins:
        """The fee's coins; a malformed fee raises ErrInvalidCoins each time it is asked (a valid one is kept)."""
        fee = self._fee
        if fee is None:
            fee = coins_from_proto(self.auth_info.fee.amount)
            object.__setattr__(self, "_fee", fee)  # frozen: this memo is the one field set after construction
        return fee

    def sign_bytes(self, chain_id: str, account_number: int) -> bytes:
        key = (chain_id, account_number)
        sign_doc = self._sign_docs.get(key)
        if sign_doc is None:
            sign_doc = self._sign_docs[key] = sign_doc_bytes(
                self.raw.body_bytes, self.raw.auth_info_bytes, chain_id, account_number
            )
        return sign_doc


def sign_doc_bytes(body_bytes: bytes, auth_info_bytes: bytes, chain_id: str, account_number: int) -> bytes:
    return tx_pb2.SignDoc(
        body_bytes=body_bytes, auth_info_bytes=auth_info_bytes, chain_id=chain_id, account_number=account_number
    ).SerializeToString()


def tx_hash(raw: bytes) -> bytes:
    return hashlib.sha256(raw).digest()


def decode_tx(data: bytes) -> Tx:
    """Decode TxRaw and its body and auth info; any malformed input is ErrTxDecode, nothing else.

    Unknown fields are refused as the Cosmos SDK refuses them: none in TxRaw (no signature covers
    them) or AuthInfo, only non-critical ones (1024+) in TxBody.
    """
    if not data:
        raise ErrTxDecode.wrap("empty tx")
    if len(data) > MAX_TX_BYTES:
        raise ErrTxDecode.wrap(f"tx of {len(data)} bytes exceeds {MAX_TX_BYTES}")
    raw = decode_strict(tx_pb2.TxRaw, data, "TxRaw")
    body = decode_strict(tx_pb2.TxBody, raw.body_bytes, "TxBody", allow_non_critical=True)
    auth_info = decode_strict(tx_pb2.AuthInfo, raw.auth_info_bytes, "AuthInfo")
    if not body.messages:
        raise ErrTxDecode.wrap("tx has no messages")
    return Tx(raw=raw, body=body, auth_info=auth_info, size=len(data))


def validate_basic(tx: Tx) -> None:
    """Stateless checks of the tx as a whole, before any gas is metered (the Cosmos SDK's order)."""
    gas_limit = tx.auth_info.fee.gas_limit
    if gas_limit > MAX_GAS_WANTED:
        raise ErrInvalidRequest.wrap(f"invalid gas supplied; {gas_limit} > {MAX_GAS_WANTED}")
    if tx.body.extension_options:
        # This chain knows no extension options; non-critical ones may be ignored, these may not.
        raise ErrUnknownExtensionOptions.wrap(f"{tx.body.extension_options[0].type_url!r} is not supported")
