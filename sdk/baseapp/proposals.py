"""ABCI 2.0: PrepareProposal and ProcessProposal (the modules' injected entries), ExtendVote and
VerifyVoteExtension (the modules' parts of a validator's vote extension); formats in sdk/abci/blocks.py.

Each hook runs over a throwaway branch of the state the block builds on (the genesis state before the
first block commits), module by module in app order. A module hook that raises is logged; it then adds
nothing (extend_vote, prepare_proposal) or rejects (verify_vote_extension, process_proposal).
"""

from __future__ import annotations

from collections.abc import Sequence

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.abci.blocks import (
    BlockInfo,
    VoteExtension,
    block_info,
    decode_injected_entry,
    decode_vote_extension,
    encode_injected_entry,
    encode_vote_extension,
    fit_txs,
    is_injected_entry,
    proto_tx_size,
)
from sdk.baseapp.core import Core, log
from sdk.baseapp.state import stored_chain_id
from sdk.context import BlockHeader, Context
from sdk.store.cachekv import CacheKV


class Proposals(Core):
    """The proposer's and the voters' hooks; none of them writes state."""

    def proposal_context(self, block: BlockInfo) -> Context:
        """A context over a throwaway branch of the state ``block`` builds on; its writes are discarded."""
        state = self.pending_genesis.branch() if self.pending_genesis is not None else CacheKV(self.store)
        return Context(state, BlockHeader(stored_chain_id(state), block.height, block.time_ns, block.proposer))

    def prepare_proposal(self, req: abci.RequestPrepareProposal) -> abci.ResponsePrepareProposal:
        """Module entries first (app order), then the mempool's txs in order, all within ``max_tx_bytes``."""
        block = block_info(req, self.header_app_hash())
        extensions = self.last_vote_extensions(req.local_last_commit)
        entries: list[bytes] = []
        for module in self.modules:
            try:
                payload = module.prepare_proposal(self.proposal_context(block), block, extensions.get(module.name, []))
            except Exception:  # noqa: BLE001 - a module's bug costs its entry, not the proposal
                log.exception("prepare_proposal of module %s failed at height %d", module.name, block.height)
                continue
            if payload is not None:
                entries.append(encode_injected_entry(module.name, payload))
        entries = fit_txs(entries, req.max_tx_bytes)
        used = sum(proto_tx_size(entry) for entry in entries)
        txs = fit_txs([tx for tx in req.txs if not is_injected_entry(tx)], req.max_tx_bytes, used)
        return abci.ResponsePrepareProposal(txs=[*entries, *txs])

    def last_vote_extensions(self, commit: abci.ExtendedCommitInfo) -> dict[str, list[VoteExtension]]:
        """Each module's parts of the last height's vote extensions (from votes for the block), by module."""
        names = [m.name for m in self.modules]
        by_module: dict[str, list[VoteExtension]] = {}
        for vote in commit.votes:
            if not vote.vote_extension:
                continue
            try:
                parts = decode_vote_extension(vote.vote_extension, names)
            except ValueError:  # CometBFT verified it with verify_vote_extension; never expected
                log.warning("skipping a malformed vote extension of validator %s", vote.validator.address.hex())
                continue
            for name, data in parts.items():
                by_module.setdefault(name, []).append(VoteExtension(vote.validator.address, vote.validator.power, data))
        return by_module

    def process_proposal(self, req: abci.RequestProcessProposal) -> abci.ResponseProcessProposal:
        """Injected entries only at the head, well-formed, at most one per module and in app order; then
        every module's ``process_proposal`` must accept."""
        reject = abci.ResponseProcessProposal(status=abci.ResponseProcessProposal.REJECT)
        block = block_info(req, self.header_app_hash())
        entries = self.injected_entries(req.txs)
        if entries is None:
            log.info("rejecting the proposal at height %d: a misplaced or malformed injected entry", block.height)
            return reject
        for module in self.modules:
            try:
                accepted = module.process_proposal(self.proposal_context(block), block, entries.get(module.name))
            except Exception:  # noqa: BLE001 - deterministic: every node's copy of the module raises alike
                log.exception("process_proposal of module %s failed at height %d", module.name, block.height)
                accepted = False
            if not accepted:
                log.info("module %s rejects the proposal at height %d", module.name, block.height)
                return reject
        return abci.ResponseProcessProposal(status=abci.ResponseProcessProposal.ACCEPT)

    def injected_entries(self, txs: Sequence[bytes]) -> dict[str, bytes] | None:
        """The proposal's injected entries by module, or None unless they are all at the head, well-formed,
        of known modules, and at most one per module in app order."""
        order = {m.name: i for i, m in enumerate(self.modules)}
        entries: dict[str, bytes] = {}
        last, at_head = -1, True
        for raw in txs:
            if not is_injected_entry(raw):
                at_head = False
                continue
            try:
                name, payload = decode_injected_entry(raw)
            except ValueError:
                name, payload = "", b""
            if not at_head or order.get(name, -1) <= last:
                return None
            entries[name], last = payload, order[name]
        return entries

    def extend_vote(self, req: abci.RequestExtendVote) -> abci.ResponseExtendVote:
        """Every module's part, combined into one extension (``sdk/abci/blocks.py``)."""
        block = block_info(req, self.header_app_hash())
        parts: dict[str, bytes] = {}
        for module in self.modules:
            try:
                parts[module.name] = module.extend_vote(self.proposal_context(block), block)
            except Exception:  # noqa: BLE001 - a module's bug costs its part, not the vote
                log.exception("extend_vote of module %s failed at height %d", module.name, block.height)
        return abci.ResponseExtendVote(vote_extension=encode_vote_extension(parts))

    def verify_vote_extension(self, req: abci.RequestVerifyVoteExtension) -> abci.ResponseVerifyVoteExtension:
        """Well-formed, and every module accepts its part (b"" where the validator sent none)."""
        reject = abci.ResponseVerifyVoteExtension(status=abci.ResponseVerifyVoteExtension.REJECT)
        try:
            parts = decode_vote_extension(req.vote_extension, [m.name for m in self.modules])
        except ValueError as exc:
            log.info(
                "rejecting the vote extension of %s at height %d: %s", req.validator_address.hex(), req.height, exc
            )
            return reject
        block = BlockInfo(height=req.height, time_ns=0, hash=req.hash, app_hash=self.header_app_hash())
        for module in self.modules:
            try:
                accepted = module.verify_vote_extension(
                    self.proposal_context(block), block, req.validator_address, parts.get(module.name, b"")
                )
            except Exception:  # noqa: BLE001 - deterministic: a raising verifier rejects everywhere
                log.exception("verify_vote_extension of module %s failed at height %d", module.name, req.height)
                accepted = False
            if not accepted:
                log.info(
                    "module %s rejects the vote extension of %s at height %d",
                    module.name,
                    req.validator_address.hex(),
                    req.height,
                )
                return reject
        return abci.ResponseVerifyVoteExtension(status=abci.ResponseVerifyVoteExtension.ACCEPT)
