"""The ante handler: who signed, in which order, with which sequence, and who pays the fee.

Runs before any message. Its writes (sequence bumps, fee) stay even when a message later fails, so
that a failed transaction still costs its fee and cannot be replayed.
"""

from __future__ import annotations

import base64
from functools import lru_cache

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2
from cosmpy.protos.cosmos.tx.signing.v1beta1 import signing_pb2
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.codec import decode
from sdk.coins import Coins, required_fees
from sdk.context import Context, ExecMode
from sdk.crypto import bech32, secp256k1
from sdk.errors import (
    ABCIError,
    ErrInsufficientFee,
    ErrInsufficientFunds,
    ErrInvalidPubKey,
    ErrInvalidRequest,
    ErrMemoTooLarge,
    ErrNoSignatures,
    ErrTooManySignatures,
    ErrTxTimeoutHeight,
    ErrUnauthorized,
    ErrUnknownAddress,
    ErrWrongSequence,
)
from sdk.gas import GasKV
from sdk.tx import SECP256K1_PUBKEY_URL, SIGN_MODE_DIRECT, Tx
from x.auth import keys
from x.auth.expected_keepers import BankKeeper
from x.auth.keeper import AccountKeeper

# Simulation has no real signatures; a recheck after a block re-runs a tx whose signature CheckTx
# already verified and that nothing since could have changed (the Cosmos SDK skips it too).
VERIFIES_SIGNATURES = (ExecMode.CHECK, ExecMode.FINALIZE)
SIMULATION_SIGN_MODES = (SIGN_MODE_DIRECT, signing_pb2.SIGN_MODE_UNSPECIFIED)
"""A simulation verifies no signature, so a client may leave its mode unset there (CosmJS's ``"auto"`` gas does);
the Cosmos SDK reads the mode only to verify, so it accepts that too."""


def process_ante(ctx: Context, tx: Tx, signers: list[bytes], accounts: AccountKeeper, bank: BankKeeper) -> None:
    """Size and memo limits, the node's minimum fee, the fee itself, then every signature and sequence.

    The order is the Cosmos SDK's: the fee is taken before signatures are verified, and both are
    kept when a message later fails.
    """
    params = accounts.get_params(ctx)
    check_timeout_height(ctx, tx)
    check_memo_and_size(ctx, tx, params)
    signatures = list(tx.raw.signatures)
    signer_infos = list(tx.auth_info.signer_infos)
    if not signatures:
        raise ErrNoSignatures.wrap("tx carries no signature")
    if len(signatures) > params.tx_sig_limit:
        raise ErrTooManySignatures.wrap(f"{len(signatures)} signatures, limit {params.tx_sig_limit}")
    if len(signatures) != len(signers) or len(signer_infos) != len(signers):
        raise ErrUnauthorized.wrap(
            f"wrong number of signers; expected {len(signers)}, got {len(signatures)} signatures"
            f" and {len(signer_infos)} signer infos"
        )
    fee = tx.fee
    if ctx.mode is ExecMode.CHECK:
        check_min_fee(ctx, fee, int(tx.auth_info.fee.gas_limit))
    charge_fee(ctx, tx, fee, signers[0], bank)
    for signer, info, signature in zip(signers, signer_infos, signatures):
        ctx.gas.consume(params.sig_verify_cost_secp256k1, "ante verify: secp256k1")
        verify_signer(ctx, tx, signer, info, signature, accounts)


def check_timeout_height(ctx: Context, tx: Tx) -> None:
    """A tx may name the last height it is valid at (0: none); past it, it is refused, never executed late."""
    timeout = tx.body.timeout_height
    if timeout and ctx.header.height > timeout:
        raise ErrTxTimeoutHeight.wrap(f"block height: {ctx.header.height}, timeout height: {timeout}")


def check_memo_and_size(ctx: Context, tx: Tx, params: auth_pb2.Params) -> None:
    if len(tx.body.memo) > params.max_memo_characters:
        raise ErrMemoTooLarge.wrap(
            f"maximum number of characters is {params.max_memo_characters} but received {len(tx.body.memo)}"
        )
    ctx.gas.consume(params.tx_size_cost_per_byte * tx.size, "txSize")


def check_min_fee(ctx: Context, fee: Coins, gas_limit: int) -> None:
    """The node's own price floor (app.toml ``min_gas_prices``), applied to the mempool only."""
    required = required_fees(ctx.min_gas_prices, gas_limit)
    offered = dict(fee)
    if required and not any(offered.get(denom, 0) >= amount for denom, amount in required):
        raise ErrInsufficientFee.wrap(f"insufficient fees; got: {fee or '0'} required: {required}")


def verify_signer(ctx: Context, tx: Tx, signer: bytes, info, signature: bytes, accounts: AccountKeeper) -> None:  # type: ignore[no-untyped-def]
    account = accounts.get_account(ctx, signer)
    if account is None:
        raise ErrUnknownAddress.wrap(f"account {bech32.encode(signer)} does not exist")
    pubkey = public_key_of(account, info, signer)
    if info.sequence != account.sequence:
        raise ErrWrongSequence.wrap(f"account sequence mismatch, expected {account.sequence}, got {info.sequence}")
    modes = SIMULATION_SIGN_MODES if ctx.mode is ExecMode.SIMULATE else (SIGN_MODE_DIRECT,)
    if not info.mode_info.HasField("single") or info.mode_info.single.mode not in modes:
        raise ErrInvalidRequest.wrap("only SIGN_MODE_DIRECT single signatures are supported")
    if ctx.mode in VERIFIES_SIGNATURES and len(signature) == secp256k1.SIG_LEN and not secp256k1.is_low_s(signature):
        raise ErrUnauthorized.wrap("signature is not in low-S form")
    number = 0 if ctx.header.height == 0 else account.account_number  # gentxs sign with number 0
    if ctx.mode in VERIFIES_SIGNATURES and not secp256k1.verify(
        pubkey, tx.sign_bytes(ctx.header.chain_id, number), signature
    ):
        raise ErrUnauthorized.wrap(
            f"signature verification failed; please verify account number ({account.account_number}),"
            f" sequence ({account.sequence}) and chain-id ({ctx.header.chain_id})"
        )
    if not account.HasField("pub_key"):
        account.pub_key.type_url = SECP256K1_PUBKEY_URL
        account.pub_key.value = keys_pb2.PubKey(key=pubkey).SerializeToString()
    ctx.emit("tx", acc_seq=f"{account.address}/{account.sequence}")
    ctx.emit("tx", signature=base64.b64encode(signature).decode())
    account.sequence += 1
    accounts.set_account(ctx, account)


def public_key_of(account, info, signer: bytes) -> bytes:  # type: ignore[no-untyped-def]
    """The key that verifies ``signer``: the account's stored one, or on first use the signer info's.

    A key the signer info carries (an ``Any`` with a type URL; the SDK reads an empty one as none) is checked
    even when the account already has one, as the SDK's SetPubKeyDecorator checks every key given: a tx
    carrying malformed key bytes or another address's key is refused, not executed with them ignored."""
    given = signer_key(info.public_key, signer) if info.public_key.type_url else None
    if account.HasField("pub_key"):
        return signer_key(account.pub_key, signer)
    if given is None:
        raise ErrInvalidPubKey.wrap(
            f"account {bech32.encode(signer)} has no public key yet: its signer info must carry one"
        )
    return given


def signer_key(packed: AnyPb, signer: bytes) -> bytes:
    """The secp256k1 key in ``packed``: well-formed and hashing to ``signer``, else ``sdk/8``."""
    if packed.type_url != SECP256K1_PUBKEY_URL:
        raise ErrInvalidPubKey.wrap(f"unsupported public key type {packed.type_url!r}")
    return _secp256k1_signer_key(packed.value, signer)


@lru_cache(maxsize=16384)
def _secp256k1_signer_key(value: bytes, signer: bytes) -> bytes:
    """Cached (a refusal raises, so it is never kept): the same accounts sign tx after tx, and each tx's
    stored key is checked at CheckTx, recheck and in its block."""
    key = decode(keys_pb2.PubKey, value, "secp256k1 public key", ErrInvalidPubKey).key
    if len(key) != secp256k1.PUBKEY_LEN:
        raise ErrInvalidPubKey.wrap(
            f"malformed secp256k1 public key: {len(key)} bytes, expected {secp256k1.PUBKEY_LEN}"
        )
    if secp256k1.address_bytes(key) != signer:
        raise ErrInvalidPubKey.wrap("public key does not match the signer address")
    return key


def charge_fee(ctx: Context, tx: Tx, fee: Coins, first_signer: bytes, bank: BankKeeper) -> None:
    if tx.auth_info.fee.payer:
        raise ErrInvalidRequest.wrap("a fee payer other than the first signer is not supported")
    if fee:
        bank.send_coins(ctx, first_signer, keys.module_address(keys.FEE_COLLECTOR), fee)
    elif ctx.mode is ExecMode.SIMULATE and isinstance(ctx.store, GasKV):
        meter_fee_transfer(ctx.with_store(ctx.store.scratch()), first_signer, bank)
    ctx.emit("tx", fee=str(fee), fee_payer=bech32.encode(first_signer))


def meter_fee_transfer(scratch: Context, payer: bytes, bank: BankKeeper) -> None:
    """The gas a fee transfer costs, for a simulation sent without a fee (CosmJS's and Keplr's ``"auto"`` gas
    simulate so, then pay a fee on the gas found): 1 unit of a denom the payer holds moved to the fee collector
    on ``scratch``, a throwaway branch metered by the tx's meter. Without it the estimate misses the fee's
    balance reads and writes (about 13,600 gas, a third of a send), more than those clients' 1.3-1.4 margin.
    A payer holding nothing, or nothing spendable, can pay no fee: nothing more is metered."""
    held = bank.get_all_balances(scratch, payer)
    if not held:
        return
    denom, _ = next(iter(held))
    try:
        bank.send_coins(scratch, payer, keys.module_address(keys.FEE_COLLECTOR), Coins(((denom, 1),)))
    except ABCIError as err:
        if (err.codespace, err.code) != (ErrInsufficientFunds.codespace, ErrInsufficientFunds.code):
            raise
