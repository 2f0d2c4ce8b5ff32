"""What the Transfer Agent's tests and benchmark stand it on: a scripted in-memory ChainView, a fake ML
node (a tiny ASGI app with the node's chat, stream and node-info routes and a controllable delay); tests/servers.py
serves them."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from agent.chain import ChainError, Model, Node, StartRequest
from sdk.client.signing import canonical_json


def start_tx(request: StartRequest) -> bytes:
    """What a scripted chain hands back as the start transaction it took (the TA forwards it as X-Start-Tx)."""
    return b"start|" + request.inference_id + b"|" + request.executor.encode()


@dataclass
class ScriptedChain:
    """A ChainView whose registry and balances are plain fields; it records every start it accepts."""

    models_: list[Model]
    nodes_: list[Node]
    balances: dict[str, int] = field(default_factory=dict)
    tas_: list[str] = field(default_factory=list)
    height: int = 42
    refuse: ChainError | None = None
    starts: list[StartRequest] = field(default_factory=list)
    started: set[bytes] = field(default_factory=set)
    finished: dict[bytes, str] = field(default_factory=dict)
    """Inference id → its executor, for the ones the scripted chain has STARTED by another TA, or FINISHED."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def chain_id(self) -> str:
        return "gonka-test"

    def latest_height(self) -> int:
        return self.height

    def models(self) -> list[Model]:
        return list(self.models_)

    def nodes(self, model_id: str) -> list[Node]:
        return [node for node in self.nodes_ if model_id in node.models]

    def spendable(self, address: str, denom: str) -> int:
        assert denom == "ngonka"
        return self.balances.get(address, 0)

    def start_inference(self, request: StartRequest) -> bytes:
        with self.lock:
            if self.refuse is not None:
                raise self.refuse
            if not request.reassign and request.inference_id in self.started:
                raise ChainError("already_exists", "inference already started")
            self.started.add(request.inference_id)
            self.starts.append(request)
            return start_tx(request)

    def executor_of(self, inference_id: bytes) -> str | None:
        return self.finished.get(inference_id)

    def tas(self) -> list[str]:
        return list(self.tas_)


class FakeNode:
    """An ML node that answers ``"<name> says hi"`` token by token, each token after ``delay_s``."""

    def __init__(
        self,
        name: str,
        models: tuple[str, ...] = ("m1",),
        max_concurrency: int = 8,
        delay_s: float = 0.0,
        tokens: int = 3,
        hold: threading.Event | None = None,
    ) -> None:
        self.name = name
        self.models = models
        self.max_concurrency = max_concurrency
        self.delay_s = delay_s
        self.tokens = tokens
        self.hold = hold
        """While given and not set, answers wait (set it from the test's thread to let them go)."""
        self.in_flight = 0
        self.served: list[dict[str, Any]] = []
        """Request bodies in the order their answers finished."""

    def words(self) -> list[str]:
        return [f"{self.name} ", "says ", "hi"][: self.tokens] + ["!"] * max(0, self.tokens - 3)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/v1/node/info":
            info = {
                "models": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models],
                "device": "cpu",
                "threads": 1,
                "memory": {"kind": "ram", "total_bytes": 1 << 30, "available_bytes": 1 << 29},
                "memory_bandwidth_gbps": 1.0,
                "load": {
                    "in_flight": self.in_flight,
                    "queued": 0,
                    "max_concurrency": self.max_concurrency,
                    "max_queue": 0,
                },
            }
            await respond(send, 200, json.dumps(info).encode())
            return
        if scope["path"] == "/health":
            await respond(send, 200, b'{"status":"ok"}')
            return
        if scope["path"] == "/v1/models":
            models = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
            await respond(send, 200, json.dumps({"object": "list", "data": models}).encode())
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        self.in_flight += 1
        try:
            if request.get("stream"):
                await self.stream(request, send)
            else:
                await self.complete(request, send)
        finally:
            self.in_flight -= 1

    def logprob(self, word: str, request: dict[str, Any]) -> dict[str, Any] | None:
        if not request.get("logprobs"):
            return None
        return {
            "token": word,
            "logprob": -0.5,
            "bytes": list(word.encode()),
            "top_logprobs": [{"token": word, "logprob": -0.5, "bytes": list(word.encode())}]
            * (request.get("top_logprobs") or 0),
        }

    def logprobs_digest(self, top_logprobs: int) -> bytes:
        """The finish's ``logprobs_digest`` (host/digest.py) of this node's answer to a request for logprobs with
        ``top_logprobs`` alternatives."""
        asked = {"logprobs": True, "top_logprobs": top_logprobs}
        return hashlib.sha256(canonical_json([[self.logprob(word, asked) for word in self.words()]])).digest()

    async def complete(self, request: dict[str, Any], send: Any) -> None:
        while self.hold is not None and not self.hold.is_set():
            await asyncio.sleep(0.005)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        words = self.words()
        logprobs = {"content": [self.logprob(w, request) for w in words]} if request.get("logprobs") else None
        answer = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request["model"],
            "seed": request.get("seed"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(words)},
                    "logprobs": logprobs,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": len(words), "total_tokens": 5 + len(words)},
        }
        self.served.append(request)
        await respond(send, 200, json.dumps(answer).encode())

    async def stream(self, request: dict[str, Any], send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})

        usage = (request.get("stream_options") or {}).get("include_usage") is True  # as mlnode: null, then a chunk

        def event(delta: dict[str, Any], finish: str | None = None, logprob: Any = None) -> bytes:
            chunk = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": request["model"],
                "seed": request.get("seed"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprob}],
            }
            if usage:
                chunk["usage"] = None
            return f"data: {json.dumps(chunk)}\n\n".encode()

        await send(
            {"type": "http.response.body", "body": event({"role": "assistant", "content": ""}), "more_body": True}
        )
        for word in self.words():
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            lp = self.logprob(word, request)
            await send(
                {
                    "type": "http.response.body",
                    "body": event({"content": word}, None, {"content": [lp]} if lp else None),
                    "more_body": True,
                }
            )
        await send({"type": "http.response.body", "body": event({}, "stop"), "more_body": True})
        if usage:
            words = len(self.words())
            last = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": request["model"],
                "seed": request.get("seed"),
                "choices": [],
                "usage": {"prompt_tokens": 5, "completion_tokens": words, "total_tokens": 5 + words},
            }
            await send(
                {"type": "http.response.body", "body": f"data: {json.dumps(last)}\n\n".encode(), "more_body": True}
            )
        self.served.append(request)
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


async def respond(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
