"""The REST API (app.toml ``[api]``, sdk/rest) of a real 1-validator localnet: every annotated GET route of every
service the node serves answers, answers agree with gRPC, a bank send goes through ``POST /cosmos/tx/v1beta1/txs``
and is found by hash, bad input gets the SDK's error body (a 100 MB body refused unread), and the network page
(gonkad/web) shows in headless Chromium what the chain answers over gRPC, and follows it live."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
import httpx
import pytest
from browser import page_agrees, shown
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_query
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2_grpc as auth_grpc
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2_grpc as bank_grpc
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2 as tm_query
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2_grpc as tm_grpc
from cosmpy.protos.cosmos.distribution.v1beta1 import tx_pb2 as distribution_tx
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from cosmpy.protos.cosmos.gov.v1 import query_pb2 as gov_query
from google.api import annotations_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from gonkad import genesis, localnet
from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from protogen.gonka.inference.v1 import query_pb2 as inference_query
from protogen.gonka.pool.v1 import query_pb2 as pool_query
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from sdk.client.querier import Querier
from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import bech32
from sdk.rest.response import message_json
from sdk.rest.template import parse_template

CHAIN = "gonka-rest"
DENOM = "ngonka"
HEIGHT = "x-cosmos-block-height"
SENT = 1234
FUNDED = 2**53 + 1
"""Paid into the community pool while the page watches: a float on the page would show it one less."""
WEIGHTS = "ab" * 32
MODEL = {
    "id": f"page-model@sha256:{WEIGHTS}",
    "name": "page-model",
    "weights_sha256": WEIGHTS,
    "context_length": "2048",
    "price_per_token": "12345678901",
}
"""A model at genesis, so the page has a price to show (this network runs no ML nodes)."""
PAGE_PNG = "NETWORK_PAGE_PNG"
"""Where the page test saves its screenshot when set (docs/network-page.png is made so); a temp file otherwise."""
VARIABLE = re.compile(r"\{([^}=]+)(=[^}]*)?\}")


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The network, its node's REST URL and gRPC channel, and one bank send made through the REST API."""
    root = tmp_path_factory.mktemp("restnet")
    settings = localnet.load_settings(validators=1, chain_id=CHAIN)
    models = {"inference": {"models": [MODEL]}}
    try:
        localnet.start(
            root, settings=settings.model_copy(update={"genesis": genesis.merge_overrides(settings.genesis, models)})
        )
        node = localnet.wait_for_height(root, 2, timeout_s=60)["nodes"][0]
        with grpc.insecure_channel(node["grpc"]) as channel, httpx.Client(base_url=node["api"], timeout=30) as rest:
            yield {
                "root": root,
                "rest": rest,
                "channel": channel,
                "api": node["api"],
                "querier": Querier(node["rpc"], node["grpc"]),
                "sent": send_by_rest(root, rest),
            }
    finally:
        if (root / localnet.SPEC_FILE).exists():
            localnet.stop(root)


def send_by_rest(root: Path, rest: httpx.Client) -> dict[str, Any]:
    """faucet -> val0 through simulate and broadcast over REST; waits until the tx is found by hash."""
    sender, recipient = address_of(localnet.load_key(root, "faucet")), address_of(localnet.load_key(root, "val0"))
    before = balance(rest, recipient)
    sent = broadcast_by_rest(root, rest, [send_msg(sender, recipient, parse_coins(f"{SENT}{DENOM}"))])
    return {**sent, "sender": sender, "recipient": recipient, "before": before}


def broadcast_by_rest(root: Path, rest: httpx.Client, messages: list[Any]) -> dict[str, Any]:
    """The faucet's tx of ``messages``, signed with the project's client library, gas from a simulation over REST,
    broadcast over REST; waits until it is found by hash."""
    faucet = localnet.load_key(root, "faucet")
    account = rest.get(f"/cosmos/auth/v1beta1/accounts/{address_of(faucet)}").json()["account"]
    number, sequence = int(account["account_number"]), int(account["sequence"])
    draft = base64.b64encode(sign_tx(faucet, messages, CHAIN, number, sequence)).decode()
    simulated = rest.post("/cosmos/tx/v1beta1/simulate", json={"tx_bytes": draft})
    assert simulated.status_code == 200, simulated.text
    gas_used = int(simulated.json()["gas_info"]["gas_used"])
    tx = sign_tx(faucet, messages, CHAIN, number, sequence, gas_limit=gas_used * 2)
    broadcast = rest.post(
        "/cosmos/tx/v1beta1/txs", json={"tx_bytes": base64.b64encode(tx).decode(), "mode": "BROADCAST_MODE_SYNC"}
    )
    assert broadcast.status_code == 200, broadcast.text
    response = broadcast.json()["tx_response"]
    assert response["code"] == 0, response
    deadline = time.monotonic() + 30
    while (found := rest.get(f"/cosmos/tx/v1beta1/txs/{response['txhash']}")).status_code == 404:
        assert time.monotonic() < deadline, found.text
        time.sleep(0.3)
    return {"hash": response["txhash"], "found": found, "gas_used": gas_used}


def balance(rest: httpx.Client, address: str) -> int:
    reply = rest.get(f"/cosmos/bank/v1beta1/balances/{address}/by_denom", params={"denom": DENOM})
    assert reply.status_code == 200, reply.text
    return int(reply.json()["balance"]["amount"])


def sdk_error(reply: httpx.Response) -> dict[str, Any]:
    body = reply.json()
    assert set(body) == {"code", "message", "details"} and isinstance(body["code"], int), body
    return body


def test_send_through_rest_is_found_by_hash_and_by_event(net: dict[str, Any]) -> None:
    sent, rest = net["sent"], net["rest"]
    assert sent["found"].status_code == 200
    found = sent["found"].json()
    assert found["tx_response"]["code"] == 0 and found["tx_response"]["txhash"] == sent["hash"]
    assert found["tx"]["body"]["messages"][0]["@type"] == "/cosmos.bank.v1beta1.MsgSend"
    assert found["tx"]["body"]["messages"][0]["amount"] == [{"denom": DENOM, "amount": str(SENT)}]
    assert int(found["tx_response"]["gas_used"]) > 0 and sent["gas_used"] > 0
    assert balance(rest, sent["recipient"]) == sent["before"] + SENT
    by_event = rest.get("/cosmos/tx/v1beta1/txs", params={"query": f"transfer.recipient='{sent['recipient']}'"})
    assert by_event.status_code == 200, by_event.text
    assert sent["hash"] in [r["txhash"] for r in by_event.json()["tx_responses"]]


def test_answers_agree_with_grpc(net: dict[str, Any]) -> None:
    """The same query at the same height, over gRPC and over REST, prints the same JSON."""
    rest, channel, address = net["rest"], net["channel"], net["sent"]["recipient"]
    height = str(int(rest.get("/cosmos/base/tendermint/v1beta1/blocks/latest").json()["block"]["header"]["height"]))
    at = {HEIGHT: height}
    pairs = [
        (
            f"/cosmos/bank/v1beta1/balances/{address}",
            bank_grpc.QueryStub(channel).AllBalances(
                bank_query.QueryAllBalancesRequest(address=address), metadata=[(HEIGHT, height)]
            ),
        ),
        (
            f"/cosmos/auth/v1beta1/accounts/{address}",
            auth_grpc.QueryStub(channel).Account(
                auth_query.QueryAccountRequest(address=address), metadata=[(HEIGHT, height)]
            ),
        ),
        (
            f"/cosmos/base/tendermint/v1beta1/blocks/{height}",
            tm_grpc.ServiceStub(channel).GetBlockByHeight(tm_query.GetBlockByHeightRequest(height=int(height))),
        ),
        (
            "/cosmos/base/tendermint/v1beta1/node_info",
            tm_grpc.ServiceStub(channel).GetNodeInfo(tm_query.GetNodeInfoRequest()),
        ),
    ]
    for path, answer in pairs:
        reply = rest.get(path, headers=at)
        assert reply.status_code == 200, (path, reply.text)
        assert reply.json() == json.loads(message_json(answer)), path
    assert rest.get(f"/cosmos/bank/v1beta1/balances/{address}", headers=at).headers[f"grpc-metadata-{HEIGHT}"] == height


def path_values(net: dict[str, Any]) -> dict[str, str]:
    """A value for each path variable the routes have: real objects of the chain where there are any."""
    rest, sent = net["rest"], net["sent"]
    account = sent["recipient"]
    validator = rest.get("/cosmos/base/tendermint/v1beta1/validatorsets/latest").json()["validators"][0]["address"]
    return {
        **dict.fromkeys(("address", "delegator_addr", "voter", "depositor", "operator", "host"), account),
        **dict.fromkeys(("requester", "executor", "validator", "worker", "verifier"), account),
        "validator_addr": bech32.encode(bech32.decode(account), bech32.VALOPER_PREFIX),
        "cons_address": validator,
        "denom": DENOM,
        "name": "fee_collector",
        "proposal_id": "1",
        "params_type": "voting",
        "height": "2",
        "hash": sent["hash"],
        "epoch": "1",
        "run_id": "1",
        "round": "0",
        "id": "00" * 32,
        "inference_id": "00" * 32,
    }


def query_parameters(values: dict[str, str]) -> dict[str, dict[str, str]]:
    """Query parameters a route needs to name anything (its path has no variable for them)."""
    return {
        "cosmos.tx.v1beta1.Service/GetTxsEvent": {"query": "tx.height>0"},
        "cosmos.bank.v1beta1.Query/Balance": {"denom": DENOM},
        "cosmos.bank.v1beta1.Query/SpendableBalanceByDenom": {"denom": DENOM},
        "cosmos.bank.v1beta1.Query/SupplyOf": {"denom": DENOM},
        "gonka.inference.v1.Query/Inferences": {"requester": values["address"]},
        "gonka.inference.v1.Query/EpochWork": {"host": values["host"]},
        "gonka.learning.v1.Query/Verdicts": {"worker": values["worker"]},
    }


def test_every_annotated_get_route_of_every_served_service_answers(net: dict[str, Any]) -> None:
    """The services come from the node's gRPC reflection and each method's routes from its descriptor. A method
    the node implements (its gRPC call is anything but UNIMPLEMENTED) answers over REST: 200, or where a path
    variable names an object the SDK's error body with 400 or 404; one it does not is 501 there too."""
    rest, channel = net["rest"], net["channel"]
    database = ProtoReflectionDescriptorDatabase(channel)
    pool = DescriptorPool(database)
    values = path_values(net)
    parameters = query_parameters(values)
    answered: dict[int, int] = {}
    wrong: list[str] = []
    for service_name in sorted(database.get_services()):
        service = pool.FindServiceByName(service_name)
        for method in service.methods:
            rule = method.GetOptions().Extensions[annotations_pb2.http]
            gets = [b.get for b in (rule, *rule.additional_bindings) if b.WhichOneof("pattern") == "get"]
            if not gets:
                continue
            probe = channel.unary_unary(f"/{service_name}/{method.name}")
            try:
                probe(b"", timeout=10)
                implemented = True
            except grpc.RpcError as err:
                implemented = err.code() != grpc.StatusCode.UNIMPLEMENTED
            for template in gets:
                fields = parse_template(template).fields
                missing = [f for f in fields if f.rpartition(".")[2] not in values]
                assert not (implemented and missing), f"{template}: no test value for {missing}"
                path = VARIABLE.sub(lambda m: values.get(m[1].rpartition(".")[2], "1"), template)
                reply = rest.get(path, params=parameters.get(f"{service_name}/{method.name}", {}))
                answered[reply.status_code] = answered.get(reply.status_code, 0) + 1
                where = f"{service_name}/{method.name} GET {path}: {reply.status_code} {reply.text[:200]}"
                if not implemented:
                    expected = reply.status_code == 501 and sdk_error(reply)["code"] == 12
                else:
                    expected = reply.status_code == 200 or (bool(fields) and reply.status_code in (400, 404))
                    if reply.status_code != 200:
                        sdk_error(reply)
                if not expected:
                    wrong.append(where)
    print("REST GET routes answered, by status:", answered)
    assert wrong == []
    assert answered.get(200, 0) >= 60


def test_bad_input_gets_the_sdk_error_body(net: dict[str, Any]) -> None:
    rest = net["rest"]
    cases = [
        (rest.get("/cosmos/bank/v1beta1/balances/gonka1notanaddress"), 400, 3),
        (rest.get("/cosmos/gov/v1/proposals/one"), 400, 3),
        (rest.get("/cosmos/auth/v1beta1/accounts", params={"pagination.limit": "-5"}), 400, 3),
        (rest.get("/cosmos/auth/v1beta1/accounts", params={"pagination.key": "!!"}), 400, 3),
        (rest.post("/cosmos/tx/v1beta1/txs", content=b"{tx_bytes"), 400, 3),
        (rest.post("/cosmos/tx/v1beta1/txs", json={"tx_bytes": "AAE=", "mode": "BROADCAST_MODE_NOPE"}), 400, 3),
        (rest.post("/cosmos/tx/v1beta1/simulate", json={"tx_bytes": "AAE="}), 400, 3),
        (rest.get("/cosmos/no/such/route"), 501, 12),
    ]
    for reply, status, code in cases:
        assert (reply.status_code, sdk_error(reply)["code"]) == (status, code), reply.text


def test_a_100_mb_body_is_refused_unread_and_the_chain_goes_on(net: dict[str, Any]) -> None:
    api = urlsplit(net["api"])
    height = localnet.status(net["root"])["nodes"][0]["height"]
    with socket.create_connection((api.hostname, api.port), timeout=10) as sock:
        sock.sendall(
            b"POST /cosmos/tx/v1beta1/txs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 104857600\r\n\r\n{"tx_bytes": "'
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 "), head
    assert json.loads(body)["code"] == 8
    localnet.wait_for_height(net["root"], height + 2, timeout_s=30)


def test_network_page_shows_the_chain_live(net: dict[str, Any], browser: webdriver.Chrome, tmp_path: Path) -> None:
    """The page served by the node, in headless Chromium, shows what the chain answers over gRPC (hosts, weights,
    power, collateral, the model's price, epoch, pool, proposals, inferences, the last certificate) and follows
    a payment into the community pool and the blocks as they come."""
    querier: Querier = net["querier"]
    browser.get(net["api"] + "/")
    WebDriverWait(browser, 30).until(lambda d: shown(d, "#height") != "")
    assert browser.find_element(By.ID, "status").get_attribute("data-state") == "live"

    def epoch() -> epochs_query.QueryCurrentEpochResponse:
        request = epochs_query.QueryCurrentEpochRequest()
        return querier.query("/gonka.epochs.v1.Query/CurrentEpoch", request, epochs_query.QueryCurrentEpochResponse)

    def pool() -> int:
        totals = querier.query(
            "/gonka.pool.v1.Query/Totals", pool_query.QueryTotalsRequest(), pool_query.QueryTotalsResponse
        )
        return sum(int(c.amount) for c in totals.balance if c.denom == DENOM)

    hosts = querier.query(
        "/gonka.stake.v1.Query/Hosts", stake_query.QueryHostsRequest(), stake_query.QueryHostsResponse
    ).hosts
    assert hosts

    def chain_figures() -> dict[str, str]:
        current = epoch()
        weights = querier.query(
            "/gonka.stake.v1.Query/EpochWeights",
            stake_query.QueryEpochWeightsRequest(epoch=current.epoch.number),
            stake_query.QueryEpochWeightsResponse,
        ).weights
        powers = querier.query(
            "/gonka.stake.v1.Query/ValidatorPowers",
            stake_query.QueryValidatorPowersRequest(),
            stake_query.QueryValidatorPowersResponse,
        )
        models = querier.query(
            "/gonka.inference.v1.Query/Models",
            inference_query.QueryModelsRequest(),
            inference_query.QueryModelsResponse,
        ).models
        open_proposals = [
            p
            for status in (gov_pb2.PROPOSAL_STATUS_DEPOSIT_PERIOD, gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD)
            for p in querier.query(
                "/cosmos.gov.v1.Query/Proposals",
                gov_query.QueryProposalsRequest(proposal_status=status),
                gov_query.QueryProposalsResponse,
            ).proposals
        ]
        inferences = sum(
            len(
                querier.query(
                    "/gonka.inference.v1.Query/Inferences",
                    inference_query.QueryInferencesRequest(executor=host.operator),
                    inference_query.QueryInferencesResponse,
                ).inferences
            )
            for host in hosts
        )
        figures = {
            "#epoch": str(current.epoch.number),
            "#stage": epochs_pb2.Stage.Name(current.stage),
            "#host-count": str(len(hosts)),
            "#total-power": str(powers.total),
            "#model-count": str(len(models)),
            "#pool": str(pool()),
            "#proposal-count": str(len(open_proposals)),
            "#inference-count": str(inferences),
        }
        for host in hosts:
            row = f'tr[data-operator="{host.operator}"]'
            figures[f'{row} td[data-field="collateral"]'] = host.collateral
            figures[f'{row} td[data-field="weight"]'] = str(
                next((w.weight for w in weights if w.operator == host.operator), 0)
            )
            figures[f'{row} td[data-field="power"]'] = str(
                next((p.weight for p in powers.powers if p.operator == host.operator), 0)
            )
        for model in models:
            figures[f'tr[data-model="{model.id}"] td[data-field="price"]'] = str(model.price_per_token)
        return figures

    page_agrees(browser, chain_figures)
    assert shown(browser, f'tr[data-model="{MODEL["id"]}"] td[data-field="price"]') == MODEL["price_per_token"]
    certified, height = int(shown(browser, "#bls-height")), int(shown(browser, "#height"))
    assert 1 <= certified <= height
    assert shown(browser, "#bls-signed-power") == shown(browser, "#bls-total-power") == shown(browser, "#total-power")

    before = pool()
    faucet = address_of(localnet.load_key(net["root"], "faucet"))
    fund = distribution_tx.MsgFundCommunityPool(depositor=faucet, amount=parse_coins(f"{FUNDED}{DENOM}").to_proto())
    paid_at = int(broadcast_by_rest(net["root"], net["rest"], [fund])["found"].json()["tx_response"]["height"])
    assert pool() == before + FUNDED
    page_agrees(browser, lambda: {"#pool": str(before + FUNDED)})
    assert browser.find_element(By.ID, "pool").text == f"{before + FUNDED:,}"
    WebDriverWait(browser, 20).until(lambda d: int(shown(d, "#height")) > paid_at)
    WebDriverWait(browser, 20).until(lambda d: int(shown(d, "#bls-height")) >= paid_at)
    page_agrees(browser, chain_figures)

    screenshot = Path(os.environ.get(PAGE_PNG) or tmp_path / "network-page.png")
    assert browser.save_screenshot(str(screenshot)), screenshot
    assert screenshot.stat().st_size > 0
