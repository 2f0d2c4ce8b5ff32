"""Validators backed by collateral: creation, and the voting power CometBFT sees.

This is the first slice of the stake module: validators bonded at genesis (gentx) or later by
MsgCreateValidator. Power is collateral in whole GNK.
"""

from __future__ import annotations

from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.crypto import keys_pb2 as tm_keys

from protogen.gonka.stake.v1 import stake_pb2
from sdk.coins import Coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidRequest
from sdk.params import GOV_AUTHORITY
from x.stake import keys
from x.stake.expected_keepers import AccountKeeper, BankKeeper
from x.stake.params import default_params


class StakeKeeper:
    """Owns the ``stake/`` prefix; bonded collateral sits in the ``bonded_tokens_pool`` module account."""

    def __init__(self, accounts: AccountKeeper, bank: BankKeeper, authority: bytes = GOV_AUTHORITY) -> None:
        """``authority``: who may change the params (``MsgUpdateParams``)."""
        self.accounts = accounts
        self.bank = bank
        self.authority = authority

    def get_params(self, ctx: Context) -> stake_pb2.Params:
        """The stored params; the defaults for a state that has none (written before params were stored)."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return stake_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: stake_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

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
        denom = self.get_params(ctx).bond_denom
        self.bank.send_coins(ctx, operator, self.bonded_pool(ctx), Coins(((denom, amount),)))
        validator = staking_pb2.Validator(
            operator_address=bech32.encode(operator, bech32.VALOPER_PREFIX),
            status=staking_pb2.BOND_STATUS_BONDED,
            tokens=str(amount),
            delegator_shares=str(amount),
            description=description,
        )
        validator.consensus_pubkey.Pack(ed25519.PubKey(key=pubkey), type_url_prefix="/")
        self.set_validator(ctx, validator)
        ctx.emit("create_validator", validator=validator.operator_address, amount=f"{amount}{denom}")
        return validator

    def set_validator(self, ctx: Context, validator: staking_pb2.Validator) -> None:
        """Store a validator and index it by its consensus key (at creation, and at genesis import)."""
        operator = bech32.decode(validator.operator_address, bech32.VALOPER_PREFIX)
        store = ctx.kv(keys.STORE_PREFIX)
        store.set(keys.validator_key(operator), validator.SerializeToString())
        store.set(keys.consensus_index_key(consensus_key(validator)), operator)

    def bonded_pool(self, ctx: Context) -> bytes:
        """The module account holding every validator's collateral, created with the first validator."""
        return self.accounts.ensure_module_account(ctx, keys.BONDED_POOL)

    def bonded_pool_balance(self, ctx: Context) -> int:
        """The collateral the bonded pool holds, which the validators' tokens must add up to."""
        return self.bank.get_balance(ctx, self.bonded_pool(ctx), self.get_params(ctx).bond_denom)

    def validator_update(self, ctx: Context, validator: staking_pb2.Validator) -> abci.ValidatorUpdate:
        """The validator as CometBFT sees it: its key and its tokens in units of the ``power_reduction`` param."""
        return abci.ValidatorUpdate(
            pub_key=tm_keys.PublicKey(ed25519=consensus_key(validator)),
            power=int(validator.tokens) // self.get_params(ctx).power_reduction,
        )

    def validator_updates(self, ctx: Context) -> list[abci.ValidatorUpdate]:
        return [self.validator_update(ctx, v) for v in self.validators(ctx)]

    def last_sent_powers(self, ctx: Context) -> dict[bytes, int]:
        """The validator set as last sent to CometBFT: consensus key -> power."""
        store = ctx.kv(keys.STORE_PREFIX)
        n = len(keys.LAST_POWER_PREFIX)
        return {key[n:]: int.from_bytes(value, "big") for key, value in store.iterate(keys.LAST_POWER_PREFIX)}

    def apply_validator_set_updates(self, ctx: Context) -> list[abci.ValidatorUpdate]:
        """The validator set's changes since it was last sent to CometBFT, recorded as sent: at most one
        update per validator (its new power, 0 to remove it), sorted by consensus key. End block and InitChain
        send these, so however many messages touch a validator in a block, CometBFT hears of it once."""
        current: dict[bytes, int] = {}
        for validator in self.validators(ctx):
            update = self.validator_update(ctx, validator)
            if validator.status == staking_pb2.BOND_STATUS_BONDED and update.power > 0:
                current[update.pub_key.ed25519] = update.power
        last = self.last_sent_powers(ctx)
        store = ctx.kv(keys.STORE_PREFIX)
        updates = []
        for pubkey in sorted(current.keys() | last.keys()):
            power = current.get(pubkey, 0)
            if power == last.get(pubkey, 0):
                continue
            updates.append(abci.ValidatorUpdate(pub_key=tm_keys.PublicKey(ed25519=pubkey), power=power))
            if power:
                store.set(keys.last_power_key(pubkey), power.to_bytes(8, "big"))
            else:
                store.delete(keys.last_power_key(pubkey))
        return updates


def consensus_key(validator: staking_pb2.Validator) -> bytes:
    """The validator's ed25519 consensus public key (32 bytes), as stored."""
    pubkey = ed25519.PubKey()
    if not validator.consensus_pubkey.Unpack(pubkey):
        raise ValueError(f"validator {validator.operator_address}: consensus key is not ed25519")
    return pubkey.key
