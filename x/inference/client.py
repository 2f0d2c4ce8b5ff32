"""x/inference for programs: the data the Transfer Agent's ``agent.chain.ChainView`` speaks in (``Model``, ``Node``,
``StartRequest``, ``ChainError``) and ``ChainInferenceView``, that protocol over a node.

Reads go over gRPC when ``grpc_addr`` is given (one channel, kept open), else over CometBFT RPC's ABCI query;
the chain id and height come from CometBFT RPC's ``status``. What the TA reads on every poll is cached briefly
(``ttl_s``, default 2 s): the model registry, the ML nodes (one ``Nodes`` query for all models) and the hosts'
weights (x/stake's ``EpochWeights`` of the current epoch, or its ``ValidatorPowers`` while no weights are
recorded for it); ``status`` for ``status_ttl_s``. A requester's spendable balance is read for each request.

``start_inference`` builds ``MsgStartInference`` (or, for a ``reassign``, ``MsgReassignInference``), signs it
with the TA's key (SIGN_MODE_DIRECT, a fixed gas limit and fee) and sends it with ``broadcast_tx_sync``: the
answer is CheckTx's. The account number and sequence are kept here and bumped for every accepted transaction,
so many starts go out per block; a lock around sign-and-broadcast keeps the sequence in order across the
TA's worker threads (``offload_chain_calls``). On ``sdk/32`` (sequence mismatch) the expected sequence is
taken from the log (or the account refetched) and the transaction signed and sent once more. CheckTx
refusals become ``ChainError``: bank's insufficient funds (``sdk/5``) → ``insufficient_funds``, an inference
already started (``inference/9``) → ``already_exists``, anything else → ``invalid``.

CheckTx runs the ante handler and the messages' stateless checks only; the messages' own rules (the escrow,
a known id) run in the block. So before a start, the view asks the chain whether the id is already known
(``check_known``), which turns a request that ended, or that this TA started, into ``already_exists``; one
another TA started and still running is taken over (the client failed over to this TA).

``Finisher`` is the executing host's side: the host's executor proxy (``agent/executor.py``) hands it one
``Finish`` per answer its ML node served; a background thread waits until each inference is on chain as
STARTED with this host as its executor, sends ``MsgFinishInference`` (several per transaction), and confirms it
became FINISHED, sending again a bounded number of times. Both sign through ``TxSigner`` (one key's account
number and sequence, counted locally).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from google.protobuf.message import Message

from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from protogen.gonka.inference.v1 import inference_pb2, query_pb2, tx_pb2
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import address_of, query_account, sign_tx
from sdk.coins import Coins
from sdk.crypto import secp256k1
from sdk.errors import ErrInsufficientFunds, ErrWrongSequence
from x.inference.errors import ErrDuplicate
from x.inference.query_server import GONKA

M = TypeVar("M", bound=Message)


# --- what the Transfer Agent sees of the chain (agent.chain.ChainView's types) ---------------------------


@dataclass(frozen=True)
class Model:
    id: str
    context_length: int
    price_per_token: int
    """ngonka per token: the least fee per token a request for this model may offer."""
    memory_bytes: int = 0
    """Memory a node needs to serve it (0: unknown, any node that lists the model will do)."""


@dataclass(frozen=True)
class Node:
    operator: str
    """The host's bech32 address: the executor named in ``MsgStartInference``."""
    node_id: str
    url: str
    models: tuple[str, ...]
    memory_bytes: int
    max_concurrency: int
    weight: int
    """The host's epoch weight: among equally loaded nodes the heavier host is chosen."""


@dataclass(frozen=True)
class StartRequest:
    """The fields of ``MsgStartInference``; the chain checks ``signature`` against the requester's key."""

    inference_id: bytes
    requester: str
    requester_pubkey: bytes
    signature: bytes
    body_hash: bytes
    timestamp_ns: int
    ta_address: str
    model: str
    max_tokens: int
    fee_per_token: int
    executor: str
    node_id: str
    seed: int
    params_hash: bytes
    reassign: bool = False
    """True when a node failed before answering and the same inference goes to another host's node: the same
    id with a new executor (the TA never sends a reassignment once a token has reached the client)."""


REFUSALS = ("insufficient_funds", "already_exists", "invalid")


@dataclass
class ChainError(Exception):
    """The chain refused a message: ``reason`` is one of ``REFUSALS``, ``message`` the chain's log."""

    reason: str
    message: str = ""
    details: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}" if self.message else self.reason



# --- the view over a node ------------------------------------------------------------------------------

logger = logging.getLogger("gonka.inference.client")
BANK = "/cosmos.bank.v1beta1.Query/"
STAKE = f"/{stake_query.DESCRIPTOR.services_by_name['Query'].full_name}/"
EPOCHS = f"/{epochs_query.DESCRIPTOR.services_by_name['Query'].full_name}/"
DEFAULT_GAS_LIMIT = 200_000
"""About 2.6 times what a start uses (~76,000 gas; a reassignment ~39,000)."""
PAGE_LIMIT = 1000
EXPECTED_SEQUENCE = re.compile(r"expected (\d+), got \d+")
REASONS = {(ErrInsufficientFunds.codespace, ErrInsufficientFunds.code): "insufficient_funds",
           (ErrDuplicate.codespace, ErrDuplicate.code): "already_exists"}


class _ChannelQuerier(Querier):
    """``Querier`` with one gRPC channel kept open (channels are thread-safe), rather than one per query."""

    def __init__(self, node: str, grpc_addr: str | None, timeout: float) -> None:
        super().__init__(node, grpc_addr, timeout)
        self.channel = grpc.insecure_channel(grpc_addr) if grpc_addr else None

    def raw(self, path: str, data: bytes) -> bytes:
        if self.channel is None:
            return super().raw(path, data)
        call = self.channel.unary_unary(path, request_serializer=None, response_deserializer=None)
        try:
            return call(data, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise RPCError(f"{exc.code().name}: {exc.details()}") from None  # type: ignore[attr-defined]

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()


class _Cached:
    """One value, recomputed when older than ``ttl_s``; thread-safe (one refresh at a time)."""

    def __init__(self, ttl_s: float, load: Callable[[], Any], clock: Callable[[], float]) -> None:
        self.ttl_s, self.load, self.clock = ttl_s, load, clock
        self.value: Any = None
        self.at = float("-inf")
        self.lock = threading.Lock()

    def get(self) -> Any:
        with self.lock:
            if self.clock() - self.at >= self.ttl_s:
                self.value = self.load()
                self.at = self.clock()
            return self.value


class TxSigner:
    """Signs transactions with one key and sends them with ``broadcast_tx_sync``: the account number and next
    sequence are counted here and bumped for every accepted transaction, so many go out per block; one lock
    around sign-and-broadcast keeps the sequence in order across threads. On ``sdk/32`` (sequence mismatch) the
    expected sequence is taken from the log (or the account refetched) and the transaction signed and sent once
    more. A CheckTx refusal is ``ChainError`` (``REASONS``, else ``invalid``; ``details`` has its codespace and
    code); an unreachable node is ``RPCError`` (the sequence is then fetched again)."""

    def __init__(self, rpc: CometRPC, key: secp256k1.PrivateKey, chain_id: Callable[[], str],
                 gas_limit: int = DEFAULT_GAS_LIMIT, fees: Coins = Coins()) -> None:
        self.rpc = rpc
        self.key = key
        self.address = address_of(key)
        self.chain_id = chain_id
        self.gas_limit = gas_limit
        self.fees = fees
        self.lock = threading.Lock()
        self.account: tuple[int, int] | None = None
        """(account number, next sequence) as counted here; None: fetch from the chain."""

    def submit(self, messages: Sequence[Message], gas_limit: int | None = None) -> str:
        """Sign ``messages`` (one transaction) at the next sequence and broadcast it (sync); its hash (hex)."""
        chain_id = self.chain_id()
        gas = self.gas_limit if gas_limit is None else gas_limit
        with self.lock:
            for attempt in range(2):
                if self.account is None:
                    account = query_account(self.rpc, self.address)
                    self.account = (account.account_number, account.sequence)
                number, sequence = self.account
                raw = sign_tx(self.key, list(messages), chain_id, number, sequence, self.fees, gas)
                try:
                    result = self.rpc.broadcast_tx_sync(raw)
                except RPCError:
                    self.account = None  # whether it was taken is unknown: count again from the chain
                    raise
                code, codespace, log = int(result.get("code", 0)), result.get("codespace", ""), result.get("log", "")
                if code == 0:
                    self.account = (number, sequence + 1)
                    return str(result.get("hash", ""))
                if (codespace, code) == (ErrWrongSequence.codespace, ErrWrongSequence.code) and attempt == 0:
                    expected = EXPECTED_SEQUENCE.search(log)
                    self.account = (number, int(expected.group(1))) if expected else None
                    logger.warning("sequence %d of %s refused (%s): signing again", sequence, self.address, log)
                    continue
                raise ChainError(REASONS.get((codespace, code), "invalid"), log,
                                 {"codespace": codespace, "code": str(code)})
        raise AssertionError("unreachable")


class _ChainClient:
    """What a program with a key on the chain shares: queries (gRPC when ``grpc_addr`` is given), CometBFT's
    ``status`` (cached ``status_ttl_s``), and its ``TxSigner``."""

    def __init__(self, node: str, key: secp256k1.PrivateKey, grpc_addr: str | None, chain_id: str, gas_limit: int,
                 fees: Coins, timeout_s: float, status_ttl_s: float, clock: Callable[[], float]) -> None:
        self.querier = _ChannelQuerier(node, grpc_addr, timeout_s)
        self.rpc = self.querier.rpc
        self.key = key
        self.address = address_of(key)
        self._chain_id = chain_id
        self._status = _Cached(status_ttl_s, self.rpc.status, clock)
        self.signer = TxSigner(self.rpc, key, self.chain_id, gas_limit, fees)

    def close(self) -> None:
        self.querier.close()

    def _query(self, path: str, request: Message, response_type: type[M]) -> M:
        return self.querier.query(path, request, response_type)

    def chain_id(self) -> str:
        if not self._chain_id:
            self._chain_id = str(self._status.get()["node_info"]["network"])
        return self._chain_id

    def latest_height(self) -> int:
        return int(self._status.get()["sync_info"]["latest_block_height"])

    def inference(self, inference_id: bytes) -> inference_pb2.Inference | None:
        """The committed record; None when the chain does not know the id (or the node cannot tell)."""
        try:
            return self._query(GONKA + "Inference", query_pb2.QueryInferenceRequest(id=inference_id.hex()),
                               query_pb2.QueryInferenceResponse).inference
        except RPCError:
            return None


class ChainInferenceView(_ChainClient):
    """``agent.chain.ChainView`` for the TA whose key is ``key``, over one node (``node``: CometBFT RPC,
    ``grpc_addr``: its gRPC server). ``tas`` are the other Transfer Agents' URLs the TA announces."""

    def __init__(
        self, node: str, key: secp256k1.PrivateKey, grpc_addr: str | None = None, tas: Sequence[str] = (), *,
        chain_id: str = "", ttl_s: float = 2.0, status_ttl_s: float = 0.5, gas_limit: int = DEFAULT_GAS_LIMIT,
        fees: Coins = Coins(), check_known: bool = True, timeout_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(node, key, grpc_addr, chain_id, gas_limit, fees, timeout_s, status_ttl_s, clock)
        self._tas = list(tas)
        self.check_known = check_known
        self._models = _Cached(ttl_s, self._load_models, clock)
        self._nodes = _Cached(ttl_s, self._load_nodes, clock)
        self._weights = _Cached(ttl_s, self._load_weights, clock)

    # --- reads ------------------------------------------------------------------------------------------------

    def _pages(self, path: str, make: Callable[[bytes], Message], response_type: type[M]) -> list[M]:
        pages: list[M] = []
        key = b""
        while True:
            page = self._query(path, make(key), response_type)
            pages.append(page)
            key = page.pagination.next_key  # type: ignore[attr-defined]
            if not key:
                return pages

    def _load_models(self) -> list[Model]:
        pages = self._pages(GONKA + "Models", lambda key: query_pb2.QueryModelsRequest(
            pagination={"key": key, "limit": PAGE_LIMIT}), query_pb2.QueryModelsResponse)
        return [Model(m.id, m.context_length, m.price_per_token) for page in pages for m in page.models]

    def _load_nodes(self) -> list[Any]:
        pages = self._pages(GONKA + "Nodes", lambda key: query_pb2.QueryNodesRequest(
            pagination={"key": key, "limit": PAGE_LIMIT}), query_pb2.QueryNodesResponse)
        return [n for page in pages for n in page.nodes]

    def _load_weights(self) -> dict[str, int]:
        """The hosts' weights of the current epoch; the validator powers while none are recorded for it."""
        epoch = self._query(EPOCHS + "CurrentEpoch", epochs_query.QueryCurrentEpochRequest(),
                            epochs_query.QueryCurrentEpochResponse).epoch.number
        try:
            weights = self._query(STAKE + "EpochWeights", stake_query.QueryEpochWeightsRequest(epoch=epoch),
                                  stake_query.QueryEpochWeightsResponse).weights
        except RPCError:  # not found: none recorded for this epoch yet
            weights = self._query(STAKE + "ValidatorPowers", stake_query.QueryValidatorPowersRequest(),
                                  stake_query.QueryValidatorPowersResponse).powers
        return {w.operator: w.weight for w in weights}

    def models(self) -> list[Model]:
        return list(self._models.get())

    def nodes(self, model_id: str) -> list[Node]:
        weights = self._weights.get()
        return [Node(n.operator, n.node_id, n.url, tuple(n.models), n.memory_bytes, n.max_concurrency,
                     weights.get(n.operator, 0)) for n in self._nodes.get() if model_id in n.models]

    def spendable(self, address: str, denom: str) -> int:
        reply = self._query(BANK + "SpendableBalanceByDenom",
                            bank_query.QuerySpendableBalanceByDenomRequest(address=address, denom=denom),
                            bank_query.QuerySpendableBalanceByDenomResponse)
        return int(reply.balance.amount or 0)

    def tas(self) -> list[str]:
        return list(self._tas)

    def known(self, inference_id: bytes) -> bool:
        """Whether the committed state has the inference and it cannot pass to this TA: ended, or started by this
        TA already (False when the node cannot tell). One another TA started and that is still running is the
        client failing over: the start takes it over (x/inference README, "Take-over")."""
        found = self.inference(inference_id)
        if found is None:
            return False
        return found.status != inference_pb2.STATUS_STARTED or found.ta == self.address

    # --- the TA's transactions -----------------------------------------------------------------------------------

    def message(self, request: StartRequest) -> Message:
        """What ``request`` becomes on chain: a start, or the reassignment of the inference to a new executor."""
        if request.reassign:
            return tx_pb2.MsgReassignInference(ta=self.address, id=request.inference_id, executor=request.executor)
        return tx_pb2.MsgStartInference(
            ta=self.address, requester=request.requester, requester_pubkey=request.requester_pubkey,
            body_hash=request.body_hash, timestamp_ns=request.timestamp_ns, signature=request.signature,
            model=request.model, max_tokens=request.max_tokens, fee_per_token=request.fee_per_token,
            executor=request.executor, seed=request.seed, params_hash=request.params_hash)

    def start_inference(self, request: StartRequest) -> None:
        """Sign and send the start (or reassignment); ``ChainError`` when the chain refuses it."""
        if not request.reassign and self.check_known and self.known(request.inference_id):
            raise ChainError("already_exists", f"inference {request.inference_id.hex()} is already on chain")
        self.submit(self.message(request))

    def submit(self, message: Message) -> str:
        """Sign ``message`` with the TA's key at the next sequence and broadcast it (sync); its hash (hex)."""
        return self.signer.submit([message])

    @property
    def _account(self) -> tuple[int, int] | None:
        """The signer's (account number, next sequence); None: fetched from the chain at the next send."""
        return self.signer.account

    @_account.setter
    def _account(self, value: tuple[int, int] | None) -> None:
        self.signer.account = value


# --- the executing host: finishing what its ML node served ---------------------------------------------------

FINISH_GAS = 250_000
"""Gas per ``MsgFinishInference`` in a finishing transaction (one finish alone used ~119,000 on the localnet:
payment through vesting, refund, work report, leaves)."""


@dataclass(frozen=True)
class Finish:
    """The fields of ``MsgFinishInference`` the executor derives from its node's answer (``agent/executor.py``)."""

    inference_id: bytes
    response_hash: bytes
    prompt_tokens: int
    completion_tokens: int
    logprobs_digest: bytes


@dataclass
class _Pending:
    finish: Finish
    since: float
    sends: int = 0
    sent_height: int = 0
    tx: str = ""


class Finisher(_ChainClient):
    """Sends the executing host's ``MsgFinishInference``s, signed by ``key`` (the host), and sees them through.

    ``submit`` queues a ``Finish`` (thread-safe, never blocks on the chain; an id already queued is ignored);
    a background thread (``start``/``stop``) runs ``step`` every ``poll_interval_s`` (at once after a submit).
    For each queued finish a step reads the inference (``Query/Inference``):

    - unknown: the TA's start may still be in the mempool; dropped after ``unknown_timeout_s``;
    - STARTED with this host as executor: sent, at most ``max_batch`` finishes per transaction (gas
      ``gas_per_message`` each), ``completion_tokens`` capped at the inference's ``max_tokens``; when still
      STARTED ``confirm_blocks`` blocks after a send it is sent again, up to ``max_sends`` sends, then dropped;
    - STARTED with another executor (reassigned, or taken over with a new executor): waited on, since only
      that host may finish it now, until it ends;
    - FINISHED: done when this host finished it, else dropped; EXPIRED: dropped.

    Every drop is one warning log line with the inference id and the reason. A transaction CheckTx refuses is
    split into single messages; a single message refused by ``inference``'s own checks is dropped, any other
    refusal (sequence, fees, an unreachable node) counts as a send and is tried again. ``status()`` gives the
    counts and the last outcomes. ``stop(drain_s)`` keeps stepping up to ``drain_s`` seconds while finishes are
    queued, then ends the thread."""

    def __init__(
        self, node: str, key: secp256k1.PrivateKey, grpc_addr: str | None = None, *, chain_id: str = "",
        gas_per_message: int = FINISH_GAS, fees: Coins = Coins(), max_batch: int = 32,
        poll_interval_s: float = 0.5, confirm_blocks: int = 3, max_sends: int = 3, unknown_timeout_s: float = 120.0,
        timeout_s: float = 5.0, recent: int = 256, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(node, key, grpc_addr, chain_id, gas_per_message, fees, timeout_s, 0.0, clock)
        self.gas_per_message = gas_per_message
        self.max_batch = max_batch
        self.poll_interval_s = poll_interval_s
        self.confirm_blocks = confirm_blocks
        self.max_sends = max_sends
        self.unknown_timeout_s = unknown_timeout_s
        self.clock = clock
        self.pending: dict[bytes, _Pending] = {}
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
                logger.warning("inference %s: already queued to finish, the new answer is ignored",
                               finish.inference_id.hex())
                return False
            self.pending[finish.inference_id] = _Pending(finish, self.clock())
        self._wake.set()
        return True

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {"address": self.address, "pending": len(self.pending), "finished": self.finished,
                    "dropped": self.dropped, "recent": list(self.recent)}

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
        for inference_id in left:
            logger.warning("inference %s: not finished when the finisher stopped", inference_id.hex())

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
            if outcome == "finished":
                self.finished += 1
            else:
                self.dropped += 1
            self.recent.append({"id": item.finish.inference_id.hex(), "outcome": outcome, "reason": reason,
                                "tx": item.tx, "sends": item.sends})
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
        due: list[tuple[_Pending, Message]] = []
        for item in items:
            finish = item.finish
            record = self.inference(finish.inference_id)
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
            if record.executor != self.address:
                continue  # reassigned or taken over: not this host's to finish unless it comes back
            if item.sends and height < item.sent_height + self.confirm_blocks:
                continue  # the last send may still be on its way into a block
            if item.sends >= self.max_sends:
                self._end(item, "dropped", f"still STARTED after {item.sends} sends")
                continue
            due.append((item, tx_pb2.MsgFinishInference(
                executor=self.address, id=finish.inference_id, response_hash=finish.response_hash,
                prompt_tokens=finish.prompt_tokens, completion_tokens=min(finish.completion_tokens,
                                                                          record.max_tokens),
                logprobs_digest=finish.logprobs_digest)))
        for first in range(0, len(due), self.max_batch):
            self._send(due[first:first + self.max_batch], height)

    def _send(self, batch: list[tuple[_Pending, Message]], height: int) -> None:
        try:
            tx = self.signer.submit([message for _, message in batch], self.gas_per_message * len(batch))
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
                logger.warning("inference %s: finish refused (%s), will send again", item.finish.inference_id.hex(),
                               error)
            return
        except RPCError as error:
            logger.warning("finishing %d inference(s): the node did not take the transaction: %s", len(batch), error)
            return
        for item, _ in batch:
            item.sends += 1
            item.sent_height = height
            item.tx = tx
