"""MsgCreateValidator (the Cosmos SDK's own message, so gentx tooling and wallets know it)."""

from __future__ import annotations

from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2

from sdk.codec import decode
from sdk.coins import parse_amount
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrInvalidCoins, ErrInvalidPubKey, ErrInvalidRequest
from x.stake import keys
from x.stake.keeper import StakeKeeper

ED25519_URL = "/" + ed25519.PubKey.DESCRIPTOR.full_name


def operator_of(msg: tx_pb2.MsgCreateValidator) -> bytes:
    try:
        return bech32.decode(msg.validator_address, bech32.VALOPER_PREFIX)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"validator address: {exc}") from None


def consensus_pubkey(msg: tx_pb2.MsgCreateValidator) -> bytes:
    if msg.pubkey.type_url != ED25519_URL:
        raise ErrInvalidPubKey.wrap(f"consensus key must be {ED25519_URL}, got {msg.pubkey.type_url!r}")
    key = decode(ed25519.PubKey, msg.pubkey.value, "ed25519 consensus key", ErrInvalidPubKey).key
    if len(key) != 32:
        raise ErrInvalidPubKey.wrap("ed25519 consensus key must be 32 bytes")
    return key


def create_validator_signers(msg: tx_pb2.MsgCreateValidator) -> list[bytes]:
    return [operator_of(msg)]


def validate_create_validator(msg: tx_pb2.MsgCreateValidator) -> None:
    operator_of(msg)
    consensus_pubkey(msg)
    if msg.value.denom != keys.BOND_DENOM:
        raise ErrInvalidCoins.wrap(f"collateral must be a whole amount of {keys.BOND_DENOM}")
    if parse_amount(msg.value.amount, "collateral") < keys.POWER_REDUCTION:
        raise ErrInvalidCoins.wrap(f"collateral below 1 GNK ({keys.POWER_REDUCTION}{keys.BOND_DENOM}) has no power")
    if not msg.description.moniker or len(msg.description.moniker) > keys.MAX_MONIKER_LENGTH:
        raise ErrInvalidRequest.wrap(f"moniker must be 1 to {keys.MAX_MONIKER_LENGTH} characters")


def handle_create_validator(
    ctx: Context, stake: StakeKeeper, msg: tx_pb2.MsgCreateValidator
) -> tx_pb2.MsgCreateValidatorResponse:
    collateral = parse_amount(msg.value.amount, "collateral")
    validator = stake.create_validator(ctx, operator_of(msg), consensus_pubkey(msg), collateral, msg.description)
    ctx.validator_updates.append(stake.validator_update(validator))
    ctx.emit("message", module="stake", sender=bech32.encode(operator_of(msg)))
    return tx_pb2.MsgCreateValidatorResponse()
