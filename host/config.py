"""The executor proxy's configuration (``ExecutorConfig``) and what it is handed: where finishes go
(``FinishSink``: ``host.finisher.Finisher``) and whether the chain will pay (``Admission``:
``host.admission.StartAdmission``), as protocols, so a test can stand in for either."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from host.faults import AnswerFault
from sdk.crypto import secp256k1
from x.inference.client import Finish


class FinishSink(Protocol):
    """Where finishes go: ``host.finisher.Finisher`` (tests record them)."""

    def submit(self, finish: Finish) -> Any: ...


class Escrowed(Protocol):
    """The terms a start escrowed: ``MsgStartInference`` or the committed ``Inference`` record."""

    model: str
    max_tokens: int
    seed: int
    params_hash: bytes


class Admission(Protocol):
    """Whether the chain will pay this host for an inference (``host.admission.StartAdmission``); each method
    raises ``ChainError`` (refused) or ``RPCError`` (the host's node did not answer). Synchronous; run off the loop."""

    def admit(self, inference_id: bytes, start_tx: bytes) -> Escrowed | None:
        """The quick checks before the node works: the start ``start_tx`` carries (None: a reassignment)."""
        ...

    def confirm(self, inference_id: bytes) -> Escrowed:
        """Blocks until the chain has committed the inference as started with this host as its executor: the
        record. Nothing of the answer leaves the host before."""
        ...


class ExecutorConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    mlnode: str
    """The ML node's base URL (http)."""
    finisher: Any
    """A ``FinishSink``; its ``status()`` (when it has one) is ``GET /v1/executor/status``."""
    admission: Any
    """An ``Admission``: asked before the node works on a request."""
    sprint: Any = None
    """The race duties' ``host.sprint.EpochFollower``: its openings route (``GET /v1/sprint/openings``) and its
    counts (the ``"sprint"`` object of ``GET /v1/executor/status``); None: the host does not race."""
    payloads: Any = None
    """``host.poc.Payloads``: keeps every finished answer's payload for PoC V2 and serves it
    (``POST /v1/poc/payload``); None: nothing kept (a drawn validator's check of this host's answers then fails)."""
    poc: Any = None
    """The PoC V2 validation duty's ``host.poc.PocFollower``: its counts join the ``"poc"`` object of
    ``GET /v1/executor/status``; None: the host does not validate."""
    models: Any = None
    """The fetched models' duty, ``host.models.ModelFollower``: ``upstream(model)`` names the ML node of a model it
    serves (requests for it go there, not to ``mlnode``), its counts are the ``"models"`` object of
    ``GET /v1/executor/status``; None: the host serves only its own node's model."""
    store: Any = None
    """``host.models.ModelStore`` published at ``GET /models/<sha256>/manifest.json`` and ``…/<file>``; None: nothing
    published."""
    replay_data: Any = None
    """``host.training.ReplayData`` served at ``GET /v1/training/<run>/<round>/<worker>/<file>``; None: this host
    serves no replay data (the verifiers of its checkpoints then judge them invalid)."""
    training: Any = None
    """The training duty's ``host.training.TrainingFollower``: its counts are the ``"training"`` object of
    ``GET /v1/executor/status``; None: the host neither replays nor claims."""
    release_key: secp256k1.PrivateKey | None = None
    """The host's key: when its node fails before answering, the TA gets its release (``X-Release``) and may
    reassign the inference at once (x/inference README, "Reassignment"); without a key, only after the executor
    window."""
    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, lt=65536)
    connect_timeout_s: float = Field(2.0, gt=0)
    upstream_timeout_s: float = Field(120.0, gt=0)
    """The longest wait for the node's answer (a stream's first bytes), then between two chunks of a stream."""
    pass_through_timeout_s: float = Field(5.0, gt=0)
    max_body_bytes: int = Field(4 << 20, ge=1024)
    admission_threads: int = Field(256, ge=1)
    """Threads for the admission's chain calls: every request holds one while its answer waits for its start's
    block (``StartAdmission.confirm``), so they bound the requests in flight (at 600 a second and a block of
    ~0.4 s, some 240)."""
    fault: AnswerFault | None = None
    """TEST ONLY (``host.faults``): never set on a real host; a dispute invalidates such answers and slashes it."""
    kept_answers: int = Field(4096, ge=0)
    """Recent answers kept to serve again to the same signed request (a client's failover, ``answer_again``)."""
