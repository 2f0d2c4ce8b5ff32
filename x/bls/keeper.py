"""Hosts' BLS12-381 keys, and the block certificates made with them.

Keys arrive only through ``MsgRegisterBlsKey`` (at genesis inside a gentx, or later) or an exported genesis;
both check the key (KeyValidate) and that its operator is a host; the message also checks the proof of
possession, which is what makes the key safe to aggregate with others (no rogue-key attack).

A key registered in block H signs votes from height H + 1: votes of height H are checked against the state
after H - 1 when they arrive, and again, inside the certificate, against the state after H in block H + 1;
``key_for_votes`` gives both checks the same answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from protogen.gonka.bls.v1 import bls_pb2
from sdk.abci.blocks import VoteInfo
from sdk.context import Context
from sdk.crypto import bech32, certificate
from x.bls import keys
from x.bls.errors import ErrKeyUsed, ErrNotHost
from x.bls.expected_keepers import StakeKeeper
from x.bls.params import default_params


def _u64(raw: bytes) -> int:
    return int.from_bytes(raw[:8], "big")


class BlsKeeper:
    """Owns the ``bls/`` prefix."""

    def __init__(self, stake: StakeKeeper) -> None:
        self.stake = stake

    # --- params ------------------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> bls_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return default_params() if raw is None else bls_pb2.Params.FromString(raw)

    def set_params(self, ctx: Context, params: bls_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    # --- keys ----------------------------------------------------------------------------------------

    def get_key(self, ctx: Context, operator: bytes) -> bytes | None:
        return ctx.kv(keys.STORE_PREFIX).get(keys.key_key(operator))

    def operator_of(self, ctx: Context, public_key: bytes) -> bytes | None:
        return ctx.kv(keys.STORE_PREFIX).get(keys.operator_index_key(public_key))

    def all_keys(self, ctx: Context) -> list[tuple[bytes, bytes]]:
        """Every (operator, key) in operator order."""
        prefix = keys.KEY_PREFIX
        return [(k[len(prefix) :], v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    def operator_index(self, ctx: Context) -> list[tuple[bytes, bytes]]:
        """Every (key, operator) of the reverse index, in key order."""
        prefix = keys.OPERATOR_INDEX_PREFIX
        return [(k[len(prefix) :], v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

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
        if previous == public_key:
            return previous
        in_force = self.key_for_votes(ctx, operator, ctx.header.height)  # what this height's votes sign with
        if previous is not None:
            store.delete(keys.operator_index_key(previous))
        store.set(keys.key_key(operator), public_key)
        store.set(keys.operator_index_key(public_key), operator)
        store.set(keys.registration_key(operator), keys.u64(ctx.header.height) + (in_force or b""))
        return previous

    def key_for_votes(self, ctx: Context, operator: bytes, height: int) -> bytes | None:
        """The key that signs ``operator``'s votes of ``height``: the registered one if it was registered before
        block ``height``, else the one it replaced (None: no key yet). Meant for ``height`` the next block's or
        the last block's, which is all consensus asks."""
        current = self.get_key(ctx, operator)
        record = ctx.kv(keys.STORE_PREFIX).get(keys.registration_key(operator))
        if record is None or _u64(record) < height:
            return current
        return record[8:] or None

    def validator_key(self, ctx: Context, consensus_addr: bytes, height: int) -> tuple[bytes | None, bytes | None]:
        """(operator, key for ``height``'s votes) of the validator CometBFT knows by ``consensus_addr``."""
        operator = self.stake.host_by_consensus_address(ctx, consensus_addr)
        return operator, None if operator is None else self.key_for_votes(ctx, operator, height)

    # --- the work commitment each height's votes sign ----------------------------------------------

    def record_commitment(self, ctx: Context, height: int, commitment: bytes) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.COMMITMENT_KEY, keys.u64(height) + commitment)

    def last_commitment(self, ctx: Context) -> tuple[int, bytes] | None:
        """(height, commitment) of the last finalized block: what its votes signed."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.COMMITMENT_KEY)
        return None if raw is None else (_u64(raw), raw[8:])

    # --- validator sets and certificates ------------------------------------------------------------

    def signing_set(self, ctx: Context, votes: Sequence[VoteInfo], height: int) -> bls_pb2.ValidatorSet:
        """``height``'s validators as CometBFT lists them in the next block's last commit, with the key in force
        for that height's votes (empty if none, or if CometBFT's validator is no host)."""
        validators = []
        for vote in votes:
            operator, key = self.validator_key(ctx, vote.validator, height)
            validators.append(
                bls_pb2.SigningValidator(
                    address=vote.validator,
                    operator=bech32.encode(operator) if operator else "",
                    power=vote.power,
                    public_key=key or b"",
                )
            )
        return bls_pb2.ValidatorSet(validators=validators)

    def store_certificate(self, ctx: Context, cert: bls_pb2.Certificate, validator_set: bls_pb2.ValidatorSet) -> None:
        """Keep ``cert`` (naming ``validator_set`` by hash) as its height's; at most one per height."""
        store = ctx.kv(keys.STORE_PREFIX)
        encoded_set = validator_set.SerializeToString()
        set_hash = hashlib.sha256(encoded_set).digest()
        refs = store.get(keys.validator_set_refs_key(set_hash))
        if refs is None:
            store.set(keys.validator_set_key(set_hash), encoded_set)
        store.set(keys.validator_set_refs_key(set_hash), keys.u64((_u64(refs) if refs else 0) + 1))
        stored = bls_pb2.Certificate()
        stored.CopyFrom(cert)
        stored.validator_set_hash = set_hash
        store.set(keys.certificate_key(cert.height), stored.SerializeToString())
        store.set(keys.LATEST_CERTIFIED_KEY, keys.u64(cert.height))

    def certificate(self, ctx: Context, height: int) -> bls_pb2.Certificate | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.certificate_key(height))
        return None if raw is None else bls_pb2.Certificate.FromString(raw)

    def certificates(self, ctx: Context) -> list[bls_pb2.Certificate]:
        """Every kept certificate, in height order."""
        return [
            bls_pb2.Certificate.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.CERTIFICATE_PREFIX)
        ]

    def validator_set(self, ctx: Context, set_hash: bytes) -> bls_pb2.ValidatorSet | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.validator_set_key(set_hash))
        return None if raw is None else bls_pb2.ValidatorSet.FromString(raw)

    def validator_set_refs(self, ctx: Context) -> dict[bytes, int]:
        prefix = keys.VALIDATOR_SET_REFS_PREFIX
        return {k[len(prefix) :]: _u64(v) for k, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)}

    def stored_validator_sets(self, ctx: Context) -> list[bytes]:
        prefix = keys.VALIDATOR_SET_PREFIX
        return [k[len(prefix) :] for k, _ in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    def latest_certified_height(self, ctx: Context) -> int | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.LATEST_CERTIFIED_KEY)
        return None if raw is None else _u64(raw)

    def beacon(self, ctx: Context, height: int | None = None) -> bytes | None:
        """H(aggregate signature) of ``height``'s certificate (default: the latest certified height's); None if
        that height has none. Modules sample with it (PoC V2, executor choice): see sdk/crypto/certificate.py
        for why it is unpredictable and unforgeable."""
        if height is None:
            height = self.latest_certified_height(ctx)
        cert = None if height is None else self.certificate(ctx, height)
        return None if cert is None else certificate.beacon(cert.signature)

    def prune_certificates(self, ctx: Context, height: int) -> None:
        """In block ``height``'s end: keep the certificates of the last ``certificate_retention_blocks`` heights
        (all if 0), dropping older ones, and a validator set once no kept certificate names it. Usually one
        goes; more after the window shrinks."""
        retention = self.get_params(ctx).certificate_retention_blocks
        if retention == 0 or height <= retention:
            return
        store = ctx.kv(keys.STORE_PREFIX)
        expired = list(store.iterate(keys.CERTIFICATE_PREFIX, end=keys.certificate_key(height - retention)))
        for key, raw in expired:
            set_hash = bls_pb2.Certificate.FromString(raw).validator_set_hash
            store.delete(key)
            refs = _u64(store.get(keys.validator_set_refs_key(set_hash)) or keys.u64(1)) - 1
            if refs:
                store.set(keys.validator_set_refs_key(set_hash), keys.u64(refs))
            else:
                store.delete(keys.validator_set_refs_key(set_hash))
                store.delete(keys.validator_set_key(set_hash))
