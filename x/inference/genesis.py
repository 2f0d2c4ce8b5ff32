"""x/inference genesis: params, models, nodes and, for an exported chain, the inferences kept, block and epoch
work and the leaves; the ``inference`` account must hold exactly the STARTED escrows."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.inference.v1 import genesis_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ABCIError
from x.inference import invariants, msg_server
from x.inference.keeper import InferenceKeeper
from x.inference.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: InferenceKeeper, state: dict[str, Any]) -> None:
    """``gonka.inference.v1.GenesisState``: params (default if left out), models, nodes (their models
    registered) and, for an exported chain, the inferences kept, block and epoch work and the leaves; the
    ``inference`` account's balance (bank's genesis, imported first) must equal the STARTED escrows."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    for model in genesis.models:
        _genesis(lambda m=model: msg_server.validate_model(m), f"model {model.id!r}")
        keeper.set_model(ctx, model)
    for node in genesis.nodes:
        _genesis(lambda n=node: (bech32.decode(n.operator), msg_server.validate_node(n)), f"node {node.node_id!r}")
        for model in node.models:
            if keeper.get_model(ctx, model) is None:
                raise ValueError(f"inference genesis: node {node.node_id!r} serves unregistered model {model!r}")
        keeper.set_node(ctx, node)
    for inference in genesis.inferences:
        what = f"inference {inference.id.hex()}"
        if len(inference.id) != 32 or inference.status not in (1, 2, 3):
            raise ValueError(f"inference genesis: {what}: malformed id or status")
        _genesis(lambda i=inference: (bech32.decode(i.requester), bech32.decode(i.executor)), what)
        keeper.set_inference(ctx, inference)
    for block_work in genesis.block_work:
        keeper.set_block_work(ctx, block_work)
    for epoch_work in genesis.epoch_work:
        _genesis(lambda w=epoch_work: bech32.decode(w.host), f"epoch work {epoch_work.epoch}")
        keeper.set_epoch_work(ctx, epoch_work)
        if epoch_work.final:
            keeper.schedule_leaf_pruning(ctx, epoch_work)
    for group in genesis.leaves:
        host = _genesis(lambda g=group: bech32.decode(g.host), f"leaves of epoch {group.epoch}")
        keeper.set_leaves(ctx, group.epoch, host, list(group.leaves))
    error = invariants.escrow_held(keeper, ctx)
    if error:
        raise ValueError(f"inference genesis: {error}")


def export_genesis(ctx: Context, keeper: InferenceKeeper) -> dict[str, Any]:
    return message_dict(
        genesis_pb2.GenesisState(
            params=keeper.get_params(ctx),
            models=keeper.models(ctx),
            nodes=keeper.nodes(ctx),
            inferences=keeper.inferences(ctx),
            block_work=keeper.block_works(ctx),
            epoch_work=keeper.epoch_works(ctx),
            leaves=keeper.all_leaves(ctx),
        )
    )


def _genesis(call: Any, what: str) -> Any:
    """Run a check or parse for genesis import; its ABCI error becomes a ValueError naming ``what``."""
    try:
        return call()
    except ABCIError as err:
        raise ValueError(f"inference genesis: {what}: {err.log}") from None
    except ValueError as err:
        raise ValueError(f"inference genesis: {what}: {err}") from None
