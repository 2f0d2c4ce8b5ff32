"""x/sprint genesis: the params and, for an exported chain, the races, commitments, validations and results
it kept, imported as they are (their rules held when the chain accepted them)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from protogen.gonka.sprint.v1 import genesis_pb2
from sdk.cli.flags import message_dict
from sdk.context import Context
from x.sprint.invariants import validations_committed
from x.sprint.keeper import SprintKeeper
from x.sprint.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(params=default_params()))


def init_genesis(ctx: Context, keeper: SprintKeeper, state: dict[str, Any]) -> None:
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    for race in genesis.races:
        keeper.set_race(ctx, race)
    for commitment in genesis.commitments:
        keeper.set_commitment(ctx, commitment)
    for validation in genesis.validations:
        keeper.set_validation(ctx, validation)
    for result in genesis.results:
        keeper.set_result(ctx, result)
    if genesis.results:
        keeper.set_last_decided(ctx, max(r.epoch for r in genesis.results))
    for summary in genesis.summaries:
        keeper.set_summary(ctx, summary)
    error = validations_committed(keeper, ctx)
    if error:
        raise ValueError(f"sprint genesis: {error}")


def export_genesis(ctx: Context, keeper: SprintKeeper) -> dict[str, Any]:
    return message_dict(
        genesis_pb2.GenesisState(
            params=keeper.get_params(ctx),
            races=keeper.races(ctx),
            commitments=keeper.commitments(ctx),
            validations=keeper.validations(ctx),
            results=keeper.results(ctx),
            summaries=keeper.summaries(ctx),
        )
    )
