"""Module params changed by an authority: the one check every module's ``MsgUpdateParams`` goes through.

As in the Cosmos SDK, each module's params change only by a ``MsgUpdateParams`` whose ``authority`` field
is the module's authority address, which signs it. The authority is governance's module account,
``sha256("gov")[:20]`` (``GOV_AUTHORITY``), which signs the messages of passed proposals (x/gov); the app
wiring (``app.py``, option ``authority``) may name another address, the same for every module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf import message_factory
from google.protobuf.message import Message

from sdk.address import module_address, parse_address
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidRequest, register
from sdk.module import MsgRoute

GOV_MODULE_NAME = "gov"
GOV_AUTHORITY = module_address(GOV_MODULE_NAME)
"""The Cosmos SDK's default authority: governance's module account address."""

ErrInvalidSigner = register(GOV_MODULE_NAME, 13, "expected gov account as only signer for proposal message")
"""The SDK's ``x/gov`` ``ErrInvalidSigner``, which every SDK module's ``UpdateParams`` returns for a wrong
authority; wallets already know ``gov/13``."""

P = TypeVar("P", bound=Message)


def check_authority(authority: bytes, claimed: str) -> None:
    """Refuse a message whose ``authority`` field is not the module's authority (it is also the signer, so a
    match means the authority signed)."""
    expected = bech32.encode(authority)
    if claimed != expected:
        raise ErrInvalidSigner.wrap(f"invalid authority; expected {expected}, got {claimed}")


def checked_params(validate: Callable[[P], None], params: P) -> P:
    """``params`` if ``validate`` (which raises ValueError, as genesis import does) accepts them, else an
    ``sdk/18 invalid request`` naming the rule."""
    try:
        validate(params)
    except ValueError as exc:
        raise ErrInvalidRequest.wrap(f"invalid params: {exc}") from None
    return params


def update_params_route(
    msg_type: type[Message],
    authority: bytes,
    validate: Callable[[Any], None],
    apply: Callable[[Context, Any], None],
    params_of: Callable[[Any], Message] = lambda msg: msg.params,
    response: type[Message] | None = None,
) -> MsgRoute:
    """The route of one module's ``MsgUpdateParams``: signed by its ``authority`` field; the params are
    validated without state (``validate``), the authority checked, then ``apply`` stores them.

    ``params_of``: the params a message carries (``msg.params`` for most; x/consensus builds them);
    ``response``: the reply type (default: the message's own name with ``Response``).
    """
    reply = response or _response_type(msg_type)

    def validate_basic(msg: Any) -> None:
        parse_address(msg.authority, "authority")
        checked_params(validate, params_of(msg))

    def handle(ctx: Context, msg: Any) -> Message:
        check_authority(authority, msg.authority)
        apply(ctx, params_of(msg))
        ctx.emit("update_params", module=msg.DESCRIPTOR.full_name.split(".")[1], authority=msg.authority)
        return reply()

    return MsgRoute(msg_type, lambda msg: [parse_address(msg.authority, "authority")], validate_basic, handle)


def _response_type(msg_type: type[Message]) -> type[Message]:
    """``MsgUpdateParamsResponse`` beside ``MsgUpdateParams`` in its generated module."""
    file = msg_type.DESCRIPTOR.file
    return message_factory.GetMessageClass(file.message_types_by_name[msg_type.DESCRIPTOR.name + "Response"])
