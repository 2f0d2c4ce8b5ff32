"""The stake module's messages: registration (the Cosmos SDK's MsgCreateValidator, so gentx tooling and
wallets know it), host edits, collateral deposits and withdrawals."""

from __future__ import annotations

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2, tx_pb2
from google.protobuf.any_pb2 import Any as AnyPb

from protogen.gonka.stake.v1 import stake_pb2
from protogen.gonka.stake.v1 import tx_pb2 as stake_tx
from sdk.address import parse_address
from sdk.codec import decode
from sdk.coins import parse_amount
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrInvalidCoins, ErrInvalidPubKey, ErrInvalidRequest
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.stake.errors import ErrBadDenom
from x.stake.keeper import StakeKeeper
from x.stake.params import validate_params

ED25519_URL = "/" + ed25519.PubKey.DESCRIPTOR.full_name
MAX_URL_LENGTH = 256


def operator_of(msg: tx_pb2.MsgCreateValidator) -> bytes:
    try:
        return bech32.decode(msg.validator_address, bech32.VALOPER_PREFIX)
    except ValueError as exc:
        raise ErrInvalidAddress.wrap(f"validator address: {exc}") from None


def ed25519_key(packed: AnyPb) -> bytes:
    """A 32-byte ed25519 consensus key from its Any (a message's)."""
    if packed.type_url != ED25519_URL:
        raise ErrInvalidPubKey.wrap(f"consensus key must be {ED25519_URL}, got {packed.type_url!r}")
    key = decode(ed25519.PubKey, packed.value, "ed25519 consensus key", ErrInvalidPubKey).key
    if len(key) != 32:
        raise ErrInvalidPubKey.wrap("ed25519 consensus key must be 32 bytes")
    return key


def positive_amount(coin: coin_pb2.Coin, what: str) -> int:
    amount = parse_amount(coin.amount, what)
    if amount == 0:
        raise ErrInvalidCoins.wrap(f"{what} must be positive")
    return amount


def check_denom(params: stake_pb2.Params, coin: coin_pb2.Coin, what: str) -> None:
    if coin.denom != params.bond_denom:
        raise ErrBadDenom.wrap(f"{what} must be {params.bond_denom}, got {coin.denom!r}")


def check_description(params: stake_pb2.Params, description: staking_pb2.Description) -> None:
    if len(description.moniker) > params.max_moniker_length:
        raise ErrInvalidRequest.wrap(f"moniker must be 1 to {params.max_moniker_length} characters")


# --- MsgCreateValidator -------------------------------------------------------------------------------


def create_validator_signers(msg: tx_pb2.MsgCreateValidator) -> list[bytes]:
    return [operator_of(msg)]


def validate_create_validator(msg: tx_pb2.MsgCreateValidator) -> None:
    operator_of(msg)
    ed25519_key(msg.pubkey)
    positive_amount(msg.value, "collateral")
    if not msg.description.moniker:
        raise ErrInvalidRequest.wrap("moniker must not be empty")


def handle_create_validator(
    ctx: Context, stake: StakeKeeper, msg: tx_pb2.MsgCreateValidator
) -> tx_pb2.MsgCreateValidatorResponse:
    """Checked against the params as it executes (they live in state): denom, the least collateral (one
    ``power_reduction``), moniker length."""
    params = stake.get_params(ctx)
    check_denom(params, msg.value, "collateral")
    collateral = positive_amount(msg.value, "collateral")
    if collateral < params.power_reduction:
        raise ErrInvalidCoins.wrap(
            f"collateral below one unit of weight ({params.power_reduction}{params.bond_denom}) has no power"
        )
    check_description(params, msg.description)
    stake.register_host(ctx, operator_of(msg), ed25519_key(msg.pubkey), msg.description, collateral)
    ctx.emit("message", module="stake", sender=bech32.encode(operator_of(msg)))
    return tx_pb2.MsgCreateValidatorResponse()


# --- Gonka's own --------------------------------------------------------------------------------------


def operator_signers(
    msg: stake_tx.MsgEditHost | stake_tx.MsgDepositCollateral | stake_tx.MsgWithdrawCollateral,
) -> list[bytes]:
    return [parse_address(msg.operator, "operator")]


def validate_edit_host(msg: stake_tx.MsgEditHost) -> None:
    parse_address(msg.operator, "operator")
    if not msg.description.moniker:
        raise ErrInvalidRequest.wrap("moniker must not be empty")
    if len(msg.inference_url) > MAX_URL_LENGTH or not msg.inference_url.isascii():
        raise ErrInvalidRequest.wrap(f"inference_url must be ASCII, at most {MAX_URL_LENGTH} characters")


def handle_edit_host(ctx: Context, stake: StakeKeeper, msg: stake_tx.MsgEditHost) -> stake_tx.MsgEditHostResponse:
    check_description(stake.get_params(ctx), msg.description)
    operator = parse_address(msg.operator, "operator")
    host = stake.must_get_host(ctx, operator)
    host.description.CopyFrom(msg.description)
    host.inference_url = msg.inference_url
    stake.set_host(ctx, host)
    ctx.emit("edit_host", operator=msg.operator)
    return stake_tx.MsgEditHostResponse()


def validate_collateral_msg(msg: stake_tx.MsgDepositCollateral | stake_tx.MsgWithdrawCollateral) -> None:
    parse_address(msg.operator, "operator")
    positive_amount(msg.amount, "amount")


def handle_deposit(
    ctx: Context, stake: StakeKeeper, msg: stake_tx.MsgDepositCollateral
) -> stake_tx.MsgDepositCollateralResponse:
    check_denom(stake.get_params(ctx), msg.amount, "collateral")
    stake.deposit_collateral(ctx, parse_address(msg.operator, "operator"), positive_amount(msg.amount, "amount"))
    return stake_tx.MsgDepositCollateralResponse()


def handle_withdraw(
    ctx: Context, stake: StakeKeeper, msg: stake_tx.MsgWithdrawCollateral
) -> stake_tx.MsgWithdrawCollateralResponse:
    check_denom(stake.get_params(ctx), msg.amount, "collateral")
    completion = stake.withdraw_collateral(
        ctx, parse_address(msg.operator, "operator"), positive_amount(msg.amount, "amount")
    )
    return stake_tx.MsgWithdrawCollateralResponse(completion_epoch=completion)


def routes(stake: StakeKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgCreateValidator): MsgRoute(
            tx_pb2.MsgCreateValidator,
            create_validator_signers,
            validate_create_validator,
            lambda ctx, msg: handle_create_validator(ctx, stake, msg),
        ),
        type_url(stake_tx.MsgEditHost): MsgRoute(
            stake_tx.MsgEditHost,
            operator_signers,
            validate_edit_host,
            lambda ctx, msg: handle_edit_host(ctx, stake, msg),
        ),
        type_url(stake_tx.MsgDepositCollateral): MsgRoute(
            stake_tx.MsgDepositCollateral,
            operator_signers,
            validate_collateral_msg,
            lambda ctx, msg: handle_deposit(ctx, stake, msg),
        ),
        type_url(stake_tx.MsgWithdrawCollateral): MsgRoute(
            stake_tx.MsgWithdrawCollateral,
            operator_signers,
            validate_collateral_msg,
            lambda ctx, msg: handle_withdraw(ctx, stake, msg),
        ),
        type_url(stake_tx.MsgUpdateParams): update_params_route(
            stake_tx.MsgUpdateParams, stake.authority, validate_params, stake.set_params
        ),
    }
