"""The rules CometBFT v0.38 (``types/params.go``: ``ValidateBasic``, ``ValidateUpdate``) puts on consensus
params, checked before the chain stores them: CometBFT would halt on params it refuses."""

from __future__ import annotations

from cosmpy.protos.cosmos.consensus.v1 import tx_pb2
from cosmpy.protos.tendermint.types import params_pb2

from sdk.errors import ErrInvalidRequest

MAX_BLOCK_SIZE_BYTES = 104_857_600
"""CometBFT's ``MaxBlockSizeBytes`` (100 MiB): the most ``block.max_bytes`` may be."""
PUB_KEY_TYPES = ("ed25519", "secp256k1")
"""The validator key types CometBFT v0.38 knows."""


def proposed_params(msg: tx_pb2.MsgUpdateParams) -> params_pb2.ConsensusParams:
    """The params a ``MsgUpdateParams`` carries: block, evidence and validator, which must all be given (as
    the SDK's ``ToProtoConsensusParams`` requires), and abci if given."""
    missing = [name for name in ("block", "evidence", "validator") if not msg.HasField(name)]
    if missing:
        raise ErrInvalidRequest.wrap(f"invalid params: all parameters must be present; missing {', '.join(missing)}")
    params = params_pb2.ConsensusParams(block=msg.block, evidence=msg.evidence, validator=msg.validator)
    if msg.HasField("abci"):
        params.abci.CopyFrom(msg.abci)
    return params


def validate_params(params: params_pb2.ConsensusParams) -> None:
    """CometBFT's ``ValidateBasic``: a block has room (``max_bytes`` -1 for CometBFT's limit, or 1 byte to
    100 MiB), ``max_gas`` is -1 (no limit) or more, evidence expires and fits in a block, validators have a
    known key type."""
    block, evidence = params.block, params.evidence
    if block.max_bytes == 0 or block.max_bytes < -1:
        raise ValueError(f"block.max_bytes must be -1 or greater than 0, got {block.max_bytes}")
    if block.max_bytes > MAX_BLOCK_SIZE_BYTES:
        raise ValueError(f"block.max_bytes is too big: {block.max_bytes} > {MAX_BLOCK_SIZE_BYTES}")
    if block.max_gas < -1:
        raise ValueError(f"block.max_gas must be greater or equal to -1, got {block.max_gas}")
    if evidence.max_age_num_blocks <= 0:
        raise ValueError(f"evidence.max_age_num_blocks must be greater than 0, got {evidence.max_age_num_blocks}")
    if evidence.max_age_duration.seconds <= 0 and evidence.max_age_duration.nanos <= 0:
        raise ValueError("evidence.max_age_duration must be greater than 0")
    max_bytes = MAX_BLOCK_SIZE_BYTES if block.max_bytes == -1 else block.max_bytes
    if not 0 <= evidence.max_bytes <= max_bytes:
        raise ValueError(f"evidence.max_bytes must be 0 to block.max_bytes ({max_bytes}), got {evidence.max_bytes}")
    if params.abci.vote_extensions_enable_height < 0:
        raise ValueError("abci.vote_extensions_enable_height cannot be negative")
    if not params.validator.pub_key_types:
        raise ValueError("validator.pub_key_types must not be empty")
    for key_type in params.validator.pub_key_types:
        if key_type not in PUB_KEY_TYPES:
            raise ValueError(f"validator.pub_key_types: unknown pubkey type {key_type!r}")


def validate_vote_extensions_update(current: int, proposed: int, height: int) -> None:
    """CometBFT's ``ValidateUpdate``: once vote extensions are on they stay on, and a new enable height must
    lie in the future (after ``height``, the block executing the update)."""
    if proposed == current:
        return
    if current != 0 and current <= height:
        raise ValueError(
            f"abci.vote_extensions_enable_height cannot change once vote extensions are enabled (at {current})"
        )
    if proposed != 0 and proposed <= height:
        raise ValueError(f"abci.vote_extensions_enable_height {proposed} must be after the current height {height}")
