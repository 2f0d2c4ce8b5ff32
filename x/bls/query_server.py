"""``gonka.bls.v1.Query``: one host's BLS key, or every registered key in operator order."""

from __future__ import annotations

from protogen.gonka.bls.v1 import bls_pb2, query_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from x.bls import keys
from x.bls.keeper import BlsKeeper

GONKA = f"/{query_pb2.DESCRIPTOR.services_by_name['Query'].full_name}/"


class BlsQueries:
    def __init__(self, keeper: BlsKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        return {
            GONKA + "Key": QueryRoute(query_pb2.QueryKeyRequest, self.key, bounded=True),
            GONKA + "Keys": QueryRoute(query_pb2.QueryKeysRequest, self.keys),
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
            keys=[bls_pb2.BlsKey(operator=bech32.encode(op), public_key=pk) for op, pk in entries], pagination=page)
