"""A small client for CometBFT's JSON-RPC (:26657): status, blocks, broadcasts and ABCI queries."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from typing import Any


class RPCError(Exception):
    """The node answered with an error, or could not be reached; the message is one line."""


class RPCUnreachable(RPCError):
    """No answer at all (connection refused, timeout), as opposed to an error the node answered with."""


class RPCNotFound(RPCError):
    """The node answered that what was asked does not exist (``sdk/38``; gRPC ``NOT_FOUND``), as opposed to a
    failure: a caller can tell "no such record" from "no answer"."""


class CometRPC:
    def __init__(self, address: str, timeout: float = 10.0) -> None:
        self.url = "http://" + address.split("://", 1)[-1]
        self.timeout = timeout
        self._id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}).encode()
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            reply = json.loads(exc.read() or b"{}")
        except (urllib.error.URLError, OSError) as exc:
            raise RPCUnreachable(f"node {self.url} unreachable: {getattr(exc, 'reason', exc)}") from None
        if reply.get("error"):
            err = reply["error"]
            raise RPCError(f"{method}: {err.get('message', '')} {err.get('data', '')}".strip())
        return reply["result"]

    def status(self) -> dict[str, Any]:
        return self.call("status")

    def height(self) -> int:
        return int(self.status()["sync_info"]["latest_block_height"])

    def app_height(self) -> int:
        """The last height the application committed (ABCI ``Info``): what a query answers from, which may trail
        ``height()`` (the block store) for the moment the block is executed."""
        return int(self.call("abci_info")["response"].get("last_block_height") or 0)

    def block(self, height: int) -> dict[str, Any]:
        return self.call("block", height=str(height))

    def block_results(self, height: int, timeout_s: float = 10.0) -> list[dict[str, Any]]:
        """The block's tx results; retried briefly, since /status may show a height a moment before them."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self.call("block_results", height=str(height))["txs_results"] or []
            except RPCError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def broadcast_tx_sync(self, tx: bytes) -> dict[str, Any]:
        return self.call("broadcast_tx_sync", tx=base64.b64encode(tx).decode())

    def broadcast_tx_async(self, tx: bytes) -> dict[str, Any]:
        return self.call("broadcast_tx_async", tx=base64.b64encode(tx).decode())

    def tx(self, tx_hash: bytes) -> dict[str, Any]:
        return self.call("tx", hash=base64.b64encode(tx_hash).decode())

    def abci_query(self, path: str, data: bytes = b"", height: int = 0, prove: bool = False) -> dict[str, Any]:
        """Returns the ``response`` object; ``value`` and ``key`` decoded from base64."""
        result = self.call("abci_query", path=path, data=data.hex(), height=str(height), prove=prove)["response"]
        result["value"] = base64.b64decode(result.get("value") or "")
        result["key"] = base64.b64decode(result.get("key") or "")
        return result

    def net_info(self) -> dict[str, Any]:
        return self.call("net_info")
