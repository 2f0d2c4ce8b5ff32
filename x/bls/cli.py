"""``gonkad tx bls register-key`` and ``gonkad query bls key|keys|certificate|beacon|params``."""

from __future__ import annotations

import argparse
from pathlib import Path

from protogen.gonka.bls.v1 import query_pb2, tx_pb2
from sdk.cli.flags import add_tx_flags
from sdk.cli.params import add_update_params_command
from sdk.cli.query import add_module_query
from sdk.cli.tx import broadcast_messages
from sdk.crypto import bls
from sdk.services import gonka
from x.bls.keyfile import load_secret


def register_key_msg(operator: str, secret: bytes) -> tx_pb2.MsgRegisterBlsKey:
    return tx_pb2.MsgRegisterBlsKey(
        operator=operator, public_key=bls.public_key(secret), proof_of_possession=bls.pop_prove(secret)
    )


def cmd_register_key(args: argparse.Namespace) -> None:
    secret = load_secret(Path(args.key_home or args.home))
    broadcast_messages(args, lambda operator: [register_key_msg(operator, secret)])


def register_tx(modules: argparse._SubParsersAction) -> None:
    sub = modules.add_parser("bls", help="validators' BLS keys").add_subparsers(dest="bls_command", required=True)
    p = sub.add_parser("register-key", help="register (or replace) the host's BLS key from HOME/config/bls_key.json")
    add_tx_flags(p)
    p.add_argument(
        "--key-home",
        default="",
        help="read KEY_HOME/config/bls_key.json instead (when the keyring's home is not the node's)",
    )
    p.set_defaults(func=cmd_register_key)
    add_update_params_command(sub, tx_pb2.MsgUpdateParams)


def register_query(modules: argparse._SubParsersAction) -> None:
    query = gonka("bls").query
    sub = modules.add_parser("bls", help="validators' BLS keys").add_subparsers(dest="bls_command", required=True)
    add_module_query(
        sub,
        "key",
        "one host's BLS key by its operator address",
        query + "Key",
        query_pb2.QueryKeyRequest,
        query_pb2.QueryKeyResponse,
        ["operator"],
    )
    add_module_query(
        sub,
        "keys",
        "every registered BLS key, in operator order",
        query + "Keys",
        query_pb2.QueryKeysRequest,
        query_pb2.QueryKeysResponse,
    )
    add_module_query(
        sub,
        "certificate",
        "height HEIGHT's certificate (0: the latest) with its validator set, signed message and powers",
        query + "Certificate",
        query_pb2.QueryCertificateRequest,
        query_pb2.QueryCertificateResponse,
        ["height"],
    )
    add_module_query(
        sub,
        "beacon",
        "H(aggregate signature) of height HEIGHT's certificate (0: the latest)",
        query + "Beacon",
        query_pb2.QueryBeaconRequest,
        query_pb2.QueryBeaconResponse,
        ["height"],
    )
    add_module_query(
        sub, "params", "x/bls's params", query + "Params", query_pb2.QueryParamsRequest, query_pb2.QueryParamsResponse
    )
