"""The inference network's state under ``inference/`` (the layout is in keys.py): params, models (governance),
hosts' ML nodes, inference records with their indexes and queues, and the work commitments' leaves and roots.

Only state access lives here, the x/epochs hook that closes each host's epoch root (work.py builds on
this keeper, so the keeper does not call into it), and ``invalidate``, x/poc's call for an answer that lost its
dispute. What an inference goes through (start, finish, expiry,
pruning, the escrow) is lifecycle.py; how finished inferences become leaves and block roots is work.py;
message checks and handlers are msg_server.py. Nothing here reads the wall clock or iterates anything but
the store, in key order.
"""

from __future__ import annotations

from protogen.gonka.inference.v1 import inference_pb2
from sdk.address import module_address
from sdk.coins import Coins
from sdk.context import Context, PrefixStore
from sdk.crypto import bech32, merkle
from sdk.params import GOV_AUTHORITY
from sdk.store import PRESENT
from x.inference import keys, types
from x.inference.expected_keepers import (
    AccountKeeper,
    BankKeeper,
    EpochsKeeper,
    FinishHooks,
    LearningKeeper,
    RewardsKeeper,
    StakeKeeper,
    VestingKeeper,
)
from x.inference.params import default_params

Inference = inference_pb2.Inference
STARTED, FINISHED, EXPIRED = (inference_pb2.STATUS_STARTED, inference_pb2.STATUS_FINISHED, inference_pb2.STATUS_EXPIRED)
INVALIDATED = inference_pb2.STATUS_INVALIDATED


class InferenceKeeper:
    """Owns the ``inference/`` prefix and the module account ``inference`` (the escrow)."""

    def __init__(
        self,
        accounts: AccountKeeper,
        bank: BankKeeper,
        vesting: VestingKeeper,
        stake: StakeKeeper,
        rewards: RewardsKeeper,
        epochs: EpochsKeeper,
        authority: bytes = GOV_AUTHORITY,
    ) -> None:
        self.accounts = accounts
        self.bank = bank
        self.vesting = vesting
        self.stake = stake
        self.rewards = rewards
        self.epochs = epochs
        self.authority = authority
        self.finish_hooks: list[FinishHooks] = []
        self.learning: LearningKeeper | None = None

    def set_finish_hooks(self, hooks: list[FinishHooks]) -> None:
        """The modules told of each finished inference, in order (app.py: x/poc, which samples them)."""
        self.finish_hooks = list(hooks)

    def set_learning(self, learning: LearningKeeper) -> None:
        """x/learning, which vouches for a model trained on the network (app.py wires it after x/poc)."""
        self.learning = learning

    @staticmethod
    def _store(ctx: Context) -> PrefixStore:
        return ctx.kv(keys.STORE_PREFIX)

    # --- params -------------------------------------------------------------------------------------

    def get_params(self, ctx: Context) -> inference_pb2.Params:
        raw = self._store(ctx).get(keys.PARAMS_KEY)
        return inference_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: inference_pb2.Params) -> None:
        self._store(ctx).set(keys.PARAMS_KEY, params.SerializeToString())

    @property
    def address(self) -> bytes:
        return module_address(keys.INFERENCE_ACCOUNT)

    # --- models -------------------------------------------------------------------------------------

    def get_model(self, ctx: Context, model: str) -> inference_pb2.Model | None:
        raw = self._store(ctx).get(keys.model_key(model))
        return inference_pb2.Model.FromString(raw) if raw else None

    def set_model(self, ctx: Context, model: inference_pb2.Model) -> None:
        """Store ``model`` (its fields checked by the caller: msg_server.validate_model)."""
        self._store(ctx).set(keys.model_key(model.id), model.SerializeToString())

    def verify_threshold(self, ctx: Context, model: str) -> int:
        """The score in parts per million a MATCH of ``model``'s answers must reach (types.verify_threshold: the
        default for a model that sets none or is not registered); x/poc's check of a verdict."""
        return types.verify_threshold(self.get_model(ctx, model))

    def models(self, ctx: Context) -> list[inference_pb2.Model]:
        """Every model in id order."""
        return [inference_pb2.Model.FromString(v) for _, v in self._store(ctx).iterate(keys.MODEL_PREFIX)]

    # --- ML nodes -----------------------------------------------------------------------------------

    def get_node(self, ctx: Context, operator: bytes, node_id: str) -> inference_pb2.MlNode | None:
        raw = self._store(ctx).get(keys.node_key(operator, node_id))
        return inference_pb2.MlNode.FromString(raw) if raw else None

    def set_node(self, ctx: Context, node: inference_pb2.MlNode) -> None:
        """Store ``node`` (replacing the operator's node of that id) and index it by each model it serves."""
        operator = bech32.decode(node.operator)
        store = self._store(ctx)
        self.delete_node(ctx, operator, node.node_id)
        store.set(keys.node_key(operator, node.node_id), node.SerializeToString())
        for model in node.models:
            store.set(keys.node_by_model_key(model, operator, node.node_id), PRESENT)

    def delete_node(self, ctx: Context, operator: bytes, node_id: str) -> bool:
        """Delete the node with its model index; whether there was one."""
        old = self.get_node(ctx, operator, node_id)
        if old is None:
            return False
        store = self._store(ctx)
        for model in old.models:
            store.delete(keys.node_by_model_key(model, operator, node_id))
        store.delete(keys.node_key(operator, node_id))
        return True

    def nodes(self, ctx: Context) -> list[inference_pb2.MlNode]:
        """Every node in (operator, node_id) order."""
        return [inference_pb2.MlNode.FromString(v) for _, v in self._store(ctx).iterate(keys.NODE_PREFIX)]

    def serves(self, ctx: Context, operator: bytes, model: str) -> bool:
        """Whether one of ``operator``'s nodes serves ``model``."""
        for _ in self._store(ctx).iterate(keys.nodes_by_model_prefix(model) + operator):
            return True
        return False

    def invalidate(
        self, ctx: Context, inference_id: bytes, executor: bytes, requester: bytes, denom: str, payment: int
    ) -> int:
        """An answer found wrong by its dispute (x/poc): its payment taken back from the executor, first what its
        vesting schedule still locks (latest parts first), then from what it may spend, and refunded to the
        requester; the record, if still kept, INVALIDATED. Returns the refund (less than the payment only when
        the executor no longer holds it)."""
        clawed = self.vesting.clawback(ctx, executor, keys.INFERENCE_ACCOUNT, denom, payment)
        spendable = dict(self.bank.spendable_coins(ctx, executor)).get(denom, 0)
        spent = min(payment - clawed, spendable)
        if spent:
            self.bank.send_coins(ctx, executor, self.address, Coins(((denom, spent),)))
        refund = clawed + spent
        if refund:
            self.bank.send_coins(ctx, self.address, requester, Coins(((denom, refund),)))
        inference = self.get_inference(ctx, inference_id)
        if inference is not None and inference.status == FINISHED:
            inference.status = INVALIDATED
            self._put(ctx, inference)
        ctx.emit(
            "invalidate_inference",
            id=inference_id.hex(),
            executor=bech32.encode(executor),
            requester=bech32.encode(requester),
            refund=f"{refund}{denom}",
            clawed_back=f"{clawed}{denom}",
            shortfall=f"{payment - refund}{denom}",
        )
        return refund

    # --- inferences ---------------------------------------------------------------------------------

    def get_inference(self, ctx: Context, inference: bytes) -> Inference | None:
        raw = self._store(ctx).get(keys.inference_key(inference))
        return Inference.FromString(raw) if raw else None

    def _put(self, ctx: Context, inference: Inference) -> None:
        self._store(ctx).set(keys.inference_key(inference.id), inference.SerializeToString())

    def set_inference(self, ctx: Context, inference: Inference) -> None:
        """Store a record with its indexes (start, and genesis import): by requester and executor; the
        expiry index while STARTED, the prune queue once ended."""
        store = self._store(ctx)
        self._put(ctx, inference)
        store.set(
            keys.by_requester_key(bech32.decode(inference.requester), inference.start_height, inference.id), PRESENT
        )
        store.set(
            keys.by_executor_key(bech32.decode(inference.executor), inference.start_height, inference.id), PRESENT
        )
        if inference.status == STARTED:
            store.set(keys.expiry_key(inference.expiry_height, inference.id), PRESENT)
        else:
            store.set(keys.prune_key(inference.prune_height, inference.id), PRESENT)

    def set_executor(self, ctx: Context, inference: Inference, executor: str) -> None:
        """A STARTED inference given to another executor (a reassignment): the record and its executor index."""
        store = self._store(ctx)
        store.delete(keys.by_executor_key(bech32.decode(inference.executor), inference.start_height, inference.id))
        inference.executor = executor
        self._put(ctx, inference)
        store.set(keys.by_executor_key(bech32.decode(executor), inference.start_height, inference.id), PRESENT)

    def put_ended(self, ctx: Context, inference: Inference) -> None:
        """Store a record that has just ended (finished or expired) and queue it at its ``prune_height``."""
        self._put(ctx, inference)
        self._store(ctx).set(keys.prune_key(inference.prune_height, inference.id), PRESENT)

    def delete_inference(self, ctx: Context, inference: Inference) -> None:
        store = self._store(ctx)
        store.delete(keys.inference_key(inference.id))
        store.delete(keys.by_requester_key(bech32.decode(inference.requester), inference.start_height, inference.id))
        store.delete(keys.by_executor_key(bech32.decode(inference.executor), inference.start_height, inference.id))
        store.delete(keys.expiry_key(inference.expiry_height, inference.id))
        store.delete(keys.prune_key(inference.prune_height, inference.id))

    def inferences(self, ctx: Context) -> list[Inference]:
        """Every record kept, in id order."""
        return [Inference.FromString(v) for _, v in self._store(ctx).iterate(keys.INFERENCE_PREFIX)]

    # --- height-ordered queues (expiry, prune, leaf pruning) ----------------------------------------

    def queued(self, ctx: Context, queue: bytes, through: int | None = None) -> list[bytes]:
        """The keys under ``queue`` in key order; with ``through``, only those at that height or below."""
        end = None if through is None else queue + keys.u64(through + 1)
        return [key for key, _ in self._store(ctx).iterate(queue, end=end)]

    def dequeue(self, ctx: Context, key: bytes) -> None:
        self._store(ctx).delete(key)

    # --- work: leaves -------------------------------------------------------------------------------

    def set_leaf(self, ctx: Context, epoch: int, host: bytes, index: int, leaf: bytes) -> None:
        self._store(ctx).set(keys.leaf_key(epoch, host, index), leaf)

    def set_leaves(self, ctx: Context, epoch: int, host: bytes, leaves: list[bytes]) -> None:
        for index, leaf in enumerate(leaves):
            self.set_leaf(ctx, epoch, host, index, leaf)

    def leaves(self, ctx: Context, epoch: int, host: bytes) -> list[bytes]:
        """The host's leaves of the epoch kept, in finish order."""
        return [v for _, v in self._store(ctx).iterate(keys.leaves_prefix(epoch, host))]

    def all_leaves(self, ctx: Context) -> list[inference_pb2.WorkLeaves]:
        found: list[inference_pb2.WorkLeaves] = []
        for key, leaf in self._store(ctx).iterate(keys.LEAF_PREFIX):
            epoch, host = int.from_bytes(key[1:9], "big"), bech32.encode(key[9:29])
            if not found or (found[-1].epoch, found[-1].host) != (epoch, host):
                found.append(inference_pb2.WorkLeaves(epoch=epoch, host=host))
            found[-1].leaves.append(leaf)
        return found

    def delete_leaves(self, ctx: Context, epoch: int, host: bytes) -> None:
        store = self._store(ctx)
        for leaf_key, _ in list(store.iterate(keys.leaves_prefix(epoch, host))):
            store.delete(leaf_key)

    def schedule_leaf_pruning(self, ctx: Context, work: inference_pb2.EpochWork) -> None:
        self._store(ctx).set(keys.leaf_prune_key(work.leaves_until, work.epoch, bech32.decode(work.host)), PRESENT)

    def append_block_leaf(self, ctx: Context, height: int, leaf: bytes) -> None:
        """Add ``leaf`` after the leaves of block ``height`` so far."""
        self._store(ctx).set(keys.block_leaf_key(height, self._block_leaf_count(ctx, height)), leaf)

    def _block_leaf_count(self, ctx: Context, height: int) -> int:
        prefix = keys.BLOCK_LEAF_PREFIX + keys.u64(height)
        for key, _ in self._store(ctx).iterate(prefix, reverse=True):
            return int.from_bytes(key[len(prefix) :], "big") + 1
        return 0

    def pop_block_leaves(self, ctx: Context) -> dict[int, list[bytes]]:
        """Every block leaf kept, by height in finish order, deleted from the store."""
        store = self._store(ctx)
        by_height: dict[int, list[bytes]] = {}
        for key, leaf in list(store.iterate(keys.BLOCK_LEAF_PREFIX)):
            by_height.setdefault(int.from_bytes(key[1:9], "big"), []).append(leaf)
            store.delete(key)
        return by_height

    # --- work: block and epoch records --------------------------------------------------------------

    def get_block_work(self, ctx: Context, height: int) -> inference_pb2.BlockWork | None:
        raw = self._store(ctx).get(keys.block_work_key(height))
        return inference_pb2.BlockWork.FromString(raw) if raw else None

    def set_block_work(self, ctx: Context, work: inference_pb2.BlockWork) -> None:
        self._store(ctx).set(keys.block_work_key(work.height), work.SerializeToString())

    def block_works(self, ctx: Context) -> list[inference_pb2.BlockWork]:
        return [inference_pb2.BlockWork.FromString(v) for _, v in self._store(ctx).iterate(keys.BLOCK_WORK_PREFIX)]

    def delete_block_works_below(self, ctx: Context, height: int) -> None:
        store = self._store(ctx)
        for key, _ in list(store.iterate(keys.BLOCK_WORK_PREFIX, end=keys.block_work_key(height))):
            store.delete(key)

    def get_epoch_work(self, ctx: Context, epoch: int, host: bytes) -> inference_pb2.EpochWork | None:
        raw = self._store(ctx).get(keys.epoch_work_key(epoch, host))
        return inference_pb2.EpochWork.FromString(raw) if raw else None

    def set_epoch_work(self, ctx: Context, work: inference_pb2.EpochWork) -> None:
        self._store(ctx).set(keys.epoch_work_key(work.epoch, bech32.decode(work.host)), work.SerializeToString())

    def epoch_works(self, ctx: Context, through: int | None = None) -> list[inference_pb2.EpochWork]:
        """Every record in (epoch, host) order; with ``through``, only those of that epoch or before."""
        end = None if through is None else keys.epoch_work_prefix(through + 1)
        return [
            inference_pb2.EpochWork.FromString(v)
            for _, v in list(self._store(ctx).iterate(keys.EPOCH_WORK_PREFIX, end=end))
        ]

    def epoch_works_of(self, ctx: Context, epoch: int) -> list[inference_pb2.EpochWork]:
        """One epoch's records, in host order (final once the epoch has ended)."""
        return [
            inference_pb2.EpochWork.FromString(v) for _, v in self._store(ctx).iterate(keys.epoch_work_prefix(epoch))
        ]

    # --- epoch hooks --------------------------------------------------------------------------------

    def on_epoch_end(self, ctx: Context, epoch: int) -> None:
        """Each host's epoch root over its leaves, stored final; the leaves are kept ``retention_blocks``
        more (for proofs of the inferences still kept). Earlier epochs left open (a failed hook) too."""
        height = ctx.header.height
        retention = self.get_params(ctx).retention_blocks
        for work in self.epoch_works(ctx, through=epoch):
            if work.final:
                continue
            work.root = merkle.root(self.leaves(ctx, work.epoch, bech32.decode(work.host)))
            work.final = True
            work.leaves_until = height + retention
            self.set_epoch_work(ctx, work)
            self.schedule_leaf_pruning(ctx, work)
            ctx.emit(
                "epoch_work",
                epoch=str(work.epoch),
                host=work.host,
                units=str(work.units),
                count=str(work.count),
                root=work.root.hex(),
            )

    def on_epoch_start(self, ctx: Context, epoch: int) -> None:
        return None

    def on_stage(self, ctx: Context, epoch: int, stage: int) -> None:
        return None
