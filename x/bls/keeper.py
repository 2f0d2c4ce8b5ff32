"""Hosts' BLS12-381 public keys: operator -> key and key -> operator, kept in step.

Keys arrive only through ``MsgRegisterBlsKey`` (at genesis inside a gentx, or later) or an exported genesis;
both check the key (KeyValidate) and that its operator is a host; the message also checks the proof of
possession, which is what makes the key safe to aggregate with others (no rogue-key attack).
"""

from __future__ import annotations

from sdk.context import Context
from sdk.crypto import bech32
from x.bls import keys
from x.bls.errors import ErrKeyUsed, ErrNotHost
from x.bls.expected_keepers import StakeKeeper


class BlsKeeper:
    """Owns the ``bls/`` prefix."""

    def __init__(self, stake: StakeKeeper) -> None:
        self.stake = stake

    def get_key(self, ctx: Context, operator: bytes) -> bytes | None:
        return ctx.kv(keys.STORE_PREFIX).get(keys.key_key(operator))

    def operator_of(self, ctx: Context, public_key: bytes) -> bytes | None:
        return ctx.kv(keys.STORE_PREFIX).get(keys.operator_index_key(public_key))

    def all_keys(self, ctx: Context) -> list[tuple[bytes, bytes]]:
        """Every (operator, key) in operator order."""
        prefix = keys.KEY_PREFIX
        return [(k[len(prefix):], v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    def operator_index(self, ctx: Context) -> list[tuple[bytes, bytes]]:
        """Every (key, operator) of the reverse index, in key order."""
        prefix = keys.OPERATOR_INDEX_PREFIX
        return [(k[len(prefix):], v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    def set_key(self, ctx: Context, operator: bytes, public_key: bytes) -> bytes | None:
        """Register ``public_key`` (already checked: KeyValidate, proof) for the host ``operator``; returns the
        key it replaces, if any. Refuses a non-host and a key registered by another host; registering the
        same key again is a no-op."""
        if self.stake.get_host(ctx, operator) is None:
            raise ErrNotHost.wrap(bech32.encode(operator))
        owner = self.operator_of(ctx, public_key)
        if owner is not None and owner != operator:
            raise ErrKeyUsed.wrap(f"{public_key.hex()} belongs to {bech32.encode(owner)}")
        store = ctx.kv(keys.STORE_PREFIX)
        previous = self.get_key(ctx, operator)
        if previous is not None and previous != public_key:
            store.delete(keys.operator_index_key(previous))
        store.set(keys.key_key(operator), public_key)
        store.set(keys.operator_index_key(public_key), operator)
        return previous
