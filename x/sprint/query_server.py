"""``gonka.sprint.v1.Query``: the params, an epoch's race randomness, commitments, validations and weights, and
the epoch's proof (its summary with the certificate and handoffs that prove it)."""

from __future__ import annotations

from protogen.gonka.bls.v1 import bls_pb2
from protogen.gonka.sprint.v1 import query_pb2, sprint_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.crypto import bech32, merkle
from sdk.errors import ErrNotFound
from sdk.module import QueryRoute
from sdk.services import gonka
from x.sprint import types
from x.sprint.keeper import SprintKeeper

EMPTY_SET = bls_pb2.ValidatorSet()


class QueryServer:
    def __init__(self, keeper: SprintKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("sprint").query
        return {
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Race": QueryRoute(query_pb2.QueryRaceRequest, self.race, bounded=True),
            query + "Commitments": QueryRoute(query_pb2.QueryCommitmentsRequest, self.commitments),
            query + "Validations": QueryRoute(query_pb2.QueryValidationsRequest, self.validations),
            query + "Weights": QueryRoute(query_pb2.QueryWeightsRequest, self.weights, bounded=True),
            query + "EpochProof": QueryRoute(query_pb2.QueryEpochProofRequest, self.epoch_proof),
        }

    def _epoch(self, ctx: Context, epoch: int) -> int:
        """0 asks for the current epoch."""
        return epoch or self.keeper.epochs.current_epoch(ctx).number

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def race(self, ctx: Context, req: query_pb2.QueryRaceRequest) -> query_pb2.QueryRaceResponse:
        epoch = self._epoch(ctx, req.epoch)
        return query_pb2.QueryRaceResponse(race=self.keeper.race(ctx, epoch) or sprint_pb2.Race(epoch=epoch))

    def commitments(self, ctx: Context, req: query_pb2.QueryCommitmentsRequest) -> query_pb2.QueryCommitmentsResponse:
        return query_pb2.QueryCommitmentsResponse(commitments=self.keeper.commitments(ctx, self._epoch(ctx, req.epoch)))

    def validations(self, ctx: Context, req: query_pb2.QueryValidationsRequest) -> query_pb2.QueryValidationsResponse:
        host = parse_address(req.host, "host") if req.host else b""
        return query_pb2.QueryValidationsResponse(
            validations=self.keeper.validations(ctx, self._epoch(ctx, req.epoch), host)
        )

    def weights(self, ctx: Context, req: query_pb2.QueryWeightsRequest) -> query_pb2.QueryWeightsResponse:
        epoch = self._epoch(ctx, req.epoch)
        return query_pb2.QueryWeightsResponse(
            result=self.keeper.result(ctx, epoch) or sprint_pb2.EpochResult(epoch=epoch)
        )

    def epoch_proof(self, ctx: Context, req: query_pb2.QueryEpochProofRequest) -> query_pb2.QueryEpochProofResponse:
        """The summary of ``req.epoch`` (with a host: only its line, and its path to the hosts root), the
        certificate of the height after the block that wrote it, and the handoffs after ``req.after_height``
        up to that height; ``sdk/38`` when the epoch has no summary (not ended) or the host no line."""
        summary = self.keeper.summary(ctx, req.epoch)
        if summary is None:
            raise ErrNotFound.wrap(f"epoch {req.epoch} has no summary (it has not ended)")
        answer = query_pb2.QueryEpochProofResponse(chain_id=ctx.header.chain_id)
        if req.host:
            host = parse_address(req.host, "host")
            index = next((i for i, h in enumerate(summary.hosts) if bech32.decode(h.host) == host), None)
            if index is None:
                raise ErrNotFound.wrap(f"{req.host} has no line in epoch {req.epoch}'s summary")
            lines = [types.host_line(bech32.decode(h.host), h.weight, h.work_root, h.inferences, h.tokens)
                     for h in summary.hosts]  # fmt: skip
            answer.host_index = index
            answer.host_proof.extend(merkle.inclusion_proof(lines, index))
            line = summary.hosts[index]
            del summary.hosts[:]
            summary.hosts.append(line)
        answer.summary.CopyFrom(summary)
        height = summary.height + 1
        cert = self.keeper.bls.certificate(ctx, height)
        if cert is not None:
            answer.certificate.CopyFrom(cert)
            answer.validator_set.CopyFrom(self.keeper.bls.validator_set(ctx, cert.validator_set_hash) or EMPTY_SET)
        for handoff in self.keeper.bls.handoffs(ctx, req.after_height, height):
            proof = answer.handoffs.add(handoff=handoff)
            signed = self.keeper.bls.certificate(ctx, handoff.recorded_height + 1) if handoff.recorded_height else None
            if signed is not None:
                proof.certificate.CopyFrom(signed)
                proof.validator_set.CopyFrom(self.keeper.bls.validator_set(ctx, signed.validator_set_hash) or EMPTY_SET)
        return answer
