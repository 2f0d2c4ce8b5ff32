"""A decided block: FinalizeBlock runs the modules' pre_block hooks (unguarded: one that raises halts the node
with nothing of the block committed), then their begin_block hooks, the block's injected entries and
transactions in order, then the end_block hooks, and stages the result; Commit persists it.

Block state lives in a branch of the committed store; only ``Commit`` persists it, in one atomic batch.
A block hook that raises loses its own writes and the block goes on (``run_hook``, sdk/module.py).
"""

from __future__ import annotations

from collections.abc import Callable

from cosmpy.protos.tendermint.abci import types_pb2 as abci

from sdk.abci.blocks import BlockInfo, block_info, decode_injected_entry, is_injected_entry
from sdk.baseapp.core import log
from sdk.baseapp.state import changed_consensus_params, stored_chain_id, stored_consensus_params
from sdk.baseapp.transactions import INTERNAL_ERROR, Transactions, result_of
from sdk.context import BlockHeader, Context
from sdk.errors import ABCIError, ErrInvalidRequest
from sdk.invariants import InvariantBroken, broken_invariants
from sdk.module import run_hook
from sdk.store.cachekv import CacheKV


class Blocks(Transactions):
    """FinalizeBlock and Commit."""

    def finalize_block(self, req: abci.RequestFinalizeBlock) -> abci.ResponseFinalizeBlock:
        block = block_info(req, self.header_app_hash())
        state = self.pending_genesis or CacheKV(self.store)
        self.pending_genesis = None
        header = BlockHeader(stored_chain_id(state), req.height, block.time_ns, req.proposer_address)
        ctx = Context(state, header, index_events=self.index_events)
        consensus_params_before = stored_consensus_params(state)
        for module in self.modules:  # the SDK's PreBlocker: x/upgrade halts or migrates here, before all else
            module.pre_block(ctx, block)
        for module in self.modules:
            self.run_in_branch(ctx, module.name, "begin_block", with_block(module.begin_block, block))
        results = [
            self.deliver_entry(ctx, block, raw) if is_injected_entry(raw) else self.run_tx_safely(ctx, raw)
            for raw in req.txs
        ]
        for module in self.modules:
            self.run_in_branch(ctx, module.name, "end_block", with_block(module.end_block, block))
        if self.check_invariants:
            self.assert_invariants(Context(state, header))
        app_hash = self.store.apply(state.changes())
        return abci.ResponseFinalizeBlock(
            events=ctx.events,
            tx_results=results,
            app_hash=app_hash,
            validator_updates=ctx.validator_updates,
            consensus_param_updates=changed_consensus_params(consensus_params_before, stored_consensus_params(state)),
        )

    def run_in_branch(self, ctx: Context, module: str, hook: str, call: Callable[[Context], None]) -> Exception | None:
        """A module's block hook, run by ``run_hook`` (sdk/module.py): only a hook that returns keeps its
        writes, so a bug in one module's hook never stops the chain."""
        return run_hook(ctx, f"{hook} of module {module}", call)

    def deliver_entry(self, ctx: Context, block: BlockInfo, raw: bytes) -> abci.ExecTxResult:
        """An injected proposal entry in FinalizeBlock, handed to its module's ``deliver_entry`` (never
        decoded as a tx); its result takes the entry's place in ``tx_results``."""
        try:
            name, payload = decode_injected_entry(raw)
            module = self.module_named(name)
        except ValueError as exc:
            return result_of(ErrInvalidRequest.wrap(f"injected entry: {exc}"), 0, 0)
        failure = self.run_in_branch(ctx, name, "deliver_entry", lambda c: module.deliver_entry(c, block, payload))
        if isinstance(failure, ABCIError):
            return result_of(failure, 0, 0)
        if failure is not None:
            return abci.ExecTxResult(
                code=INTERNAL_ERROR,
                codespace="sdk",
                log=f"injected entry of module {name} failed: {type(failure).__name__}",
            )
        return abci.ExecTxResult(code=0)

    def assert_invariants(self, ctx: Context) -> None:
        """Raise InvariantBroken, naming each broken invariant, if the state breaks any."""
        broken = broken_invariants(ctx, self.invariants)
        if broken:
            log.critical("halting: %s", "; ".join(broken))
            raise InvariantBroken(ctx.header.height, broken)

    def commit(self, req: abci.RequestCommit) -> abci.ResponseCommit:
        self.store.commit()
        self.check_state = CacheKV(self.store)
        return abci.ResponseCommit()


def with_block(hook: Callable[[Context, BlockInfo], None], block: BlockInfo) -> Callable[[Context], None]:
    """A block hook with its block bound, as ``run_in_branch`` calls it."""
    return lambda ctx: hook(ctx, block)
