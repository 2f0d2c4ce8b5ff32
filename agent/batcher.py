"""``StartBatcher``: a TA's starts that arrive while one transaction is on its way go out together in the next.

A TA signs with one key, so its transactions go out one at a time (one sequence after another), each waiting
for CheckTx: about 5 ms here, which would cap a TA at some 200 starts a second. So callers queue their
``MsgStartInference`` and whoever holds the sending turn sends everything queued (up to ``max_batch``) as one
``MsgStartInferences``, in which the chain judges each start on its own. With no load a start goes out alone and
at once (no waiting window); under load the batches grow by themselves to what arrives during one send.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from protogen.gonka.inference.v1 import tx_pb2

Send = Callable[[list[tx_pb2.MsgStartInference]], bytes]
"""Sends the starts as one transaction; returns its bytes, raises as the signer does."""


class StartBatcher:
    """``submit(start)`` returns the bytes of the transaction that carried it (CheckTx took it), or raises what
    sending that transaction raised. Thread-safe: the callers waiting sleep on one condition, woken when a batch
    has gone out (theirs, or the sending turn free for one of them to take)."""

    def __init__(self, send: Send, max_batch: int = 64) -> None:
        self.send = send
        self.max_batch = max_batch
        self.changed = threading.Condition()
        self.sending = False
        """Whether a caller is sending a batch (the turn is taken)."""
        self.queue: list[tuple[tx_pb2.MsgStartInference, Future[bytes]]] = []
        self.batches = 0
        self.starts = 0

    def submit(self, start: tx_pb2.MsgStartInference) -> bytes:
        future: Future[bytes] = Future()
        with self.changed:
            self.queue.append((start, future))
            while self.sending and not future.done():
                self.changed.wait()
            if future.done():
                return future.result()
            self.sending = True
        try:
            while not future.done():
                self._send_queued()
        finally:
            with self.changed:
                self.sending = False
                self.changed.notify_all()
        return future.result()

    def _send_queued(self) -> None:
        with self.changed:
            batch, self.queue = self.queue[: self.max_batch], self.queue[self.max_batch :]
        try:
            tx = self.send([start for start, _ in batch])
        except BaseException as error:
            for _, future in batch:
                future.set_exception(error)
        else:
            self.batches += 1
            self.starts += len(batch)
            for _, future in batch:
                future.set_result(tx)
        with self.changed:
            self.changed.notify_all()
