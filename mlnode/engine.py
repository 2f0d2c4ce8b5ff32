"""Continuous batching: one worker thread owns the model and the KV cache; the event loop only enqueues.

Live sequences occupy cache slots 0..n-1, so a single ``decode`` call advances all of them; a new request
is prefilled into the next free slot between steps, and a finished one is replaced by the last live slot.
Requests beyond the slots wait in a queue; beyond the queue they are refused. Each request drives its own
``generate.Sequence``, so it gets the tokens ``generate.generate`` would give it alone.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
from dataclasses import dataclass

import torch

from mlnode.errors import APIError, over_capacity, server_error
from mlnode.generate import GenerationRequest, Sequence, TokenChoice
from mlnode.model import KVCache, Transformer
from mlnode.schemas import Load

logger = logging.getLogger(__name__)

SHUTTING_DOWN = "The node is shutting down."


@dataclass(frozen=True)
class Update:
    """Tokens that became safe to send, and the finish reason once the request is done."""

    tokens: tuple[TokenChoice, ...] = ()
    finish_reason: str | None = None
    error: APIError | None = None


class Job:
    """One request as both sides see it: the worker publishes updates, the event loop awaits them."""

    def __init__(self, request: GenerationRequest, loop: asyncio.AbstractEventLoop) -> None:
        self.request = request
        self._loop = loop
        self._updates: asyncio.Queue[Update] = asyncio.Queue()
        self.closed = threading.Event()
        """Set when the client no longer wants the answer; the worker then frees the slot."""

    def publish(self, update: Update) -> None:
        """Worker side: hand an update to the event loop (dropped if the loop is gone)."""
        try:
            self._loop.call_soon_threadsafe(self._updates.put_nowait, update)
        except RuntimeError:
            self.closed.set()

    async def next(self) -> Update:
        """The next update; an engine failure is raised as the request's error."""
        update = await self._updates.get()
        if update.error is not None:
            raise update.error
        return update


@dataclass
class _Live:
    job: Job
    sequence: Sequence

    @property
    def done(self) -> bool:
        return self.sequence.finish_reason is not None or self.job.closed.is_set()


class Engine:
    def __init__(self, model: Transformer, max_concurrency: int, max_queue: int, threads: int | None = None) -> None:
        if threads:
            torch.set_num_threads(threads)
        self.model = model
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        weight = model.output.weight
        self.device = weight.device
        self.cache = KVCache.empty(model.config, max_concurrency, dtype=weight.dtype, device=weight.device)
        self._wake = threading.Condition()
        self._pending: collections.deque[Job] = collections.deque()
        self._admitted = 0
        """Jobs accepted and not yet retired, queued ones included; guarded by ``_wake``."""
        self._stopping = False
        self._live: list[_Live] = []
        """Worker-thread only: the sequence in cache slot i is ``_live[i]``."""
        self._thread = threading.Thread(target=self._run, name="mlnode-engine", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Finish the current step, fail whatever is left, and join the worker."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join()

    def load(self) -> Load:
        with self._wake:
            queued = len(self._pending)
            return Load(
                in_flight=self._admitted - queued,
                queued=queued,
                max_concurrency=self.max_concurrency,
                max_queue=self.max_queue,
            )

    def submit(self, request: GenerationRequest) -> Job:
        """Queue a request (event-loop side); raises the 429 error when slots and queue are all taken."""
        job = Job(request, asyncio.get_running_loop())
        with self._wake:
            if self._stopping:
                raise server_error(SHUTTING_DOWN, 503)
            if self._admitted >= self.max_concurrency + self.max_queue:
                raise over_capacity()
            self._admitted += 1
            self._pending.append(job)
            self._wake.notify()
        return job

    def cancel(self, job: Job) -> None:
        """The client has gone: drop the job from the queue, or have the worker free its slot."""
        with self._wake:
            if job in self._pending:
                self._pending.remove(job)
                self._admitted -= 1
        job.closed.set()

    def _run(self) -> None:
        """The worker: a failure fails the batch it hit, never the thread."""
        with torch.inference_mode():
            while self._wait_for_work():
                try:
                    self._iterate()
                except Exception:
                    logger.exception("generation failed for a batch")
                    self._fail([entry.job for entry in self._live], "Generation failed for this batch.")
                    self._retire()
        with self._wake:
            left = [entry.job for entry in self._live] + list(self._pending)
        self._fail(left, SHUTTING_DOWN, 503)

    def _wait_for_work(self) -> bool:
        """Blocks while nothing is live or queued; False once the engine is stopping."""
        with self._wake:
            while not self._stopping and not self._pending and not self._live:
                self._wake.wait()
            return not self._stopping

    def _iterate(self) -> None:
        """Prefill one queued request if a slot is free, then advance every live sequence by a token."""
        with self._wake:
            job = self._pending.popleft() if self._pending and len(self._live) < self.max_concurrency else None
        if job is not None:
            self._prefill(job)
            self._retire()
        if self._live:
            self._step()
            self._retire()

    def _prefill(self, job: Job) -> None:
        """Fills the next free slot; a failure here fails only this request."""
        entry = _Live(job, Sequence(job.request))
        self._live.append(entry)
        try:
            prompt = torch.tensor(job.request.prompt, device=self.device)
            entry.sequence.advance(self.model.prefill(prompt, self.cache, len(self._live) - 1))
        except Exception:
            logger.exception("prefill failed")
            self._fail([job], "Generation failed for this request.")
            return
        self._publish(entry)

    def _step(self) -> None:
        """One decode call for every live sequence, then each advances on its own row of logits."""
        tokens = torch.tensor([entry.sequence.tokens[-1] for entry in self._live], device=self.device)
        positions = torch.tensor([entry.sequence.position for entry in self._live], device=self.device)
        logits = self.model.decode(tokens, positions, self.cache)
        for index, entry in enumerate(self._live):
            if not entry.job.closed.is_set():
                entry.sequence.advance(logits[index])
                self._publish(entry)

    def _publish(self, entry: _Live) -> None:
        sequence = entry.sequence
        release = sequence.releasable()
        if release > sequence.emitted or sequence.finish_reason is not None:
            entry.job.publish(Update(tuple(sequence.logprobs[sequence.emitted : release]), sequence.finish_reason))
            sequence.emitted = release

    def _fail(self, jobs: list[Job], message: str, status: int = 500) -> None:
        for job in jobs:
            job.publish(Update(error=server_error(message, status)))
            job.closed.set()

    def _retire(self) -> None:
        """Drop finished and abandoned sequences; the last live slot moves into each hole."""
        retired = 0
        for index in reversed(range(len(self._live))):
            if not self._live[index].done:
                continue
            last = self._live[-1]
            if index != len(self._live) - 1:
                self.cache.move(len(self._live) - 1, index, last.sequence.position)
                self._live[index] = last
            self._live.pop()
            retired += 1
        if retired:
            with self._wake:
                self._admitted -= retired
