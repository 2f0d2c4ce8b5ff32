"""x/inference wired as a module: its messages (params, models, ML nodes, start, reassign and finish: msg_server.py),
end block (timeouts and pruning: lifecycle.py; block roots: work.py), genesis, queries (query_server.py) and
the invariants ``inference/escrow-held`` and ``inference/index-consistent`` (invariants.py). The epoch hook
(epoch roots) is the keeper, registered in app.py."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.inference.v1 import genesis_pb2, tx_pb2
from sdk.address import parse_address
from sdk.cli.flags import message_dict
from sdk.abci.blocks import BlockInfo
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from x.inference import invariants, keys, lifecycle, msg_server, work
from x.inference.keeper import InferenceKeeper
from x.inference.params import default_params, validate_params
from x.inference.query_server import InferenceQueries


def _genesis(call: Any, what: str) -> Any:
    """Run a check or parse for genesis import; its ABCI error becomes a ValueError naming ``what``."""
    try:
        return call()
    except ABCIError as err:
        raise ValueError(f"inference genesis: {what}: {err.log}") from None
    except ValueError as err:
        raise ValueError(f"inference genesis: {what}: {err}") from None


class InferenceModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: InferenceKeeper) -> None:
        self.keeper = keeper

    # --- genesis ------------------------------------------------------------------------------------

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.inference.v1.GenesisState``: params (default if left out), models, nodes (their models
        registered) and, for an exported chain, the inferences kept, block and epoch work and the leaves; the
        ``inference`` account's balance (bank's genesis, imported first) must equal the STARTED escrows."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        k = self.keeper
        k.set_params(ctx, params)
        for model in genesis.models:
            _genesis(lambda m=model: msg_server.validate_model(m), f"model {model.id!r}")
            k.set_model(ctx, model)
        for node in genesis.nodes:
            _genesis(lambda n=node: (bech32.decode(n.operator), msg_server.validate_node(n)), f"node {node.node_id!r}")
            for model in node.models:
                if k.get_model(ctx, model) is None:
                    raise ValueError(f"inference genesis: node {node.node_id!r} serves unregistered model {model!r}")
            k.set_node(ctx, node)
        for inference in genesis.inferences:
            what = f"inference {inference.id.hex()}"
            if len(inference.id) != 32 or inference.status not in (1, 2, 3):
                raise ValueError(f"inference genesis: {what}: malformed id or status")
            _genesis(lambda i=inference: (bech32.decode(i.requester), bech32.decode(i.executor)), what)
            k.set_inference(ctx, inference)
        for block_work in genesis.block_work:
            k.set_block_work(ctx, block_work)
        for epoch_work in genesis.epoch_work:
            _genesis(lambda w=epoch_work: bech32.decode(w.host), f"epoch work {epoch_work.epoch}")
            k.set_epoch_work(ctx, epoch_work)
            if epoch_work.final:
                k.schedule_leaf_pruning(ctx, epoch_work)
        for group in genesis.leaves:
            host = _genesis(lambda g=group: bech32.decode(g.host), f"leaves of epoch {group.epoch}")
            k.set_leaves(ctx, group.epoch, host, list(group.leaves))
        error = invariants.escrow_held(k, ctx)
        if error:
            raise ValueError(f"inference genesis: {error}")

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        k = self.keeper
        return message_dict(genesis_pb2.GenesisState(
            params=k.get_params(ctx), models=k.models(ctx), nodes=k.nodes(ctx), inferences=k.inferences(ctx),
            block_work=k.block_works(ctx), epoch_work=k.epoch_works(ctx), leaves=k.all_leaves(ctx),
        ))

    # --- end block: timeouts, block roots, pruning --------------------------------------------------

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        k = self.keeper
        height = ctx.header.height
        params = k.get_params(ctx)
        lifecycle.expire_due(k, ctx, height, params)
        work.commit_block_roots(k, ctx)
        lifecycle.prune_ended(k, ctx, height)
        work.prune_leaves(k, ctx, height)
        work.prune_block_work(k, ctx, height, params)

    # --- routes and invariants ----------------------------------------------------------------------

    def invariants(self) -> dict[str, Invariant]:
        k = self.keeper
        return {
            "escrow-held": lambda ctx: invariants.escrow_held(k, ctx),
            "index-consistent": lambda ctx: invariants.index_consistent(k, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, k.authority, validate_params, k.set_params),
            type_url(tx_pb2.MsgRegisterModel): MsgRoute(
                tx_pb2.MsgRegisterModel, lambda msg: [parse_address(msg.authority, "authority")],
                msg_server.validate_register_model, lambda ctx, msg: msg_server.handle_register_model(ctx, k, msg)),
            type_url(tx_pb2.MsgRegisterNode): MsgRoute(
                tx_pb2.MsgRegisterNode, lambda msg: [parse_address(msg.operator, "operator")],
                msg_server.validate_register_node, lambda ctx, msg: msg_server.handle_register_node(ctx, k, msg)),
            type_url(tx_pb2.MsgRemoveNode): MsgRoute(
                tx_pb2.MsgRemoveNode, lambda msg: [parse_address(msg.operator, "operator")],
                msg_server.validate_remove_node, lambda ctx, msg: msg_server.handle_remove_node(ctx, k, msg)),
            type_url(tx_pb2.MsgStartInference): MsgRoute(
                tx_pb2.MsgStartInference, lambda msg: [parse_address(msg.ta, "ta")],
                msg_server.validate_start, lambda ctx, msg: msg_server.handle_start(ctx, k, msg)),
            type_url(tx_pb2.MsgStartInferences): MsgRoute(
                tx_pb2.MsgStartInferences, lambda msg: [parse_address(msg.ta, "ta")],
                msg_server.validate_starts, lambda ctx, msg: msg_server.handle_starts(ctx, k, msg)),
            type_url(tx_pb2.MsgFinishInference): MsgRoute(
                tx_pb2.MsgFinishInference, lambda msg: [parse_address(msg.executor, "executor")],
                msg_server.validate_finish, lambda ctx, msg: msg_server.handle_finish(ctx, k, msg)),
            type_url(tx_pb2.MsgReassignInference): MsgRoute(
                tx_pb2.MsgReassignInference, lambda msg: [parse_address(msg.ta, "ta")],
                msg_server.validate_reassign, lambda ctx, msg: msg_server.handle_reassign(ctx, k, msg)),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return InferenceQueries(self.keeper).routes()
