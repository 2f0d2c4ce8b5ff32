"""x/gov genesis: params, the next proposal id and an exported chain's proposals, deposits and votes."""

from __future__ import annotations

from typing import Any

from cosmpy.protos.cosmos.gov.v1 import genesis_pb2
from google.protobuf import json_format

from sdk.cli.flags import message_dict
from sdk.context import Context
from sdk.crypto import bech32
from x.gov import keys
from x.gov.keeper import ACTIVE, FAILED, VOTING_PERIOD, GovKeeper
from x.gov.params import default_params, validate_params


def default_genesis() -> dict[str, Any]:
    return message_dict(genesis_pb2.GenesisState(starting_proposal_id=1, params=default_params()))


def init_genesis(ctx: Context, keeper: GovKeeper, state: dict[str, Any]) -> None:
    """``cosmos.gov.v1.GenesisState``: params (default if left out), the next proposal id and, for an
    exported chain, its proposals, deposits and votes; the deposits account (bank's genesis) must hold at
    least the deposits recorded (``deposits_held``)."""
    genesis = json_format.ParseDict(state, genesis_pb2.GenesisState(), ignore_unknown_fields=False)
    params = genesis.params if genesis.HasField("params") else default_params()
    validate_params(params)
    keeper.set_params(ctx, params)
    next_id = genesis.starting_proposal_id or 1
    store = ctx.kv(keys.STORE_PREFIX)
    for proposal in genesis.proposals:
        if not 0 < proposal.id < next_id or keeper.get_proposal(ctx, proposal.id) is not None:
            raise ValueError(
                f"gov genesis: proposal id {proposal.id} repeated or not below starting_proposal_id {next_id}"
            )
        keeper.set_proposal(ctx, proposal)
        keeper.queue(ctx, proposal)
    for deposit in genesis.deposits:
        proposal = keeper.get_proposal(ctx, deposit.proposal_id)
        if proposal is None or proposal.status not in (*ACTIVE, FAILED):
            raise ValueError(
                f"gov genesis: deposit for proposal {deposit.proposal_id}, neither an active one "
                "nor a failed one whose deposits are unsettled"
            )
        store.set(keys.deposit_key(deposit.proposal_id, bech32.decode(deposit.depositor)), deposit.SerializeToString())
    for vote in genesis.votes:
        proposal = keeper.get_proposal(ctx, vote.proposal_id)
        if proposal is None or proposal.status != VOTING_PERIOD:
            raise ValueError(f"gov genesis: vote on proposal {vote.proposal_id}, not one in its voting period")
        store.set(keys.vote_key(vote.proposal_id, bech32.decode(vote.voter)), vote.SerializeToString())
    keeper.set_next_proposal_id(ctx, next_id)
    error = keeper.deposits_held(ctx)
    if error:
        raise ValueError(f"gov genesis: {error}")


def export_genesis(ctx: Context, keeper: GovKeeper) -> dict[str, Any]:
    return message_dict(
        genesis_pb2.GenesisState(
            starting_proposal_id=keeper.next_proposal_id(ctx),
            params=keeper.get_params(ctx),
            proposals=keeper.proposals(ctx),
            deposits=keeper.deposits(ctx),
            votes=keeper.votes(ctx),
        )
    )
