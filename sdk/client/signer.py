"""``TxSigner``: one key's transactions, signed at a sequence counted locally so many go out per block."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

from google.protobuf.message import Message

from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import address_of, query_account, sign_tx
from sdk.coins import Coins
from sdk.crypto import secp256k1
from sdk.errors import ErrWrongSequence

logger = logging.getLogger("gonka.client")
EXPECTED_SEQUENCE = re.compile(r"expected (\d+), got \d+")


class TxRefused(Exception):
    """CheckTx refused a transaction: its ``codespace``, ``code`` and ``log``."""

    def __init__(self, codespace: str, code: int, log: str) -> None:
        super().__init__(f"{codespace}/{code}: {log}")
        self.codespace, self.code, self.log = codespace, code, log


Refusal = Callable[[str, int, str], Exception]
"""What a CheckTx refusal (codespace, code, log) is raised as: ``TxRefused``, or a program's own error type."""


class Sent(NamedTuple):
    """A transaction CheckTx accepted: its hash (hex, as CometBFT prints it) and its bytes (``TxRaw``)."""

    hash: str
    raw: bytes


Submit = Callable[[Sequence[Message], int], Sent]
"""``TxSigner.submit`` as a program's background duties are handed it: one transaction of these messages with this
gas limit; raises on a refusal."""


class TxSigner:
    """Signs transactions with one key and sends them with ``broadcast_tx_sync``: the account number and next
    sequence are counted here and bumped for every accepted transaction, so many go out per block; one lock
    around sign-and-broadcast keeps the sequence in order across threads. On ``sdk/32`` (sequence mismatch) the
    expected sequence is taken from the log (or the account refetched) and the transaction signed and sent once
    more. Any other CheckTx refusal is raised as ``refused`` makes it; an unreachable node is ``RPCError`` (the
    sequence is then fetched again)."""

    def __init__(
        self,
        rpc: CometRPC,
        key: secp256k1.PrivateKey,
        chain_id: Callable[[], str],
        gas_limit: int,
        fees: Coins = Coins(),
        refused: Refusal = TxRefused,
    ) -> None:
        self.rpc = rpc
        self.key = key
        self.address = address_of(key)
        self.chain_id = chain_id
        self.gas_limit = gas_limit
        self.fees = fees
        self.refused = refused
        self.lock = threading.Lock()
        self.account: tuple[int, int] | None = None
        """(account number, next sequence) as counted here; None: fetch from the chain."""

    def submit(self, messages: Sequence[Message], gas_limit: int | None = None) -> Sent:
        """Sign ``messages`` (one transaction) at the next sequence and broadcast it (sync)."""
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
                    return Sent(str(result.get("hash", "")), raw)
                if (codespace, code) == (ErrWrongSequence.codespace, ErrWrongSequence.code) and attempt == 0:
                    expected = EXPECTED_SEQUENCE.search(log)
                    self.account = (number, int(expected.group(1))) if expected else None
                    logger.warning("sequence %d of %s refused (%s): signing again", sequence, self.address, log)
                    continue
                raise self.refused(codespace, code, log)
        raise AssertionError("unreachable")
