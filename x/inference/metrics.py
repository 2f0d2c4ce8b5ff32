"""x/inference's figures for the node's metrics: the inference records kept, by status, the escrow the module
account holds, models and ML nodes."""

from __future__ import annotations

from collections import Counter

from protogen.gonka.inference.v1 import inference_pb2
from sdk.context import Context
from sdk.telemetry.figures import Figure
from x.inference.keeper import InferenceKeeper


def figures(keeper: InferenceKeeper, ctx: Context) -> list[Figure]:
    """Records are kept until pruned, so the counts are of the inferences still held (started, finished,
    expired, invalidated), not of all time."""
    statuses = Counter(inference.status for inference in keeper.inferences(ctx))
    out = [
        Figure(
            "inferences",
            "Inference records held in state, by status.",
            statuses.get(number, 0),
            (("status", name.removeprefix("STATUS_").lower()),),
        )
        for name, number in inference_pb2.Status.items()
        if number != inference_pb2.STATUS_UNSPECIFIED
    ]
    out += [
        Figure("escrow", "Escrow of started inferences held by the inference account.", amount, (("denom", denom),))
        for denom, amount in keeper.bank.get_all_balances(ctx, keeper.address)
    ]
    out += [
        Figure("models", "Registered models.", len(keeper.models(ctx))),
        Figure("ml_nodes", "Registered ML nodes.", len(keeper.nodes(ctx))),
    ]
    return out
