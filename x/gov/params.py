"""x/gov's params (``cosmos.gov.v1.Params``): the real network's defaults and the rules any params keep."""

from __future__ import annotations

from fractions import Fraction

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from google.protobuf.duration_pb2 import Duration

from sdk.address import parse_address
from sdk.coins import Coins, coins_from_proto
from sdk.dec import parse_share
from sdk.errors import ABCIError

DENOM = "ngonka"
DEFAULT_MIN_DEPOSIT = 100 * 10**9
"""100 GNK."""
DAY_S = 24 * 3600


def default_params() -> gov_pb2.Params:
    """The Cosmos SDK's defaults with GNK: 2 days to collect 100 GNK, 2 days of voting, quorum 33.4%,
    threshold 50%, veto 33.4%; deposits burned on veto and on missed quorum, refunded when a proposal
    never reaches voting. A fresh message each call."""
    return gov_pb2.Params(
        min_deposit=[coin_pb2.Coin(denom=DENOM, amount=str(DEFAULT_MIN_DEPOSIT))],
        max_deposit_period=Duration(seconds=2 * DAY_S),
        voting_period=Duration(seconds=2 * DAY_S),
        quorum="0.334000000000000000",
        threshold="0.500000000000000000",
        veto_threshold="0.334000000000000000",
        min_initial_deposit_ratio="0.000000000000000000",
        proposal_cancel_ratio="0.500000000000000000",
        expedited_voting_period=Duration(seconds=DAY_S),
        expedited_threshold="0.667000000000000000",
        expedited_min_deposit=[coin_pb2.Coin(denom=DENOM, amount=str(5 * DEFAULT_MIN_DEPOSIT))],
        burn_vote_quorum=True,
        burn_proposal_deposit_prevote=False,
        burn_vote_veto=True,
        min_deposit_ratio="0.010000000000000000",
    )


def duration_ns(duration: Duration) -> int:
    return duration.seconds * 10**9 + duration.nanos


def min_deposit(params: gov_pb2.Params, expedited: bool = False) -> Coins:
    """The deposit that opens voting: ``expedited_min_deposit`` for an expedited proposal."""
    return coins_from_proto(params.expedited_min_deposit if expedited else params.min_deposit)


def voting_period_ns(params: gov_pb2.Params, expedited: bool) -> int:
    return duration_ns(params.expedited_voting_period if expedited else params.voting_period)


def share(params: gov_pb2.Params, field: str, allow_zero: bool = True) -> Fraction:
    """A decimal param in [0, 1] (empty text reads as 0, as the SDK's zero LegacyDec)."""
    text = getattr(params, field)
    return parse_share(text or "0", field, allow_zero)


def validate_params(params: gov_pb2.Params) -> None:
    """As the SDK's ``Params.ValidateBasic`` (v0.50): valid, non-empty min deposits, the expedited one not
    covered by the regular one; positive periods, the expedited voting period shorter than the regular one;
    quorum in [0, 1], the thresholds and veto in (0, 1], the expedited threshold above the regular one; the
    ratios in [0, 1]; ``proposal_cancel_dest`` empty or an address."""
    deposits = {}
    for name in ("min_deposit", "expedited_min_deposit"):
        try:
            deposits[name] = coins_from_proto(getattr(params, name))
        except ABCIError as err:
            raise ValueError(f"{name}: {err.log}") from None
        if not deposits[name]:
            raise ValueError(f"{name} must not be empty")
    regular = dict(deposits["min_deposit"])
    if all(amount <= regular.get(denom, 0) for denom, amount in deposits["expedited_min_deposit"]):
        raise ValueError(
            f"expedited_min_deposit {deposits['expedited_min_deposit']} must be greater than "
            f"min_deposit {deposits['min_deposit']}"
        )
    for name in ("max_deposit_period", "voting_period", "expedited_voting_period"):
        if duration_ns(getattr(params, name)) <= 0:
            raise ValueError(f"{name} must be positive")
    if duration_ns(params.expedited_voting_period) >= duration_ns(params.voting_period):
        raise ValueError("expedited_voting_period must be strictly less than voting_period")
    share(params, "quorum")
    threshold = share(params, "threshold", allow_zero=False)
    share(params, "veto_threshold", allow_zero=False)
    if share(params, "expedited_threshold", allow_zero=False) <= threshold:
        raise ValueError("expedited_threshold must be greater than threshold")
    share(params, "min_initial_deposit_ratio")
    share(params, "min_deposit_ratio")
    share(params, "proposal_cancel_ratio")
    if params.proposal_cancel_dest:
        try:
            parse_address(params.proposal_cancel_dest, "proposal_cancel_dest")
        except ABCIError as err:
            raise ValueError(err.log) from None
