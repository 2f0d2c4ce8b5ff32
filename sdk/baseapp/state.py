"""The state BaseApp itself owns, written at InitChain: the chain id and CometBFT's consensus params.

It lives under ``STORE_PREFIX``, which no module's prefix may overlap.
"""

from __future__ import annotations

from cosmpy.protos.tendermint.types import params_pb2

from sdk.context import KVStore
from sdk.store.cachekv import CacheKV
from sdk.store.commitstore import CommitStore, Snapshot, VersionSnapshot

STORE_PREFIX = b"baseapp/"
"""State the framework owns, written at InitChain; no module's prefix may overlap it."""
CHAIN_ID_KEY = STORE_PREFIX + b"chain_id"
CONSENSUS_PARAMS_KEY = STORE_PREFIX + b"consensus_params"

CommittedState = Snapshot | VersionSnapshot
"""A committed version frozen for a job: the latest, or a kept older one for a query at its height."""


def stored_chain_id(state: CacheKV | CommitStore) -> str:
    """The chain id is state written at InitChain, so a restarted node knows it without the genesis file."""
    raw = state.get(CHAIN_ID_KEY)
    return raw.decode() if raw else ""


def stored_consensus_params(state: KVStore) -> params_pb2.ConsensusParams | None:
    """CometBFT's consensus params (block gas and size limits, evidence, validator key types) as the chain
    last set them; None before InitChain gave any."""
    raw = state.get(CONSENSUS_PARAMS_KEY)
    return None if raw is None else params_pb2.ConsensusParams.FromString(raw)


def store_consensus_params(state: KVStore, params: params_pb2.ConsensusParams) -> None:
    """The one writer of the consensus params: InitChain, and the authority's update (x/consensus)."""
    state.set(CONSENSUS_PARAMS_KEY, params.SerializeToString())


def changed_consensus_params(
    before: params_pb2.ConsensusParams | None, after: params_pb2.ConsensusParams | None
) -> params_pb2.ConsensusParams | None:
    """The params to hand CometBFT in ``consensus_param_updates``: the stored ones if the block changed them
    (CometBFT applies them from the next height on), else none. Never the version section: CometBFT would
    take its ``app`` as the block headers' app version, which is the app's to say (Info), not an update's."""
    if after is None or after == before:
        return None
    update = params_pb2.ConsensusParams()
    update.CopyFrom(after)
    update.ClearField("version")
    return update
