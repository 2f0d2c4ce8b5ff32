"""Elastic membership: who takes part in each outer step, decided by one coordinator through a store.

The coordinator (the ``gonkad train`` process) hosts a ``TCPStore`` that outlives every worker. Each
round r runs as one or more *generations* ``r{r}a{attempt}``; every generation gets a fresh process group
over ``PrefixStore("pg/<generation>")``, so a dead peer never poisons a later collective.

- Start (attempt 0): workers post ``ready/<gen>``; the coordinator waits for every admitted worker (a
  local one that exited is not waited for; others get ``straggler_timeout_s`` after the first) and
  publishes ``plan/<gen>``: the members in rank order, those holding the global state first. If any
  member lacks the state (a joiner, a resumed run), rank 0 broadcasts it before anyone trains.
- Exchange: members post ``outcome/<gen>`` (did the all-gather succeed, do they hold a pseudo-gradient).
  Only when every member succeeded does the coordinator publish ``commit/<gen>`` true, and only then
  does anyone take the outer step, so all survivors apply the same update. Otherwise the members that
  hold a pseudo-gradient redo just the exchange in generation ``attempt + 1``; a member that stays silent
  for ``collective_timeout_s`` + ``straggler_timeout_s`` after a failure is dropped.
- Joining: a worker pushes its name on ``joins``; the coordinator answers ``admit/<nonce>`` with a data
  index (the smallest free one) and the round to start at.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import torch.distributed as dist
from pydantic import BaseModel, ConfigDict

from diloco.checkpoint import RunLayout, RunRecord
from diloco.config import Timeouts
from diloco.metrics import Event

POLL_S = 0.02
STORE_TIMEOUT_S = 120.0
"""One store operation; waiting for the coordinator's answers polls without a limit."""
MAX_EXTRA_ATTEMPTS = 2
"""A round may be attempted once per member (each failure drops someone) plus this many more times."""


class RunAborted(Exception):
    """The run cannot go on: no worker is left, none came, or a round keeps failing."""


class CollectiveFailed(Exception):
    """A process-group operation failed: a peer died, hung past the timeout, or was never there."""


@contextmanager
def collective(what: str) -> Iterator[None]:
    """Report a failing collective as ``CollectiveFailed``; any other error is a bug and propagates."""
    try:
        yield
    except RuntimeError as error:
        raise CollectiveFailed(
            f"{what}: {str(error).splitlines()[0] if str(error) else type(error).__name__}"
        ) from error


class RunSpec(BaseModel):
    """What the coordinator publishes under the store key ``run`` for workers to take part."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run: RunRecord
    timeouts: Timeouts
    keep_checkpoints: int | None


@dataclass(frozen=True)
class Plan:
    """One generation as the coordinator published it."""

    round: int
    attempt: int
    phase: str
    """``start`` (sync if needed, train, exchange), ``exchange`` (redo the exchange only) or ``done``."""
    members: list[tuple[int, str]] = field(default_factory=list)
    """(data index, worker name) in rank order."""
    sync: bool = False
    source: str = "memory"
    """Where rank 0 gets the global state it broadcasts: ``memory``, ``checkpoint`` or ``init``."""

    @property
    def generation(self) -> str:
        return generation(self.round, self.attempt)

    def rank_of(self, index: int) -> int | None:
        indices = [member for member, _ in self.members]
        return indices.index(index) if index in indices else None

    def to_json(self) -> str:
        return json.dumps(
            {
                "round": self.round,
                "attempt": self.attempt,
                "phase": self.phase,
                "members": self.members,
                "sync": self.sync,
                "source": self.source,
            }
        )

    @classmethod
    def from_json(cls, raw: bytes) -> Plan:
        body = json.loads(raw)
        return cls(
            body["round"],
            body["attempt"],
            body["phase"],
            [tuple(m) for m in body["members"]],
            body["sync"],
            body["source"],
        )


def generation(round_number: int, attempt: int) -> str:
    return f"r{round_number}a{attempt}"


def _drain(store: dist.TCPStore, queue: str) -> list[dict[str, Any]]:
    items = []
    while store.queue_len(queue):
        items.append(json.loads(store.queue_pop(queue, block=False)))
    return items


@dataclass
class Coordinator:
    """Decides every generation's members; lives in the launcher, never trains."""

    store: dist.TCPStore
    layout: RunLayout
    timeouts: Timeouts
    first_round: int
    end_round: int
    want: int
    """Workers round ``first_round`` waits for (up to ``startup_timeout_s``)."""
    reserved: dict[str, int]
    """Name → data index kept for these names (local workers, a resumed run's workers)."""
    processes: dict[str, subprocess.Popen[bytes]]
    emit: Callable[[Event], None]
    names: dict[int, str] = field(default_factory=dict)
    """Admitted workers: data index → name."""
    holders: set[int] = field(default_factory=set)
    """Indices that hold the current global state (the last committed round's members)."""
    exited: dict[str, int] = field(default_factory=dict)
    watching: set[str] = field(default_factory=set)
    """Local workers whose process is still running."""
    next_round: int = 0

    def __post_init__(self) -> None:
        self.watching = set(self.processes)

    def run(self) -> None:
        for round_number in range(self.first_round, self.end_round + 1):
            plan = self._gather(round_number)
            if plan.phase == "done":
                self._pump()
                return
            outcomes = self._settle(plan)
            while not self._committed(plan, outcomes):
                if plan.attempt + 1 >= MAX_EXTRA_ATTEMPTS + len(plan.members):
                    raise RunAborted(f"round {round_number} failed {plan.attempt + 1} times; see the workers' logs")
                plan = self._retry(plan, outcomes)
                outcomes = self._settle(plan)

    def _gather(self, round_number: int) -> Plan:
        """Attempt 0 of a round: wait for the admitted workers to be ready, publish who trains."""
        gen, self.next_round = generation(round_number, 0), round_number
        first_session_round = round_number == self.first_round
        opened, first_ready, ready = time.monotonic(), None, set[int]()
        while True:
            self._pump()
            ready |= {item["index"] for item in _drain(self.store, f"ready/{gen}") if item["index"] in self.names}
            ready &= self._alive()
            now = time.monotonic()
            first_ready = first_ready or (now if ready else None)
            starting = first_session_round and now < opened + self.timeouts.startup_timeout_s
            quorum = not starting or len(ready) >= self.want - len(self.exited)
            late = first_ready is not None and now > first_ready + self.timeouts.straggler_timeout_s
            if ready and quorum and (self._alive() <= ready or late):
                break
            if not ready and first_session_round and not starting:
                raise RunAborted(f"no worker joined within {self.timeouts.startup_timeout_s:g} s")
            if not self._alive() and not first_session_round:
                raise RunAborted(f"every worker has left before round {round_number}")
            time.sleep(POLL_S)
        for index in set(self.names) - ready:
            self._drop(index, round_number, "not ready in time")
        self.next_round = round_number + 1
        if round_number == self.end_round:
            plan = Plan(round_number, 0, "done")
        else:
            plan = Plan(
                round_number,
                0,
                "start",
                self._ranked(ready),
                sync=not ready <= self.holders,
                source=self._source(round_number, ready),
            )
        self.store.set(f"plan/{gen}", plan.to_json())
        return plan

    def _ranked(self, members: set[int]) -> list[tuple[int, str]]:
        """Rank order: holders of the global state first (rank 0 broadcasts it), then workers on this host
        (rank 0 writes the global checkpoints into its own directory), then by data index."""

        def rank_key(index: int) -> tuple[bool, bool, int]:
            return index not in self.holders, self.names[index] not in self.processes, index

        return [(i, self.names[i]) for i in sorted(members, key=rank_key)]

    def _source(self, round_number: int, ready: set[int]) -> str:
        if ready & self.holders:
            return "memory"
        if self.layout.info_file(round_number).exists():
            return "checkpoint"
        if round_number == 0:
            return "init"
        raise RunAborted(f"no worker holds the global state of round {round_number} and there is no checkpoint")

    def _settle(self, plan: Plan) -> dict[int, dict[str, Any]]:
        """Collect the members' outcomes, drop the silent ones, publish whether the exchange is committed."""
        gen = plan.generation
        members = {index for index, _ in plan.members}
        outcomes: dict[int, dict[str, Any]] = {}
        deadline = None
        while True:
            self._pump()
            outcomes.update({item["index"]: item for item in _drain(self.store, f"outcome/{gen}")})
            silent = members - set(outcomes)
            if not silent & self._alive():
                break
            trouble = any(not item["ok"] for item in outcomes.values()) or silent - self._alive()
            if trouble and deadline is None:
                deadline = time.monotonic() + self.timeouts.collective_timeout_s + self.timeouts.straggler_timeout_s
            if deadline is not None and time.monotonic() > deadline:
                break
            time.sleep(POLL_S)
        for index in members - set(outcomes):
            self._drop(index, plan.round, "silent during the exchange")
        committed = self._committed(plan, outcomes)
        if committed:
            self.holders = members
        self.store.set(f"commit/{gen}", json.dumps({"commit": committed}))
        return outcomes

    @staticmethod
    def _committed(plan: Plan, outcomes: dict[int, dict[str, Any]]) -> bool:
        return set(outcomes) == {index for index, _ in plan.members} and all(o["ok"] for o in outcomes.values())

    def _retry(self, failed: Plan, outcomes: dict[int, dict[str, Any]]) -> Plan:
        """The next attempt: redo the exchange among the holders of a pseudo-gradient or, when none got
        that far, start the round again with everyone who answered."""
        answered = sorted(set(outcomes) & self._alive())
        with_delta = [i for i in answered if outcomes[i]["has_delta"]]
        if not answered:
            raise RunAborted(f"every worker has left during round {failed.round}")
        attempt = failed.attempt + 1
        if with_delta:
            plan = Plan(failed.round, attempt, "exchange", self._ranked(set(with_delta)))
        else:
            plan = Plan(
                failed.round,
                attempt,
                "start",
                self._ranked(set(answered)),
                sync=not set(answered) <= self.holders,
                source=self._source(failed.round, set(answered)),
            )
        self.emit(
            {
                "event": "retry",
                "round": failed.round,
                "attempt": attempt,
                "phase": plan.phase,
                "workers": [name for _, name in plan.members],
            }
        )
        self.store.set(f"plan/{plan.generation}", plan.to_json())
        return plan

    def _alive(self) -> set[int]:
        return {index for index, name in self.names.items() if name not in self.exited}

    def _pump(self) -> None:
        """Admit joiners, forward worker events, notice local workers that exited."""
        for request in _drain(self.store, "joins"):
            self._admit(request["name"], request["nonce"])
        for event in _drain(self.store, "events"):
            self.emit(event)
        for name in sorted(self.watching):
            returncode = self.processes[name].poll()
            if returncode is not None:
                self.watching.discard(name)
                self.exited[name] = returncode
                self.emit({"event": "exited", "worker": name, "returncode": returncode})

    def _admit(self, name: str, nonce: str) -> None:
        by_name = {n: i for i, n in self.names.items()}
        if name in by_name:
            index = by_name[name]
            self.holders.discard(index)
        elif name in self.reserved and self.reserved[name] not in self.names:
            index = self.reserved[name]
        else:
            taken = set(self.names) | {i for n, i in self.reserved.items() if n not in self.exited}
            index = next(i for i in range(len(taken) + 1) if i not in taken)
        self.names[index] = name
        self.exited.pop(name, None)
        self.store.set(f"admit/{nonce}", json.dumps({"index": index, "round": self.next_round}))
        self.emit({"event": "joined", "worker": name, "index": index, "round": self.next_round})

    def _drop(self, index: int, round_number: int, reason: str) -> None:
        name = self.names.pop(index)
        self.holders.discard(index)
        self.emit(
            {
                "event": "dropped",
                "worker": name,
                "index": index,
                "round": round_number,
                "reason": f"exited with {self.exited[name]}" if name in self.exited else reason,
            }
        )


@dataclass(frozen=True)
class Admitted:
    """The coordinator's answer to a join: this worker's data index and the round it starts in."""

    index: int
    round: int


@dataclass
class Member:
    """A worker's side of the protocol."""

    store: dist.TCPStore
    name: str

    def admit(self) -> Admitted:
        nonce = uuid.uuid4().hex
        self.store.queue_push("joins", json.dumps({"name": self.name, "nonce": nonce}))
        body = json.loads(self._answer(f"admit/{nonce}"))
        return Admitted(body["index"], body["round"])

    def ready(self, round_number: int, index: int) -> None:
        self.store.queue_push(f"ready/{generation(round_number, 0)}", json.dumps({"index": index}))

    def plan(self, gen: str) -> Plan:
        return Plan.from_json(self._answer(f"plan/{gen}"))

    def report(self, gen: str, index: int, ok: bool, has_delta: bool) -> bool:
        """Post this attempt's outcome; whether the coordinator committed the exchange."""
        self.store.queue_push(f"outcome/{gen}", json.dumps({"index": index, "ok": ok, "has_delta": has_delta}))
        return bool(json.loads(self._answer(f"commit/{gen}"))["commit"])

    def emit(self, event: Event) -> None:
        self.store.queue_push("events", json.dumps(event))

    def _answer(self, key: str) -> bytes:
        """The coordinator's answer, however long the round it waits on takes; a coordinator that is gone
        fails the store call."""
        while not self.store.check([key]):
            time.sleep(POLL_S)
        return self.store.get(key)

    @contextmanager
    def group(self, plan: Plan, rank: int, backend: str, timeout_s: float) -> Iterator[None]:
        """This generation's process group as the default group, destroyed however the block ends."""
        try:
            with collective("forming the process group"):
                dist.init_process_group(
                    backend,
                    store=dist.PrefixStore(f"pg/{plan.generation}", self.store),
                    rank=rank,
                    world_size=len(plan.members),
                    timeout=timedelta(seconds=timeout_s),
                )
            yield
        finally:
            if dist.is_initialized():
                dist.destroy_process_group()


def store_client(address: str) -> dist.TCPStore:
    host, port = address.rsplit(":", 1)
    return dist.TCPStore(host, int(port), is_master=False, timeout=timedelta(seconds=STORE_TIMEOUT_S))
