"""Accounts: address, public key, account number and sequence."""

from __future__ import annotations

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.context import Context
from sdk.crypto import bech32
from x.auth import keys

_BASE_URL = "/" + auth_pb2.BaseAccount.DESCRIPTOR.full_name
_MODULE_URL = "/" + auth_pb2.ModuleAccount.DESCRIPTOR.full_name


class AccountKeeper:
    """Owns the ``auth/`` prefix; other modules reach accounts only through these methods."""

    def get_account(self, ctx: Context, address: bytes) -> auth_pb2.BaseAccount | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.account_key(address))
        if raw is None:
            return None
        packed = AnyPb.FromString(raw)
        if packed.type_url == _MODULE_URL:
            return auth_pb2.ModuleAccount.FromString(packed.value).base_account
        return auth_pb2.BaseAccount.FromString(packed.value)

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
        store.set(keys.NEXT_ACCOUNT_NUMBER_KEY, (number + 1).to_bytes(8, "big"))
        return number

    def new_account(self, ctx: Context, address: bytes) -> auth_pb2.BaseAccount:
        account = auth_pb2.BaseAccount(address=bech32.encode(address), account_number=self.next_account_number(ctx))
        self.set_account(ctx, account)
        return account

    def ensure_account(self, ctx: Context, address: bytes) -> None:
        """Receiving funds creates the account, as in the Cosmos SDK."""
        if ctx.kv(keys.STORE_PREFIX).get(keys.account_key(address)) is None:
            self.new_account(ctx, address)

    def ensure_module_account(self, ctx: Context, name: str, permissions: list[str]) -> bytes:
        address = keys.module_address(name)
        store = ctx.kv(keys.STORE_PREFIX)
        if store.get(keys.account_key(address)) is None:
            base = auth_pb2.BaseAccount(address=bech32.encode(address), account_number=self.next_account_number(ctx))
            module = auth_pb2.ModuleAccount(base_account=base, name=name, permissions=permissions)
            packed = AnyPb(type_url=_MODULE_URL, value=module.SerializeToString())
            store.set(keys.account_key(address), packed.SerializeToString())
        return address
