"""A Transfer Agent's settings: its key, its chain, its limits and windows (``gonkad agent start`` fills them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sdk.crypto import secp256k1

DEFAULT_GAS_LIMIT = 200_000
"""The gas limit of each start transaction: about 2.6 times what a start uses (~76,000 gas; a reassignment
~39,000)."""


class AgentConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    key: secp256k1.PrivateKey
    """The TA's secp256k1 key: its address is what requesters sign for and what signs ``/v1/identity``."""
    chain: Any
    """The ``agent.chain.ChainView`` the TA reads and writes the chain through."""
    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, lt=65536)
    denom: str = "ngonka"
    queue_bound: int = Field(256, ge=0)
    queue_timeout_s: float = Field(60.0, gt=0)
    retry_after_s: int = Field(1, ge=0)
    window_old_s: float = Field(50.0, gt=0)
    window_ahead_s: float = Field(20.0, ge=0)
    """The request timestamp's window: the chain's (x/inference ``request_max_age_s`` 60, ``request_max_future_s``
    30) less a 10 s margin, so what the TA admits is inside the chain's window at the block its start lands in
    (that block's time may be seconds after the TA's clock, and lags real time by up to a block)."""
    replay_cache_size: int = Field(1_000_000, ge=1)
    poll_interval_s: float = Field(1.0, gt=0)
    poll_timeout_s: float = Field(1.0, gt=0)
    connect_timeout_s: float = Field(2.0, gt=0)
    upstream_timeout_s: float = Field(120.0, gt=0)
    """The longest wait for a node's first answer bytes, and then between two chunks of a stream."""
    max_attempts: int = Field(3, ge=1)
    """Nodes a request may be sent to, when the earlier ones fail before answering."""
    default_max_tokens: int = Field(256, ge=1)
    max_body_bytes: int = Field(4 << 20, ge=1024)
    offload_chain_calls: bool = False
    """Run ChainView calls on a worker thread (for a view that does network I/O)."""
    chain_threads: int = Field(128, ge=1)
    """Worker threads for those calls: a start waits on its thread for its batch's CheckTx, so the threads bound
    the starts a batch can gather (asyncio's default pool has the cores + 4)."""
    chain_retry_s: float = Field(15.0, ge=0)
    """How long a request's chain calls (the requester's balance, the start) are tried again while the TA's node
    does not answer (it is restarting), before the client gets 503 ``chain_unavailable`` (and fails over)."""
