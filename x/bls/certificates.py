"""x/bls block certificates along the ABCI hooks, as small functions over the state a hook sees (x/bls README,
"Certificates").

* ``vote_share``: ExtendVote - this node's BLS signature over the voted height's signing message.
* ``share_is_valid``: VerifyVoteExtension - a validator with a key in force sends a valid share, one without
  sends none; anything else loses the vote (how and when a share is verified: x/bls/shares.py).
* ``build_certificate``: PrepareProposal of block H+1 - the valid shares of height H aggregated, with the
  bitmap.
* ``check_certificate``: ProcessProposal - present when required, well formed, > 2/3 of the power, verifying.

Block H's votes sign ``signing_message(chain_id, H, commitment_H, extras_H)``, commitment_H being the app hash
in block H's header (the state it builds on): the hooks of height H see it as ``block.app_hash``; block H+1's
hooks read it from the state (``keeper.last_commitment``, written by block H's end block). extras_H, the digest
of what else H's votes sign (b"" for most heights), is fixed in block H-1's end (``keeper.extras``), so every
hook of H and H+1 reads the same.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from protogen.gonka.bls.v1 import bls_pb2
from sdk.abci.blocks import BlockInfo, VoteExtension
from sdk.baseapp import stored_consensus_params
from sdk.context import Context
from sdk.crypto import bls, certificate
from x.bls.keeper import BlsKeeper
from x.bls.shares import ShareChecks

log = logging.getLogger("gonkad.bls")

FAULTS = ("forge-certificate", "weak-certificate")
"""Test-only misbehaviour of a proposer (``[modules.bls] test_fault``): a certificate whose signature is
another message's, or a valid one of signers holding at most 2/3 of the power. Others reject both."""


@dataclass(frozen=True)
class NodeKey:
    """This node's BLS key (from its home's key file)."""

    secret: bytes
    public_key: bytes


def vote_share(
    keeper: BlsKeeper, ctx: Context, block: BlockInfo, node_key: NodeKey | None, checks: ShareChecks
) -> bytes:
    """Sign the voted height's message, if this node's key is the one in force for a host at that height
    (a node whose key is not, or not yet, registered adds nothing, and its host's vote is then refused)."""
    if node_key is None:
        return b""
    operator = keeper.operator_of(ctx, node_key.public_key)
    if operator is None or keeper.key_for_votes(ctx, operator, block.height) != node_key.public_key:
        return b""
    message = keeper.signing_message(ctx, block.height, block.app_hash)
    share = bls.sign(node_key.secret, message)
    checks.vouch(node_key.public_key, message, share)
    return share


def share_is_valid(
    keeper: BlsKeeper, ctx: Context, block: BlockInfo, validator: bytes, share: bytes, checks: ShareChecks
) -> bool:
    """A validator whose host has a key in force for this height must send its valid 96-byte share (as far
    as ``checks`` can tell now); one without a key must send none."""
    _, key = keeper.validator_key(ctx, validator, block.height)
    if key is None:
        return share == b""
    return checks.admit(key, keeper.signing_message(ctx, block.height, block.app_hash), share)


def extensions_enabled(ctx: Context, height: int) -> bool:
    """Whether CometBFT's votes of ``height`` carry extensions (consensus param ``abci``)."""
    params = stored_consensus_params(ctx.store)
    enable = params.abci.vote_extensions_enable_height if params is not None else 0
    return 0 < enable <= height


def certificate_required(ctx: Context, validator_set: bls_pb2.ValidatorSet, height: int) -> bool:
    """Block H+1 must carry height H's certificate when H's votes had extensions and every validator of H had a
    key in force: then every vote of the commit came with a verified share, so > 2/3 of the power signed."""
    return (
        extensions_enabled(ctx, height)
        and len(validator_set.validators) > 0
        and all(v.public_key for v in validator_set.validators)
    )


def _signed_power(validator_set: bls_pb2.ValidatorSet, indexes: Sequence[int]) -> tuple[int, int]:
    powers = [v.power for v in validator_set.validators]
    return sum(powers[i] for i in indexes), sum(powers)


def build_certificate(
    keeper: BlsKeeper,
    ctx: Context,
    block: BlockInfo,
    extensions: Sequence[VoteExtension],
    checks: ShareChecks,
    fault: str = "",
) -> bytes | None:
    """As proposer of ``block``: the last height's certificate from the valid shares CometBFT handed over
    (each committed validator's extension part), or None when they do not reach > 2/3 of the power.

    ``checks.settle`` verifies those ``share_is_valid`` accepted without verifying (deferred checks) and
    precommits that came in after the commit (CometBFT adds those to the last commit unchecked), and bad ones
    are left out, so a bad share never costs a proposal while the valid ones hold > 2/3."""
    record = keeper.last_commitment(ctx)
    if record is None or record[0] != block.height - 1:
        return None
    height, commitment = record
    validator_set = keeper.signing_set(ctx, block.decided_last_commit, height)
    message = keeper.signing_message(ctx, height, commitment)
    index = {v.address: i for i, v in enumerate(validator_set.validators)}
    committed = {vote.validator for vote in block.decided_last_commit if vote.signed}
    shares: dict[int, bytes] = {}
    for ext in extensions:
        i = index.get(ext.validator)
        if i is not None and ext.validator in committed and validator_set.validators[i].public_key:
            shares[i] = ext.data
    key = {i: validator_set.validators[i].public_key for i in shares}
    order = sorted(shares)
    valid = checks.settle(message, [(key[i], shares[i]) for i in order])
    shares = {i: shares[i] for i, ok in zip(order, valid) if ok}
    signature = _aggregate(sorted(shares.items()), key, message)
    if fault:
        shares, signature = _faulty(fault, validator_set, shares, message, signature)
    elif not certificate.exceeds_two_thirds(*_signed_power(validator_set, list(shares))):
        return None
    if signature is None:
        return None
    flags = [i in shares for i in range(len(validator_set.validators))]
    return bls_pb2.BlockCertificate(
        height=height, signers=certificate.encode_signers(flags), signature=signature
    ).SerializeToString()


def _aggregate(shares: Sequence[tuple[int, bytes]], key: dict[int, bytes], message: bytes) -> bytes | None:
    """The aggregate of ``shares`` if it verifies for their keys (what ProcessProposal will check); None
    otherwise (or with none)."""
    if not shares:
        return None
    try:
        signature = bls.aggregate([share for _, share in shares])
    except bls.BlsError:
        return None
    return signature if bls.fast_aggregate_verify([key[i] for i, _ in shares], message, signature) else None


def _faulty(
    fault: str, validator_set: bls_pb2.ValidatorSet, shares: dict[int, bytes], message: bytes, signature: bytes | None
) -> tuple[dict[int, bytes], bytes | None]:
    """The test faults (FAULTS): the signers and signature a broken or malicious proposer would put in."""
    if fault == "weak-certificate":  # the first signers while they hold at most 2/3
        _, total = _signed_power(validator_set, [])
        kept: list[int] = []
        for i in sorted(shares):
            if certificate.exceeds_two_thirds(_signed_power(validator_set, [*kept, i])[0], total):
                break
            kept.append(i)
        return {i: shares[i] for i in kept}, bls.aggregate([shares[i] for i in kept]) if kept else None
    if signature is None:
        return shares, None
    return shares, bls.sign(bls.keygen(message), b"not " + message)  # the right signers, another message


def check_certificate(keeper: BlsKeeper, ctx: Context, block: BlockInfo, entry: bytes | None) -> str | None:
    """Why ``block`` (a proposal) is not acceptable as far as certificates go; None if it is."""
    record = keeper.last_commitment(ctx)
    if record is None or record[0] != block.height - 1:
        return None if entry is None else "a certificate, but no last block to certify"
    height, commitment = record
    validator_set = keeper.signing_set(ctx, block.decided_last_commit, height)
    if entry is None:
        return "no certificate, and one is required" if certificate_required(ctx, validator_set, height) else None
    try:
        cert = decode_certificate(entry)
    except ValueError as exc:
        return f"malformed certificate: {exc}"
    if cert.height != height:
        return f"a certificate of height {cert.height}, not {height}"
    validators = [certificate.Validator(v.public_key, v.power) for v in validator_set.validators]
    try:
        flags = certificate.decode_signers(cert.signers, len(validators))
        if any(flag and not vote.signed for flag, vote in zip(flags, block.decided_last_commit)):
            return "a signer whose vote is not in the block's last commit"
        certificate.verify(
            keeper.signing_message(ctx, height, commitment),
            cert.signers,
            cert.signature,
            validators,
        )
    except certificate.CertificateError as exc:
        return str(exc)
    return None


def decode_certificate(entry: bytes) -> bls_pb2.BlockCertificate:
    """The one canonical encoding of a BlockCertificate (ValueError otherwise), so one entry has one meaning."""
    try:
        cert = bls_pb2.BlockCertificate.FromString(entry)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise ValueError(f"not a BlockCertificate: {type(exc).__name__}") from None
    if cert.SerializeToString(deterministic=True) != entry:
        raise ValueError("not canonically encoded")
    return cert
