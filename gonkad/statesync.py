"""Joining a running network by state sync: CometBFT's ``[statesync]`` settings for a new node, with trust options
(a recent height and that block's hash) read from an RPC server the operator trusts.

CometBFT's light client checks every header it needs against the RPC servers, starting from the trusted block, so
the snapshot the node restores is only as good as that hash: take it from a node you trust (docs/operators.md).
"""

from __future__ import annotations

from pathlib import Path

from gonkad.config import edit_cometbft_config
from sdk.client.rpc import CometRPC

TRUST_PERIOD = "16h0m0s"
"""How old the trusted header may be: shorter than the unbonding period (one day under the default params), so a
validator set that signed it can still be slashed for lying about it."""
DISCOVERY_TIME = "5s"
"""How long the node gathers snapshots from its peers before choosing one (CometBFT's least)."""


def trust_options(rpc_server: str, back: int) -> tuple[int, str]:
    """A height ``back`` blocks below the server's latest (at least 1) and that block's hash (hex, upper case)."""
    rpc = CometRPC(rpc_server)
    height = max(1, rpc.height() - back)
    return height, str(rpc.block(height)["block_id"]["hash"])


def enable_state_sync(home: Path, rpc_servers: list[str], back: int = 0) -> tuple[int, str]:
    """Turn on state sync in ``home``'s config.toml, trusting the first server's block ``back`` below its latest;
    returns the trusted height and hash. CometBFT wants two servers at least (it checks the light blocks on a
    second one)."""
    if len(rpc_servers) < 2:
        raise ValueError(f"state sync needs at least two RPC servers, got {len(rpc_servers)}")
    height, block_hash = trust_options(rpc_servers[0], back)
    servers = ",".join("http://" + server.split("://", 1)[-1] for server in rpc_servers)
    statesync: dict[str, object] = {
        "enable": True,
        "rpc_servers": servers,
        "trust_height": height,
        "trust_hash": block_hash,
        "trust_period": TRUST_PERIOD,
        "discovery_time": DISCOVERY_TIME,
    }
    edit_cometbft_config(home, {"statesync": statesync})
    return height, block_hash
