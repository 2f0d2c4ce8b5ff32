"""Validators backed by collateral: creation, and the voting power CometBFT sees.

This is the first slice of the stake module: validators bonded at genesis (gentx) or later by
MsgCreateValidator. Power is collateral in whole GNK.
"""

from __future__ import annotations

from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.crypto import keys_pb2 as tm_keys

from sdk.coins import Coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidRequest
from x.stake import keys
from x.stake.expected_keepers import AccountKeeper, BankKeeper


class StakeKeeper:
    """Owns the ``stake/`` prefix; bonded collateral sits in the ``bonded_tokens_pool`` module account."""

    def __init__(self, accounts: AccountKeeper, bank: BankKeeper) -> None:
        self.accounts = accounts
        self.bank = bank

    def get_validator(self, ctx: Context, operator: bytes) -> staking_pb2.Validator | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.validator_key(operator))
        return staking_pb2.Validator.FromString(raw) if raw else None

    def validators(self, ctx: Context) -> list[staking_pb2.Validator]:
        """All validators in operator-address order (deterministic)."""
        store = ctx.kv(keys.STORE_PREFIX)
        return [staking_pb2.Validator.FromString(v) for _, v in store.iterate(keys.VALIDATOR_PREFIX)]

    def create_validator(
        self, ctx: Context, operator: bytes, pubkey: bytes, amount: int, description: staking_pb2.Description
    ) -> staking_pb2.Validator:
        store = ctx.kv(keys.STORE_PREFIX)
        if store.get(keys.validator_key(operator)) is not None:
            raise ErrInvalidRequest.wrap("validator already exists for this operator")
        if store.get(keys.consensus_index_key(pubkey)) is not None:
            raise ErrInvalidRequest.wrap("consensus public key already used by another validator")
        pool = self.accounts.ensure_module_account(ctx, keys.BONDED_POOL, ["burner", "staking"])
        self.bank.send_coins(ctx, operator, pool, Coins(((keys.BOND_DENOM, amount),)))
        validator = staking_pb2.Validator(
            operator_address=bech32.encode(operator, bech32.VALOPER_PREFIX),
            status=staking_pb2.BOND_STATUS_BONDED,
            tokens=str(amount),
            delegator_shares=str(amount),
            description=description,
        )
        validator.consensus_pubkey.Pack(ed25519.PubKey(key=pubkey), type_url_prefix="/")
        store.set(keys.validator_key(operator), validator.SerializeToString())
        store.set(keys.consensus_index_key(pubkey), operator)
        ctx.emit("create_validator", validator=validator.operator_address, amount=f"{amount}{keys.BOND_DENOM}")
        return validator

    def validator_update(self, validator: staking_pb2.Validator) -> abci.ValidatorUpdate:
        pubkey = ed25519.PubKey()
        validator.consensus_pubkey.Unpack(pubkey)
        return abci.ValidatorUpdate(
            pub_key=tm_keys.PublicKey(ed25519=pubkey.key), power=int(validator.tokens) // keys.POWER_REDUCTION
        )

    def validator_updates(self, ctx: Context) -> list[abci.ValidatorUpdate]:
        return [self.validator_update(v) for v in self.validators(ctx)]
