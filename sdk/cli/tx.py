"""Broadcasting a command's messages: sign with a key of the keyring named by the flags, print the
mempool's answer as ``gonkad tx … --broadcast-mode sync`` does in Cosmos."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from google.protobuf.message import Message

from sdk.cli.flags import print_output
from sdk.cli.keyring import open_keyring
from sdk.client.querier import Querier
from sdk.client.tx import TxError, TxOptions, broadcast, fetch_chain_id, sign_messages
from sdk.coins import Coins, parse_coins
from sdk.errors import ABCIError


def broadcast_messages(args: argparse.Namespace, build: Callable[[str], list[Message]]) -> None:
    """Build the messages for the signer's address, sign them and broadcast; prints the tx response."""
    keyring = open_keyring(args)
    key_info = keyring.get(args.from_)
    key = keyring.private_key(key_info.name)
    querier = Querier(args.node, args.grpc_addr)
    chain_id = args.chain_id or fetch_chain_id(querier)
    try:
        messages = build(key_info.address)
        options = TxOptions(parse_coins(args.fees) if args.fees else Coins(), args.gas, args.gas_adjustment, args.memo)
    except ABCIError as exc:
        raise TxError(exc.log) from None
    raw, limit = sign_messages(querier, key, messages, chain_id, options)
    if not args.yes and not confirm(
        f"sign and broadcast {len(messages)} message(s) from {key_info.address}, gas {limit}, "
        f"fees {options.fees or '0'}?"
    ):
        raise TxError("canceled by the user")
    response = {**broadcast(querier, raw, args.broadcast_mode), "gas_wanted": str(limit)}
    print_output(args.output, response)
    if response["code"]:
        sys.exit(1)


def confirm(question: str) -> bool:
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
