"""Hosts' BLS12-381 keys, and the block certificates made with them.

Keys arrive only through ``MsgRegisterBlsKey`` (at genesis inside a gentx, or later) or an exported genesis;
both check the key (KeyValidate) and that its operator is a host; the message also checks the proof of
possession, which is what makes the key safe to aggregate with others (no rogue-key attack).

A key registered in block H signs votes from height H + 1: votes of height H are checked against the state
after H - 1 when they arrive, and again, inside the certificate, against the state after H in block H + 1;
``key_for_votes`` gives both checks the same answer.

A height's votes may also sign **extras** (README, "Signed extras"): digests other modules ask for (an epoch's
summary) and the incoming validator set's hash when the set changes (the handoff), fixed in the end of the
block before the height and kept with its certificate for good.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from protogen.gonka.bls.v1 import bls_pb2
from sdk.abci.blocks import VoteInfo
from sdk.context import Context
from sdk.crypto import bech32, certificate
from x.bls import keys
from x.bls.errors import ErrKeyUsed, ErrNotHost
from x.bls.expected_keepers import SignedExtraProvider, StakeKeeper
from x.bls.params import default_params

HANDOFF_EXTRA = "bls/validator-set"
"""The extra the outgoing validator set signs: the incoming set's hash (``certificate.validator_set_hash``)."""
ZERO_HASH = bytes(32)


def _u64(raw: bytes) -> int:
    return int.from_bytes(raw[:8], "big")


class BlsKeeper:
    """Owns the ``bls/`` prefix."""

    def __init__(self, stake: StakeKeeper) -> None:
        self.stake = stake
        self.extra_providers: dict[str, SignedExtraProvider] = {}

    def add_extra_provider(self, name: str, provider: SignedExtraProvider) -> None:
        """Let ``provider`` (a module, wired in app.py) ask heights' votes to sign a digest named ``name``."""
        if name in self.extra_providers or name == HANDOFF_EXTRA:
            raise ValueError(f"an extra named {name!r} is already provided")
        self.extra_providers[name] = provider

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

    # --- extras: what a height's votes sign besides the commitment ----------------------------------

    def extras(self, ctx: Context, height: int) -> list[bls_pb2.SignedExtra]:
        """The extras the votes of ``height`` sign, in name order (none for most heights)."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.extras_key(height))
        return [] if raw is None else list(bls_pb2.SignedExtras.FromString(raw).extras)

    def signing_message(self, ctx: Context, height: int, commitment: bytes) -> bytes:
        """What the votes of ``height`` sign: its commitment, and its extras' digest when it has extras."""
        extras = certificate.extras_digest([(e.name, e.digest) for e in self.extras(ctx, height)])
        return certificate.signing_message(ctx.header.chain_id, height, commitment, extras)

    def record_next_extras(self, ctx: Context, height: int) -> None:
        """In block ``height``'s end: the extras of ``height + 1``'s votes (the providers' digests and, when
        this block changed the validator set, the incoming set's hash); those of heights before ``height``, whose
        certificates are in, are dropped."""
        store = ctx.kv(keys.STORE_PREFIX)
        for key, _ in list(store.iterate(keys.EXTRAS_PREFIX, end=keys.extras_key(height))):
            store.delete(key)
        found = {name: provider.signed_extra(ctx, height + 1) for name, provider in self.extra_providers.items()}
        handoff = self.record_handoff(ctx, height)
        if handoff is not None:
            found[HANDOFF_EXTRA] = handoff
        extras = [bls_pb2.SignedExtra(name=n, digest=d) for n, d in sorted(found.items()) if d]
        for extra in extras:
            if len(extra.digest) != certificate.DIGEST_SIZE:
                raise ValueError(f"extra {extra.name!r} of {len(extra.digest)} bytes")
        if extras:
            record = bls_pb2.SignedExtras(height=height + 1, extras=extras)
            store.set(keys.extras_key(height + 1), record.SerializeToString())

    # --- validator set handoffs ---------------------------------------------------------------------

    def incoming_set(self, ctx: Context) -> list[certificate.HandedOff]:
        """x/stake's power table with each host's registered key, in operator order: the set CometBFT has been
        sent by the end of this block."""
        powers = self.stake.validator_powers(ctx)
        return [
            certificate.HandedOff(op, self.get_key(ctx, op) or b"", powers[op]) for op in sorted(powers) if powers[op]
        ]

    def latest_handoff(self, ctx: Context) -> tuple[int, bytes, bytes] | None:
        """(effective height, hash, content fingerprint) of the latest handoff."""
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.LATEST_HANDOFF_KEY)
        return None if raw is None else (_u64(raw), raw[8:40], raw[40:72])

    def record_handoff(self, ctx: Context, height: int) -> bytes | None:
        """In block ``height``'s end: when the validator set (operators and powers; a key rotation alone is no
        handoff, README "Handoffs") differs from the last one handed off, record it as in force from
        ``height + 2`` and return its hash, which the votes of ``height + 1`` (the outgoing set's last) sign.
        The first block (with vote extensions) records the set in force, unsigned: the genesis set a light
        client starts from."""
        validators = self.incoming_set(ctx)
        content = certificate.validator_set_hash(0, ZERO_HASH, [replace(v, public_key=b"") for v in validators])
        latest = self.latest_handoff(ctx)
        if latest is not None and latest[2] == content:
            return None
        effective, recorded, previous = (height, 0, ZERO_HASH) if latest is None else (height + 2, height, latest[1])
        set_hash = certificate.validator_set_hash(effective, previous, validators)
        handoff = bls_pb2.ValidatorSetHandoff(
            effective_height=effective,
            recorded_height=recorded,
            previous_hash=previous,
            validators=[
                bls_pb2.HandoffValidator(operator=bech32.encode(v.operator), public_key=v.public_key, power=v.power)
                for v in validators
            ],
        )
        store = ctx.kv(keys.STORE_PREFIX)
        store.set(keys.handoff_key(effective), handoff.SerializeToString())
        store.set(keys.LATEST_HANDOFF_KEY, keys.u64(effective) + set_hash + content)
        ctx.emit("validator_set_handoff", effective_height=str(effective), hash=set_hash.hex())
        return None if latest is None else set_hash

    def handoffs(
        self, ctx: Context, after: int = 0, through: int = 0, limit: int = 0
    ) -> list[bls_pb2.ValidatorSetHandoff]:
        """The handoffs in force after ``after`` (0: from the genesis set's) up to ``through`` (0: no bound)."""
        start = keys.handoff_key(after + 1) if after else None
        end = keys.handoff_key(through + 1) if through else None
        found = []
        for _, raw in ctx.kv(keys.STORE_PREFIX).iterate(keys.HANDOFF_PREFIX, start=start, end=end):
            found.append(bls_pb2.ValidatorSetHandoff.FromString(raw))
            if limit and len(found) == limit:
                break
        return found

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
        store = ctx.kv(keys.STORE_PREFIX)
        raw = store.get(keys.certificate_key(height)) or store.get(keys.kept_certificate_key(height))
        return None if raw is None else bls_pb2.Certificate.FromString(raw)

    def certificates(self, ctx: Context) -> list[bls_pb2.Certificate]:
        """Every kept certificate (those with extras kept past the window too), in height order."""
        store = ctx.kv(keys.STORE_PREFIX)
        found = [
            bls_pb2.Certificate.FromString(v)
            for prefix in (keys.KEPT_CERTIFICATE_PREFIX, keys.CERTIFICATE_PREFIX)
            for _, v in store.iterate(prefix)
        ]
        return sorted(found, key=lambda c: c.height)

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
        goes; more after the window shrinks. A certificate with extras (an epoch summary, a handoff) moves to
        the kept prefix instead, with its set, for good."""
        retention = self.get_params(ctx).certificate_retention_blocks
        if retention == 0 or height <= retention:
            return
        store = ctx.kv(keys.STORE_PREFIX)
        expired = list(store.iterate(keys.CERTIFICATE_PREFIX, end=keys.certificate_key(height - retention)))
        for key, raw in expired:
            cert = bls_pb2.Certificate.FromString(raw)
            store.delete(key)
            if cert.extras:
                store.set(keys.kept_certificate_key(cert.height), raw)
                continue
            set_hash = cert.validator_set_hash
            refs = _u64(store.get(keys.validator_set_refs_key(set_hash)) or keys.u64(1)) - 1
            if refs:
                store.set(keys.validator_set_refs_key(set_hash), keys.u64(refs))
            else:
                store.delete(keys.validator_set_refs_key(set_hash))
                store.delete(keys.validator_set_key(set_hash))
