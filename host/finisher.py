"""``Finisher``: the executing host's side. The host's executor proxy (``host/proxy.py``) hands it one
``Finish`` per answer its ML node served; a background thread waits until each inference is on chain as STARTED
with this host as its executor, sends ``MsgFinishInference`` (several together as one ``MsgFinishInferences``,
in which the chain judges each on its own), and confirms it became FINISHED, sending again a bounded number of
times. With a ``journal`` path, what is queued and not yet settled
is kept on disk (``FinishJournal``) and queued again by the next finisher on that path."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from host.committed import CommittedInferences
from host.journal import FinishJournal
from protogen.gonka.inference.v1 import inference_pb2, tx_pb2
from sdk.client.chain import ChainClient
from sdk.client.rpc import RPCError
from sdk.coins import Coins
from sdk.crypto import secp256k1
from x.inference.client import ChainError, Finish, finish_message, refusal

logger = logging.getLogger("gonka.host")
FINISH_GAS = 250_000
"""Gas per ``MsgFinishInference`` in a finishing transaction (one finish alone used ~119,000 on the localnet:
payment through vesting, refund, work report, leaves)."""


@dataclass
class _Pending:
    finish: Finish
    since: float
    sends: int = 0
    sent_height: int = 0
    tx: str = ""


class Finisher(ChainClient):
    """Sends the executing host's ``MsgFinishInference``s, signed by ``key`` (the host), and sees them through.

    ``submit`` queues a ``Finish`` (thread-safe, never blocks on the chain; an id already queued is ignored);
    a background thread (``start``/``stop``) runs ``step`` every ``poll_interval_s`` (at once after a submit).
    For each queued finish a step looks up the inference: in the records the committed blocks' events left
    (``committed``, a ``CommittedInferences`` the host's admission shares), else on chain (``Query/Inference``):

    - unknown: the TA's start may still be in the mempool; dropped after ``unknown_timeout_s``;
    - STARTED with this host as executor, or as the previous executor (taken over or reassigned without its
      release, so its finish still stands): sent, at most ``max_batch`` finishes per transaction (one
      ``MsgFinishInferences``, gas ``gas_per_message`` each: one finish the block refuses leaves the others
      paid), ``completion_tokens`` capped at the inference's ``max_tokens``; when still
      STARTED ``confirm_blocks`` blocks after a send it is sent again, up to ``max_sends`` sends, then dropped;
    - STARTED with another executor (reassigned, or taken over with a new executor): waited on, since only
      that host may finish it now, until it ends;
    - FINISHED: done when this host finished it, else dropped; EXPIRED: dropped.

    Every drop is one warning log line with the inference id and the reason. A transaction CheckTx refuses is
    split into single finishes; a single finish refused by ``inference``'s own checks is dropped, any other
    refusal (sequence, fees, an unreachable node) counts as a send and is tried again. ``status()`` gives the
    counts and the last outcomes. ``stop(drain_s)`` keeps stepping up to ``drain_s`` seconds while finishes are
    queued, then ends the thread.

    ``journal``, when given, is the path of the ``FinishJournal``: every finish queued is written there, and every
    one that ends (finished, or dropped) is marked settled; the finishes a journal holds unsettled (the last
    finisher stopped, or its process died, before they ended) are queued here at once: one the chain already has
    as FINISHED by this host just ends as finished, and a finish sent twice is refused harmlessly."""

    def __init__(
        self,
        node: str,
        key: secp256k1.PrivateKey,
        grpc_addr: str | None = None,
        *,
        chain_id: str = "",
        gas_per_message: int = FINISH_GAS,
        fees: Coins = Coins(),
        max_batch: int = 32,
        poll_interval_s: float = 0.5,
        confirm_blocks: int = 3,
        max_sends: int = 3,
        unknown_timeout_s: float = 120.0,
        timeout_s: float = 5.0,
        recent: int = 256,
        journal: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(node, key, grpc_addr, chain_id, gas_per_message, fees, timeout_s, 0.0, clock, refusal)
        self.gas_per_message = gas_per_message
        self.max_batch = max_batch
        self.poll_interval_s = poll_interval_s
        self.confirm_blocks = confirm_blocks
        self.max_sends = max_sends
        self.unknown_timeout_s = unknown_timeout_s
        self.clock = clock
        self.committed = CommittedInferences(self.rpc, self.querier, self.address, clock=clock)
        self.journal = FinishJournal(journal) if journal is not None else None
        replayed = self.journal.pending if self.journal is not None else {}
        self.pending: dict[bytes, _Pending] = {id_: _Pending(finish, clock()) for id_, finish in replayed.items()}
        if replayed:
            logger.info("%d unsettled finish(es) queued again from %s", len(replayed), journal)
        self.finished = 0
        self.dropped = 0
        self.recent: deque[dict[str, Any]] = deque(maxlen=recent)
        """The last outcomes, newest last: ``{id (hex), outcome: finished|dropped, reason, tx, sends}``."""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._drain_until = 0.0
        self._thread: threading.Thread | None = None

    def submit(self, finish: Finish) -> bool:
        """Queue ``finish``; False (and a log line) when it cannot be sent: no tokens, or its id already queued."""
        if finish.prompt_tokens + finish.completion_tokens <= 0:
            logger.warning("inference %s: no tokens counted, nothing to finish", finish.inference_id.hex())
            return False
        with self._lock:
            if finish.inference_id in self.pending:
                logger.warning(
                    "inference %s: already queued to finish, the new answer is ignored", finish.inference_id.hex()
                )
                return False
            self.pending[finish.inference_id] = _Pending(finish, self.clock())
            if self.journal is not None:
                self.journal.queued(finish)
        self._wake.set()
        return True

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "address": self.address,
                "pending": len(self.pending),
                "finished": self.finished,
                "dropped": self.dropped,
                "recent": list(self.recent),
            }

    # --- the thread ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="finisher", daemon=True)
        self._thread.start()

    def stop(self, drain_s: float = 0.0) -> None:
        """Stop the thread, after up to ``drain_s`` seconds of finishing what is queued."""
        self._drain_until = time.monotonic() + drain_s
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=drain_s + 30)
        with self._lock:
            left = list(self.pending)
        kept = " (kept in the journal)" if self.journal is not None else ""
        for inference_id in left:
            logger.warning("inference %s: not finished when the finisher stopped%s", inference_id.hex(), kept)

    def close(self) -> None:
        super().close()
        if self.journal is not None:
            self.journal.close()

    def _run(self) -> None:
        while True:
            with self._lock:
                empty = not self.pending
            if self._stopping and (empty or time.monotonic() >= self._drain_until):
                return
            self._wake.clear()
            if not empty:
                try:
                    self.step()
                except Exception:  # the chain may be briefly unreachable: the next step tries again
                    logger.exception("finishing step failed")
            self._wake.wait(self.poll_interval_s)

    # --- one step ------------------------------------------------------------------------------------------------

    def _end(self, item: _Pending, outcome: str, reason: str) -> None:
        with self._lock:
            self.pending.pop(item.finish.inference_id, None)
            if self.journal is not None:
                self.journal.settled(item.finish.inference_id)
            if outcome == "finished":
                self.finished += 1
            else:
                self.dropped += 1
            self.recent.append(
                {
                    "id": item.finish.inference_id.hex(),
                    "outcome": outcome,
                    "reason": reason,
                    "tx": item.tx,
                    "sends": item.sends,
                }
            )
        if outcome == "finished":
            logger.info("inference %s finished (tx %s)", item.finish.inference_id.hex(), item.tx)
        else:
            logger.warning("inference %s dropped: %s", item.finish.inference_id.hex(), reason)

    def step(self) -> None:
        """One pass over the queued finishes: read each on chain, send those due, end those that ended."""
        with self._lock:
            items = list(self.pending.values())
        if not items:
            return
        height = int(self.rpc.status()["sync_info"]["latest_block_height"])
        committed = self.committed.sync()
        due: list[tuple[_Pending, tx_pb2.MsgFinishInference]] = []
        for item in items:
            finish = item.finish
            record = self.committed.record(finish.inference_id, committed)
            if record is None:
                if self.clock() - item.since > self.unknown_timeout_s:
                    self._end(item, "dropped", f"unknown on chain after {self.unknown_timeout_s:g} s")
                continue
            if record.status == inference_pb2.STATUS_FINISHED:
                if record.executor == self.address:
                    self._end(item, "finished", "")
                else:
                    self._end(item, "dropped", f"finished by another executor, {record.executor}")
                continue
            if record.status != inference_pb2.STATUS_STARTED:
                self._end(item, "dropped", "expired" + (f" after {item.sends} sends" if item.sends else ""))
                continue
            if self.address not in (record.executor, record.previous_executor):
                continue  # reassigned or taken over with its release: not this host's unless it comes back
            if item.sends and height < item.sent_height + self.confirm_blocks:
                continue  # the last send may still be on its way into a block
            if item.sends >= self.max_sends:
                self._end(item, "dropped", f"still STARTED after {item.sends} sends")
                continue
            due.append((item, finish_message(self.address, finish, record.max_tokens)))
        for first in range(0, len(due), self.max_batch):
            self._send(due[first : first + self.max_batch], height)

    def _send(self, batch: list[tuple[_Pending, tx_pb2.MsgFinishInference]], height: int) -> None:
        finishes = [message for _, message in batch]
        message: Message = (
            finishes[0] if len(finishes) == 1 else tx_pb2.MsgFinishInferences(executor=self.address, finishes=finishes)
        )
        try:
            tx = self.signer.submit([message], self.gas_per_message * len(batch)).hash
        except ChainError as error:
            if len(batch) > 1:
                for one in batch:
                    self._send([one], height)
                return
            item = batch[0][0]
            item.sends += 1
            item.sent_height = height - self.confirm_blocks  # due again at the next step
            if error.details.get("codespace") == "inference":
                self._end(item, "dropped", f"refused: {error}")
            else:
                logger.warning(
                    "inference %s: finish refused (%s), will send again", item.finish.inference_id.hex(), error
                )
            return
        except RPCError as error:
            logger.warning("finishing %d inference(s): the node did not take the transaction: %s", len(batch), error)
            return
        for item, _ in batch:
            item.sends += 1
            item.sent_height = height
            item.tx = tx
