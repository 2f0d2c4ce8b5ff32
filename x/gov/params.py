"""x/gov's params (``cosmos.gov.v1.Params``): the real network's defaults and the rules any params keep."""

from __future__ import annotations

from fractions import Fraction

from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from google.protobuf.duration_pb2 import Duration

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


def min_deposit(params: gov_pb2.Params) -> Coins:
    return coins_from_proto(params.min_deposit)


def share(params: gov_pb2.Params, field: str, allow_zero: bool = True) -> Fraction:
    """A decimal param in [0, 1] (empty text reads as 0, as the SDK's zero LegacyDec)."""
    text = getattr(params, field)
    return parse_share(text or "0", field, allow_zero)


def validate_params(params: gov_pb2.Params) -> None:
    """As the SDK's ``Params.ValidateBasic``, for what this module uses: a valid, non-empty min deposit;
    positive periods; quorum in [0, 1], threshold and veto in (0, 1]; the deposit ratios in [0, 1].
    Expedited proposals are not supported (MsgSubmitProposal refuses them); their params are only kept."""
    try:
        if not min_deposit(params):
            raise ValueError("min_deposit must not be empty")
    except ABCIError as err:
        raise ValueError(f"min_deposit: {err.log}") from None
    for name in ("max_deposit_period", "voting_period"):
        if duration_ns(getattr(params, name)) <= 0:
            raise ValueError(f"{name} must be positive")
    share(params, "quorum")
    share(params, "threshold", allow_zero=False)
    share(params, "veto_threshold", allow_zero=False)
    share(params, "min_initial_deposit_ratio")
    share(params, "min_deposit_ratio")
