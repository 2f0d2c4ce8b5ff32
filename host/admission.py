"""``StartAdmission``: whether the chain will pay this host for an inference, asked before its ML node works on it.

A requester's signature alone proves who asks, not that anyone escrowed the fee: a request sent straight to an
executor with a valid signature (for any TA address, its own included) would be served and never paid. So the
TA hands the executor the start it sent (``X-Start-Tx``: the signed ``MsgStartInference``, or the
``MsgReassignInference`` or take-over that names this host), and the executor admits the request when:

1. that transaction names this inference and this host as its executor (a start in it, alone or in a
   ``MsgStartInferences``) — or, sent without one (a client failing over through another TA, which the chain
   told of this host), the committed record is STARTED with this host as its executor (``confirm``: this host's
   node may not have that block yet); and
2. the host's own node takes it into its mempool (``broadcast_tx_sync`` answers code 0, or that it has it
   already) — or, when it is refused (say, already in a block, so its sequence is spent), the committed record
   is STARTED with this host as executor. A TA sends its starts to its own node one sequence after another, so
   this node may see one before the TA's earlier ones reach it by gossip: refused for a sequence ahead of the
   one expected, it is sent again every ``gap_retry_s`` for up to ``gap_wait_s``. A transaction the node took
   is remembered until the application commits another height (the node would answer that it has it): a batch
   of starts, arriving once for each, is sent once a height; and
3. the requester's spendable balance covers this escrow plus the escrows of the requests this host admitted
   for the same requester until ``pending_blocks`` blocks later (``x.inference.client.Funds``: the balance read
   once per committed height; a start in the mempool is in the next block, where the escrow is taken and the
   balance shows it; until then it is counted here, and for a moment after, twice): CheckTx does not run the
   escrow, so without this a requester with funds for one request could have many served at once, all but one
   unpaid.

These checks are quick and keep the node from working for what will surely be refused, but none of them proves
payment: CheckTx runs no message's state rules, and the requester may spend the same funds in the same block
(a send in another node's mempool), a reassignment may fail, a timestamp may fall out of the block's window. So
the answer itself waits for ``confirm``:

4. the committed state has the inference STARTED with this host as its executor, within ``confirm_blocks``
   heights of the admission (a start in the mempool is in the next block) and ``confirm_timeout_s`` seconds (a
   stalled chain). Asked at each height the application commits (``abci_info``) of the blocks' events
   (``host.committed.CommittedInferences``, shared with the finisher: one ``block_results`` read a block for all
   requests), and of the chain (``Query/Inference``) when those cannot tell (the follower is behind, or a
   take-over or reassignment moved the inference), and once more before a refusal (a start from before the
   heights followed is in no event read). Its escrow is then held
   by the module account and only this host's finish can take it (a take-over waits for the executor's time,
   x/inference README). The node may work meanwhile; nothing of its answer leaves the host before this.

A request sent without a start (the failover above) asks the chain first: its start is usually older than the
request, maybe older than the heights followed.

A refusal is ``ChainError("unpaid", …)``.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable
from typing import TypeGuard

from host.committed import Ask, CommittedInferences
from host.finisher import Finisher
from protogen.gonka.inference.v1 import inference_pb2, tx_pb2
from sdk.client.chain import ChainClient
from sdk.client.rpc import RPCError
from x.inference.client import ChainError, Funds, named_escrow

IN_MEMPOOL = "tx already exists in cache"
"""CometBFT's answer to a transaction its mempool holds (or just held) already."""
SEQUENCE = re.compile(r"expected (\d+), got (\d+)")


class StartAdmission:
    """For the host whose chain client is ``client`` (its finisher): ``admit(inference_id, start_tx)`` (checks 1–3)
    returns the start the transaction carries (None for a reassignment) or raises ``ChainError("unpaid", …)``;
    ``confirm(inference_id)`` (check 4) returns the committed record or raises it. The blocks' events are the
    finisher's ``committed`` when ``client`` is the finisher, else followed here. Thread-safe; network I/O."""

    def __init__(
        self,
        client: ChainClient,
        denom: str = "ngonka",
        pending_blocks: int = 2,
        gap_wait_s: float = 3.0,
        gap_retry_s: float = 0.05,
        confirm_blocks: int = 3,
        confirm_timeout_s: float = 30.0,
        confirm_poll_s: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.denom = denom
        self.pending_blocks = pending_blocks
        self.gap_wait_s, self.gap_retry_s = gap_wait_s, gap_retry_s
        self.confirm_blocks, self.confirm_timeout_s, self.confirm_poll_s = (
            confirm_blocks,
            confirm_timeout_s,
            confirm_poll_s,
        )
        self.clock = clock
        self.committed = (
            client.committed
            if isinstance(client, Finisher)
            else CommittedInferences(client.rpc, client.querier, client.address, confirm_poll_s, clock=clock)
        )
        self.app_height = self.committed.follower.app_height
        """The application's committed height, read once per poll for every waiting request together."""
        self.lock = threading.Lock()
        self.taken: tuple[int, set[bytes]] = (-1, set())
        """The committed height and the digests of the start transactions this host's node took at it."""
        self.funds = Funds(client.spendable, self.app_height.get, pending_blocks)
        """Per requester, the balance per committed height less what this host admitted that is not surely in a
        block yet."""

    def admit(self, inference_id: bytes, start_tx: bytes) -> tx_pb2.MsgStartInference | None:
        if not start_tx:  # a client failing over through another TA, which the chain told of this host: the
            self.committed.read(inference_id)  # committed record is the start, likely older than the heights
            self.confirm(inference_id)  # followed (and this host's node may be a block behind)
            return None
        named = named_escrow(start_tx, inference_id, self.client.address)
        if named is None:
            raise ChainError(
                "unpaid",
                f"no start of inference {inference_id.hex()} naming this host "
                f"{self.client.address} came with the request (X-Start-Tx)",
            )
        if not self._in_mempool(start_tx):
            if not self._mine(self.committed.read(inference_id)):
                raise ChainError(
                    "unpaid",
                    f"the chain refused the start of inference {inference_id.hex()} and holds "
                    "no running one for this host",
                )
            return named.start  # on chain already: its escrow is held
        if named.start is not None:
            self._reserve(named.start.requester, named.escrow)
        return named.start

    def confirm(self, inference_id: bytes) -> inference_pb2.Inference:
        """The committed record of ``inference_id``, once it is STARTED with this host as its executor; ``ChainError``
        when it is not within ``confirm_blocks`` committed heights (or ``confirm_timeout_s``)."""
        deadline = self.clock() + self.confirm_timeout_s
        first = last = self.committed.sync()
        record, read = self._record(inference_id, last)
        while True:
            if self._mine(record):
                return record
            if last - first >= self.confirm_blocks or self.clock() >= deadline:
                break
            time.sleep(self.confirm_poll_s)
            height = self.committed.sync()
            if height != last:
                last = height
                record, read = self._record(inference_id, last)
        if not read:  # the blocks followed said no; a start from before them is the chain's to tell
            record = self.committed.read(inference_id)
            if self._mine(record):
                return record
        held = (
            "no record"
            if record is None
            else f"it {inference_pb2.Status.Name(record.status)} with executor {record.executor}"
        )
        raise ChainError(
            "unpaid",
            f"the chain has not started inference {inference_id.hex()} with this host "
            f"{self.client.address} (at height {last}: {held})",
        )

    def _mine(self, record: inference_pb2.Inference | None) -> TypeGuard[inference_pb2.Inference]:
        """Whether ``record`` is STARTED with this host as its executor."""
        return (
            record is not None
            and record.status == inference_pb2.STATUS_STARTED
            and record.executor == self.client.address
        )

    def _record(self, inference_id: bytes, height: int) -> tuple[inference_pb2.Inference | None, bool]:
        """The record the blocks through ``height`` left, or the chain's when they cannot tell; whether it was read."""
        seen = self.committed.seen(inference_id, height)
        if isinstance(seen, Ask):
            return self.committed.read(inference_id), True
        return seen, False

    def _in_mempool(self, start_tx: bytes) -> bool:
        digest, height = hashlib.sha256(start_tx).digest(), self.app_height.get()
        with self.lock:
            if self.taken[0] == height and digest in self.taken[1]:
                return True
        if not self._send_start(start_tx):
            return False
        with self.lock:
            if self.taken[0] != height:
                self.taken = (height, set())
            self.taken[1].add(digest)
        return True

    def _send_start(self, start_tx: bytes) -> bool:
        """Whether this host's node takes ``start_tx`` into its mempool (or has it already)."""
        deadline = time.monotonic() + self.gap_wait_s
        while True:
            try:
                result = self.client.rpc.broadcast_tx_sync(start_tx)
            except RPCError as error:
                if IN_MEMPOOL in str(error):
                    return True
                raise
            if int(result.get("code", 0)) == 0:
                return True
            gap = SEQUENCE.search(str(result.get("log", "")))
            if gap is None or int(gap.group(2)) <= int(gap.group(1)) or time.monotonic() >= deadline:
                return False
            time.sleep(self.gap_retry_s)

    def _reserve(self, requester: str, escrow: int) -> None:
        short = self.funds.reserve(requester, self.denom, escrow)
        if short is not None:
            spendable, held = short
            raise ChainError(
                "unpaid",
                f"{requester} can spend {spendable}{self.denom}; the requests this host "
                f"took that are not in a block yet hold {held}, this one needs {escrow}",
            )
