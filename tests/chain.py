"""One in-process chain for tests: a GonkaApp on a fresh CommitStore, a funded genesis, blocks on demand.

Tests that need consensus without CometBFT drive the ABCI methods themselves; this is the one place that
knows how (genesis JSON, InitChain, FinalizeBlock then Commit at each height, reads of committed state), so
a test says only what it sets up and what it checks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypedDict, TypeVar, Unpack

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.types import params_pb2
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from app import GonkaApp
from gonkad import genesis
from sdk.context import BlockHeader, Context
from sdk.crypto import bech32
from sdk.snapshots.manager import SnapshotManager
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore

DENOM = "ngonka"
Reply = TypeVar("Reply", bound=Message)


class AppOptions(TypedDict, total=False):
    """GonkaApp's keyword arguments (what a node reads from app.toml), passed through as given."""

    min_gas_prices: str
    index_events: frozenset[str]
    simulation_gas_limit: int
    check_invariants: bool
    authority: bytes
    """Who may send MsgUpdateParams: a test key's address stands in for governance."""
    module_config: Mapping[str, Mapping[str, Any]]
    """Node-local module settings (app.toml's ``[modules.*]``), e.g. x/bls's ``key_file``."""
    snapshots: SnapshotManager
    """Takes the chain's state-sync snapshots after commits (app.toml's ``[state_sync]``)."""
    test_upgrade: str
    """TEST ONLY: the binary carries the software upgrade of this name (x/upgrade/rehearsal.py)."""


class BlockOptions(TypedDict, total=False):
    """What a test may set of a block besides its txs (``InProcessChain.finalize``)."""

    time_ns: int
    last_commit: abci.CommitInfo | None
    misbehavior: Sequence[abci.Misbehavior]
    during: Callable[[Context], None]


class InProcessChain:
    """A GonkaApp driven block by block as CometBFT drives it, with reads of the last committed state."""

    def __init__(
        self,
        path: Path,
        accounts: Mapping[str, Iterable[tuple[str, int]]],
        *,
        chain_id: str = "gonka-test",
        app_state: dict[str, Any] | None = None,
        first_block: bool = True,
        initial_height: int = 1,
        consensus_params: params_pb2.ConsensusParams | None = None,
        **options: Unpack[AppOptions],
    ) -> None:
        """A new chain in the store folder ``path``. ``accounts``: bech32 address -> coins funded at genesis,
        on top of ``app_state`` (default: the repository's default app state; given, e.g. with gentxs).
        ``first_block``: an empty block 1, which is what commits the genesis state; off for tests that put
        their own txs in block 1; ``initial_height``: the first block's height (an exported chain's next one);
        ``consensus_params``: genesis.json's, as CometBFT sends them in InitChain (default: none sent).
        InitChain's reply is kept in ``init_chain_response``."""
        self.path = path
        self.chain_id = chain_id
        self.initial_height = initial_height
        self.options: AppOptions = {"check_invariants": True, **options}  # every in-process block is checked
        self.app = GonkaApp(CommitStore(str(path)), **self.options)
        state = genesis.default_app_state() if app_state is None else app_state
        for address, coins in accounts.items():
            state = genesis.add_genesis_account(state, address, list(coins))
        request = abci.RequestInitChain(
            chain_id=chain_id, initial_height=initial_height, app_state_bytes=json.dumps(state).encode()
        )
        if consensus_params is not None:
            request.consensus_params.CopyFrom(consensus_params)
        try:
            self.init_chain_response = self.app.init_chain(request)
        except Exception:
            self.close()  # a refused genesis must not keep the store's folder locked
            raise
        if first_block:
            self.block()

    @property
    def height(self) -> int:
        """The last committed block."""
        return self.app.store.version

    def finalize(self, txs: Sequence[bytes] = (), **block: Unpack[BlockOptions]) -> abci.ResponseFinalizeBlock:
        """Execute the next block without committing it: until ``commit``, reads still see the previous one.
        ``time_ns``: the block time; ``last_commit``: ``decided_last_commit`` (who signed the last block);
        ``misbehavior``: evidence committed in this block; ``during``: a function run on the block's own
        context after every module's begin block and before its txs (what it writes is the block's; if it
        raises, its writes are discarded, the block is finalized without them and the exception is raised
        here, before any commit)."""
        height = self.height + 1 if self.height else self.initial_height
        time_ns = block.get("time_ns", 0)
        request = abci.RequestFinalizeBlock(
            height=height,
            txs=txs,
            misbehavior=block.get("misbehavior", ()),
            time=Timestamp(seconds=time_ns // 10**9, nanos=time_ns % 10**9),
        )
        if block.get("last_commit") is not None:
            request.decided_last_commit.CopyFrom(block["last_commit"])
        during = block.get("during")
        if during is None:
            return self.app.finalize_block(request)
        module = self.app.module_named("genutil")  # the last module: every other begin block has run
        original = module.begin_block
        failures: list[BaseException] = []

        def begin_block(ctx: Context, block: Any) -> None:
            original(ctx, block)
            try:
                during(ctx)
            except BaseException as exc:
                failures.append(exc)
                raise

        module.begin_block = begin_block  # type: ignore[method-assign]
        try:
            response = self.app.finalize_block(request)
        finally:
            del module.begin_block
        if failures:
            raise failures[0]
        return response

    def commit(self) -> None:
        self.app.commit(abci.RequestCommit())

    def block(self, txs: Sequence[bytes] = (), **block: Unpack[BlockOptions]) -> abci.ResponseFinalizeBlock:
        """The next block, finalized and committed (the keywords as ``finalize``'s)."""
        response = self.finalize(txs, **block)
        self.commit()
        return response

    def check(self, tx: bytes) -> abci.ResponseCheckTx:
        """CheckTx, as the mempool asks it."""
        return self.app.check_tx(abci.RequestCheckTx(tx=tx))

    def query(self, path: str, request: Message, response_type: type[Reply]) -> Reply:
        """An ABCI query by its gRPC method path, which must succeed."""
        reply = self.app.query(abci.RequestQuery(path=path, data=request.SerializeToString()))
        assert reply.code == 0, reply.log
        return response_type.FromString(reply.value)

    def context(self) -> Context:
        """A keeper context over a branch of the committed state: what a test reads goes through the keepers."""
        return Context(CacheKV(self.app.store), BlockHeader(self.chain_id, self.height, 0))

    def balance(self, address: str | bytes, denom: str = DENOM) -> int:
        return self.app.bank_keeper.get_balance(self.context(), _raw(address), denom)

    def supply(self, denom: str = DENOM) -> int:
        return self.app.bank_keeper.get_supply(self.context(), denom)

    def account(self, address: str | bytes) -> auth_pb2.BaseAccount | None:
        return self.app.account_keeper.get_account(self.context(), _raw(address))

    def sequence(self, address: str | bytes) -> int:
        """The sequence the account's next tx must be signed with."""
        account = self.account(address)
        if account is None:
            raise KeyError(f"no account {address!r}")
        return account.sequence

    def reopen(self) -> None:
        """Restart: the store closed and a new app built on the same folder, as a node restart does."""
        self.close()
        self.app = GonkaApp(CommitStore(str(self.path)), **self.options)

    def close(self) -> None:
        self.app.store.close()

    def __enter__(self) -> InProcessChain:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _raw(address: str | bytes) -> bytes:
    return bech32.decode(address) if isinstance(address, str) else address
