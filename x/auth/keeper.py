"""Accounts: address, public key, account number and sequence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2 as secp256k1_keys
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.context import Context
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY
from sdk.tx import SECP256K1_PUBKEY_URL
from x.auth import keys

_BASE_URL = "/" + auth_pb2.BaseAccount.DESCRIPTOR.full_name
_MODULE_URL = "/" + auth_pb2.ModuleAccount.DESCRIPTOR.full_name


class AccountKeeper:
    """Owns the ``auth/`` prefix; other modules reach accounts only through these methods."""

    def __init__(
        self, module_accounts: Mapping[str, Iterable[str]] | None = None, authority: bytes = GOV_AUTHORITY
    ) -> None:
        """``module_accounts``: the module accounts the app declares with their permissions (the SDK's
        ``maccPerms``: ``minter``, ``burner``, ``staking``), which the module account queries list and find by
        name and bank enforces; ``authority``: who may change the params (``MsgUpdateParams``)."""
        declared = module_accounts or {}
        self.permissions = {name: tuple(sorted(set(declared[name]))) for name in sorted(declared)}
        self.module_accounts = tuple(self.permissions)
        self.authority = authority

    def has_permission(self, name: str, permission: str) -> bool:
        """Whether the app declared module account ``name`` with ``permission`` (bank asks before it mints or
        burns for a module)."""
        return permission in self.permissions.get(name, ())

    def get_module_account(self, ctx: Context, name: str) -> auth_pb2.ModuleAccount | None:
        """The declared module account ``name``, once it exists (its module creates it at genesis)."""
        if name not in self.module_accounts:
            return None
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.account_key(keys.module_address(name)))
        packed = None if raw is None else AnyPb.FromString(raw)
        if packed is None or packed.type_url != _MODULE_URL:
            return None
        return auth_pb2.ModuleAccount.FromString(packed.value)

    def get_account(self, ctx: Context, address: bytes) -> auth_pb2.BaseAccount | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.account_key(address))
        if raw is None:
            return None
        packed = AnyPb.FromString(raw)
        if packed.type_url == _MODULE_URL:
            return auth_pb2.ModuleAccount.FromString(packed.value).base_account
        return auth_pb2.BaseAccount.FromString(packed.value)

    def get_pubkey(self, ctx: Context, address: bytes) -> bytes | None:
        """The account's secp256k1 key (33 bytes, compressed), stored by its first signed tx; None before."""
        account = self.get_account(ctx, address)
        if account is None or account.pub_key.type_url != SECP256K1_PUBKEY_URL:
            return None
        return secp256k1_keys.PubKey.FromString(account.pub_key.value).key

    def set_account(self, ctx: Context, account: auth_pb2.BaseAccount) -> None:
        address = bech32.decode(account.address)
        store = ctx.kv(keys.STORE_PREFIX)
        existing = store.get(keys.account_key(address))
        if existing is not None and AnyPb.FromString(existing).type_url == _MODULE_URL:
            module = auth_pb2.ModuleAccount.FromString(AnyPb.FromString(existing).value)
            module.base_account.CopyFrom(account)
            packed = AnyPb(type_url=_MODULE_URL, value=module.SerializeToString())
        else:
            packed = AnyPb(type_url=_BASE_URL, value=account.SerializeToString())
        store.set(keys.account_key(address), packed.SerializeToString())

    def get_params(self, ctx: Context) -> auth_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return auth_pb2.Params.FromString(raw) if raw else auth_pb2.Params()

    def set_params(self, ctx: Context, params: auth_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def next_account_number(self, ctx: Context) -> int:
        store = ctx.kv(keys.STORE_PREFIX)
        raw = store.get(keys.NEXT_ACCOUNT_NUMBER_KEY)
        number = int.from_bytes(raw, "big") if raw else 0
        self.set_next_account_number(ctx, number + 1)
        return number

    def set_next_account_number(self, ctx: Context, number: int) -> None:
        """Genesis import: the number the next new account gets, above every imported one."""
        ctx.kv(keys.STORE_PREFIX).set(keys.NEXT_ACCOUNT_NUMBER_KEY, number.to_bytes(8, "big"))

    def packed_accounts(self, ctx: Context) -> list[AnyPb]:
        """Every account as stored (BaseAccount or ModuleAccount in an Any), in address order: for export."""
        return [AnyPb.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.ACCOUNT_PREFIX)]

    def set_module_account(self, ctx: Context, module: auth_pb2.ModuleAccount) -> None:
        address = bech32.decode(module.base_account.address)
        packed = AnyPb(type_url=_MODULE_URL, value=module.SerializeToString())
        ctx.kv(keys.STORE_PREFIX).set(keys.account_key(address), packed.SerializeToString())

    def new_account(self, ctx: Context, address: bytes) -> auth_pb2.BaseAccount:
        account = auth_pb2.BaseAccount(address=bech32.encode(address), account_number=self.next_account_number(ctx))
        self.set_account(ctx, account)
        return account

    def ensure_account(self, ctx: Context, address: bytes) -> None:
        """Receiving funds creates the account, as in the Cosmos SDK."""
        if ctx.kv(keys.STORE_PREFIX).get(keys.account_key(address)) is None:
            self.new_account(ctx, address)

    def ensure_module_account(self, ctx: Context, name: str) -> bytes:
        """The declared module account ``name``'s address, creating it with its declared permissions."""
        if name not in self.permissions:
            raise ValueError(f"module account {name!r} is not declared in the app wiring")
        address = keys.module_address(name)
        store = ctx.kv(keys.STORE_PREFIX)
        if store.get(keys.account_key(address)) is None:
            base = auth_pb2.BaseAccount(address=bech32.encode(address), account_number=self.next_account_number(ctx))
            module = auth_pb2.ModuleAccount(base_account=base, name=name, permissions=self.permissions[name])
            self.set_module_account(ctx, module)
        return address
