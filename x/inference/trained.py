"""A model trained on the network (``Model.training_run_id``): registered only from what x/learning vouches for,
a FINISHED run with no INVALID checkpoint in its final round, whose final global weights are the model's."""

from __future__ import annotations

from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.learning.v1 import learning_pb2
from sdk.context import Context
from x.inference.errors import ErrRunInvalid, ErrRunUnfinished, ErrWeightsMismatch
from x.inference.keeper import InferenceKeeper


def check_trained(keeper: InferenceKeeper, ctx: Context, model: inference_pb2.Model) -> None:
    """``inference/22`` for a run missing or not finished, ``inference/23`` for an INVALID checkpoint in its final
    round, ``inference/24`` for weights other than the final round's global weights."""
    run_id = model.training_run_id
    learning = keeper.learning
    run = learning.get_run(ctx, run_id) if learning is not None else None
    if learning is None or run is None or run.status != learning_pb2.RUN_STATUS_FINISHED:
        raise ErrRunUnfinished.wrap(f"training run {run_id} is {'missing' if run is None else 'ACTIVE'}")
    final = learning.round_checkpoints(ctx, run_id, run.rounds - 1)
    invalid = [c.worker for c in final if c.outcome == learning_pb2.OUTCOME_INVALID]
    if invalid:
        raise ErrRunInvalid.wrap(f"run {run_id} round {run.rounds - 1}: {', '.join(invalid)}")
    weights = final[0].global_weights_hash.hex() if final else ""
    if model.weights_sha256 != weights:
        raise ErrWeightsMismatch.wrap(f"{model.weights_sha256} is not run {run_id}'s final weights {weights}")
