"""x/auth genesis: params and every account (module accounts too) with its number, sequence and key."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2, genesis_pb2
from google.protobuf import json_format
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from x.auth import keys
from x.auth.keeper import AccountKeeper
from x.auth.params import validate_params


def default_genesis() -> dict[str, Any]:
    return json_format.MessageToDict(genesis_pb2.GenesisState())


def init_genesis(ctx: Context, keeper: AccountKeeper, state: dict[str, Any]) -> None:
    """Accounts keep their stated numbers, sequences and keys (an export's); numbers stated twice (a new
    chain's accounts all state 0) are renumbered as the SDK does, and new accounts follow the highest."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    validate_params(genesis.params)
    keeper.set_params(ctx, genesis.params)
    accounts = [_genesis_account(packed) for packed in genesis.accounts]
    bases = [a.base_account if isinstance(a, auth_pb2.ModuleAccount) else a for a in accounts]
    addresses = [bech32.decode(base.address) for base in bases]
    if len(set(addresses)) != len(addresses):
        raise ValueError("auth genesis lists an account twice")
    renumber_duplicates(bases)
    for account in accounts:
        if isinstance(account, auth_pb2.ModuleAccount):
            keeper.set_module_account(ctx, account)
        else:
            keeper.set_account(ctx, account)
    if bases:
        keeper.set_next_account_number(ctx, max(base.account_number for base in bases) + 1)
    keeper.ensure_module_account(ctx, keys.FEE_COLLECTOR)


def export_genesis(ctx: Context, keeper: AccountKeeper) -> dict[str, Any]:
    """Params and every account, module accounts too, with its number, sequence and public key."""
    accounts = keeper.packed_accounts(ctx)
    return message_dict(genesis_pb2.GenesisState(params=keeper.get_params(ctx), accounts=accounts))


def _genesis_account(packed: AnyPb) -> auth_pb2.BaseAccount | auth_pb2.ModuleAccount:
    for kind in (auth_pb2.BaseAccount, auth_pb2.ModuleAccount):
        if packed.Is(kind.DESCRIPTOR):
            account = kind()
            packed.Unpack(account)
            return account
    raise ValueError(f"auth genesis account type {packed.type_url!r} is not a BaseAccount or ModuleAccount")


def renumber_duplicates(accounts: list[auth_pb2.BaseAccount]) -> None:
    """The SDK's SanitizeGenesisAccounts: each account stating a number an earlier one states gets the lowest
    unused number (by duplicated number, then list order), so a genesis of unnumbered accounts numbers them
    0, 1, … in list order and an exported one keeps its numbers."""
    seen: set[int] = set()
    duplicates = []
    for account in accounts:
        if account.account_number in seen:
            duplicates.append(account)
        seen.add(account.account_number)
    free = 0
    for account in sorted(duplicates, key=lambda a: a.account_number):
        while free in seen:
            free += 1
        account.account_number = free
        seen.add(free)
