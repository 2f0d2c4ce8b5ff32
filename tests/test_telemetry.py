"""The node's metrics (sdk/telemetry) after scripted blocks on an in-process chain: the framework's figures as
the ABCI and gRPC servers report calls, each module's figures equal to what its keeper reads from committed
state (read once per height), the endpoint over HTTP, and app.toml's ``[telemetry]``. On a real localnet:
tests/test_bank_localnet.py's metrics test."""

from __future__ import annotations

import asyncio
from collections import Counter as Tally
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from prometheus_client import CollectorRegistry
from test_abci_server import Client, serve
from test_inference import ALICE, HOST_A, TA, addr, block, finish, id_of, make_chain, signed, start

from gonkad.config import AppConfig, TelemetryConfig, load_app_config, save_app_config
from sdk.abci.application import Application
from sdk.abci.server import ABCIServer
from sdk.crypto import bech32
from sdk.grpc import GRPCServer
from sdk.telemetry.module_figures import ModuleFigures, SnapshotJob, read_figures
from sdk.telemetry.node_metrics import NodeMetrics
from sdk.telemetry.observed import observe_calls
from sdk.telemetry.server import MetricsServer

BALANCE = "/cosmos.bank.v1beta1.Query/Balance"
INFERENCE = "/gonka.inference.v1.Query/Inference"


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[InProcessChain]:
    with make_chain(tmp_path / "db") as chain:
        yield chain


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_framework_metrics_after_scripted_blocks(chain: InProcessChain) -> None:
    registry = CollectorRegistry()
    metrics = NodeMetrics(registry)
    observe_calls(chain.app, metrics.observe_abci)
    good = start(chain, max_tokens=10)
    unknown = finish(b"\x07" * 32)  # no such inference: refused by x/inference
    response = block(chain, [signed(chain, TA, good), signed(chain, HOST_A, unknown)])
    ok, failed = response.tx_results
    assert ok.code == 0 and failed.code != 0
    responses = [response] + [block(chain) for _ in range(6)]  # the good one expires (timeout_blocks 5)
    block_events = Tally(event.type for reply in responses for event in reply.events)
    assert block_events["expire_inference"] == 1

    assert value(registry, "gonkad_block_height") == chain.height
    assert value(registry, "gonkad_blocks_total") == 7
    assert value(registry, "gonkad_txs_total", codespace="", code="0") == 1
    assert value(registry, "gonkad_txs_total", codespace=failed.codespace, code=str(failed.code)) == 1
    assert value(registry, "gonkad_gas_used_total") == ok.gas_used + failed.gas_used
    assert value(registry, "gonkad_gas_wanted_total") == ok.gas_wanted + failed.gas_wanted
    for kind, count in block_events.items():
        assert value(registry, "gonkad_block_events_total", type=kind) == count
    assert value(registry, "gonkad_block_events_total", type="start_inference") is None  # a tx's event
    assert value(registry, "gonkad_finalize_block_seconds_count") == 7
    assert value(registry, "gonkad_commit_seconds_count") == 7
    assert 0 < (value(registry, "gonkad_commit_seconds_sum") or 0) < 60

    assert chain.check(signed(chain, TA, start(chain, max_tokens=11))).code == 0
    assert chain.check(b"not a tx").code != 0
    chain.app.check_tx(abci.RequestCheckTx(tx=b"still not", type=abci.RECHECK))
    assert value(registry, "gonkad_check_tx_total", type="new", result="accepted") == 1
    assert value(registry, "gonkad_check_tx_total", type="new", result="refused") == 1
    assert value(registry, "gonkad_check_tx_total", type="recheck", result="refused") == 1

    request = bank_query.QueryBalanceRequest(address=addr(ALICE), denom="ngonka")
    chain.query(BALANCE, request, bank_query.QueryBalanceResponse)
    chain.app.query(abci.RequestQuery(path="/no/such/path/" + "x" * 50))
    assert value(registry, "gonkad_query_seconds_count", server="abci", method=BALANCE) == 1
    assert value(registry, "gonkad_query_seconds_count", server="abci", method="unknown") == 1


def counting(chain: InProcessChain, reads: list[int]) -> Callable[[], SnapshotJob]:
    """What the node hands the collector (a committed snapshot's figures), counting the reads in ``reads``."""

    def take() -> SnapshotJob:
        job = chain.app.committed_job(lambda state, header: read_figures(chain.app.modules, state, header))
        reads.append(chain.height)
        return job

    return take


def test_module_figures_equal_the_keepers_reads_once_per_height(chain: InProcessChain) -> None:
    registry = CollectorRegistry()
    reads: list[int] = []
    registry.register(ModuleFigures(lambda: chain.height, counting(chain, reads)))
    first = start(chain, max_tokens=100)
    assert block(chain, [signed(chain, TA, first)]).tx_results[0].code == 0
    second = start(chain, max_tokens=20)
    assert block(chain, [signed(chain, TA, second)]).tx_results[0].code == 0
    assert block(chain, [signed(chain, HOST_A, finish(id_of(first)))]).tx_results[0].code == 0

    assert value(registry, "gonka_inference_inferences", status="started") == 1
    assert value(registry, "gonka_inference_inferences", status="finished") == 1
    assert value(registry, "gonka_inference_inferences", status="expired") == 0
    assert value(registry, "gonka_inference_escrow", denom="ngonka") == chain.balance(
        chain.app.inference_keeper.address
    )
    assert value(registry, "gonka_inference_escrow", denom="ngonka") == 20 * second.fee_per_token
    assert value(registry, "gonka_inference_models") == 2
    assert reads == [chain.height]  # every figure above came from one read

    ctx = chain.context()
    epoch = chain.app.epochs_keeper.current_epoch(ctx)
    assert value(registry, "gonka_epochs_epoch") == epoch.number
    assert value(registry, "gonka_epochs_stage") == chain.app.epochs_keeper.current_stage(ctx)
    stake = chain.app.stake_keeper
    hosts = stake.hosts(ctx)
    assert value(registry, "gonka_stake_hosts") == len(hosts) == 2
    host = addr(HOST_A)
    assert value(registry, "gonka_stake_host_power", host=host) == stake.validator_power(ctx, bech32.decode(host)) > 0
    assert value(registry, "gonka_stake_host_collateral", host=host) == int(
        stake.must_get_host(ctx, bech32.decode(host)).collateral
    )
    assert value(registry, "gonka_stake_total_power") == sum(stake.validator_powers(ctx).values())
    assert value(registry, "gonka_bls_last_certified_height") == (
        chain.app.bls_keeper.latest_certified_height(ctx) or 0
    )
    assert value(registry, "gonka_slashing_tombstoned") == 0
    assert reads == [chain.height]

    block(chain)
    assert value(registry, "gonka_inference_inferences", status="finished") == 1
    assert reads == [chain.height - 1, chain.height]


def test_a_failing_module_costs_only_its_own_figures(chain: InProcessChain, caplog: pytest.LogCaptureFixture) -> None:
    def broken(ctx: Any) -> list[Any]:
        raise RuntimeError("broken figures")

    chain.app.module_named("epochs").metrics = broken  # type: ignore[method-assign]
    registry = CollectorRegistry()
    registry.register(ModuleFigures(lambda: chain.height, counting(chain, [])))
    assert value(registry, "gonka_epochs_epoch") is None
    assert value(registry, "gonka_stake_hosts") == 2
    assert "metrics of module epochs failed" in caplog.text


def test_abci_server_reports_each_answer_and_survives_a_failing_observer() -> None:
    seen: list[tuple[str, float]] = []

    def observe(kind: str, request: Any, response: Any, seconds: float) -> None:
        seen.append((kind, seconds))
        if kind == "check_tx":
            raise RuntimeError("observer bug")

    async def scenario(server: ABCIServer) -> None:
        client = await Client.connect(server.port)
        requests = [
            abci.Request(check_tx=abci.RequestCheckTx(tx=b"tx")),
            abci.Request(finalize_block=abci.RequestFinalizeBlock(height=1, txs=[b"tx"])),
            abci.Request(commit=abci.RequestCommit()),
            abci.Request(query=abci.RequestQuery(path="/x")),
        ]
        answers = await client.call(*requests)
        assert [a.WhichOneof("value") for a in answers] == ["check_tx", "finalize_block", "commit", "query"]
        await client.close()

    serve(scenario, Application(), observe=observe)  # type: ignore[arg-type]
    assert [kind for kind, _ in seen] == ["check_tx", "finalize_block", "commit", "query"]
    assert all(seconds >= 0 for _, seconds in seen)


def test_grpc_calls_are_timed_by_method(chain: InProcessChain) -> None:
    registry = CollectorRegistry()
    metrics = NodeMetrics(registry)

    async def scenario() -> None:
        server = GRPCServer(chain.app, "127.0.0.1:0", "tcp://127.0.0.1:1", observe=metrics.observe_grpc_query)
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                balance = channel.unary_unary(
                    BALANCE,
                    request_serializer=bank_query.QueryBalanceRequest.SerializeToString,
                    response_deserializer=bank_query.QueryBalanceResponse.FromString,
                )
                await balance(bank_query.QueryBalanceRequest(address=addr(ALICE), denom="ngonka"))
                with pytest.raises(grpc.aio.AioRpcError):
                    await balance(bank_query.QueryBalanceRequest(address="not an address", denom="ngonka"))
        finally:
            await server.stop()

    asyncio.run(scenario())
    assert value(registry, "gonkad_query_seconds_count", server="grpc", method=BALANCE) == 2


def test_the_endpoint_serves_the_registry_over_http(chain: InProcessChain) -> None:
    registry = CollectorRegistry()
    metrics = NodeMetrics(registry)
    registry.register(ModuleFigures(lambda: chain.height, counting(chain, [])))
    observe_calls(chain.app, metrics.observe_abci)
    block(chain)
    server = MetricsServer(registry, "127.0.0.1", 0)
    try:
        text = httpx.get(f"http://127.0.0.1:{server.port}/metrics", timeout=10).text
    finally:
        server.stop()
    assert f"gonkad_block_height {float(chain.height)}" in text
    assert "gonka_stake_hosts 2.0" in text
    assert 'gonka_inference_inferences{status="started"} 0.0' in text


def test_telemetry_settings_round_trip_through_app_toml(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    config = AppConfig(telemetry=TelemetryConfig(enabled=True, prometheus_listen_addr="127.0.0.1:0"))
    save_app_config(tmp_path, config)
    assert "[telemetry]\nenabled = true\n" in (tmp_path / "config" / "app.toml").read_text()
    assert load_app_config(tmp_path) == config
    assert AppConfig().telemetry.enabled is False
