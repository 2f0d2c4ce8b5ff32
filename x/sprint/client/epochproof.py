"""The epoch's proof, checked by a light client (x/sprint README, "The epoch's proof"): from the genesis validator
set alone, with about one pairing per epoch and no trusted node.

1. **The chain of validator sets.** Each handoff (x/bls) names the set in force from its effective height; the
   votes of the height before it, signed by the OUTGOING set, sign its hash as the extra ``bls/validator-set``.
   ``LightClient.apply_handoff`` accepts a handoff only under a certificate of the set it trusts, whose signers
   are members of that set with its keys and hold more than 2/3 of its power.
2. **The summary.** The certificate of the height after the block that wrote the epoch's summary signs its hash
   as the extra ``sprint/epoch-summary``, checked the same way against the set in force at that height.
3. **The work.** A finished inference's leaf (``id ‖ executor ‖ …``, x/inference) climbs its RFC 6962 path to
   its executor's work root, which is that host's line in the summary, which climbs to the summary's hosts root.

Every refusal raises ``ProofError`` with the reason. The BLS backend is any FastAggregateVerify: ``sdk.crypto.bls``
(blst) by default, or py_ecc's ``G2ProofOfPossession.FastAggregateVerify``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from protogen.gonka.bls.v1 import bls_pb2
from protogen.gonka.bls.v1 import query_pb2 as bls_query
from protogen.gonka.inference.v1 import query_pb2 as inference_query
from protogen.gonka.sprint.v1 import query_pb2, sprint_pb2
from sdk.client.querier import Querier
from sdk.crypto import bech32, bls, certificate, merkle
from sdk.crypto.certificate import FastAggregateVerify
from sdk.services import gonka
from x.sprint import types

HANDOFF_EXTRA = "bls/validator-set"
ZERO_HASH = bytes(32)
ID_BYTES = 32
ADDRESS_BYTES = 20


class ProofError(ValueError):
    """Why a proof is refused."""


@dataclass(frozen=True)
class TrustedSet:
    """A validator set the client trusts, in force from ``effective_height``: operator (bech32) -> (key, power)."""

    effective_height: int
    hash: bytes
    members: dict[str, tuple[bytes, int]]

    @property
    def total_power(self) -> int:
        return sum(power for _, power in self.members.values())


@lru_cache(maxsize=4096)
def _operator(address: str) -> bytes:
    """A validator's 20 bytes (cached: the same operators come back in every handoff)."""
    return bech32.decode(address)


def handed_off(handoff: bls_pb2.ValidatorSetHandoff) -> list[certificate.HandedOff]:
    try:
        return [certificate.HandedOff(_operator(v.operator), v.public_key, v.power) for v in handoff.validators]
    except ValueError as exc:
        raise ProofError(f"a handoff with a malformed operator: {exc}") from None


def handoff_hash(handoff: bls_pb2.ValidatorSetHandoff) -> bytes:
    try:
        return certificate.validator_set_hash(handoff.effective_height, handoff.previous_hash, handed_off(handoff))
    except ValueError as exc:
        raise ProofError(f"a malformed handoff: {exc}") from None


def trusted_set(handoff: bls_pb2.ValidatorSetHandoff, set_hash: bytes | None = None) -> TrustedSet:
    """The set ``handoff`` names (``set_hash``: its hash, when already computed)."""
    members = {v.operator: (v.public_key, v.power) for v in handoff.validators}
    if len(members) != len(handoff.validators):
        raise ProofError("a handoff names an operator twice")
    return TrustedSet(handoff.effective_height, set_hash or handoff_hash(handoff), members)


def host_line(line: sprint_pb2.HostSummary) -> bytes:
    try:
        host = bech32.decode(line.host)
        return types.host_line(host, line.weight, line.work_root, line.inferences, line.tokens)
    except ValueError as exc:
        raise ProofError(f"a malformed summary line: {exc}") from None


class LightClient:
    """Follows a chain's validator sets from its genesis set and checks what their certificates sign."""

    def __init__(
        self,
        chain_id: str,
        genesis: bls_pb2.ValidatorSetHandoff,
        fast_aggregate_verify: FastAggregateVerify = bls.fast_aggregate_verify,
    ) -> None:
        """``genesis``: the set the chain started with (from its genesis file, or a source the caller trusts)."""
        self.chain_id = chain_id
        self.verify = fast_aggregate_verify
        self.trusted = trusted_set(genesis)

    # --- certificates ------------------------------------------------------------------------------------

    def check_certificate(
        self, cert: bls_pb2.Certificate, validator_set: bls_pb2.ValidatorSet, extra: tuple[str, bytes]
    ) -> None:
        """``cert`` signs ``extra`` and was made by members of the trusted set (with its keys) holding more
        than 2/3 of its power, at a height the set is in force; else ProofError."""
        if not cert.signature:
            raise ProofError(f"no certificate of the height that signs {extra[0]} (not certified, or not kept)")
        if cert.height < self.trusted.effective_height:
            raise ProofError(
                f"a certificate of height {cert.height}, before the trusted set's {self.trusted.effective_height}"
            )
        if (extra[0], extra[1]) not in [(e.name, e.digest) for e in cert.extras]:
            raise ProofError(f"the certificate of height {cert.height} does not sign this {extra[0]}")
        try:
            flags = certificate.decode_signers(cert.signers, len(validator_set.validators))
        except certificate.CertificateError as exc:
            raise ProofError(str(exc)) from None
        keys, signed, seen = [], 0, set()
        for member, flag in zip(validator_set.validators, flags):
            if not flag:
                continue
            trusted = self.trusted.members.get(member.operator)
            if trusted is None or trusted[0] != member.public_key or not member.public_key:
                raise ProofError(
                    f"signer {member.operator or member.address.hex()} is not in the trusted set with that key"
                )
            if member.operator in seen:
                raise ProofError(f"signer {member.operator} appears twice")
            seen.add(member.operator)
            keys.append(member.public_key)
            signed += trusted[1]
        if not certificate.exceeds_two_thirds(signed, self.trusted.total_power):
            raise ProofError(
                f"signers hold {signed} of the trusted set's {self.trusted.total_power} power, not more than 2/3"
            )
        try:
            extras = certificate.extras_digest([(e.name, e.digest) for e in cert.extras])
            message = certificate.signing_message(self.chain_id, cert.height, cert.commitment, extras)
        except ValueError as exc:
            raise ProofError(f"a malformed certificate: {exc}") from None
        if len(cert.signature) != bls.SIGNATURE_SIZE or not self.verify(keys, message, cert.signature):
            raise ProofError(f"the certificate of height {cert.height} does not verify for its signers' keys (forged)")

    # --- 1. the chain of validator sets ------------------------------------------------------------------

    def apply_handoff(self, proof: bls_query.HandoffProof) -> None:
        """Trust the handed-off set once the set trusted now signed it; a handoff already passed is skipped."""
        handoff = proof.handoff
        if handoff.effective_height <= self.trusted.effective_height:
            return
        if handoff.previous_hash != self.trusted.hash:
            raise ProofError(
                f"the handoff to height {handoff.effective_height} does not follow the trusted set (one is missing)"
            )
        if handoff.recorded_height + 2 != handoff.effective_height:
            raise ProofError("a handoff whose recorded and effective heights disagree")
        set_hash = handoff_hash(handoff)
        if proof.certificate.height != handoff.effective_height - 1:
            raise ProofError(
                f"the handoff to height {handoff.effective_height} is not signed by the outgoing set's last height"
            )
        self.check_certificate(proof.certificate, proof.validator_set, (HANDOFF_EXTRA, set_hash))
        self.trusted = trusted_set(handoff, set_hash)

    def apply_handoffs(self, proofs: Iterable[bls_query.HandoffProof]) -> None:
        for proof in proofs:
            self.apply_handoff(proof)

    # --- 2. the summary ------------------------------------------------------------------------------------

    def verify_summary(self, answer: query_pb2.QueryEpochProofResponse) -> sprint_pb2.EpochSummary:
        """The epoch's summary, once its handoffs lead to the set that certified it and the certificate signs its
        hash; with one host's line, that line's path to the hosts root is checked too."""
        if answer.chain_id and answer.chain_id != self.chain_id:
            raise ProofError(f"a proof of chain {answer.chain_id!r}, not {self.chain_id!r}")
        summary = answer.summary
        for proof in answer.handoffs:
            if proof.handoff.effective_height <= answer.certificate.height:
                self.apply_handoff(proof)
        lines = [host_line(line) for line in summary.hosts]
        if len(lines) == summary.host_count:
            if merkle.root(lines) != summary.hosts_root:
                raise ProofError("the summary's lines do not make its hosts root (tampered)")
        elif len(lines) == 1:
            if not merkle.verify_inclusion(
                summary.hosts_root, lines[0], answer.host_index, summary.host_count, answer.host_proof
            ):
                raise ProofError(f"{summary.hosts[0].host}'s line is not in the summary's hosts root (tampered)")
        else:
            raise ProofError(f"a summary of {len(lines)} lines for {summary.host_count} hosts")
        if answer.certificate.height != summary.height + 1:
            raise ProofError(
                f"the certificate of height {answer.certificate.height} is not the one after the summary's block"
            )
        self.check_certificate(
            answer.certificate, answer.validator_set, (types.SUMMARY_EXTRA, types.summary_digest(summary))
        )
        return summary

    # --- 3. the work ------------------------------------------------------------------------------------------

    def verify_work(
        self,
        inference_id: bytes,
        work: inference_query.QueryWorkProofResponse,
        answer: query_pb2.QueryEpochProofResponse,
    ) -> sprint_pb2.HostSummary:
        """The executor's line of a certified summary that proves the finished inference ``inference_id``."""
        leaf = work.leaf
        if len(leaf) < ID_BYTES + ADDRESS_BYTES or leaf[:ID_BYTES] != inference_id:
            raise ProofError("the work leaf is not this inference's")
        executor = leaf[ID_BYTES : ID_BYTES + ADDRESS_BYTES]
        summary = self.verify_summary(answer)
        if summary.epoch != work.epoch:
            raise ProofError(f"a summary of epoch {summary.epoch}, the work is of epoch {work.epoch}")
        line = next((h for h in summary.hosts if bech32.decode(h.host) == executor), None)
        if line is None:
            raise ProofError(f"the summary has no line for the executor {bech32.encode(executor)}")
        if work.total != line.inferences:
            raise ProofError(f"a work proof over {work.total} leaves, the executor's line counts {line.inferences}")
        if not merkle.verify_inclusion(line.work_root, leaf, work.index, work.total, work.proof):
            raise ProofError(f"the inference is not in {line.host}'s work root (another host's root, or a bad path)")
        return line


# --- from a node's answers ----------------------------------------------------------------------------------


def fetch_work_proof(querier: Querier, inference_id: bytes) -> inference_query.QueryWorkProofResponse:
    return querier.query(
        gonka("inference").query + "WorkProof",
        inference_query.QueryWorkProofRequest(id=inference_id.hex()),
        inference_query.QueryWorkProofResponse,
    )


def fetch_epoch_proof(
    querier: Querier, epoch: int, host: str = "", after: int = 0
) -> query_pb2.QueryEpochProofResponse:
    return querier.query(
        gonka("sprint").query + "EpochProof",
        query_pb2.QueryEpochProofRequest(epoch=epoch, host=host, after_height=after),
        query_pb2.QueryEpochProofResponse,
    )


def fetch_genesis_set(querier: Querier) -> bls_pb2.ValidatorSetHandoff:
    """The chain's first handoff as a node reports it: only as trustworthy as that node (prefer the genesis
    file's set, or one from a source the caller trusts)."""
    answer = querier.query(
        gonka("bls").query + "Handoffs", bls_query.QueryHandoffsRequest(limit=1), bls_query.QueryHandoffsResponse
    )
    if not answer.handoffs:
        raise ProofError("the node reports no validator set (vote extensions off?)")
    return answer.handoffs[0].handoff


def verify_work(
    querier: Querier,
    inference_id: bytes,
    genesis: bls_pb2.ValidatorSetHandoff,
    chain_id: str = "",
    fast_aggregate_verify: FastAggregateVerify = bls.fast_aggregate_verify,
) -> tuple[sprint_pb2.HostSummary, int, int]:
    """Check a finished inference against the chain from ``genesis`` on, with a node's answers only; returns the
    executor's summary line, the epoch and the certified height. ProofError says why not. ``chain_id``: the
    chain's (default: the node's word, which the signatures cover: a wrong one verifies nothing)."""
    work = fetch_work_proof(querier, inference_id)
    if not work.final:
        raise ProofError(f"epoch {work.epoch} has not ended: the executor's work root is not final yet")
    answer = fetch_epoch_proof(querier, work.epoch, work.host)
    client = LightClient(chain_id or answer.chain_id, genesis, fast_aggregate_verify)
    line = client.verify_work(inference_id, work, answer)
    return line, work.epoch, answer.certificate.height
