"""MsgCreateValidator (the Cosmos SDK's own message, so gentx tooling and wallets know it)."""

from __future__ import annotations

from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.codec import decode
from sdk.coins import parse_amount
from sdk.context import Context
from sdk.crypto import bech32
from protogen.gonka.stake.v1 import stake_pb2
from sdk.errors import ErrInvalidAddress, ErrInvalidCoins, ErrInvalidPubKey, ErrInvalidRequest
from x.stake.keeper import StakeKeeper

ED25519_URL = "/" + ed25519.PubKey.DESCRIPTOR.full_name


def operator_of(msg: tx_pb2.MsgCreateValidator) -> bytes:
    try:
        return bech32.decode(msg.validator_address, bech32.VALOPER_PREFIX)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"validator address: {exc}") from None


def consensus_pubkey(msg: tx_pb2.MsgCreateValidator) -> bytes:
    return ed25519_key(msg.pubkey)


def ed25519_key(packed: AnyPb) -> bytes:
    """A 32-byte ed25519 consensus key from its Any (a message's, or a genesis validator's)."""
    if packed.type_url != ED25519_URL:
        raise ErrInvalidPubKey.wrap(f"consensus key must be {ED25519_URL}, got {packed.type_url!r}")
    key = decode(ed25519.PubKey, packed.value, "ed25519 consensus key", ErrInvalidPubKey).key
    if len(key) != 32:
        raise ErrInvalidPubKey.wrap("ed25519 consensus key must be 32 bytes")
    return key


def create_validator_signers(msg: tx_pb2.MsgCreateValidator) -> list[bytes]:
    return [operator_of(msg)]


def validate_create_validator(msg: tx_pb2.MsgCreateValidator) -> None:
    operator_of(msg)
    consensus_pubkey(msg)
    parse_amount(msg.value.amount, "collateral")
    if not msg.description.moniker:
        raise ErrInvalidRequest.wrap("moniker must not be empty")


def check_against_params(params: stake_pb2.Params, msg: tx_pb2.MsgCreateValidator) -> None:
    """The rules the params set (they live in state, so they are checked when the message executes)."""
    if msg.value.denom != params.bond_denom:
        raise ErrInvalidCoins.wrap(f"collateral must be a whole amount of {params.bond_denom}")
    if parse_amount(msg.value.amount, "collateral") < params.power_reduction:
        raise ErrInvalidCoins.wrap(
            f"collateral below one unit of power ({params.power_reduction}{params.bond_denom}) has no power"
        )
    if len(msg.description.moniker) > params.max_moniker_length:
        raise ErrInvalidRequest.wrap(f"moniker must be 1 to {params.max_moniker_length} characters")


def handle_create_validator(
    ctx: Context, stake: StakeKeeper, msg: tx_pb2.MsgCreateValidator
) -> tx_pb2.MsgCreateValidatorResponse:
    check_against_params(stake.get_params(ctx), msg)
    collateral = parse_amount(msg.value.amount, "collateral")
    stake.create_validator(ctx, operator_of(msg), consensus_pubkey(msg), collateral, msg.description)
    ctx.emit("message", module="stake", sender=bech32.encode(operator_of(msg)))
    return tx_pb2.MsgCreateValidatorResponse()
