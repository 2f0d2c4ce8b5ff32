"""The stake module's queries: validators in the Cosmos shape (``cosmos.staking.v1beta1.Query``, so
wallets and explorers read them unchanged) and hosts, collateral and weights in Gonka's
(``gonka.stake.v1.Query``)."""

from __future__ import annotations

from cosmpy.protos.cosmos.staking.v1beta1 import query_pb2 as cosmos_query
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2

from protogen.gonka.stake.v1 import query_pb2, stake_pb2
from sdk.address import parse_address
from sdk.context import Context
from sdk.crypto import bech32
from sdk.errors import ErrInvalidAddress, ErrNotFound
from sdk.module import QueryRoute
from sdk.pagination import paginate
from sdk.services import cosmos, gonka
from x.stake import keys
from x.stake.keeper import StakeKeeper


class QueryServer:
    def __init__(self, keeper: StakeKeeper) -> None:
        self.keeper = keeper

    def routes(self) -> dict[str, QueryRoute]:
        cosmos_prefix = cosmos("staking").query
        gonka_prefix = gonka("stake").query
        return {
            cosmos_prefix + "Validators": QueryRoute(cosmos_query.QueryValidatorsRequest, self.validators),
            cosmos_prefix + "Validator": QueryRoute(cosmos_query.QueryValidatorRequest, self.validator, bounded=True),
            cosmos_prefix + "Params": QueryRoute(cosmos_query.QueryParamsRequest, self.cosmos_params, bounded=True),
            cosmos_prefix + "Pool": QueryRoute(cosmos_query.QueryPoolRequest, self.pool, bounded=True),
            gonka_prefix + "Params": QueryRoute(query_pb2.QueryParamsRequest, self.params, bounded=True),
            gonka_prefix + "Host": QueryRoute(query_pb2.QueryHostRequest, self.host, bounded=True),
            gonka_prefix + "Hosts": QueryRoute(query_pb2.QueryHostsRequest, self.hosts),
            gonka_prefix + "Collateral": QueryRoute(query_pb2.QueryCollateralRequest, self.collateral),
            gonka_prefix + "UnbondingEntries": QueryRoute(
                query_pb2.QueryUnbondingEntriesRequest, self.unbonding_entries
            ),
            gonka_prefix + "EpochWeights": QueryRoute(query_pb2.QueryEpochWeightsRequest, self.epoch_weights),
            gonka_prefix + "ValidatorPowers": QueryRoute(query_pb2.QueryValidatorPowersRequest, self.validator_powers),
        }

    def _host(self, ctx: Context, operator: bytes) -> stake_pb2.Host:
        host = self.keeper.get_host(ctx, operator)
        if host is None:
            raise ErrNotFound.wrap(f"host {bech32.encode(operator)} not found")
        return host

    # --- cosmos.staking.v1beta1 ---------------------------------------------------------------------

    def validators(
        self, ctx: Context, req: cosmos_query.QueryValidatorsRequest
    ) -> cosmos_query.QueryValidatorsResponse:
        """One page of hosts in operator order, as validators; ``status`` (e.g. ``BOND_STATUS_BONDED``)
        filters within the page."""
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.HOST_PREFIX, req.pagination)
        validators = [self.keeper.cosmos_validator(ctx, stake_pb2.Host.FromString(raw)) for _, raw in entries]
        if req.status:
            validators = [v for v in validators if staking_pb2.BondStatus.Name(v.status) == req.status]
        return cosmos_query.QueryValidatorsResponse(validators=validators, pagination=page)

    def validator(self, ctx: Context, req: cosmos_query.QueryValidatorRequest) -> cosmos_query.QueryValidatorResponse:
        try:
            operator = bech32.decode(req.validator_addr, bech32.VALOPER_PREFIX)
        except ValueError as exc:
            raise ErrInvalidAddress.wrap(f"validator address: {exc}") from None
        return cosmos_query.QueryValidatorResponse(
            validator=self.keeper.cosmos_validator(ctx, self._host(ctx, operator))
        )

    def cosmos_params(self, ctx: Context, req: cosmos_query.QueryParamsRequest) -> cosmos_query.QueryParamsResponse:
        """What of the params the Cosmos shape has: the bond denom and the validator count (unbonding is
        counted in epochs, not time, so ``unbonding_time`` stays empty)."""
        params = self.keeper.get_params(ctx)
        return cosmos_query.QueryParamsResponse(
            params=staking_pb2.Params(
                bond_denom=params.bond_denom, max_validators=params.max_validators, min_commission_rate="0"
            )
        )

    def pool(self, ctx: Context, req: cosmos_query.QueryPoolRequest) -> cosmos_query.QueryPoolResponse:
        return cosmos_query.QueryPoolResponse(
            pool=staking_pb2.Pool(
                bonded_tokens=str(self.keeper.pool_balance(ctx, keys.BONDED_POOL)),
                not_bonded_tokens=str(self.keeper.pool_balance(ctx, keys.UNBONDING_POOL)),
            )
        )

    # --- gonka.stake.v1 -----------------------------------------------------------------------------

    def params(self, ctx: Context, req: query_pb2.QueryParamsRequest) -> query_pb2.QueryParamsResponse:
        return query_pb2.QueryParamsResponse(params=self.keeper.get_params(ctx))

    def host(self, ctx: Context, req: query_pb2.QueryHostRequest) -> query_pb2.QueryHostResponse:
        return query_pb2.QueryHostResponse(host=self._host(ctx, parse_address(req.operator, "operator")))

    def hosts(self, ctx: Context, req: query_pb2.QueryHostsRequest) -> query_pb2.QueryHostsResponse:
        entries, page = paginate(ctx.kv(keys.STORE_PREFIX), keys.HOST_PREFIX, req.pagination)
        return query_pb2.QueryHostsResponse(hosts=[stake_pb2.Host.FromString(v) for _, v in entries], pagination=page)

    def collateral(self, ctx: Context, req: query_pb2.QueryCollateralRequest) -> query_pb2.QueryCollateralResponse:
        operator = parse_address(req.operator, "operator")
        host = self._host(ctx, operator)
        unbonding = sum(int(e.amount) for e in self.keeper.unbonding_entries(ctx, operator))
        return query_pb2.QueryCollateralResponse(
            bonded=host.collateral, unbonding=str(unbonding), denom=self.keeper.bond_denom(ctx)
        )

    def unbonding_entries(
        self, ctx: Context, req: query_pb2.QueryUnbondingEntriesRequest
    ) -> query_pb2.QueryUnbondingEntriesResponse:
        operator = parse_address(req.operator, "operator")
        return query_pb2.QueryUnbondingEntriesResponse(entries=self.keeper.unbonding_entries(ctx, operator))

    def epoch_weights(
        self, ctx: Context, req: query_pb2.QueryEpochWeightsRequest
    ) -> query_pb2.QueryEpochWeightsResponse:
        if self.keeper.weights_epoch(ctx) != req.epoch:
            raise ErrNotFound.wrap(f"no weights recorded for epoch {req.epoch} (only the latest epoch's are kept)")
        weights = self.keeper.epoch_weights(ctx, req.epoch)
        return query_pb2.QueryEpochWeightsResponse(
            epoch=req.epoch,
            weights=[stake_pb2.HostWeight(operator=bech32.encode(op), weight=w) for op, w in weights.items()],
        )

    def validator_powers(
        self, ctx: Context, req: query_pb2.QueryValidatorPowersRequest
    ) -> query_pb2.QueryValidatorPowersResponse:
        powers = self.keeper.validator_powers(ctx)
        return query_pb2.QueryValidatorPowersResponse(
            powers=[stake_pb2.HostWeight(operator=bech32.encode(op), weight=p) for op, p in powers.items()],
            total=sum(powers.values()),
        )
