"""What must hold of x/bls's state after every block (registered as ``bls/…``)."""

from __future__ import annotations

from sdk.context import Context
from sdk.crypto import bech32
from x.bls.keeper import BlsKeeper


def indexes_agree(bls: BlsKeeper, ctx: Context) -> str | None:
    """operator -> key and key -> operator are the same relation: a bijection between them."""
    forward = bls.all_keys(ctx)
    backward = {key: operator for key, operator in bls.operator_index(ctx)}
    if len(forward) != len(backward):
        return f"{len(forward)} operators have keys but the key index holds {len(backward)}"
    for operator, key in forward:
        if backward.get(key) != operator:
            return f"{bech32.encode(operator)}'s key {key.hex()[:16]}… is indexed to another operator or none"
    return None


def certificate_sets_kept(bls: BlsKeeper, ctx: Context) -> str | None:
    """Every kept certificate's validator set is kept, each set's count is the number of certificates naming
    it, and no set is kept that none names."""
    counts: dict[bytes, int] = {}
    for cert in bls.certificates(ctx):
        counts[cert.validator_set_hash] = counts.get(cert.validator_set_hash, 0) + 1
    if bls.validator_set_refs(ctx) != counts:
        return "validator set counts differ from the certificates that name them"
    if sorted(bls.stored_validator_sets(ctx)) != sorted(counts):
        return "the kept validator sets are not exactly those the certificates name"
    return None
