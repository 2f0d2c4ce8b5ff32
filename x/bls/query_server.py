"""``gonka.bls.v1.Query``: hosts' BLS keys, the block certificates with what verifies them, the beacon, params."""

from __future__ import annotations

from protogen.gonka.bls.v1 import bls_pb2, query_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.crypto import bech32, certificate
from sdk.errors import ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from sdk.services import gonka
from x.bls import keys
from x.bls.keeper import BlsKeeper

MAX_HANDOFFS = 100


class QueryServer:
    def __init__(self, keeper: BlsKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        query = gonka("bls").query
        return {
            query + "Key": QueryRoute(query_pb2.QueryKeyRequest, self.key, bounded=True),
            query + "Keys": QueryRoute(query_pb2.QueryKeysRequest, self.keys),
            query + "Certificate": QueryRoute(query_pb2.QueryCertificateRequest, self.certificate, bounded=True),
            query + "Beacon": QueryRoute(query_pb2.QueryBeaconRequest, self.beacon, bounded=True),
            query + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            query + "Handoffs": QueryRoute(query_pb2.QueryHandoffsRequest, self.handoffs),
        }

    def key(self, ctx: Context, req: query_pb2.QueryKeyRequest) -> query_pb2.QueryKeyResponse:
        operator = parse_address(req.operator, "operator")
        public_key = self.keeper.get_key(ctx, operator)
        if public_key is None:
            raise ErrNotFound.wrap(f"no BLS key registered for {req.operator}")
        return query_pb2.QueryKeyResponse(key=bls_pb2.BlsKey(operator=req.operator, public_key=public_key))

    def keys(self, ctx: Context, req: query_pb2.QueryKeysRequest) -> query_pb2.QueryKeysResponse:
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.KEY_PREFIX, req.pagination)
        return query_pb2.QueryKeysResponse(
            keys=[bls_pb2.BlsKey(operator=bech32.encode(op), public_key=pk) for op, pk in entries], pagination=page
        )

    def certified(self, ctx: Context, height: int) -> bls_pb2.Certificate:
        """``height``'s certificate (0: the latest); ``sdk/38`` if there is none (not certified, or pruned)."""
        if height == 0:
            height = self.keeper.latest_certified_height(ctx) or 0
        cert = self.keeper.certificate(ctx, height) if height else None
        if cert is None:
            raise ErrNotFound.wrap(f"no certificate of height {height} is kept")
        return cert

    def certificate(self, ctx: Context, req: query_pb2.QueryCertificateRequest) -> query_pb2.QueryCertificateResponse:
        cert = self.certified(ctx, req.height)
        validator_set = self.keeper.validator_set(ctx, cert.validator_set_hash) or bls_pb2.ValidatorSet()
        flags = certificate.decode_signers(cert.signers, len(validator_set.validators))
        powers = [v.power for v in validator_set.validators]
        return query_pb2.QueryCertificateResponse(
            certificate=cert,
            validator_set=validator_set,
            chain_id=ctx.header.chain_id,
            message=certificate.signing_message(
                ctx.header.chain_id,
                cert.height,
                cert.commitment,
                certificate.extras_digest([(e.name, e.digest) for e in cert.extras]),
            ),
            signed_power=sum(p for p, f in zip(powers, flags) if f),
            total_power=sum(powers),
            beacon=certificate.beacon(cert.signature),
        )

    def beacon(self, ctx: Context, req: query_pb2.QueryBeaconRequest) -> query_pb2.QueryBeaconResponse:
        cert = self.certified(ctx, req.height)
        return query_pb2.QueryBeaconResponse(height=cert.height, beacon=certificate.beacon(cert.signature))

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def handoffs(self, ctx: Context, req: query_pb2.QueryHandoffsRequest) -> query_pb2.QueryHandoffsResponse:
        """The handoffs after ``after_height``, each with the certificate (and set) of the outgoing set's last
        height, when it is kept; at most ``limit`` (0: MAX_HANDOFFS)."""
        limit = min(req.limit or MAX_HANDOFFS, MAX_HANDOFFS)
        proofs = []
        for handoff in self.keeper.handoffs(ctx, req.after_height, req.through_height, limit):
            proof = query_pb2.HandoffProof(handoff=handoff)
            cert = self.keeper.certificate(ctx, handoff.recorded_height + 1) if handoff.recorded_height else None
            if cert is not None:
                proof.certificate.CopyFrom(cert)
                proof.validator_set.CopyFrom(
                    self.keeper.validator_set(ctx, cert.validator_set_hash) or bls_pb2.ValidatorSet()
                )
            proofs.append(proof)
        return query_pb2.QueryHandoffsResponse(handoffs=proofs, chain_id=ctx.header.chain_id)
