"""``ModelFollower``: the opt-in duty (``[models] fetch = true``) that brings models the chain registers with a
``source_url`` to this host: fetched into the store and checked (``host.models.fetch``), served by an ML node of
their own (``host.models.nodes``), and registered on chain as one of this host's nodes at its executor's URL
(``MsgRegisterNode``, node id ``m-<sha256[:16]>``), so the TAs route to it; the executor proxy sends each request
to the node of its model (``upstream``).

Each step reads the registry once and does what is missing, so a restarted host loads and registers what its
store already holds, and a model already registered at the same URL is not registered again. A refused source is
not tried again (one warning line); one that does not answer is tried every poll, its failure logged once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from host.models.config import ModelsConfig
from host.models.fetch import Identify, Refused, Unreachable, fetch_model
from host.models.nodes import NodeProcess
from host.models.store import ModelStore
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from sdk.client.querier import Querier
from sdk.client.rpc import RPCError
from sdk.client.signer import Submit
from sdk.services import gonka
from x.inference.client import ChainError
from x.inference.client import models as registered_models

log = logging.getLogger("gonka.executor.models")
REGISTER_GAS = 200_000
INFERENCE = gonka("inference").query
StartNode = Callable[[Path, Path, ModelsConfig], Any]
"""Starts an ML node for a directory, logging to a file: something with ``url`` and ``stop()`` (``NodeProcess``)."""


def node_id(weights_sha256: str) -> str:
    return f"m-{weights_sha256[:16]}"


class ModelFollower:
    def __init__(
        self,
        querier: Querier,
        submit: Submit,
        operator: str,
        store: ModelStore,
        config: ModelsConfig,
        identify: Identify,
        start_node: StartNode = NodeProcess,
    ) -> None:
        self.querier, self.submit, self.operator = querier, submit, operator
        self.store, self.config, self.identify, self.start_node = store, config, identify, start_node
        self.url = ""
        """The executor's URL, registered for every fetched model's node; set before ``start``."""
        self.nodes: dict[str, Any] = {}
        """Model id → its running ML node."""
        self.refused: dict[tuple[str, str], str] = {}
        """(model id, source URL) → why it was refused: not tried again."""
        self.logged: dict[str, str] = {}
        """Model id → the last failure logged, so a retried failure is logged once."""
        self.client = httpx.Client(timeout=config.download_timeout_s, follow_redirects=False)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def upstream(self, model_id: str) -> str | None:
        """The ML node serving ``model_id`` when this duty runs one; None: the host's own node."""
        node = self.nodes.get(model_id)
        return None if node is None else str(node.url)

    def status(self) -> dict[str, Any]:
        return {
            "serving": {model: node.url for model, node in sorted(self.nodes.items())},
            "refused": {model: reason for (model, _), reason in sorted(self.refused.items())},
        }

    def step(self) -> None:
        """One read of the registry; every model with a source this host does not serve yet is brought here."""
        registered = {node.node_id: node for node in self._own_nodes()}
        for model in registered_models(self.querier):
            if model.source_url and (model.id, model.source_url) not in self.refused:
                self._serve(model, registered.get(node_id(model.weights_sha256)))

    def _serve(self, model: inference_pb2.Model, registered: inference_pb2.MlNode | None) -> None:
        try:
            if self.store.manifest(model.weights_sha256) is None:
                fetch_model(
                    self.client, model.source_url, model.id, self.store, self.identify, self.config.max_model_bytes
                )
                log.info("model %s fetched from %s", model.id, model.source_url)
            if model.id not in self.nodes:
                directory = self.store.directory(model.weights_sha256)
                self.nodes[model.id] = self.start_node(directory, directory.with_suffix(".log"), self.config)
                log.info("model %s served by the ML node at %s", model.id, self.nodes[model.id].url)
            if registered is None or registered.url != self.url or model.id not in registered.models:
                self._register(model)
        except Refused as error:
            self.refused[(model.id, model.source_url)] = str(error)
            log.warning("model %s from %s refused, nothing kept: %s", model.id, model.source_url, error)
        except (Unreachable, ChainError, RPCError, RuntimeError, ValueError, OSError) as error:
            if self.logged.get(model.id) != str(error):
                self.logged[model.id] = str(error)
                log.warning("model %s not served yet (tried again in %ss): %s", model.id, self.config.poll_s, error)

    def _register(self, model: inference_pb2.Model) -> None:
        message = tx_pb2.MsgRegisterNode(
            operator=self.operator,
            node_id=node_id(model.weights_sha256),
            url=self.url,
            models=[model.id],
            max_concurrency=self.config.max_concurrency,
        )
        sent = self.submit([message], REGISTER_GAS)
        log.info("model %s: node %s registered at %s (tx %s)", model.id, message.node_id, self.url, sent.hash)

    def _own_nodes(self) -> list[inference_pb2.MlNode]:
        got = self.querier.query(
            INFERENCE + "Nodes",
            query_pb2.QueryNodesRequest(operator=self.operator),
            query_pb2.QueryNodesResponse,
        )
        return [node for node in got.nodes if node.operator == self.operator]

    # --- the thread ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="models", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.config.start_timeout_s + 5)
        for node in self.nodes.values():
            node.stop()
        self.client.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as error:  # the chain node did not answer, or the registration was refused: next poll
                log.warning("following the model registry failed: %r", error)
            self._stop.wait(self.config.poll_s)
