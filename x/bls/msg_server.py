"""``MsgRegisterBlsKey``: a host sets (or replaces) its BLS public key, proving possession of its secret."""

from __future__ import annotations

from protogen.gonka.bls.v1 import tx_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.crypto import bls
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.bls.errors import ErrInvalidProof, ErrInvalidPublicKey
from x.bls.keeper import BlsKeeper
from x.bls.params import validate_params


def operator_signers(msg: tx_pb2.MsgRegisterBlsKey) -> list[bytes]:
    return [parse_address(msg.operator, "operator")]


def check_key(public_key: bytes) -> None:
    """KeyValidate: 48 bytes, a valid compressed G1 point in the subgroup, not the identity."""
    if len(public_key) != bls.PUBLIC_KEY_SIZE:
        raise ErrInvalidPublicKey.wrap(f"public key must be {bls.PUBLIC_KEY_SIZE} bytes, got {len(public_key)}")
    try:
        bls.check_public_key(public_key)
    except bls.BlsError as exc:
        raise ErrInvalidPublicKey.wrap(str(exc)) from None


def validate_register(msg: tx_pb2.MsgRegisterBlsKey) -> None:
    """Stateless: the operator's address, the key (KeyValidate) and its proof of possession."""
    parse_address(msg.operator, "operator")
    check_key(msg.public_key)
    if len(msg.proof_of_possession) != bls.SIGNATURE_SIZE:
        raise ErrInvalidProof.wrap(
            f"proof of possession must be {bls.SIGNATURE_SIZE} bytes, got {len(msg.proof_of_possession)}"
        )
    if not bls.pop_verify(msg.public_key, msg.proof_of_possession):
        raise ErrInvalidProof.wrap("the proof does not verify for this public key")


def handle_register(ctx: Context, keeper: BlsKeeper, msg: tx_pb2.MsgRegisterBlsKey) -> tx_pb2.MsgRegisterBlsKeyResponse:
    """Stateful: the operator is a host, the key no other host's. A host may replace its own key."""
    operator = parse_address(msg.operator, "operator")
    previous = keeper.set_key(ctx, operator, bytes(msg.public_key))
    ctx.emit(
        "register_bls_key",
        operator=msg.operator,
        public_key=bytes(msg.public_key).hex(),
        replaced=previous.hex() if previous is not None and previous != msg.public_key else "",
    )
    ctx.emit("message", module="bls", sender=msg.operator)
    return tx_pb2.MsgRegisterBlsKeyResponse()


def routes(keeper: BlsKeeper, authority: bytes) -> dict[str, MsgRoute]:
    """``authority``: who may change the params (the app's, as x/bls's keeper holds none)."""
    return {
        type_url(tx_pb2.MsgRegisterBlsKey): MsgRoute(
            tx_pb2.MsgRegisterBlsKey,
            operator_signers,
            validate_register,
            lambda ctx, msg: handle_register(ctx, keeper, msg),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, authority, validate_params, keeper.set_params
        ),
    }
