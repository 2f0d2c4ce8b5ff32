"""Models beyond the host's own: publishing its store over the executor's HTTP, and, opted in, fetching models the
chain registers with a ``source_url``, checking them, serving them with ML nodes of their own and registering
those nodes (``host/README.md``, "Models: publishing and fetching").

- ``manifest.py``: a published directory's manifest (files, sizes, SHA-256, identity);
- ``store.py``: the host's model store (whole directories only);
- ``serve.py``: ``GET /models/<sha256>/<file>`` from the store;
- ``fetch.py``: a download checked file by file and as a whole;
- ``nodes.py``: the identity check and the ML node processes of fetched models;
- ``follower.py``: the fetching duty, one thread;
- ``config.py``: ``HOME/host.toml``'s ``[models]``.
"""

from host.models.config import HOST_TOML, HostConfig, ModelsConfig, load_host_config, store_root
from host.models.fetch import Refused, Unreachable, fetch_model
from host.models.follower import ModelFollower, node_id
from host.models.manifest import MANIFEST, Manifest, build_manifest
from host.models.nodes import NodeProcess, identify
from host.models.store import ModelStore

__all__ = [
    "HOST_TOML",
    "MANIFEST",
    "HostConfig",
    "Manifest",
    "ModelFollower",
    "ModelStore",
    "ModelsConfig",
    "NodeProcess",
    "Refused",
    "Unreachable",
    "build_manifest",
    "fetch_model",
    "identify",
    "load_host_config",
    "node_id",
    "store_root",
]
