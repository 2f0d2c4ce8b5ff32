"""LegacyDec values in the CLI's replies are printed as the Cosmos SDK prints them (sdk/cli/decimals.py): the
community pool's ``DecCoin``s, slashing fractions sent as LegacyDec bytes, a validator's shares, also inside a
proposal's ``Any``; decimal text (gov params) and integers (gov tallies) as they are. Only printing changes: the
messages, and the genesis JSON read back by ``ParseDict``, keep the wire form."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.distribution.v1beta1 import query_pb2 as distribution_query
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as gov_query
from cosmpy.protos.cosmos.slashing.v1beta1 import slashing_pb2
from cosmpy.protos.cosmos.slashing.v1beta1 import tx_pb2 as slashing_tx
from cosmpy.protos.cosmos.staking.v1beta1 import query_pb2 as staking_query
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from google.protobuf import json_format

from gonkad import cli
from sdk.cli import query as cli_query
from sdk.cli.flags import message_dict, shown_dict
from sdk.coins import make_coins
from sdk.dec import legacy_dec_bytes, legacy_dec_wire_text
from x.gov.params import default_params as gov_default_params
from x.pool.query_server import dec_coins

POOL_NGONKA = 32_300_000_000_000


@pytest.mark.parametrize(
    ("wire", "text"),
    [
        ("32300000000000000000000000000000", "32300000000000.000000000000000000"),
        ("500000000000000000", "0.500000000000000000"),
        ("0", "0.000000000000000000"),
        ("1", "0.000000000000000001"),
        ("-1", "-0.000000000000000001"),
        ("-1500000000000000000", "-1.500000000000000000"),
        ("0.5", "0.5"),  # already text: shown as sent
        ("", ""),
    ],
)
def test_the_wire_form_reads_as_the_sdks_text(wire: str, text: str) -> None:
    assert legacy_dec_wire_text(wire) == text


def test_the_community_pool_prints_its_decimals() -> None:
    reply = distribution_query.QueryCommunityPoolResponse(pool=dec_coins(make_coins([("ngonka", POOL_NGONKA)])))
    assert reply.pool[0].amount == "32300000000000000000000000000000"  # the wire form the node sends
    assert shown_dict(reply) == {"pool": [{"denom": "ngonka", "amount": "32300000000000.000000000000000000"}]}
    assert reply.pool[0].amount == "32300000000000000000000000000000"  # printing left the message as it was


def test_every_coin_of_a_repeated_field_is_shown() -> None:
    reply = distribution_query.QueryCommunityPoolResponse(
        pool=[
            coin_pb2.DecCoin(denom="aaa", amount="1"),
            coin_pb2.DecCoin(denom="ngonka", amount="2500000000000000000"),
        ]
    )
    assert [c["amount"] for c in shown_dict(reply)["pool"]] == ["0.000000000000000001", "2.500000000000000000"]


def slashing_params() -> slashing_pb2.Params:
    return slashing_pb2.Params(
        signed_blocks_window=100,
        min_signed_per_window=legacy_dec_bytes(Fraction(1, 2)),
        slash_fraction_double_sign=legacy_dec_bytes(Fraction(1, 20)),
        slash_fraction_downtime=legacy_dec_bytes(Fraction(1, 100)),
    )


def test_legacy_dec_bytes_print_as_decimals_not_base64() -> None:
    shown = shown_dict(slashing_params())
    assert shown == {
        "signed_blocks_window": "100",
        "min_signed_per_window": "0.500000000000000000",
        "slash_fraction_double_sign": "0.050000000000000000",
        "slash_fraction_downtime": "0.010000000000000000",
    }


def test_a_message_packed_in_any_is_shown_too() -> None:
    """A proposal's messages are ``Any``s: the slashing params inside one print as decimals."""
    proposal = gov_pb2.Proposal(id=7, status=gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD)
    proposal.messages.add().Pack(
        slashing_tx.MsgUpdateParams(authority="gonka1x", params=slashing_params()), type_url_prefix="/"
    )
    shown = shown_dict(gov_query.QueryProposalResponse(proposal=proposal))
    message = shown["proposal"]["messages"][0]
    assert message["@type"] == "/cosmos.slashing.v1beta1.MsgUpdateParams"
    assert message["params"]["min_signed_per_window"] == "0.500000000000000000"
    assert message["params"]["slash_fraction_downtime"] == "0.010000000000000000"


def test_a_validators_shares_print_as_the_sdk_prints_them() -> None:
    """x/stake sends a host's shares as a LegacyDec (collateral × 10^18 on the wire); tokens are an Int."""
    validator = staking_pb2.Validator(
        operator_address="gonkavaloper1x", tokens="1000000000", delegator_shares="1000000000" + "0" * 18
    )
    shown = shown_dict(staking_query.QueryValidatorsResponse(validators=[validator]))
    assert shown["validators"][0]["tokens"] == "1000000000"
    assert shown["validators"][0]["delegator_shares"] == "1000000000.000000000000000000"


def test_gov_params_and_tallies_print_as_they_are() -> None:
    """Gov's decimals are text on the wire (``cosmos_proto.scalar`` only, no LegacyDec customtype) and its
    tally counts are integers: the SDK prints both as sent, and so does the CLI."""
    params = gov_query.QueryParamsResponse(params=gov_default_params())
    assert shown_dict(params) == message_dict(params)
    assert shown_dict(params)["params"]["quorum"] == "0.334000000000000000"
    tally = gov_query.QueryTallyResultResponse(tally=gov_pb2.TallyResult(yes_count="700", no_count="300"))
    assert shown_dict(tally) == {"tally": {"yes_count": "700", "no_count": "300"}}


def test_genesis_json_keeps_the_wire_form() -> None:
    """``message_dict`` (genesis export, proposal drafts) stays proto3 JSON that ``ParseDict`` reads back."""
    params = slashing_params()
    assert json_format.ParseDict(message_dict(params), slashing_pb2.Params()) == params


def test_query_pool_prints_the_sdks_decimals(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """``gonkad query pool -o json`` end to end, with the node's reply as x/pool builds it."""

    def reply(self: Any, path: str, request: Any, response_type: Any) -> Any:
        assert path == "/cosmos.distribution.v1beta1.Query/CommunityPool"
        return response_type(pool=dec_coins(make_coins([("ngonka", POOL_NGONKA)])))

    monkeypatch.setattr(cli_query.Querier, "query", reply)
    cli.main(["query", "pool", "-o", "json"])
    assert json.loads(capsys.readouterr().out) == {
        "pool": [{"denom": "ngonka", "amount": "32300000000000.000000000000000000"}]
    }
    cli.main(["query", "pool"])
    assert capsys.readouterr().out.splitlines() == [
        "pool:",
        "  - denom: ngonka",
        "    amount: 32300000000000.000000000000000000",
    ]
