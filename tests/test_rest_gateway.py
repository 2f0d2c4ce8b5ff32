"""The REST API (sdk/rest) over an in-process chain: routes derived from the served services' ``google.api.http``
options, path and query parameters into request fields, the SDK's proto3 JSON and error body, the body limit,
the block-height header, simulate, and the static files. Against a real localnet: tests/test_rest_localnet.py."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
import httpx
import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_query
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2
from google.api import annotations_pb2
from google.protobuf import descriptor_pool

from sdk.client.txbuilder import address_of, send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.crypto import secp256k1
from sdk.grpc import GRPCServer
from sdk.rest import RESTServer
from sdk.rest.request import BadInput, build_request
from sdk.rest.response import error_json, http_status, message_json
from sdk.rest.routes import Route, build_routes, find_route
from sdk.rest.server import listen_tcp
from sdk.rest.template import parse_template
from sdk.workers import query_workers

CHAIN = "gonka-rest-app"
DENOM = "ngonka"
ALICE = secp256k1.PrivateKey(b"\x01" * 32)
BOB = address_of(secp256k1.PrivateKey(b"\x02" * 32))
MAX_BODY = 4096
T = TypeVar("T")


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[InProcessChain]:
    with InProcessChain(tmp_path / "db", {address_of(ALICE): [(DENOM, 1_000)]}, chain_id=CHAIN) as chain:
        yield chain


def services(chain: InProcessChain) -> dict[str, Any]:
    return GRPCServer(chain.app, "127.0.0.1:0", "tcp://127.0.0.1:1").services()


def over_rest(
    chain: InProcessChain, calls: Callable[[httpx.AsyncClient, int], Awaitable[T]], static_dir: Path | None = None
) -> T:
    """``calls`` against a REST server on ``chain``'s app with one query worker, as a node runs it."""

    async def scenario() -> T:
        server = RESTServer(services(chain), "127.0.0.1", 0, MAX_BODY, workers, static_dir)
        await server.start()
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as client:
                return await calls(client, server.port)
        finally:
            await server.stop()

    with query_workers(1) as workers:
        return asyncio.run(scenario())


def route(chain: InProcessChain, verb: str, path: str) -> tuple[Route, dict[str, str]]:
    found = find_route(build_routes(services(chain)), verb, path)
    assert found is not None, path
    return found


# --- path templates and routes ---


def test_template_variables_capture_decoded_values_and_double_star_spans_segments() -> None:
    simple = parse_template("/cosmos/bank/v1beta1/balances/{address}/by_denom")
    assert simple.match("/cosmos/bank/v1beta1/balances/gonka1x/by_denom") == {"address": "gonka1x"}
    assert simple.match("/cosmos/bank/v1beta1/balances/a/b/by_denom") is None
    assert simple.match("/cosmos/bank/v1beta1/balances/a%2Fb/by_denom") == {"address": "a/b"}
    deep = parse_template("/cosmos/bank/v1beta1/denoms_metadata/{denom=**}")
    assert deep.match("/cosmos/bank/v1beta1/denoms_metadata/ibc/ABC") == {"denom": "ibc/ABC"}
    nested = parse_template("/v1/{pagination.key}/{name=projects/*}:cancel")
    assert nested.match("/v1/AAE%3D/projects/p1:cancel") == {"pagination.key": "AAE=", "name": "projects/p1"}
    assert (simple.literals, deep.literals) == (5, 4)
    for bad in ("no/slash", "/a/{x", "/a/{1x}", "/a//b"):
        with pytest.raises(ValueError):
            parse_template(bad)


def test_every_annotated_method_served_has_its_routes_and_no_other(chain: InProcessChain) -> None:
    """Derived, not listed: each served method's http rule and additional bindings become routes, so the count
    of routes is the count of bindings, Gonka's services included."""
    served = services(chain)
    pool = descriptor_pool.Default()
    bindings = 0
    for name, methods in served.items():
        for method in methods:
            rule = pool.FindServiceByName(name).methods_by_name[method].GetOptions().Extensions[annotations_pb2.http]
            bindings += (rule.WhichOneof("pattern") is not None) + len(rule.additional_bindings)
    table = build_routes(served)
    assert sum(map(len, table.values())) == bindings
    gonka = {r.service for r in table["GET"] if r.service.startswith("gonka.")}
    assert gonka == {name for name in served if name.startswith("gonka.")}
    assert {(r.verb, r.path.template) for r in table["POST"]} == {
        ("POST", "/cosmos/tx/v1beta1/txs"),
        ("POST", "/cosmos/tx/v1beta1/simulate"),
    }
    beacon = [r.path.template for r in table["GET"] if (r.service, r.method) == ("gonka.bls.v1.Query", "Beacon")]
    assert sorted(beacon) == ["/gonka/bls/v1/beacon", "/gonka/bls/v1/beacon/{height}"]  # an additional binding


def test_more_literal_segments_win(chain: InProcessChain) -> None:
    found, values = route(chain, "GET", "/cosmos/tx/v1beta1/txs/ABCD")
    assert (found.method, values) == ("GetTx", {"hash": "ABCD"})
    found, values = route(chain, "GET", f"/cosmos/bank/v1beta1/balances/{BOB}/by_denom")
    assert (found.method, values) == ("Balance", {"address": BOB})


# --- request fields ---


def test_query_parameters_fill_nested_repeated_and_enum_fields(chain: InProcessChain) -> None:
    accounts, _ = route(chain, "GET", "/cosmos/auth/v1beta1/accounts")
    key = base64.b64encode(b"\xfb\xff\x00").decode()
    query = f"pagination.key={key.replace('+', '%2B')}&pagination.limit=5&pagination.countTotal=true"
    query += "&pagination.reverse=1&other=x"  # camelCase names too; a name of no field is ignored
    request = build_request(accounts, {}, query.encode(), b"")
    assert request == auth_query.QueryAccountsRequest(
        pagination=pagination_pb2.PageRequest(key=b"\xfb\xff\x00", limit=5, count_total=True, reverse=True)
    )
    url_safe = build_request(accounts, {}, b"pagination.key=-_8A", b"")
    assert url_safe.pagination.key == b"\xfb\xff\x00"
    events, _ = route(chain, "GET", "/cosmos/tx/v1beta1/txs")
    request = build_request(events, {}, b"events=a.b%3D%27c%27&events=d.e%3D1&order_by=ORDER_BY_DESC&page=2", b"")
    assert request == service_pb2.GetTxsEventRequest(
        events=["a.b='c'", "d.e=1"], order_by=service_pb2.ORDER_BY_DESC, page=2
    )
    assert build_request(events, {}, b"order_by=1", b"").order_by == service_pb2.ORDER_BY_ASC


@pytest.mark.parametrize(
    "query",
    [
        b"pagination.limit=abc",
        b"pagination.limit=-1",
        b"pagination.count_total=yes",
        b"pagination.key=%%%",
        b"pagination=1",
    ],
)
def test_malformed_parameters_are_bad_input(chain: InProcessChain, query: bytes) -> None:
    accounts, _ = route(chain, "GET", "/cosmos/auth/v1beta1/accounts")
    with pytest.raises(BadInput):
        build_request(accounts, {}, query, b"")


def test_path_values_convert_by_field_type(chain: InProcessChain) -> None:
    proposal, values = route(chain, "GET", "/cosmos/gov/v1/proposals/7/votes/" + BOB)
    request = build_request(proposal, values, b"", b"")
    assert (request.proposal_id, request.voter) == (7, BOB)
    with pytest.raises(BadInput, match="proposal_id"):
        build_request(proposal, {**values, "proposal_id": "seven"}, b"", b"")


def test_body_fills_the_request_strictly(chain: InProcessChain) -> None:
    broadcast, _ = route(chain, "POST", "/cosmos/tx/v1beta1/txs")
    request = build_request(broadcast, {}, b"", b'{"tx_bytes": "AAE=", "mode": "BROADCAST_MODE_SYNC"}')
    assert request == service_pb2.BroadcastTxRequest(tx_bytes=b"\x00\x01", mode=service_pb2.BROADCAST_MODE_SYNC)
    for bad in (b"{", b"[1]", b'{"tx_bytes": 5}', b'{"unknown": 1}', b'{"mode": "NO_SUCH_MODE"}', b"\xff"):
        with pytest.raises(BadInput):
            build_request(broadcast, {}, b"", bad)


# --- JSON and errors ---


def test_json_is_the_sdks_proto3_json() -> None:
    """Field names as in the .proto, defaults printed, 64-bit integers as strings, enums by name, bytes in base64."""
    printed = json.loads(
        message_json(service_pb2.GetTxsEventRequest(events=["x"], order_by=service_pb2.ORDER_BY_DESC, page=2**40))
    )
    assert printed["order_by"] == "ORDER_BY_DESC" and printed["page"] == str(2**40) and printed["query"] == ""
    assert printed["limit"] == "0"
    assert json.loads(message_json(service_pb2.BroadcastTxRequest(tx_bytes=b"\x00\x01")))["tx_bytes"] == "AAE="


def test_error_body_and_http_status_are_grpc_gateways() -> None:
    assert json.loads(error_json(grpc.StatusCode.NOT_FOUND, "gone")) == {"code": 5, "message": "gone", "details": []}
    assert [http_status(c) for c in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)] == [400, 404]
    assert [http_status(c) for c in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNAVAILABLE)] == [501, 503]
    assert http_status(grpc.StatusCode.FAILED_PRECONDITION) == 400
    assert http_status(grpc.StatusCode.RESOURCE_EXHAUSTED) == 429


# --- over HTTP ---


def test_queries_answer_as_grpc_does_with_the_height_header(chain: InProcessChain) -> None:
    send = sign_tx(ALICE, [send_msg(address_of(ALICE), BOB, parse_coins(f"7{DENOM}"))], CHAIN, 0, 0)
    assert chain.block([send]).tx_results[0].code == 0
    seven = chain.height
    chain.block()

    async def calls(client: httpx.AsyncClient, port: int) -> list[tuple[int, Any, str | None]]:
        out = []
        for headers in ({}, {"x-cosmos-block-height": str(seven - 1)}, {"x-cosmos-block-height": "abc"}):
            resp = await client.get(f"/cosmos/bank/v1beta1/balances/{BOB}", headers=headers)
            out.append((resp.status_code, resp.json(), resp.headers.get("grpc-metadata-x-cosmos-block-height")))
        account = await client.get(f"/cosmos/auth/v1beta1/accounts/{address_of(ALICE)}")
        out.append((account.status_code, account.json()["account"]["@type"], None))
        return out

    empty = {"balances": [], "pagination": {"next_key": "", "total": "0"}}
    [latest, before, bad, account] = over_rest(chain, calls)
    assert latest == (200, {**empty, "balances": [{"denom": DENOM, "amount": "7"}]}, str(chain.height))
    assert before == (200, empty, str(seven - 1))
    assert bad[0] == 400 and bad[1]["code"] == 3 and "x-cosmos-block-height" in bad[1]["message"]
    assert account == (200, "/cosmos.auth.v1beta1.BaseAccount", None)


def test_bad_input_and_unknown_routes_get_the_sdk_error_body(chain: InProcessChain) -> None:
    async def calls(client: httpx.AsyncClient, port: int) -> list[tuple[int, dict[str, Any]]]:
        answers = [
            await client.get("/cosmos/bank/v1beta1/balances/not-an-address"),
            await client.get("/cosmos/auth/v1beta1/accounts?pagination.limit=abc"),
            await client.get("/cosmos/gov/v1/proposals/abc"),
            await client.get("/no/such/route"),
            await client.delete("/cosmos/bank/v1beta1/supply"),
            await client.post("/cosmos/tx/v1beta1/simulate", content=b"{not json"),
            await client.post("/cosmos/tx/v1beta1/simulate", content=b"{}"),
            await client.get("/gonka/inference/v1/models/no%2Fsuch"),
        ]
        return [(a.status_code, a.json()) for a in answers]

    answers = over_rest(chain, calls)
    assert [(status, body["code"]) for status, body in answers] == [
        (400, 3),
        (400, 3),
        (400, 3),
        (501, 12),
        (501, 12),
        (400, 3),
        (400, 3),
        (404, 5),
    ]
    assert all(set(body) == {"code", "message", "details"} and body["details"] == [] for _, body in answers)
    assert answers[3][1]["message"] == "Not Implemented"
    assert "no/such" in answers[7][1]["message"]  # %2F stays inside the value


def raw_exchange(port: int, head: bytes) -> bytes:
    """Send only ``head`` (a request line and headers, and perhaps a little body) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    """A body sent chunked: it names no length up front."""
    for part in parts:
        yield part


def test_a_body_over_the_limit_is_refused_before_it_is_read(chain: InProcessChain) -> None:
    """A 100 MB Content-Length is answered 413 and the connection closed while the client has sent a few bytes of
    it; a chunked body past the limit is refused as it arrives."""

    async def calls(client: httpx.AsyncClient, port: int) -> tuple[bytes, int, dict[str, Any]]:
        head = (
            b"POST /cosmos/tx/v1beta1/txs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 104857600\r\n\r\n{"tx_bytes": "'
        )
        refused = await asyncio.to_thread(raw_exchange, port, head)
        chunked = await client.post("/cosmos/tx/v1beta1/txs", content=chunks(b" " * 3000, b" " * 3000))
        return refused, chunked.status_code, chunked.json()

    refused, status, body = over_rest(chain, calls)
    head, _, payload = refused.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and b"connection: close" in head.lower()
    assert json.loads(payload)["code"] == 8
    assert (status, body["code"]) == (413, 8)


def test_simulate_gives_gas(chain: InProcessChain) -> None:
    tx = sign_tx(ALICE, [send_msg(address_of(ALICE), BOB, parse_coins(f"3{DENOM}"))], CHAIN, 0, 0)

    async def calls(client: httpx.AsyncClient, port: int) -> httpx.Response:
        return await client.post("/cosmos/tx/v1beta1/simulate", json={"tx_bytes": base64.b64encode(tx).decode()})

    answer = over_rest(chain, calls)
    assert answer.status_code == 200, answer.text
    gas = answer.json()["gas_info"]
    assert int(gas["gas_used"]) > 0 and isinstance(gas["gas_used"], str)


def test_static_files_are_served_at_the_root_and_under_web(chain: InProcessChain, tmp_path: Path) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<h1>network</h1>")
    (web / "app.js").write_text("1;")

    async def calls(client: httpx.AsyncClient, port: int) -> list[tuple[int, str]]:
        paths = ["/", "/web/app.js", "/web/missing.css", "/web/..%2Fsecret", "/web/"]
        return [(r.status_code, r.headers["content-type"]) for r in [await client.get(p) for p in paths]]

    assert over_rest(chain, calls, web) == [
        (200, "text/html"),
        (200, "text/javascript"),
        (404, "application/json"),
        (404, "application/json"),
        (404, "application/json"),
    ]


def test_the_listening_socket_names_tcp_so_answers_are_not_delayed() -> None:
    """asyncio sets TCP_NODELAY only on connections of a socket made with IPPROTO_TCP; without it uvicorn's head
    and body writes wait out the client's delayed ACK (~40 ms an answer)."""
    sock = listen_tcp("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
