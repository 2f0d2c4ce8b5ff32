"""host.models: publishing a model directory (store, manifest, ``GET /models/…``), fetching it file by file with
every hash checked, refusing a tampered or mislabelled source with nothing kept, and the fetching duty's
registration of a node for the model (idempotent)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from gonkad.cmd.models import publish
from host.models import MANIFEST, ModelFollower, ModelsConfig, ModelStore, Refused, Unreachable, fetch_model, identify
from host.models.serve import MODEL_FILE, send_model_file
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.client.signer import Sent
from sdk.http.errors import ApiError

OPERATOR = "gonka1operator"
EXECUTOR_URL = "http://127.0.0.1:8100"
SOURCE = "http://publisher.test:8100/models"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny model saved as the trainer saves one, published in a host's store."""
    from mlnode.model import Transformer
    from mlnode.weights import preset, save_model

    root = tmp_path_factory.mktemp("publisher")
    save_model(Transformer(preset("tiny")).init_weights(3), root / "trained", "diloco-tiny-test")
    return {**publish(root / "trained", root / "home", "http://publisher.test:8100"), "home": root / "home"}


def served(store: ModelStore, tamper: dict[str, bytes] | None = None) -> httpx.Client:
    """A client whose every GET is answered from ``store``'s published files (``tamper``: a file's bytes replaced),
    through the proxy's own handler."""

    def handle(request: httpx.Request) -> httpx.Response:
        found = MODEL_FILE.match(request.url.path)
        assert found is not None, request.url.path
        if tamper and found.group(2) in tamper:
            return httpx.Response(200, content=tamper[found.group(2)])
        status, body = asgi_get(store, found.group(1), found.group(2))
        return httpx.Response(status, content=body)

    return httpx.Client(transport=httpx.MockTransport(handle))


def asgi_get(store: ModelStore, sha: str, name: str) -> tuple[int, bytes]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    try:
        asyncio.run(send_model_file(send, store, sha, name))
    except ApiError as error:
        return error.status, b""
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_publish_writes_the_manifest_of_every_file(published: dict[str, Any]) -> None:
    sha = published["weights_sha256"]
    assert published["model"] == f"diloco-tiny-test@sha256:{sha}"
    assert published["source_url"] == f"{SOURCE}/{sha}"
    directory = Path(published["directory"])
    manifest = json.loads((directory / MANIFEST).read_text())
    assert manifest["weights_sha256"] == sha and manifest["name"] == "diloco-tiny-test"
    assert [f["path"] for f in manifest["files"]] == ["config.json", "model.safetensors"]
    for entry in manifest["files"]:
        assert (directory / entry["path"]).stat().st_size == entry["size"]
    store = ModelStore(directory.parent)
    status, body = asgi_get(store, sha, "model.safetensors")
    assert status == 200 and body == (directory / "model.safetensors").read_bytes()
    assert asgi_get(store, sha, "other.bin")[0] == 404  # only what the manifest lists
    assert asgi_get(store, "0" * 64, MANIFEST)[0] == 404
    assert MODEL_FILE.match(f"/models/{sha}/../x") is None


def test_fetch_checks_every_file_and_the_identity(published: dict[str, Any], tmp_path: Path) -> None:
    source = ModelStore(Path(published["directory"]).parent)
    store = ModelStore(tmp_path / "models")
    manifest = fetch_model(served(source), published["source_url"], published["model"], store, identify, 1 << 30)
    assert manifest.identity == published["model"]
    fetched = store.directory(published["weights_sha256"])
    for entry in manifest.files:
        assert (fetched / entry.path).read_bytes() == (Path(published["directory"]) / entry.path).read_bytes()
    assert identify(fetched) == published["model"]
    assert sorted(p.name for p in store.root.iterdir()) == [published["weights_sha256"]]


def refused_fetch(published: dict[str, Any], tmp_path: Path, client: httpx.Client, **changes: Any) -> str:
    store = ModelStore(tmp_path / "models")
    arguments = {"model_id": published["model"], "identify": identify, "max_bytes": 1 << 30, **changes}
    with pytest.raises(Refused) as refusal:
        fetch_model(client, published["source_url"], store=store, **arguments)
    assert not store.root.exists() or list(store.root.iterdir()) == []  # nothing partial kept
    return str(refusal.value)


def test_a_tampered_file_is_refused_and_nothing_kept(published: dict[str, Any], tmp_path: Path) -> None:
    source = ModelStore(Path(published["directory"]).parent)
    weights = bytearray((Path(published["directory"]) / "model.safetensors").read_bytes())
    weights[-1] ^= 1
    reason = refused_fetch(published, tmp_path, served(source, {"model.safetensors": bytes(weights)}))
    assert reason.startswith("model.safetensors: ") and "the manifest says" in reason
    longer = refused_fetch(published, tmp_path, served(source, {"config.json": b"x" * 100_000}))
    assert "more bytes than the manifest lists" in longer


def test_a_source_of_another_model_or_identity_is_refused(published: dict[str, Any], tmp_path: Path) -> None:
    source = ModelStore(Path(published["directory"]).parent)
    other = f"diloco-tiny-test@sha256:{'1' * 64}"
    assert "the manifest is of" in refused_fetch(published, tmp_path, served(source), model_id=other)
    assert "bytes exceed the 10 this host takes" in refused_fetch(published, tmp_path, served(source), max_bytes=10)
    lying = refused_fetch(published, tmp_path, served(source), identify=lambda _: other)
    assert lying == f"the files load as {other}, not {published['model']}"
    forged = served(source, {MANIFEST: b'{"name": "x", "weights_sha256": "y", "files": []}'})
    assert "is no manifest" in refused_fetch(published, tmp_path, forged)


def test_an_unreachable_source_is_tried_again(published: dict[str, Any], tmp_path: Path) -> None:
    client = httpx.Client(transport=httpx.MockTransport(lambda _: httpx.Response(503)))
    with pytest.raises(Unreachable):
        fetch_model(client, published["source_url"], published["model"], ModelStore(tmp_path), identify, 1 << 30)


class Chain:
    """The registry a follower reads, and the transactions it sends (registrations join the registry)."""

    def __init__(self, model: inference_pb2.Model) -> None:
        self.models = [model]
        self.nodes: list[inference_pb2.MlNode] = []
        self.sent: list[tx_pb2.MsgRegisterNode] = []

    def query(self, path: str, request: Any, response_type: Any) -> Any:
        if path.endswith("Models"):
            return query_pb2.QueryModelsResponse(models=self.models)
        return query_pb2.QueryNodesResponse(nodes=[n for n in self.nodes if n.operator == request.operator])

    def submit(self, messages: list[Any], gas: int) -> Sent:
        for message in messages:
            self.sent.append(message)
            self.nodes.append(
                inference_pb2.MlNode(
                    operator=message.operator, node_id=message.node_id, url=message.url, models=message.models
                )
            )
        return Sent("AB", b"")


class FakeNode:
    def __init__(self, directory: Path, log: Path, config: ModelsConfig) -> None:
        self.url, self.directory, self.stopped = "http://127.0.0.1:9999", directory, False

    def stop(self) -> None:
        self.stopped = True


def follower(chain: Chain, store: ModelStore, client: httpx.Client) -> ModelFollower:
    duty = ModelFollower(
        chain,  # type: ignore[arg-type]
        chain.submit,
        OPERATOR,
        store,
        ModelsConfig(fetch=True),
        identify=lambda directory: (
            json.loads((directory / MANIFEST).read_text())["name"]
            + "@sha256:"
            + directory.name.removeprefix(".partial-")
        ),
        start_node=FakeNode,
    )
    duty.client, duty.url = client, EXECUTOR_URL
    return duty


def chain_model(published: dict[str, Any], source_url: str) -> inference_pb2.Model:
    return inference_pb2.Model(
        id=published["model"],
        name=published["name"],
        weights_sha256=published["weights_sha256"],
        context_length=published["context_length"],
        price_per_token=1,
        source_url=source_url,
    )


def test_the_follower_fetches_serves_and_registers_once(published: dict[str, Any], tmp_path: Path) -> None:
    source = ModelStore(Path(published["directory"]).parent)
    chain = Chain(chain_model(published, published["source_url"]))
    store = ModelStore(tmp_path / "models")
    duty = follower(chain, store, served(source))
    duty.step()
    assert store.manifest(published["weights_sha256"]) is not None
    assert duty.upstream(published["model"]) == "http://127.0.0.1:9999"
    assert duty.upstream("tiny-seed0@sha256:" + "0" * 64) is None
    assert [(m.node_id, m.url, list(m.models), m.max_concurrency) for m in chain.sent] == [
        (f"m-{published['weights_sha256'][:16]}", EXECUTOR_URL, [published["model"]], 4)
    ]
    duty.step()  # registered at this URL already: nothing again
    assert len(chain.sent) == 1
    restarted = follower(chain, store, httpx.Client(transport=httpx.MockTransport(lambda _: httpx.Response(500))))
    restarted.step()  # the store holds it: served again without a download, its registration stands
    assert restarted.upstream(published["model"]) is not None and len(chain.sent) == 1
    restarted.stop()
    assert all(node.stopped for node in restarted.nodes.values())


def test_the_follower_refuses_a_tampered_source_once(
    published: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = ModelStore(Path(published["directory"]).parent)
    chain = Chain(chain_model(published, published["source_url"]))
    requests: list[str] = []
    tampered = served(source, {"model.safetensors": b"not the weights"})

    def counting(request: httpx.Request) -> httpx.Response:
        requests.append(request.url.path)
        return tampered._transport.handle_request(request)  # type: ignore[attr-defined]

    duty = follower(chain, ModelStore(tmp_path / "models"), httpx.Client(transport=httpx.MockTransport(counting)))
    with caplog.at_level("WARNING", logger="gonka.executor.models"):
        duty.step()
        duty.step()
    assert len(requests) == 3  # the manifest and its two files, once: a refused source is not tried again
    assert chain.sent == [] and duty.upstream(published["model"]) is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "refused, nothing kept: model.safetensors: 15 bytes" in lines[0]
    assert duty.status()["refused"].keys() == {published["model"]}
    chain.models = [chain_model(published, "")]  # no source: nothing to fetch
    duty.step()
    assert len(requests) == 3


def test_a_fetched_models_answers_are_re_executed_on_its_own_node() -> None:
    """PoC V2: the validation duty sends a fetched model's ``/v1/verify`` to that model's node."""
    from host.poc.node import VerifyNode

    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(200, json={"match": True, "score": 1.0, "reasons": []})

    node = VerifyNode("http://127.0.0.1:8080", 5, {"fetched@sha256:ab": "http://127.0.0.1:9999/"}.get)
    node.client = httpx.Client(base_url="http://127.0.0.1:8080", transport=httpx.MockTransport(answer))
    node.verify({"model": "fetched@sha256:ab"})
    node.verify({"model": "tiny-seed0@sha256:cd"})
    assert asked == ["http://127.0.0.1:9999/v1/verify", "http://127.0.0.1:8080/v1/verify"]
