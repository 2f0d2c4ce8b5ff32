"""Bank messages: MsgSend and MsgMultiSend, checked without state first, then executed by the keeper; and
MsgUpdateParams."""

from __future__ import annotations

from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2

from sdk.address import parse_address
from sdk.coins import Coins, coins_from_proto
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidCoins, ErrInvalidRequest
from sdk.module import MsgRoute, type_url
from sdk.params import update_params_route
from x.bank.keeper import BankKeeper
from x.bank.params import validate_params


def send_signers(msg: tx_pb2.MsgSend) -> list[bytes]:
    return [parse_address(msg.from_address, "from address")]


def validate_send(msg: tx_pb2.MsgSend) -> None:
    parse_address(msg.from_address, "from address")
    parse_address(msg.to_address, "to address")
    if not coins_from_proto(msg.amount):
        raise ErrInvalidCoins.wrap("send amount is empty")


def handle_send(ctx: Context, bank: BankKeeper, msg: tx_pb2.MsgSend) -> tx_pb2.MsgSendResponse:
    sender, recipient = bech32.decode(msg.from_address), bech32.decode(msg.to_address)
    coins = coins_from_proto(msg.amount)
    bank.check_send_enabled(ctx, coins)
    bank.check_can_receive(recipient)
    bank.send_coins(ctx, sender, recipient, coins)
    ctx.emit("message", module="bank", sender=msg.from_address)
    return tx_pb2.MsgSendResponse()


def multi_send_signers(msg: tx_pb2.MsgMultiSend) -> list[bytes]:
    return [parse_address(i.address, "input address") for i in msg.inputs]


def _total(coin_lists: list[Coins]) -> dict[str, int]:
    total: dict[str, int] = {}
    for coins in coin_lists:
        for denom, amount in coins:
            total[denom] = total.get(denom, 0) + amount
    return total


def validate_multi_send(msg: tx_pb2.MsgMultiSend) -> None:
    if len(msg.inputs) != 1:
        raise ErrInvalidRequest.wrap("multi-send takes exactly one input")
    if not msg.outputs:
        raise ErrInvalidRequest.wrap("multi-send has no outputs")
    for io in [*msg.inputs, *msg.outputs]:
        parse_address(io.address, "address")
        if not coins_from_proto(io.coins):
            raise ErrInvalidCoins.wrap("empty coins in multi-send")
    if _total([coins_from_proto(i.coins) for i in msg.inputs]) != _total(
        [coins_from_proto(o.coins) for o in msg.outputs]
    ):
        raise ErrInvalidCoins.wrap("sum of inputs does not equal sum of outputs")


def handle_multi_send(ctx: Context, bank: BankKeeper, msg: tx_pb2.MsgMultiSend) -> tx_pb2.MsgMultiSendResponse:
    sender = bech32.decode(msg.inputs[0].address)
    recipients = [bech32.decode(out.address) for out in msg.outputs]
    bank.check_send_enabled(ctx, coins_from_proto(msg.inputs[0].coins))
    for recipient in recipients:
        bank.check_can_receive(recipient)
    bank.subtract_coins(ctx, sender, coins_from_proto(msg.inputs[0].coins))
    for out, recipient in zip(msg.outputs, recipients):
        coins = coins_from_proto(out.coins)
        bank.add_coins(ctx, recipient, coins)
        ctx.emit("transfer", recipient=out.address, sender=msg.inputs[0].address, amount=str(coins))
    ctx.emit("message", module="bank", sender=msg.inputs[0].address)
    return tx_pb2.MsgMultiSendResponse()


def routes(bank: BankKeeper) -> dict[str, MsgRoute]:
    return {
        type_url(tx_pb2.MsgSend): MsgRoute(
            tx_pb2.MsgSend,
            send_signers,
            validate_send,
            lambda ctx, msg: handle_send(ctx, bank, msg),
        ),
        type_url(tx_pb2.MsgMultiSend): MsgRoute(
            tx_pb2.MsgMultiSend,
            multi_send_signers,
            validate_multi_send,
            lambda ctx, msg: handle_multi_send(ctx, bank, msg),
        ),
        type_url(tx_pb2.MsgUpdateParams): update_params_route(
            tx_pb2.MsgUpdateParams, bank.authority, validate_params, bank.set_params
        ),
    }
