"""Sign and broadcast: resolve the account and gas, send through RPC.

Programs call ``deliver``, which also waits for the block: a message's own rules run only there, so its
result code is known only then. The CLI (``sdk.cli.tx``) prints the mempool's answer instead, as
``gonkad tx … --broadcast-mode sync`` does in Cosmos.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_service
from google.protobuf.message import Message

from sdk.client.querier import Querier
from sdk.client.rpc import RPCError
from sdk.client.txbuilder import address_of, query_account, sign_tx
from sdk.coins import Coins
from sdk.crypto import secp256k1
from sdk.errors import ErrWrongSequence
from sdk.tx import tx_hash

POLL_S = 0.2


class TxError(Exception):
    """A transaction that could not be built or was refused; one line for the user."""


class TxFailed(TxError):
    """The chain refused the transaction (simulation, mempool or block) with this code and log."""

    def __init__(self, stage: str, codespace: str, code: int, log: str, txhash: str = "") -> None:
        self.codespace, self.code, self.log, self.txhash = codespace, code, log, txhash
        super().__init__(f"{stage}: {log} ({codespace}/{code})")


@dataclass(frozen=True)
class TxOptions:
    """What the signer chooses besides the messages: fees, a gas limit or 'auto' (simulate × adjustment), memo."""

    fees: Coins = Coins()
    gas: str = "200000"
    gas_adjustment: str = "1.0"
    memo: str = ""


@dataclass(frozen=True)
class Delivered:
    """A transaction committed with code 0: where it landed and the events its messages emitted."""

    txhash: str
    height: int
    gas_used: int
    events: list[dict[str, Any]]

    def attribute(self, event_type: str, key: str) -> str:
        """The first value of ``key`` in an event of ``event_type``; KeyError when none has it."""
        for event in self.events:
            if event["type"] == event_type:
                for attribute in event["attributes"]:
                    if attribute["key"] == key:
                        return str(attribute["value"])
        raise KeyError(f"{event_type}.{key}")


def plain_events(tx_result: dict[str, Any]) -> list[dict[str, Any]]:
    """A result's events as CometBFT's RPC reports them, reduced to type and key/value attributes."""
    return [
        {"type": e["type"], "attributes": [{"key": a["key"], "value": a["value"]} for a in e.get("attributes", [])]}
        for e in tx_result.get("events", [])
    ]


def gas_limit(options: TxOptions, querier: Querier, simulate_tx: Callable[[int], bytes]) -> int:
    if options.gas != "auto":
        if not options.gas.isdigit():
            raise TxError(f"invalid --gas {options.gas!r}: a whole number or 'auto'")
        return int(options.gas)
    try:
        adjustment = Fraction(options.gas_adjustment)
    except ValueError:
        raise TxError(f"invalid --gas-adjustment {options.gas_adjustment!r}") from None
    reply = querier.rpc.abci_query("/app/simulate", simulate_tx(0))
    if reply.get("code"):
        raise TxFailed("simulation failed", reply.get("codespace", ""), int(reply["code"]), reply.get("log", ""))
    simulated = tx_service.SimulateResponse.FromString(reply["value"])
    return math.ceil(simulated.gas_info.gas_used * adjustment)


def fetch_chain_id(querier: Querier) -> str:
    return str(querier.rpc.status()["node_info"]["network"])


def sign_messages(
    querier: Querier, key: secp256k1.PrivateKey, messages: Sequence[Message], chain_id: str, options: TxOptions
) -> tuple[bytes, int]:
    """The signed transaction for the key's current sequence, and its gas limit (simulated for 'auto')."""
    account = query_account(querier.rpc, address_of(key))

    def signed(limit: int) -> bytes:
        return sign_tx(
            key, messages, chain_id, account.account_number, account.sequence, options.fees, limit, options.memo
        )

    limit = gas_limit(options, querier, signed)
    return signed(limit), limit


def broadcast(querier: Querier, raw: bytes, mode: str = "sync") -> dict[str, Any]:
    """The Cosmos-shaped broadcast response: txhash, and the mempool's code, codespace and log."""
    method = querier.rpc.broadcast_tx_sync if mode == "sync" else querier.rpc.broadcast_tx_async
    result = method(raw)
    return {
        "txhash": tx_hash(raw).hex().upper(),
        "code": int(result.get("code", 0)),
        "codespace": result.get("codespace", ""),
        "raw_log": result.get("log", ""),
    }


def wait_for_tx(querier: Querier, txhash: str, timeout_s: float) -> dict[str, Any]:
    """The committed transaction, once the node has indexed it."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return querier.rpc.tx(bytes.fromhex(txhash))
        except RPCError:
            if time.monotonic() > deadline:
                raise TxError(f"tx {txhash} was not committed within {timeout_s:g}s") from None
            time.sleep(POLL_S)


def deliver(
    querier: Querier,
    key: secp256k1.PrivateKey,
    messages: Sequence[Message],
    chain_id: str,
    options: TxOptions,
    timeout_s: float = 60.0,
) -> Delivered:
    """Sign, broadcast and wait for the block; TxFailed carries the chain's code when any stage refuses it."""
    raw, _ = sign_messages(querier, key, messages, chain_id, options)
    try:
        sent = broadcast(querier, raw)
    except RPCError as exc:
        raise TxError(f"broadcast failed: {exc}") from None
    if sent["code"]:
        raise TxFailed("refused by the mempool", sent["codespace"], sent["code"], sent["raw_log"], sent["txhash"])
    committed = wait_for_tx(querier, sent["txhash"], timeout_s)
    result = committed["tx_result"]
    if int(result.get("code", 0)):
        raise TxFailed(
            "failed in its block",
            result.get("codespace", ""),
            int(result["code"]),
            result.get("log", ""),
            sent["txhash"],
        )
    return Delivered(sent["txhash"], int(committed["height"]), int(result.get("gas_used", 0)), plain_events(result))


def deliver_shared(
    querier: Querier,
    key: secp256k1.PrivateKey,
    messages: Sequence[Message],
    chain_id: str,
    options: TxOptions,
    timeout_s: float = 60.0,
    tries: int = 5,
    pause_s: float = 0.5,
) -> Delivered:
    """``deliver`` for a key another process also signs with (a localnet's validator key is its host's, whose
    executor sends race commits, verdicts and claims with it): a sequence taken meanwhile (``sdk/32``) is read
    again and the messages signed again, up to ``tries`` times."""
    for attempt in range(1, tries + 1):
        try:
            return deliver(querier, key, messages, chain_id, options, timeout_s)
        except TxFailed as error:
            if (error.codespace, error.code) != (ErrWrongSequence.codespace, ErrWrongSequence.code) or attempt == tries:
                raise
        time.sleep(pause_s)
    raise AssertionError("unreachable")
