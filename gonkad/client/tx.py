"""Sign and broadcast from the CLI: resolve the key, chain id, account and gas, then send through RPC."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from fractions import Fraction

from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from google.protobuf.message import Message

from gonkad.client.flags import print_output
from gonkad.client.querier import Querier
from gonkad.coins import Coins, parse_coins
from gonkad.errors import ABCIError
from gonkad.keys.cli import open_keyring
from gonkad.rpc import RPCError
from gonkad.tx import tx_hash
from gonkad.txbuilder import query_account, sign_tx


class TxError(Exception):
    """A transaction that could not be built or was refused; one line for the user."""


def gas_limit(args: argparse.Namespace, querier: Querier, simulate_tx: Callable[[int], bytes]) -> int:
    if args.gas != "auto":
        if not args.gas.isdigit():
            raise TxError(f"invalid --gas {args.gas!r}: a whole number or 'auto'")
        return int(args.gas)
    try:
        adjustment = Fraction(args.gas_adjustment)
    except ValueError:
        raise TxError(f"invalid --gas-adjustment {args.gas_adjustment!r}") from None
    try:
        simulated = tx_service.SimulateResponse.FromString(querier.raw("/app/simulate", simulate_tx(0)))
    except RPCError as exc:
        raise TxError(f"simulation failed: {exc}") from None
    return math.ceil(simulated.gas_info.gas_used * adjustment)


def broadcast_messages(args: argparse.Namespace, build: Callable[[str], list[Message]]) -> None:
    """Build the messages for the signer's address, sign them and broadcast; prints the tx response."""
    keyring = open_keyring(args)
    key_info = keyring.get(args.from_)
    key = keyring.private_key(key_info.name)
    querier = Querier(args.node, args.grpc_addr)
    chain_id = args.chain_id or querier.rpc.status()["node_info"]["network"]
    try:
        messages = build(key_info.address)
        fees: Coins = parse_coins(args.fees) if args.fees else Coins()
    except ABCIError as exc:
        raise TxError(exc.log) from None
    account = query_account(querier.rpc, key_info.address)

    def signed(limit: int) -> bytes:
        return sign_tx(key, messages, chain_id, account.account_number, account.sequence, fees, limit, args.memo)

    limit = gas_limit(args, querier, signed)
    raw = signed(limit)
    if not args.yes and not confirm(f"sign and broadcast {len(messages)} message(s) from {key_info.address}, gas {limit}, fees {fees or '0'}?"):
        raise TxError("canceled by the user")
    method = querier.rpc.broadcast_tx_sync if args.broadcast_mode == "sync" else querier.rpc.broadcast_tx_async
    result = method(raw)
    response = {
        "txhash": tx_hash(raw).hex().upper(),
        "code": int(result.get("code", 0)),
        "codespace": result.get("codespace", ""),
        "raw_log": result.get("log", ""),
        "gas_wanted": str(limit),
    }
    print_output(args.output, response)
    if response["code"]:
        sys.exit(1)


def confirm(question: str) -> bool:
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
